/* The runtime's rows in the catalog (pins, runtimes, runtime_files). */
#include "config.h"

#include "runtime_db.h"

#include "clock.h"
#include "catalog.h"
#include "i18n.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pw_err *db_error(sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db);
	pw_errcode pc = (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) ? PW_ERR_CORRUPT : PW_ERR_IO;
	const char *hint = pw_catalog_damage_hint(code);
	return pw_err_new(pc, hint ? hint : _("see 'pyward history' and the catalog file in the box root"),
			  _("catalog: %s: %s"), what, sqlite3_errmsg(db));
}

static pw_err *exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return NULL;
	pw_err *e = pw_err_new(PW_ERR_IO, NULL, _("catalog: %s"), msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return e;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static pw_err *insert_pin(sqlite3 *db, const pw_pin *pin, const char *url, const char *source, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO pins(kind, name, version, platform, url, sha256, size, source)"
				   " VALUES('runtime', 'cpython', ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "pins");
	bind_text(st, 1, pin->version);
	bind_text(st, 2, pin->platform);
	bind_text(st, 3, url);
	bind_text(st, 4, pin->sha256);
	if (pin->size >= 0)
		sqlite3_bind_int64(st, 5, pin->size);
	else
		sqlite3_bind_null(st, 5);
	bind_text(st, 6, source);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "pins");
	*id = sqlite3_last_insert_rowid(db);
	return NULL;
}

static pw_err *insert_runtime(sqlite3 *db, int64_t pin_id, const char *path, int64_t *id)
{
	char now[40];
	pw_clock_iso_now(now, sizeof now);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO runtimes(pin_id, path, state, installed_at)"
				   " VALUES(?, ?, 'installed', ?)", -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "runtimes");
	sqlite3_bind_int64(st, 1, pin_id);
	bind_text(st, 2, path);
	bind_text(st, 3, now);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "runtimes");
	*id = sqlite3_last_insert_rowid(db);
	return NULL;
}

static pw_err *insert_files(sqlite3 *db, int64_t runtime_id, const pw_manifest *m)
{
	sqlite3_stmt *st = NULL;
	/* OR REPLACE: an amendment (pw_runtime_db_amend) restates a recorded path. */
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO runtime_files(runtime_id, path, size, mode, sha256)"
				   " VALUES(?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "runtime_files");
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < m->count; i++) {
		const pw_manifest_entry *f = &m->items[i];
		sqlite3_bind_int64(st, 1, runtime_id);
		bind_text(st, 2, f->path);
		sqlite3_bind_int64(st, 3, f->size);
		sqlite3_bind_int64(st, 4, (int64_t)f->mode);
		bind_text(st, 5, f->sha256);
		if (sqlite3_step(st) != SQLITE_DONE)
			e = db_error(db, "runtime_files");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_runtime_db_record_begin(pw_catalog *c, const pw_pin *pin, const char *url, const char *source,
				   const char *path, const pw_manifest *m)
{
	sqlite3 *db = pw_catalog_db(c);
	pw_err *e = exec_sql(db, "BEGIN IMMEDIATE");
	if (e)
		return e;
	int64_t pin_id = 0, rid = 0;
	e = insert_pin(db, pin, url, source, &pin_id);
	if (!e)
		e = insert_runtime(db, pin_id, path, &rid);
	if (!e)
		e = insert_files(db, rid, m);
	if (e)
		pw_err_free(exec_sql(db, "ROLLBACK"));
	return e;
}

pw_err *pw_runtime_db_record_end(pw_catalog *c, bool keep)
{
	sqlite3 *db = pw_catalog_db(c);
	pw_err *e = keep ? exec_sql(db, "COMMIT") : NULL;
	if (!keep || e)
		pw_err_free(exec_sql(db, "ROLLBACK"));
	return e;
}

static pw_err *run_update(sqlite3 *db, const char *sql, const char *a, const char *b)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "runtimes");
	bind_text(st, 1, a);
	if (sqlite3_bind_parameter_count(st) > 1)
		bind_text(st, 2, b);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? NULL : db_error(db, "runtimes");
}

