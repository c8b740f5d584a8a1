/*
 * Counts over the catalog for monitoring (the HTTP API's /metrics):
 * operations by kind and outcome, attempts by class, the last runtime
 * verification. Read only, from the counters the catalog keeps (schema 7:
 * counted as they happen, not lowered by a prune), so a read costs the same
 * at any size; the unfinished operations are read and judged.
 */
#ifndef PW_CATALOG_STATS_H
#define PW_CATALOG_STATS_H

#include "catalog.h"
#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pw_stat_count {
	char *key;      /* kind, or attempt class */
	char *key2;     /* outcome (operations); NULL for attempts */
	int64_t count;
} pw_stat_count;

typedef struct pw_catalog_stats {
	pw_stat_count *ops;       /* stored outcomes counted, running/interrupted derived now */
	size_t op_count;
	pw_stat_count *attempts;
	size_t attempt_count;
	char *verify_finished_at; /* the last finished runtime.verify; NULL when none */
	char *verify_outcome;
} pw_catalog_stats;

pw_err *pw_catalog_stats_read(pw_catalog *c, pw_catalog_stats *out);
void pw_catalog_stats_clear(pw_catalog_stats *s);

#endif
