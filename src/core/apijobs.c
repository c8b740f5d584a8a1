/* The HTTP API's jobs in the catalog (apijobs.h). */
#include "config.h"

#include "apijobs.h"

#include "catalog.h"
#include "i18n.h"
#include "proc.h"
#include "redact.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pw_err *db_error(sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db);
	pw_errcode pc = (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) ? PW_ERR_CORRUPT : PW_ERR_IO;
	return pw_err_new(pc, pw_catalog_damage_hint(code), _("catalog: %s: %s"), what, sqlite3_errmsg(db));
}

static pw_err *prep(sqlite3 *db, const char *sql, sqlite3_stmt **st, const char *what)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return NULL;
	*st = NULL;
	return db_error(db, what);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static pw_err *run_done(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? NULL : db_error(db, what);
}

pw_err *pw_apijobs_begin(pw_catalog *c, const char *kind, const char *target, const char *user, const char *args,
			 const char *created_at, int64_t *id)
{
	sqlite3 *db = pw_catalog_db(c);
	pw_actor self;
	pw_catalog_actor_current(&self);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "INSERT INTO api_jobs(kind, target, user, args, host, pid, proc_start, created_at, state)"
			     " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running')", &st, _("recording a job"));
	if (e)
		return e;
	char *redacted = args ? pw_redact_text(args) : NULL;
	bind_text(st, 1, kind);
	bind_text(st, 2, target);
	bind_text(st, 3, user ? user : self.user);
	bind_text(st, 4, redacted);
	bind_text(st, 5, self.host);
	sqlite3_bind_int64(st, 6, (int64_t)getpid());
	sqlite3_bind_int64(st, 7, pw_proc_start(getpid()));
	bind_text(st, 8, created_at);
	free(redacted);
	e = run_done(db, st, _("recording a job"));
	if (!e)
		*id = sqlite3_last_insert_rowid(db);
	return e;
}

pw_err *pw_apijobs_finish(pw_catalog *c, int64_t id, const char *state, const char *finished_at, const char *result,
			  const char *error, int64_t events, const char *cancelled_by)
{
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "UPDATE api_jobs SET state = ?2, finished_at = ?3, result = ?4, error = ?5, events = ?6,"
			     " cancelled_by = ?7 WHERE id = ?1", &st, _("recording a job's end"));
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, state);
	bind_text(st, 3, finished_at);
	bind_text(st, 4, result);
	bind_text(st, 5, error);
	sqlite3_bind_int64(st, 6, events);
	bind_text(st, 7, cancelled_by);
	return run_done(db, st, _("recording a job's end"));
}

#define COLUMNS \
	"id, kind, target, user, args, host, pid, proc_start, created_at, finished_at, state, result, error," \
	" events, cancelled_by"

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static void read_row(sqlite3_stmt *st, const char *this_host, pw_apijob_rec *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->kind = col_str(st, 1);
	r->target = col_str(st, 2);
	r->user = col_str(st, 3);
	r->args = col_str(st, 4);
	r->host = col_str(st, 5);
	r->pid = sqlite3_column_int64(st, 6);
	r->proc_start = sqlite3_column_int64(st, 7);
	r->created_at = col_str(st, 8);
	r->finished_at = col_str(st, 9);
	r->state = col_str(st, 10);
	r->result = col_str(st, 11);
	r->error = col_str(st, 12);
	r->events = sqlite3_column_int64(st, 13);
	r->cancelled_by = col_str(st, 14);
	/* A job still "running" whose server is gone was cut short. */
	if (r->state && strcmp(r->state, "running") == 0 &&
	    !(r->host && strcmp(r->host, this_host) == 0 && pw_proc_alive(r->pid, r->proc_start))) {
		free(r->state);
		r->state = xstrdup("interrupted");
	}
}

pw_err *pw_apijobs_get(pw_catalog *c, int64_t id, pw_apijob_rec *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " COLUMNS " FROM api_jobs WHERE id = ?1", &st, _("reading jobs"));
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	pw_actor self;
	pw_catalog_actor_current(&self);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_row(st, self.host, out);
	else if (rc == SQLITE_DONE)
		e = pw_err_new(PW_ERR_NOTFOUND, NULL, _("no job %lld"), (long long)id);
	else
		e = db_error(db, _("reading jobs"));
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_apijobs_list(pw_catalog *c, int limit, pw_apijob_rec **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " COLUMNS " FROM api_jobs ORDER BY id DESC LIMIT ?1", &st, _("reading jobs"));
	if (e)
		return e;
	sqlite3_bind_int(st, 1, limit > 0 ? limit : 50);
	pw_actor self;
	pw_catalog_actor_current(&self);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*count + 1) * sizeof **out);
		memset(&(*out)[*count], 0, sizeof **out);
		read_row(st, self.host, &(*out)[(*count)++]);
	}
	if (rc != SQLITE_DONE)
		e = db_error(db, _("reading jobs"));
	sqlite3_finalize(st);
	return e;
}

