/* Fuzz target: the classifier of pip's output (the first byte is the exit
 * code) and the project-name normaliser. */
/* sources: pipclass.c pkgname.c libload.c sigpipe.c curl_shim.c archive_shim.c err.c redact.c xalloc.c */
#include "config.h"

#include "pipclass.h"
#include "pkgname.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	char *text = xstrndup((const char *)data + 1, size - 1);
	const char *reason = NULL;
	pw_pip_class c = pw_pipclass_classify(data[0] % 4 == 0 ? 0 : data[0], text, &reason);
	if (!pw_pipclass_name(c) || (data[0] % 4 == 0) != (c == PW_PIP_OK))
		abort(); /* exit 0 and only exit 0 is ok */
	/* a key is its own key and has no run of separators */
	char *key = pw_pkgname_key(text);
	char *again = pw_pkgname_key(key);
	if (strcmp(key, again) != 0 || strstr(key, "--") || strpbrk(key, "_."))
		abort();
	free(again);
	free(key);
	free(text);
	return 0;
}
