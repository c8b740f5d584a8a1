/* Counts over the catalog for monitoring (catalog_stats.h). */
#include "config.h"

#include "catalog_stats.h"
#include "i18n.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static void add(pw_stat_count **v, size_t *n, const char *key, const char *key2, int64_t count)
{
	for (size_t i = 0; i < *n; i++) {
		pw_stat_count *c = &(*v)[i];
		if (strcmp(c->key, key) == 0 && ((!key2 && !c->key2) || (key2 && c->key2 && strcmp(c->key2, key2) == 0))) {
			c->count += count;
			return;
		}
	}
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = (pw_stat_count){ .key = xstrdup(key), .key2 = key2 ? xstrdup(key2) : NULL, .count = count };
}

static pw_err *db_error(sqlite3 *db)
{
	int code = sqlite3_errcode(db);
	const char *hint = pw_catalog_damage_hint(code);
	return pw_err_new(hint ? PW_ERR_CORRUPT : PW_ERR_IO, hint, _("reading the catalog's counts: %s"),
			  sqlite3_errmsg(db));
}

/* Rows of (text, text|NULL, count) into v. */
static pw_err *grouped(sqlite3 *db, const char *sql, pw_stat_count **v, size_t *n)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(db);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *k2 = (const char *)sqlite3_column_text(st, 1);
		add(v, n, k ? k : "", k2, sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? NULL : db_error(db);
}

/* Unfinished operations read as running or interrupted, as in history:
 * asked through the catalog's own filter, which knows how to tell. */
static pw_err *unfinished(pw_catalog *c, const char *outcome, pw_catalog_stats *s)
{
	pw_op_filter f = { .outcome = outcome, .limit = -1 };
	pw_op_list l;
	pw_err *e = pw_catalog_ops_query(c, &f, &l);
	if (e)
		return e;
	for (size_t i = 0; i < l.count; i++)
		add(&s->ops, &s->op_count, l.items[i].kind, outcome, 1);
	pw_op_list_clear(&l);
	return NULL;
}

static pw_err *last_verify(sqlite3 *db, pw_catalog_stats *s)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT finished_at, outcome FROM last_finished WHERE kind = 'runtime.verify'", -1, &st,
			       NULL) != SQLITE_OK)
		return db_error(db);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s->verify_finished_at = xstrdup((const char *)sqlite3_column_text(st, 0));
		s->verify_outcome = xstrdup((const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? NULL : db_error(db);
}

pw_err *pw_catalog_stats_read(pw_catalog *c, pw_catalog_stats *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = c ? pw_catalog_db(c) : NULL;
	if (!db)
		return NULL; /* no catalog yet: nothing happened */
	/* The counters the catalog keeps (schema 7): a few rows whatever its
	 * size; the unfinished operations are few, and judged as history does. */
	pw_err *e = grouped(db, "SELECT kind, outcome, n FROM operation_counts", &out->ops, &out->op_count);
	if (!e)
		e = unfinished(c, PW_OUTCOME_RUNNING, out);
	if (!e)
		e = unfinished(c, PW_OUTCOME_INTERRUPTED, out);
	if (!e)
		e = grouped(db, "SELECT class, NULL, n FROM attempt_counts", &out->attempts, &out->attempt_count);
	if (!e)
		e = last_verify(db, out);
	if (e)
		pw_catalog_stats_clear(out);
	return e;
}

static void counts_free(pw_stat_count *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].key2);
	}
	free(v);
}

void pw_catalog_stats_clear(pw_catalog_stats *s)
{
	if (!s)
		return;
	counts_free(s->ops, s->op_count);
	counts_free(s->attempts, s->attempt_count);
	free(s->verify_finished_at);
	free(s->verify_outcome);
	memset(s, 0, sizeof *s);
}
