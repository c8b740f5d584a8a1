/*
 * The runtime's rows in the catalog: the pin it came from, the install and
 * its file manifest (for verify), and their state over time.
 */
#ifndef PW_RUNTIME_DB_H
#define PW_RUNTIME_DB_H

#include "catalog.h"
#include "err.h"
#include "manifest.h"
#include "pins.h"

#include <stdbool.h>
#include <stdint.h>

/* Record pin + runtime (state "installed") + every manifest entry, in one
 * transaction, in two halves: begin writes the rows in an open transaction
 * (rolled back when it fails), end commits it (keep) or rolls it back, so
 * the installer can write them while the new interpreter is probed. source
 * is "builtin:FILE" or "operator:FILE". */
pw_err *pw_runtime_db_record_begin(pw_catalog *c, const pw_pin *pin, const char *url, const char *source,
				   const char *path, const pw_manifest *m);
pw_err *pw_runtime_db_record_end(pw_catalog *c, bool keep);
/* Mark states after a swap: path_current "current", path_previous
 * "previous" (may be NULL), every other live runtime "superseded". */
pw_err *pw_runtime_db_set_current(pw_catalog *c, const char *path_current, const char *path_previous);
/* Mark every runtime with one of these paths removed (removed_at = now). */
pw_err *pw_runtime_db_mark_removed(pw_catalog *c, const char *path);
/* Amend the manifest of the newest live runtime at path with changes made
 * to it on purpose (the baseline's pip): every entry of set is recorded
 * (added or restated), every path in gone dropped; one transaction. */
pw_err *pw_runtime_db_amend(pw_catalog *c, const char *path, const pw_manifest *set, const char *const *gone,
			    size_t ngone);
/* The manifest recorded for the newest live runtime at path. */
pw_err *pw_runtime_db_manifest(pw_catalog *c, const char *path, pw_manifest *out);

#endif
