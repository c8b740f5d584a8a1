/* Fuzz target: the runtime pins table parser and what reads a parsed table. */
/* sources: pins.c digest.c err.c redact.c xalloc.c */
#include "config.h"

#include "pins.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	pw_pins *p = NULL;
	pw_err *e = pw_pins_parse("fuzz.tsv", text, &p);
	free(text);
	if (e) {
		pw_err_free(e);
		return 0;
	}
	for (size_t i = 0; i < pw_pins_count(p); i++) {
		const pw_pin *pin = pw_pins_at(p, i);
		free(pw_pins_url(pin, "https://mirror.example/pbs"));
		free(pw_pins_file_name(pin));
		const pw_pin *found = NULL;
		pw_err_free(pw_pins_find(p, pin->platform, pin->version, &found));
		pw_err_free(pw_pins_find(p, pin->platform, NULL, &found));
		if (i > 0)
			(void)pw_pins_version_cmp(pin->version, pw_pins_at(p, i - 1)->version);
	}
	const pw_pin *found = NULL;
	pw_err_free(pw_pins_find(p, "x86_64-unknown-linux-gnu", NULL, &found));
	pw_pins_free(&p);
	return 0;
}
