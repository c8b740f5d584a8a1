/* history export, prune and check, over pw_catalog_db(). */
#include "config.h"

#include "history_admin.h"

#include "clock.h"
#include "i18n.h"
#include "pkgdb.h"
#include "proc.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pw_err *db_error(sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db);
	pw_errcode pc = (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) ? PW_ERR_CORRUPT
		: code == SQLITE_INTERRUPT ? PW_ERR_CANCELLED : PW_ERR_IO;
	return pw_err_new(pc, pw_catalog_damage_hint(code), _("catalog: %s: %s"), _(what), sqlite3_errmsg(db));
}

/* Stored times end in 'Z'; "2026-12-01T08:00Z" must not sort after "…08:00:00.000Z". */
static int date_len(const char *d)
{
	size_t n = strlen(d);
	return (int)(n && d[n - 1] == 'Z' ? n - 1 : n);
}

/* ---------------------------------------------------------------- export */

static int export_cancelled(void *ud)
{
	return pw_cancel_raised(ud) ? 1 : 0;
}

typedef struct export_walk {
	pw_pkgdb_reader *changes;
	pw_apijobs_reader *jobs;
	pw_export_fn fn;
	void *ud;
} export_walk;

static pw_err *export_one(const pw_op_rec *op, const pw_attempt_list *att, void *ud)
{
	export_walk *w = ud;
	pw_pkg_changes ch = { 0 };
	char *env = NULL;
	pw_apijob_rec job = { 0 };
	bool has_job = false;
	pw_err *e = pw_pkgdb_reader_get(w->changes, op->id, &env, &ch);
	if (!e)
		e = pw_apijobs_reader_get(w->jobs, op->id, &job, &has_job);
	if (!e)
		e = w->fn(op, att, env, &ch, has_job ? &job : NULL, w->ud);
	pw_apijob_rec_clear(&job);
	pw_pkg_changes_clear(&ch);
	free(env);
	return e;
}

static pw_err *export_alone(const pw_apijob_rec *job, void *ud)
{
	export_walk *w = ud;
	return w->fn(NULL, NULL, NULL, NULL, job, w->ud);
}

pw_err *pw_history_export(pw_catalog *c, const char *since, const pw_cancel *cancel, pw_export_fn fn, void *ud)
{
	sqlite3 *db = pw_catalog_db(c);
	if (!db)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	export_walk w = { NULL, NULL, fn, ud };
	/* One read transaction: in WAL mode the operations, their jobs and the
	 * jobs alone are read from one state of the file. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(db, N_("exporting the history"));
	pw_err *e = pw_pkgdb_reader_open(c, &w.changes);
	if (!e)
		e = pw_apijobs_reader_open(c, &w.jobs);
	if (cancel) /* only read; SQLite's callback takes void * */
		sqlite3_progress_handler(db, 1000, export_cancelled, (void *)(uintptr_t)cancel);
	if (!e)
		e = pw_catalog_ops_each(c, since, export_one, &w);
	if (!e)
		e = pw_apijobs_each_alone(c, since && *since ? since : NULL, since ? date_len(since) : 0, export_alone, &w);
	pw_pkgdb_reader_close(&w.changes);
	pw_apijobs_reader_close(&w.jobs);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (cancel) {
		sqlite3_progress_handler(db, 0, NULL, NULL);
		if (pw_cancel_raised(cancel)) {
			pw_err_free(e);
			e = pw_err_new(PW_ERR_CANCELLED, NULL, "%s", _("the export was interrupted"));
		}
	}
	return e;
}

/* ---------------------------------------------------------------- prune */

/* pyward_running(host, pid, started_at): 1 while an unfinished operation's
 * process runs, as history derives "running" (this host, the pid alive and
 * started no later than the operation). A prune never deletes such an
 * operation, whatever the date: it is still being written. */
static void sql_running(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	(void)argc;
	const char *self = sqlite3_user_data(ctx);
	const char *host = (const char *)sqlite3_value_text(v[0]);
	const char *started = (const char *)sqlite3_value_text(v[2]);
	bool running = host && started && strcmp(host, self) == 0 &&
		       pw_proc_alive_since(sqlite3_value_int64(v[1]), pw_clock_iso_to_unix(started));
	sqlite3_result_int(ctx, running);
}

/* The operations a prune deletes: started before ?1 and ended (finished,
 * or interrupted: their process is gone). */
#define PRUNED "started_at < ?1 AND (outcome IS NOT NULL OR NOT pyward_running(host, pid, started_at))"

static pw_err *count_before(sqlite3 *db, const char *sql, const char *before, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(db, N_("pruning the history"));
	sqlite3_bind_text(st, 1, before, date_len(before), SQLITE_TRANSIENT);
	pw_err *e = NULL;
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	else
		e = db_error(db, N_("pruning the history"));
	sqlite3_finalize(st);
	return e;
}

