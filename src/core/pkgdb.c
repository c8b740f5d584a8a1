/* package_changes rows: written per operation, read per operation and per package. */
#include "config.h"

#include "pkgdb.h"

#include "catalog.h"
#include "i18n.h"
#include "pkgname.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static pw_err *db_error(sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db);
	pw_errcode pc = (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) ? PW_ERR_CORRUPT : PW_ERR_IO;
	return pw_err_new(pc, pw_catalog_damage_hint(code), _("catalog: %s: %s"), _(what), sqlite3_errmsg(db));
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static const char SQL_INSERT[] =
	"INSERT INTO package_changes (operation_id, env, name, display_name, action, old_version,"
	" new_version, installer, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

static pw_err *insert_all(sqlite3 *db, int64_t op, const char *env, const pw_pkg_changes *ch)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, SQL_INSERT, -1, &st, NULL) != SQLITE_OK)
		return db_error(db, N_("recording package changes"));
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < ch->count; i++) {
		const pw_pkg_change *c = &ch->items[i];
		char *key = pw_pkgname_key(c->name);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, op);
		bind_text(st, 2, env);
		bind_text(st, 3, key);
		bind_text(st, 4, c->name);
		bind_text(st, 5, pw_pkg_action_name(c->action));
		bind_text(st, 6, c->old_version);
		bind_text(st, 7, c->new_version);
		bind_text(st, 8, c->installer);
		bind_text(st, 9, c->source);
		if (sqlite3_step(st) != SQLITE_DONE)
			e = db_error(db, N_("recording package changes"));
		free(key);
	}
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_pkgdb_insert(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes)
{
	sqlite3 *db = pw_catalog_db(c);
	if (!db || op <= 0 || !changes || changes->count == 0)
		return NULL;
	return insert_all(db, op, env, changes);
}

