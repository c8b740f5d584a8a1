/*
 * The operator's verbs over the whole history: export (every operation
 * with its attempts and package changes, streamed oldest first), prune
 * (delete operations started before a date, in one transaction that also
 * records the prune itself) and check (the whole file for damage). Nothing
 * is ever pruned automatically.
 */
#ifndef PW_HISTORY_ADMIN_H
#define PW_HISTORY_ADMIN_H

#include "apijobs.h"
#include "cancel.h"
#include "catalog.h"
#include "err.h"
#include "pkgdiff.h"

#include <stddef.h>
#include <stdint.h>

/* Called once per operation, with the HTTP API job that ran it (job NULL
 * when none did); then once per API job that has no operation in the
 * catalog (op, attempts, env and changes NULL). An error stops the export
 * and is returned. */
typedef pw_err *(*pw_export_fn)(const pw_op_rec *op, const pw_attempt_list *attempts, const char *env,
				const pw_pkg_changes *changes, const pw_apijob_rec *job, void *ud);

/* Operations started at or after since (NULL: all), oldest first, then the
 * API jobs created at or after since that ran no operation (apijobs.h),
 * oldest first, all read in one read transaction so the export is one
 * consistent state. */
pw_err *pw_history_export(pw_catalog *c, const char *since, const pw_cancel *cancel, pw_export_fn fn, void *ud);

typedef struct pw_prune_result {
	int64_t operation_id;   /* the history.prune operation recorded */
	int64_t operations, attempts, package_changes;
	int64_t api_jobs;       /* the HTTP API's jobs that went with them (apijobs.h) */
} pw_prune_result;

/* Delete every operation started before `before` (ISO date or date-time,
 * UTC) with its attempts, package changes and API job, the API jobs that
 * ran no operation created before it (pw_apijobs_prune), and record a finished
 * "history.prune" operation (who, when, how many) in the same
 * transaction: both happen or neither. args: the command line. */
pw_err *pw_history_prune(pw_catalog *c, const char *before, const char *args, pw_prune_result *out);

/* What `PRAGMA integrity_check` found in the whole file: every page read,
 * every index compared with its table (a sysadmin's check; writing opens
 * check far less, see catalog.c); on a sound file, then, every counter the
 * triggers keep (operation_counts, attempt_counts, last_finished) that
 * differs from a count of the rows, a line each. */
typedef struct pw_history_check_result {
	char **problems;        /* up to PW_HISTORY_CHECK_MAX lines; none: sound */
	size_t count;
	int64_t pages;
} pw_history_check_result;
#define PW_HISTORY_CHECK_MAX 100
/* An error only when the check could not run (cancelled, I/O); damage is
 * what out says, also when SQLite stopped the check at a damaged page. */
pw_err *pw_history_check(pw_catalog *c, const pw_cancel *cancel, pw_history_check_result *out);
void pw_history_check_clear(pw_history_check_result *r);

#endif
