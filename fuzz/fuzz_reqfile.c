/* Fuzz target: the requirement-file parser (reqfile.c), with an in-memory
 * reader: "-r NAME" gets the input again (the parser must stop at its depth
 * and file limits), a local path is accepted when it does not start with
 * "/out", so both the refusing and the rewriting branches run. */
/* sources: reqfile.c guard.c err.c redact.c xalloc.c */
#include "config.h"

#include "reqfile.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *input;
static unsigned opened;

static pw_err *fuzz_open(void *ud, const char *dir, const char *name, char **abs, char **text)
{
	(void)ud;
	if (strncmp(name, "/out", 4) == 0)
		return pw_err_new(PW_ERR_REFUSED, NULL, "outside: %s", name);
	*abs = xasprintf("%s/%s#%u", dir ? dir : "/ws", name, opened++);
	*text = xstrdup(input);
	return NULL;
}

static pw_err *fuzz_local(void *ud, const char *path, char **abs)
{
	(void)ud;
	if (strncmp(path, "/out", 4) == 0)
		return pw_err_new(PW_ERR_REFUSED, NULL, "outside: %s", path);
	*abs = path[0] == '/' ? xstrdup(path) : xasprintf("/ws/%s", path);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	input = text;
	opened = 0;
	pw_reqs_io io = { fuzz_open, fuzz_local, NULL };
	pw_reqs r = { 0 };
	pw_err_free(pw_reqs_parse_text(&io, "/ws/req.txt", "/ws", text, &r));
	pw_reqs_clear(&r);
	free(text);
	return 0;
}