pw_err *pw_runtime_db_set_current(pw_catalog *c, const char *path_current, const char *path_previous)
{
	sqlite3 *db = pw_catalog_db(c);
	pw_err *e = exec_sql(db, "BEGIN IMMEDIATE");
	if (!e)
		e = run_update(db, "UPDATE runtimes SET state = CASE WHEN path = ?1 THEN 'current'"
				   " WHEN path = ?2 THEN 'previous' ELSE 'superseded' END"
				   " WHERE removed_at IS NULL", path_current, path_previous ? path_previous : "");
	if (!e)
		e = exec_sql(db, "COMMIT");
	if (e)
		pw_err_free(exec_sql(db, "ROLLBACK"));
	return e;
}

pw_err *pw_runtime_db_mark_removed(pw_catalog *c, const char *path)
{
	char now[40];
	pw_clock_iso_now(now, sizeof now);
	return run_update(pw_catalog_db(c),
			  "UPDATE runtimes SET state = 'removed', removed_at = ?1"
			  " WHERE path = ?2 AND removed_at IS NULL", now, path);
}

static pw_err *find_runtime(sqlite3 *db, const char *path, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT id FROM runtimes WHERE path = ? AND removed_at IS NULL"
				   " ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "runtimes");
	bind_text(st, 1, path);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return NULL;
	if (rc != SQLITE_DONE)
		return db_error(db, "runtimes");
	return pw_err_new(PW_ERR_NOTFOUND, _("reinstall it with 'pyward runtime install' to record one"),
			  _("the catalog holds no manifest for the install at %s"), path);
}

pw_err *pw_runtime_db_manifest(pw_catalog *c, const char *path, pw_manifest *out)
{
	sqlite3 *db = pw_catalog_db(c);
	int64_t id = 0;
	pw_err *e = find_runtime(db, path, &id);
	if (e)
		return e;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT path, size, mode, sha256 FROM runtime_files"
				   " WHERE runtime_id = ? ORDER BY path", -1, &st, NULL) != SQLITE_OK)
		return db_error(db, "runtime_files");
	sqlite3_bind_int64(st, 1, id);
	memset(out, 0, sizeof *out);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (out->count == cap) {
			cap = cap ? cap * 2 : 256;
			out->items = xrealloc(out->items, cap * sizeof *out->items);
		}
		pw_manifest_entry *f = &out->items[out->count++];
		memset(f, 0, sizeof *f);
		f->path = xstrdup((const char *)sqlite3_column_text(st, 0));
		f->size = sqlite3_column_int64(st, 1);
		f->mode = (mode_t)sqlite3_column_int64(st, 2);
		snprintf(f->sha256, sizeof f->sha256, "%s", (const char *)sqlite3_column_text(st, 3));
		if (S_ISREG(f->mode))
			out->total_bytes += f->size;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		pw_manifest_clear(out);
		return db_error(db, "runtime_files");
	}
	return NULL;
}

static pw_err *delete_files(sqlite3 *db, int64_t runtime_id, const char *const *gone, size_t ngone)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "DELETE FROM runtime_files WHERE runtime_id = ? AND path = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return db_error(db, "runtime_files");
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < ngone; i++) {
		sqlite3_bind_int64(st, 1, runtime_id);
		bind_text(st, 2, gone[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			e = db_error(db, "runtime_files");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_runtime_db_amend(pw_catalog *c, const char *path, const pw_manifest *set, const char *const *gone,
			    size_t ngone)
{
	sqlite3 *db = pw_catalog_db(c);
	pw_err *e = exec_sql(db, "BEGIN IMMEDIATE");
	if (e)
		return e;
	int64_t id = 0;
	e = find_runtime(db, path, &id);
	if (!e)
		e = insert_files(db, id, set);
	if (!e)
		e = delete_files(db, id, gone, ngone);
	if (!e)
		e = exec_sql(db, "COMMIT");
	if (e)
		pw_err_free(exec_sql(db, "ROLLBACK"));
	return e;
}
