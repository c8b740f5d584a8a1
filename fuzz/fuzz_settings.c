/* Fuzz target: the settings file parser. */
/* sources: settings.c err.c redact.c xalloc.c */
#include "config.h"

#include "settings.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "box_root", "runtime_mirror", "ca_bundle", "index_url", "mirrors",
					    "proxy_ports", "proxy", "timeout", "mode", "python_idle_timeout",
					    "python_max_workers" };
	char *text = xstrndup((const char *)data, size);
	pw_settings *s = pw_settings_new();
	pw_err_free(pw_settings_load_text(s, "fuzz.conf", text));
	pw_err_free(pw_settings_load_text(s, "again.conf", text)); /* a key set again is replaced */
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		(void)pw_settings_get(s, keys[i]);
		(void)pw_settings_origin(s, keys[i]);
	}
	(void)pw_settings_key_known(text);
	pw_settings_free(&s);
	free(text);
	return 0;
}