void pw_apijob_rec_clear(pw_apijob_rec *r)
{
	char **fields[] = { &r->kind, &r->target, &r->user, &r->args, &r->host, &r->created_at, &r->finished_at,
			    &r->state, &r->result, &r->error, &r->cancelled_by };
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		free(*fields[i]);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- with operations */

/* The operation id a job's result names; NULL when it names none. */
#define JOB_OPERATION \
	"(CASE WHEN json_valid(result) AND json_type(result, '$.operation') = 'integer'" \
	" THEN json_extract(result, '$.operation') END)"
/* Not an operation in the catalog: it named none, or one since deleted. */
#define JOB_ALONE "NOT EXISTS (SELECT 1 FROM operations o WHERE o.id = " JOB_OPERATION ")"

static pw_err *delete_where(sqlite3 *db, const char *sql, const char *before, int before_len, int64_t *deleted)
{
	sqlite3_stmt *st;
	pw_err *e = prep(db, sql, &st, _("pruning API jobs"));
	if (e)
		return e;
	if (before)
		sqlite3_bind_text(st, 1, before, before_len, SQLITE_TRANSIENT);
	e = run_done(db, st, _("pruning API jobs"));
	if (!e)
		*deleted += sqlite3_changes(db);
	return e;
}

pw_err *pw_apijobs_prune(pw_catalog *c, const char *before, int before_len, int64_t *deleted)
{
	*deleted = 0;
	sqlite3 *db = pw_catalog_db(c);
	/* Jobs of operations gone (now, or by a prune before jobs were pruned
	 * with them). */
	pw_err *e = delete_where(db, "DELETE FROM api_jobs WHERE " JOB_OPERATION " IS NOT NULL AND " JOB_ALONE, NULL, 0,
				 deleted);
	/* Jobs that ran no operation, by their own date; a running one only
	 * when its server is gone (a live one is still working). */
	if (!e)
		e = delete_where(db, "DELETE FROM api_jobs WHERE " JOB_OPERATION " IS NULL AND state <> 'running'"
				 " AND created_at < ?1", before, before_len, deleted);
	sqlite3_stmt *st = NULL;
	if (!e)
		e = prep(db, "SELECT " COLUMNS " FROM api_jobs WHERE state = 'running' AND created_at < ?1", &st,
			 _("pruning API jobs"));
	int64_t *gone = NULL;
	size_t ngone = 0;
	if (!e) {
		sqlite3_bind_text(st, 1, before, before_len, SQLITE_TRANSIENT);
		pw_actor self;
		pw_catalog_actor_current(&self);
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			pw_apijob_rec r = { 0 };
			read_row(st, self.host, &r);
			if (strcmp(r.state, "interrupted") == 0) {
				gone = xrealloc(gone, (ngone + 1) * sizeof *gone);
				gone[ngone++] = r.id;
			}
			pw_apijob_rec_clear(&r);
		}
		if (rc != SQLITE_DONE)
			e = db_error(db, _("pruning API jobs"));
		sqlite3_finalize(st);
	}
	for (size_t i = 0; !e && i < ngone; i++) {
		e = prep(db, "DELETE FROM api_jobs WHERE id = ?1", &st, _("pruning API jobs"));
		if (!e) {
			sqlite3_bind_int64(st, 1, gone[i]);
			e = run_done(db, st, _("pruning API jobs"));
			if (!e)
				*deleted += sqlite3_changes(db);
		}
	}
	free(gone);
	return e;
}

typedef struct job_link {
	int64_t operation, job;
} job_link;

struct pw_apijobs_reader {
	pw_catalog *c;
	job_link *links;   /* by operation */
	size_t count;
};

static int by_operation(const void *a, const void *b)
{
	int64_t x = ((const job_link *)a)->operation, y = ((const job_link *)b)->operation;
	return (x > y) - (x < y);
}

/* The links are read once: a walk over a million operations then costs a
 * search in memory per operation, not a scan of the jobs. */
pw_err *pw_apijobs_reader_open(pw_catalog *c, pw_apijobs_reader **out)
{
	*out = NULL;
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " JOB_OPERATION ", id FROM api_jobs WHERE " JOB_OPERATION " IS NOT NULL", &st,
			 _("reading jobs"));
	if (e)
		return e;
	pw_apijobs_reader *r = xcalloc(1, sizeof *r);
	r->c = c;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->links = xrealloc(r->links, (r->count + 1) * sizeof *r->links);
		r->links[r->count++] = (job_link){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1) };
	}
	if (rc != SQLITE_DONE)
		e = db_error(db, _("reading jobs"));
	sqlite3_finalize(st);
	if (e) {
		pw_apijobs_reader_close(&r);
		return e;
	}
	if (r->count)
		qsort(r->links, r->count, sizeof *r->links, by_operation);
	*out = r;
	return NULL;
}

pw_err *pw_apijobs_reader_get(pw_apijobs_reader *r, int64_t op_id, pw_apijob_rec *out, bool *found)
{
	*found = false;
	job_link key = { op_id, 0 };
	const job_link *l = r->count ? bsearch(&key, r->links, r->count, sizeof *r->links, by_operation) : NULL;
	if (!l)
		return NULL;
	pw_err *e = pw_apijobs_get(r->c, l->job, out);
	*found = !e;
	return e;
}

void pw_apijobs_reader_close(pw_apijobs_reader **r)
{
	if (!r || !*r)
		return;
	free((*r)->links);
	free(*r);
	*r = NULL;
}

pw_err *pw_apijobs_each_alone(pw_catalog *c, const char *since, int since_len, pw_apijob_each_fn fn, void *ud)
{
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " COLUMNS " FROM api_jobs WHERE (?1 IS NULL OR created_at >= ?1) AND " JOB_ALONE
			 " ORDER BY created_at, id", &st, _("reading jobs"));
	if (e)
		return e;
	if (since)
		sqlite3_bind_text(st, 1, since, since_len, SQLITE_TRANSIENT);
	pw_actor self;
	pw_catalog_actor_current(&self);
	int rc = SQLITE_DONE;
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		pw_apijob_rec rec = { 0 };
		read_row(st, self.host, &rec);
		e = fn(&rec, ud);
		pw_apijob_rec_clear(&rec);
	}
	if (!e && rc != SQLITE_DONE)
		e = db_error(db, _("reading jobs"));
	sqlite3_finalize(st);
	return e;
}