static pw_err *record_prune(sqlite3 *db, const char *before, const char *args, pw_prune_result *r)
{
	pw_actor a;
	pw_catalog_actor_current(&a);
	char now[40];
	pw_clock_iso_now(now, sizeof now);
	char *note = xasprintf("deleted %lld operations started before %.*s (%lld attempts, %lld package changes,"
			       " %lld API jobs)", (long long)r->operations, date_len(before), before,
			       (long long)r->attempts, (long long)r->package_changes, (long long)r->api_jobs);
	char *target = xasprintf("before %.*s", date_len(before), before);
	sqlite3_stmt *st = NULL;
	pw_err *e = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome,"
				   " user, uid, host, pid, pyward_version, duration_ms, note)"
				   " VALUES ('history.prune', ?1, ?2, ?3, ?3, 'ok', ?4, ?5, ?6, ?7, ?8, 0, ?9)",
			       -1, &st, NULL) != SQLITE_OK)
		e = db_error(db, N_("recording the prune"));
	if (!e) {
		sqlite3_bind_text(st, 1, target, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, args ? args : "", -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, now, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, a.user, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 5, (int64_t)a.uid);
		sqlite3_bind_text(st, 6, a.host, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 7, (int64_t)a.pid);
		sqlite3_bind_text(st, 8, PACKAGE_VERSION, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 9, note, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			e = db_error(db, N_("recording the prune"));
		else
			r->operation_id = sqlite3_last_insert_rowid(db);
	}
	sqlite3_finalize(st);
	free(note);
	free(target);
	return e;
}

