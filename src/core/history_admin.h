/*
 * The operator's verbs over the whole history: export (every operation
 * with its attempts and package changes, streamed oldest first) and prune
 * (delete operations started before a date, in one transaction that also
 * records the prune itself). Nothing is ever pruned automatically.
 */
#ifndef PW_HISTORY_ADMIN_H
#define PW_HISTORY_ADMIN_H

#include "cancel.h"
#include "catalog.h"
#include "err.h"
#include "pkgdiff.h"

#include <stddef.h>
#include <stdint.h>

/* Called once per operation; an error stops the export and is returned. */
typedef pw_err *(*pw_export_fn)(const pw_op_rec *op, const pw_attempt_list *attempts, const char *env,
				const pw_pkg_changes *changes, void *ud);

/* Operations started at or after since (NULL: all), oldest first, read in
 * one read transaction so the export is one consistent state. */
pw_err *pw_history_export(pw_catalog *c, const char *since, const pw_cancel *cancel, pw_export_fn fn, void *ud);

typedef struct pw_prune_result {
	int64_t operation_id;   /* the history.prune operation recorded */
	int64_t operations, attempts, package_changes;
} pw_prune_result;

/* Delete every operation started before `before` (ISO date or date-time,
 * UTC) with its attempts and package changes, and record a finished
 * "history.prune" operation (who, when, how many) in the same
 * transaction: both happen or neither. args: the command line. */
pw_err *pw_history_prune(pw_catalog *c, const char *before, const char *args, pw_prune_result *out);

#endif
