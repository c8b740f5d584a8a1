/*
 * Package changes in the catalog: what each operation did to an
 * environment's packages (schema 4's package_changes), recorded from a
 * dist-info reading before and after the operation, and read back for
 * `history show`, `history --package` and `history undo`.
 */
#ifndef PW_PKGDB_H
#define PW_PKGDB_H

#include "catalog.h"
#include "distinfo.h"
#include "err.h"
#include "pkgdiff.h"

#include <stddef.h>
#include <stdint.h>

/* Record changes of operation op in env, in one transaction. */
pw_err *pw_pkgdb_record(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes);
/* The same inside the caller's transaction (pw_catalog_op_finish_with). */
pw_err *pw_pkgdb_insert(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes);
/* The changes recorded for op, in name order; *env (malloc'd) is the
 * environment, NULL when nothing was recorded. */
pw_err *pw_pkgdb_changes(pw_catalog *c, int64_t op, char **env, pw_pkg_changes *out);

/* The same for many operations in a row, with one statement (export). */
typedef struct pw_pkgdb_reader pw_pkgdb_reader;
pw_err *pw_pkgdb_reader_open(pw_catalog *c, pw_pkgdb_reader **r);
pw_err *pw_pkgdb_reader_get(pw_pkgdb_reader *r, int64_t op, char **env, pw_pkg_changes *out);
void pw_pkgdb_reader_close(pw_pkgdb_reader **r);

/* Operations after op that changed any package of changes in env,
 * ascending ids (malloc'd). */
pw_err *pw_pkgdb_later(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes,
		       int64_t **ids, size_t *count);

/* Link operation id to the operation it undoes (operations.undo_of). */
pw_err *pw_pkgdb_link_undo(pw_catalog *c, int64_t id, int64_t undo_of);

/* Watching one operation: read the environment before, read it after, and
 * record the difference. */
typedef struct pw_pkgwatch {
	char *env;
	pw_distset before;
	bool armed;          /* the first reading worked */
} pw_pkgwatch;

/* A reading that fails leaves the watch unarmed: the operation goes on,
 * and nothing is recorded for it (the error is returned for a log). */
pw_err *pw_pkgwatch_begin(pw_pkgwatch *w, const char *env);
/* Read again and record the difference under op (nothing when there is
 * none). out, when not NULL, gets the changes. Frees the first reading. */
pw_err *pw_pkgwatch_end(pw_pkgwatch *w, pw_catalog *c, int64_t op, pw_pkg_changes *out);
void pw_pkgwatch_clear(pw_pkgwatch *w);

#endif