pw_err *pw_history_prune(pw_catalog *c, const char *before, const char *args, pw_prune_result *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = pw_catalog_db(c);
	if (!db)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	if (!before || !*before)
		return pw_err_new(PW_ERR_USAGE, NULL, _("prune needs a date"));
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(db, N_("pruning the history"));
	pw_err *e = NULL;
	pw_actor self;
	pw_catalog_actor_current(&self);
	if (sqlite3_create_function_v2(db, "pyward_running", 3, SQLITE_UTF8, xstrdup(self.host), sql_running, NULL,
				       NULL, free) != SQLITE_OK)
		e = db_error(db, N_("pruning the history"));
	if (!e)
		e = count_before(db, "SELECT count(*) FROM operations WHERE " PRUNED, before, &out->operations);
	if (!e)
		e = count_before(db, "SELECT count(*) FROM attempts WHERE operation_id IN"
				 " (SELECT id FROM operations WHERE " PRUNED ")", before, &out->attempts);
	if (!e)
		e = count_before(db, "SELECT count(*) FROM package_changes WHERE operation_id IN"
				 " (SELECT id FROM operations WHERE " PRUNED ")", before, &out->package_changes);
	/* attempts and package_changes go with their operation (ON DELETE CASCADE). */
	sqlite3_stmt *st = NULL;
	if (!e && sqlite3_prepare_v2(db, "DELETE FROM operations WHERE " PRUNED, -1, &st, NULL) != SQLITE_OK)
		e = db_error(db, N_("pruning the history"));
	if (!e) {
		sqlite3_bind_text(st, 1, before, date_len(before), SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			e = db_error(db, N_("pruning the history"));
	}
	sqlite3_finalize(st);
	if (!e)
		e = pw_apijobs_prune(c, before, date_len(before), &out->api_jobs);
	if (!e)
		e = record_prune(db, before, args, out);
	if (!e && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		e = db_error(db, N_("pruning the history"));
	if (e && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	if (e)
		memset(out, 0, sizeof *out);
	return e;
}

/* ---------------------------------------------------------------- check */

/* A report may hold several lines, the first naming the database. */
static void add_problem(pw_history_check_result *out, const char *report)
{
	static const char banner[] = "*** in database main ***";
	for (const char *p = report; *p && out->count < PW_HISTORY_CHECK_MAX;) {
		size_t n = strcspn(p, "\n");
		if (n && !(n == sizeof banner - 1 && strncmp(p, banner, n) == 0)) {
			out->problems = xrealloc(out->problems, (out->count + 1) * sizeof *out->problems);
			out->problems[out->count++] = xstrndup(p, n);
		}
		p += n + (p[n] == '\n');
	}
}

/* The counters the triggers keep (schema 7: operation_counts,
 * attempt_counts, last_finished) against a count of the rows they stand
 * for: a tool that wrote the file with the triggers dropped, or a counter
 * edited by hand, leaves /metrics and `history stats` saying what the
 * rows do not. Each statement yields one mismatch a row: a what, the
 * kept value and the counted one (NULL: none). */
static const char SQL_OP_COUNTS[] =
	"SELECT kind || ' ' || outcome, sum(kept), sum(counted) FROM ("
	" SELECT kind, outcome, n AS kept, 0 AS counted FROM main.operation_counts"
	" UNION ALL SELECT kind, outcome, 0, count(*) FROM main.operations WHERE outcome IS NOT NULL"
	" GROUP BY kind, outcome) GROUP BY kind, outcome HAVING sum(kept) != sum(counted)";
static const char SQL_ATTEMPT_COUNTS[] =
	"SELECT class, sum(kept), sum(counted) FROM ("
	" SELECT class, n AS kept, 0 AS counted FROM main.attempt_counts"
	" UNION ALL SELECT class, 0, count(*) FROM main.attempts GROUP BY class)"
	" GROUP BY class HAVING sum(kept) != sum(counted)";
static const char SQL_LAST_FINISHED[] =
	"SELECT k.kind, l.operation_id, (SELECT id FROM main.operations WHERE kind = k.kind"
	"  AND outcome IS NOT NULL AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1) AS want"
	" FROM (SELECT DISTINCT kind FROM main.operations UNION SELECT kind FROM main.last_finished) k"
	" LEFT JOIN main.last_finished l ON l.kind = k.kind"
	" WHERE l.operation_id IS NOT want"
	"  OR (l.kind IS NOT NULL AND NOT EXISTS (SELECT 1 FROM main.operations o WHERE o.id = l.operation_id"
	"   AND o.finished_at IS l.finished_at AND o.outcome IS l.outcome))";

static void counter_problem(pw_history_check_result *out, int which, sqlite3_stmt *st)
{
	const char *what = (const char *)sqlite3_column_text(st, 0);
	long long kept = sqlite3_column_int64(st, 1), counted = sqlite3_column_int64(st, 2);
	bool has_kept = sqlite3_column_type(st, 1) != SQLITE_NULL;
	bool has_counted = sqlite3_column_type(st, 2) != SQLITE_NULL;
	char *line = NULL;
	if (which == 0)
		line = xasprintf(_("operation_counts: %lld operations '%s' kept, %lld in the rows"), kept,
				 what ? what : "?", counted);
	else if (which == 1)
		line = xasprintf(_("attempt_counts: %lld attempts of class '%s' kept, %lld in the rows"), kept,
				 what ? what : "?", counted);
	else if (has_kept && has_counted && kept != counted)
		line = xasprintf(_("last_finished: operation %lld kept as the last '%s' finished, the rows say %lld"),
				 kept, what ? what : "?", counted);
	else if (has_kept && has_counted)
		line = xasprintf(_("last_finished: operation %lld kept as the last '%s' finished, with another time or outcome than its row"),
				 kept, what ? what : "?");
	else if (has_kept)
		line = xasprintf(_("last_finished: operation %lld kept as the last '%s' finished, the rows have none"),
				 kept, what ? what : "?");
	else
		line = xasprintf(_("last_finished: none kept for '%s', the rows say operation %lld"), what ? what : "?",
				 counted);
	add_problem(out, line);
	free(line);
}

/* Only a file with the counters (schema 7 on), and only a file whose pages
 * are sound: on a damaged one the counts read garbage. */
static pw_err *check_counters(sqlite3 *db, pw_history_check_result *out)
{
	static const char *const sql[] = { SQL_OP_COUNTS, SQL_ATTEMPT_COUNTS, SQL_LAST_FINISHED };
	sqlite3_stmt *st = NULL;
	bool kept = sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name IN"
					   " ('operation_counts', 'attempt_counts', 'last_finished')", -1, &st, NULL) == SQLITE_OK
		    && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3;
	sqlite3_finalize(st);
	for (int i = 0; kept && i < 3; i++) {
		int rc = sqlite3_prepare_v2(db, sql[i], -1, &st, NULL);
		while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			counter_problem(out, i, st);
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_error(db, N_("comparing the counters with the rows"));
	}
	return NULL;
}

pw_err *pw_history_check(pw_catalog *c, const pw_cancel *cancel, pw_history_check_result *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st = NULL;
	char sql[48];
	snprintf(sql, sizeof sql, "PRAGMA integrity_check(%d)", PW_HISTORY_CHECK_MAX);
	if (sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		out->pages = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (cancel) /* only read; SQLite's callback takes void * */
		sqlite3_progress_handler(db, 1000, export_cancelled, (void *)(uintptr_t)cancel);
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(st, 0);
		if (!line || strcmp(line, "ok") != 0)
			add_problem(out, line ? line : "?");
		rc = SQLITE_OK;
	}
	pw_err *e = NULL;
	int code = sqlite3_errcode(db);
	if (rc != SQLITE_DONE && (code == SQLITE_CORRUPT || code == SQLITE_NOTADB))
		add_problem(out, sqlite3_errmsg(db)); /* damage bad enough to stop the check */
	else if (rc != SQLITE_DONE)
		e = db_error(db, N_("checking the file"));
	sqlite3_finalize(st);
	if (!e && out->count == 0)
		e = check_counters(db, out);
	if (cancel)
		sqlite3_progress_handler(db, 0, NULL, NULL);
	if (e)
		pw_history_check_clear(out);
	return e;
}

void pw_history_check_clear(pw_history_check_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->count; i++)
		free(r->problems[i]);
	free(r->problems);
	memset(r, 0, sizeof *r);
}
