/*
 * Settings files: "key = value" lines, '#' comments, blank lines. Every key
 * must be known and every line well formed: a bad line is an error naming the
 * file and line, never silently ignored. A missing file is not an error.
 *
 * Known keys: box_root, runtime_mirror, ca_bundle, index_url, mirrors, proxy_ports (comma-separated),
 * (space-separated URLs), proxy, timeout (seconds), mode,
 * python_idle_timeout (seconds), python_max_workers, audit_log (journal,
 * syslog, journal-or-syslog, none), audit_syslog_socket (a path).
 */
#ifndef PW_SETTINGS_H
#define PW_SETTINGS_H

#include "err.h"

#include <stdbool.h>

typedef struct pw_settings pw_settings;

pw_settings *pw_settings_new(void);
void pw_settings_free(pw_settings **s);
/* Load a file into s; a key set again (by this or a later file) is replaced.
 * *loaded (may be NULL) says whether the file existed. */
pw_err *pw_settings_load_file(pw_settings *s, const char *path, bool *loaded);
/* Parse text as if read from a file called name (for tests and --config -). */
pw_err *pw_settings_load_text(pw_settings *s, const char *name, const char *text);
const char *pw_settings_get(const pw_settings *s, const char *key); /* NULL if unset */
/* "FILE:LINE" where key was set, or NULL. */
const char *pw_settings_origin(const pw_settings *s, const char *key);
bool pw_settings_key_known(const char *key);

#endif
