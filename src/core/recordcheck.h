/*
 * rpm -V for an environment: every file each installed distribution's
 * RECORD lists is checked against its sha256 and size; files in the
 * folders a distribution installed into that no RECORD lists are
 * unexpected (bytecode caches in __pycache__, which Python writes on
 * import, excepted). Entries without a hash (RECORD itself, often .pyc
 * files) are unchecked, not modified.
 */
#ifndef PW_RECORDCHECK_H
#define PW_RECORDCHECK_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pw_rc_kind {
	PW_RC_MODIFIED,    /* size or digest differs, or no longer a regular file */
	PW_RC_MISSING,
	PW_RC_UNEXPECTED,
	PW_RC_UNCHECKED,   /* no sha256 in RECORD, or a path outside the environment */
} pw_rc_kind;

typedef struct pw_rc_file {
	pw_rc_kind kind;
	char *path;        /* absolute, lexically normalized */
	char rpm_flags[10];/* for modified: S size, M type, 5 digest; '.' passed; '?' not recorded */
} pw_rc_file;

typedef struct pw_rc_dist {
	char *name;
	char *version;
	pw_rc_file *files;
	size_t count;
	size_t checked, modified, missing, unexpected, unchecked;
} pw_rc_dist;

typedef struct pw_rc_report {
	char *site;
	pw_rc_dist *dists;  /* by name */
	size_t count;
	size_t checked, modified, missing, unexpected, unchecked;
} pw_rc_report;

/* Check env (an environment's root). PW_ERR_NOTFOUND when it has no site-packages. */
pw_err *pw_record_check(const char *env, pw_rc_report *out);
void pw_rc_report_clear(pw_rc_report *r);
const char *pw_rc_kind_name(pw_rc_kind k); /* "modified", "missing", "unexpected", "unchecked" */

/* One RECORD line split into path, hash ("sha256=…" or "") and size (-1:
 * none), CSV quoting undone. Returns false for a line that is not one. */
typedef struct pw_record_line {
	char *path;
	char *hash;
	int64_t size;
} pw_record_line;
bool pw_record_parse_line(const char *line, size_t len, pw_record_line *out);
void pw_record_line_clear(pw_record_line *l);

#endif