pw_err *pw_pkgdb_record(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes)
{
	sqlite3 *db = pw_catalog_db(c);
	if (!db || op <= 0 || !changes || changes->count == 0)
		return NULL;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(db, N_("recording package changes"));
	pw_err *e = insert_all(db, op, env, changes);
	if (!e && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		e = db_error(db, N_("recording package changes"));
	if (e && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return e;
}

static char *col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static const char SQL_CHANGES[] =
	"SELECT env, display_name, action, old_version, new_version, installer, source"
	" FROM package_changes WHERE operation_id = ?1 ORDER BY name, id";

/* The changes of op through st (prepared from SQL_CHANGES, reset here). */
static pw_err *read_changes(sqlite3 *db, sqlite3_stmt *st, int64_t op, char **env, pw_pkg_changes *out)
{
	memset(out, 0, sizeof *out);
	if (env)
		*env = NULL;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, op);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		pw_pkg_action a;
		if (!pw_pkg_action_parse((const char *)sqlite3_column_text(st, 2), &a))
			continue;
		if (env && !*env)
			*env = col(st, 0);
		pw_pkg_changes_add(out, a, (const char *)sqlite3_column_text(st, 1),
				   (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
				   (const char *)sqlite3_column_text(st, 5), (const char *)sqlite3_column_text(st, 6));
	}
	pw_err *e = rc == SQLITE_DONE ? NULL : db_error(db, N_("reading package changes"));
	if (e) {
		pw_pkg_changes_clear(out);
		if (env) {
			free(*env);
			*env = NULL;
		}
	}
	return e;
}

pw_err *pw_pkgdb_changes(pw_catalog *c, int64_t op, char **env, pw_pkg_changes *out)
{
	memset(out, 0, sizeof *out);
	if (env)
		*env = NULL;
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st = NULL;
	if (!db || sqlite3_prepare_v2(db, SQL_CHANGES, -1, &st, NULL) != SQLITE_OK)
		return db ? db_error(db, N_("reading package changes")) : NULL;
	pw_err *e = read_changes(db, st, op, env, out);
	sqlite3_finalize(st);
	return e;
}

struct pw_pkgdb_reader {
	sqlite3 *db;
	sqlite3_stmt *st;
};

pw_err *pw_pkgdb_reader_open(pw_catalog *c, pw_pkgdb_reader **out)
{
	*out = NULL;
	sqlite3 *db = pw_catalog_db(c);
	if (!db)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no catalog"));
	pw_pkgdb_reader *r = xcalloc(1, sizeof *r);
	r->db = db;
	if (sqlite3_prepare_v2(db, SQL_CHANGES, -1, &r->st, NULL) != SQLITE_OK) {
		pw_err *e = db_error(db, N_("reading package changes"));
		free(r);
		return e;
	}
	*out = r;
	return NULL;
}

pw_err *pw_pkgdb_reader_get(pw_pkgdb_reader *r, int64_t op, char **env, pw_pkg_changes *out)
{
	return read_changes(r->db, r->st, op, env, out);
}

void pw_pkgdb_reader_close(pw_pkgdb_reader **r)
{
	if (!r || !*r)
		return;
	sqlite3_finalize((*r)->st);
	free(*r);
	*r = NULL;
}

pw_err *pw_pkgdb_later(pw_catalog *c, int64_t op, const char *env, const pw_pkg_changes *changes,
		       int64_t **ids, size_t *count)
{
	*ids = NULL;
	*count = 0;
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st = NULL;
	if (!db || sqlite3_prepare_v2(db, "SELECT DISTINCT operation_id FROM package_changes"
				     " WHERE name = ?1 AND operation_id > ?2 AND env = ?3 ORDER BY operation_id",
				     -1, &st, NULL) != SQLITE_OK)
		return db ? db_error(db, N_("reading package changes")) : NULL;
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < changes->count; i++) {
		char *key = pw_pkgname_key(changes->items[i].name);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, op);
		bind_text(st, 3, env);
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			bool seen = false;
			for (size_t k = 0; k < *count && !seen; k++)
				seen = (*ids)[k] == id;
			if (seen)
				continue;
			*ids = xrealloc(*ids, (*count + 1) * sizeof **ids);
			size_t at = *count;
			while (at > 0 && (*ids)[at - 1] > id) { /* kept ascending */
				(*ids)[at] = (*ids)[at - 1];
				at--;
			}
			(*ids)[at] = id;
			(*count)++;
		}
		if (rc != SQLITE_DONE)
			e = db_error(db, N_("reading package changes"));
		free(key);
	}
	sqlite3_finalize(st);
	if (e) {
		free(*ids);
		*ids = NULL;
		*count = 0;
	}
	return e;
}

pw_err *pw_pkgdb_link_undo(pw_catalog *c, int64_t id, int64_t undo_of)
{
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st = NULL;
	if (!db || sqlite3_prepare_v2(db, "UPDATE operations SET undo_of = ?2 WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return db ? db_error(db, N_("recording an undo")) : NULL;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, undo_of);
	pw_err *e = sqlite3_step(st) == SQLITE_DONE ? NULL : db_error(db, N_("recording an undo"));
	sqlite3_finalize(st);
	return e;
}

/* ---------------------------------------------------------------- watching an operation */

pw_err *pw_pkgwatch_begin(pw_pkgwatch *w, const char *env)
{
	memset(w, 0, sizeof *w);
	w->env = xstrdup(env);
	pw_err *e = pw_distinfo_read(env, &w->before);
	w->armed = e == NULL;
	return e;
}

pw_err *pw_pkgwatch_end(pw_pkgwatch *w, pw_catalog *c, int64_t op, pw_pkg_changes *out)
{
	pw_pkg_changes ch = { 0 };
	pw_distset after = { 0 };
	pw_err *e = NULL;
	if (w->armed) {
		e = pw_distinfo_reread(w->env, &w->before, &after);
		if (!e)
			pw_pkgdiff(&w->before, &after, &ch);
		if (!e)
			e = pw_pkgdb_record(c, op, w->env, &ch);
	}
	pw_distset_clear(&after);
	if (out)
		*out = ch;
	else
		pw_pkg_changes_clear(&ch);
	pw_pkgwatch_clear(w);
	return e;
}

void pw_pkgwatch_clear(pw_pkgwatch *w)
{
	if (!w)
		return;
	pw_distset_clear(&w->before);
	free(w->env);
	memset(w, 0, sizeof *w);
}
