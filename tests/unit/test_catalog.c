/* Unit tests for the catalog, on real SQLite files in fresh /tmp directories. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_fixture.h"
#include "err.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The catalog's PRAGMA application_id ('PYWD'): part of the file format. */
#define APP_ID 0x50595744

/* String literals for the char * fields of pw_attempt_rec. */
#define MUT(s) ((char *)(uintptr_t)(s))

/* ---------------------------------------------------------------- helpers */

static pw_catalog *open_rw(const char *path)
{
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	assert_non_null(c);
	return c;
}

static void spit_at(const char *path, long offset, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, offset), (ssize_t)len);
	close(fd);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static char *raw_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	char *v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* Tests set started_at by hand to get a known order. */
static void set_started(pw_catalog *c, int64_t id, const char *ts)
{
	sqlite3_stmt *st;
	sqlite3 *db = pw_catalog_db(c);
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE operations SET started_at = ?1 WHERE id = ?2",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, ts, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, id);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

static int64_t begin(pw_catalog *c, const char *kind, const char *target)
{
	pw_op_start s = { .kind = kind, .target = target, .args = "pyward test" };
	int64_t id = 0;
	assert_ok(pw_catalog_op_begin(c, &s, &id));
	assert_true(id > 0);
	return id;
}

static int64_t done(pw_catalog *c, const char *kind, const char *target, const char *outcome)
{
	int64_t id = begin(c, kind, target);
	assert_ok(pw_catalog_op_finish(c, id, outcome, NULL));
	return id;
}

static pw_op_list query(pw_catalog *c, const pw_op_filter *f)
{
	pw_op_list l;
	assert_ok(pw_catalog_ops_query(c, f, &l));
	return l;
}

static pid_t dead_pid(void)
{
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------- schema and files */

static void test_create_schema(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	sqlite3 *db = pw_catalog_db(c);
	assert_int_equal(pw_catalog_schema_version(c), PW_CATALOG_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), PW_CATALOG_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "PRAGMA application_id"), APP_ID);
	char *mode = raw_text(db, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");
	free(mode);
	assert_int_equal(raw_int(db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(raw_int(db, "PRAGMA busy_timeout"), 5000);
	/* FULL (2): a committed operation survives a power cut (DESIGN.md). */
	assert_int_equal(raw_int(db, "PRAGMA synchronous"), 2);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
				 " ('operations', 'attempts', 'pins', 'runtimes', 'runtime_files', 'venvs')"), 6);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN"
				 " ('operations_started_at', 'attempts_operation_seq')"), 2);
	pw_catalog_close(&c);
	assert_null(c);
	pw_catalog_close(&c);
}

static void test_reopen_keeps_data(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	int64_t id = done(c, "runtime.install", "3.12.13", PW_OUTCOME_OK);
	pw_catalog_close(&c);

	c = open_rw(f->path);
	assert_int_equal(pw_catalog_schema_version(c), PW_CATALOG_SCHEMA_VERSION);
	pw_op_list l = query(c, NULL);
	assert_int_equal(l.count, 1);
	assert_int_equal(l.items[0].id, id);
	assert_string_equal(l.items[0].outcome, "ok");
	pw_op_list_clear(&l);
	assert_null(l.items);
	assert_int_equal(l.count, 0);
	pw_catalog_close(&c);

	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	l = query(c, NULL);
	assert_int_equal(l.count, 1);
	assert_string_equal(l.items[0].kind, "runtime.install");
	pw_op_list_clear(&l);
	pw_op_start s = { .kind = "venv.create" };
	expect_err(pw_catalog_op_begin(c, &s, &id), PW_ERR_USAGE);
	expect_err(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL), PW_ERR_USAGE);
	pw_catalog_close(&c);
}

static void test_zero_byte_file_is_initialised(void **state)
{
	fixture *f = *state;
	spit_at(f->path, 0, "", 0);
	pw_catalog *c = open_rw(f->path);
	assert_int_equal(raw_int(pw_catalog_db(c), "PRAGMA user_version"), PW_CATALOG_SCHEMA_VERSION);
	pw_catalog_close(&c);
}

static void test_readonly_missing_is_empty(void **state)
{
	fixture *f = *state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	pw_op_filter all = { .limit = -1, .kind = "runtime*" };
	pw_op_list l = query(c, &all);
	assert_int_equal(l.count, 0);
	assert_null(l.items);
	pw_op_rec op;
	pw_attempt_list att;
	expect_err(pw_catalog_op_get(c, 1, &op, &att), PW_ERR_NOTFOUND);
	assert_int_equal(att.count, 0);
	pw_op_start s = { .kind = "venv.create" };
	int64_t id;
	expect_err(pw_catalog_op_begin(c, &s, &id), PW_ERR_USAGE);
	pw_attempt_rec a = { .operation_id = 1 };
	expect_err(pw_catalog_attempt_add(c, &a), PW_ERR_USAGE);
	assert_non_null(pw_catalog_db(c));
	pw_catalog_close(&c);
	assert_false(exists(f->path));
	assert_false(side_file_exists(f->path, "-wal"));

	/* An empty file reads the same way and stays empty. */
	spit_at(f->path, 0, "", 0);
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	l = query(c, NULL);
	assert_int_equal(l.count, 0);
	pw_catalog_close(&c);
	size_t len;
	free(slurp(f->path, &len));
	assert_int_equal(len, 0);
}

/* Open must fail with CORRUPT, with the path in the message and a hint, in
 * both modes, leaving the file byte for byte and creating no side files. */
static void expect_refused(const char *path, const char *hint_word)
{
	file_copy before = file_copy_of(path);
	for (int m = 0; m < 2; m++) {
		pw_catalog *c = NULL;
		pw_err *e = pw_catalog_open(path, m ? PW_CATALOG_READ_ONLY : PW_CATALOG_READ_WRITE, &c);
		assert_non_null(e);
		assert_null(c);
		assert_int_equal(pw_err_code(e), PW_ERR_CORRUPT);
		assert_non_null(strstr(pw_err_message(e), path));
		assert_non_null(pw_err_hint(e));
		assert_non_null(strstr(pw_err_hint(e), hint_word));
		pw_err_free(e);
	}
	assert_file_unchanged(path, &before);
	assert_false(side_file_exists(path, "-wal"));
	assert_false(side_file_exists(path, "-journal"));
}

static void test_text_file_refused(void **state)
{
	fixture *f = *state;
	static const char line[] = "hello world\n";
	for (int i = 0; i < 500; i++)
		spit_at(f->path, i * (long)(sizeof line - 1), line, sizeof line - 1);
	expect_refused(f->path, "--box-root");

	/* Shorter than an SQLite header. */
	unlink(f->path);
	spit_at(f->path, 0, "SQLite", 6);
	expect_refused(f->path, "--box-root");
}

static void make_foreign(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	raw_exec(db, sql);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_foreign_sqlite_refused(void **state)
{
	fixture *f = *state;
	make_foreign(f->path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
		     "INSERT INTO notes (body) VALUES ('keep me'), ('and me');");
	expect_refused(f->path, "not a pyward catalog");

	/* No tables but another application_id. */
	unlink(f->path);
	make_foreign(f->path, "PRAGMA application_id = 1234; PRAGMA user_version = 3");
	expect_refused(f->path, "not a pyward catalog");

	/* No tables and no id, but not empty: still not ours to take over. */
	unlink(f->path);
	make_foreign(f->path, "PRAGMA user_version = 0; PRAGMA journal_mode = WAL");
	expect_refused(f->path, "not a pyward catalog");
}

static void test_newer_schema_refused(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	done(c, "runtime.install", NULL, PW_OUTCOME_OK);
	raw_exec(pw_catalog_db(c), "PRAGMA user_version = 99");
	pw_catalog_close(&c);
	expect_newer_refused(f->path, PW_CATALOG_READ_WRITE);
	expect_newer_refused(f->path, PW_CATALOG_READ_ONLY);
	/* Still version 99: nothing was migrated back. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 99);
	sqlite3_close(db);
}

/* Every call on a damaged catalog either works or says CORRUPT; at least
 * one must say it. */
static int corrupt_seen(pw_err *e, int seen)
{
	if (!e)
		return seen;
	if (pw_err_code(e) != PW_ERR_CORRUPT)
		fail_msg("expected corrupt, got %s: %s", pw_err_code_name(pw_err_code(e)), pw_err_message(e));
	assert_non_null(pw_err_hint(e));
	pw_err_free(e);
	return seen + 1;
}

static void test_clobbered_catalog(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	char args[300];
	memset(args, 'a', sizeof args - 1);
	args[sizeof args - 1] = '\0';
	for (int i = 0; i < 200; i++) {
		pw_op_start s = { .kind = "venv.install", .target = "/ws/.venv", .args = args };
		int64_t id;
		assert_ok(pw_catalog_op_begin(c, &s, &id));
		pw_attempt_rec a = { .operation_id = id, .argv = args, .klass = MUT("ok") };
		assert_ok(pw_catalog_attempt_add(c, &a));
		assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL));
	}
	pw_catalog_close(&c);
	assert_false(side_file_exists(f->path, "-wal"));

	unsigned char junk[3 * 4096];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof junk; i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (unsigned char)(x >> 16);
	}
	spit_at(f->path, 4096, junk, sizeof junk);
	file_copy before = file_copy_of(f->path);

	int seen = 0;
	for (int m = 0; m < 2; m++) {
		c = NULL;
		seen = corrupt_seen(pw_catalog_open(f->path, m ? PW_CATALOG_READ_ONLY : PW_CATALOG_READ_WRITE, &c), seen);
		if (!c)
			continue;
		pw_op_filter all = { .limit = -1 };
		pw_op_list l = { 0 };
		seen = corrupt_seen(pw_catalog_ops_query(c, &all, &l), seen);
		pw_op_list_clear(&l);
		pw_op_rec op;
		pw_attempt_list att;
		seen = corrupt_seen(pw_catalog_op_get(c, 3, &op, &att), seen);
		pw_op_rec_clear(&op);
		pw_attempt_list_clear(&att);
		pw_catalog_close(&c);
	}
	assert_true(seen >= 2);
	assert_file_unchanged(f->path, &before);
}

/* ---------------------------------------------------------------- operations */

static void test_roundtrip_fields(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	pw_actor who = { .user = "alice", .uid = 1234, .host = "build-7", .pid = 4242 };
	pw_op_start s = {
		.kind = "venv.create", .target = "/srv/app/.venv",
		.args = "pyward venv create /srv/app/.venv", .actor = &who,
	};
	int64_t id;
	assert_ok(pw_catalog_op_begin(c, &s, &id));
	sleep_ms(30);
	assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_FAILED, "pip could not reach the index"));

	pw_op_list l = query(c, NULL);
	assert_int_equal(l.count, 1);
	pw_op_rec *r = &l.items[0];
	assert_int_equal(r->id, id);
	assert_string_equal(r->kind, "venv.create");
	assert_string_equal(r->target, "/srv/app/.venv");
	assert_string_equal(r->args, "pyward venv create /srv/app/.venv");
	assert_int_equal(strlen(r->started_at), 24);
	assert_int_equal(r->started_at[10], 'T');
	assert_int_equal(r->started_at[23], 'Z');
	assert_non_null(r->finished_at);
	assert_true(strcmp(r->finished_at, r->started_at) >= 0);
	assert_string_equal(r->outcome, "failed");
	assert_string_equal(r->stop_reason, "pip could not reach the index");
	assert_string_equal(r->user, "alice");
	assert_int_equal(r->uid, 1234);
	assert_string_equal(r->host, "build-7");
	assert_int_equal(r->pid, 4242);
	assert_string_equal(r->pyward_version, PACKAGE_VERSION);
	assert_true(r->duration_ms >= 30 && r->duration_ms < 5000);
	assert_int_equal(r->attempt_count, 0);
	pw_op_list_clear(&l);

	/* Default actor: this process; no target, no args. */
	pw_op_start s2 = { .kind = "runtime.list" };
	int64_t id2;
	assert_ok(pw_catalog_op_begin(c, &s2, &id2));
	pw_op_rec op;
	assert_ok(pw_catalog_op_get(c, id2, &op, NULL));
	pw_actor me;
	pw_catalog_actor_current(&me);
	assert_string_equal(op.user, me.user);
	assert_int_equal(op.uid, me.uid);
	assert_string_equal(op.host, me.host);
	assert_int_equal(op.pid, getpid());
	assert_null(op.target);
	assert_string_equal(op.args, "");
	assert_null(op.finished_at);
	assert_null(op.stop_reason);
	assert_int_equal(op.duration_ms, -1);
	assert_string_equal(op.outcome, PW_OUTCOME_RUNNING);
	pw_op_rec_clear(&op);
	assert_null(op.kind);
	assert_int_equal(op.id, 0);
	pw_catalog_close(&c);
}

/* Finished by a handle that did not begin it: duration from the timestamps. */
static void test_duration_from_timestamps(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	int64_t id = begin(c, "runtime.install", "3.13.1");
	pw_catalog_close(&c);
	c = open_rw(f->path);
	raw_exec(pw_catalog_db(c), "UPDATE operations SET started_at ="
		 " strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1.5 seconds')");
	assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_CANCELLED, "stopped by Ctrl-C"));
	pw_op_rec op;
	assert_ok(pw_catalog_op_get(c, id, &op, NULL));
	assert_true(op.duration_ms >= 1400 && op.duration_ms < 10000);
	assert_string_equal(op.outcome, "cancelled");
	pw_op_rec_clear(&op);
	pw_catalog_close(&c);
}

static void test_finish_errors(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	expect_err(pw_catalog_op_finish(c, 77, PW_OUTCOME_OK, NULL), PW_ERR_NOTFOUND);
	int64_t id = begin(c, "venv.remove", NULL);
	expect_err(pw_catalog_op_finish(c, id, PW_OUTCOME_RUNNING, NULL), PW_ERR_USAGE);
	expect_err(pw_catalog_op_finish(c, id, "fine", NULL), PW_ERR_USAGE);
	expect_err(pw_catalog_op_finish(c, id, NULL, NULL), PW_ERR_USAGE);
	assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_REFUSED, "policy"));
	expect_err(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL), PW_ERR_USAGE);

	pw_op_rec op;
	pw_attempt_list att;
	expect_err(pw_catalog_op_get(c, 77, &op, &att), PW_ERR_NOTFOUND);
	assert_null(op.kind);
	pw_op_start bad = { .kind = "" };
	expect_err(pw_catalog_op_begin(c, &bad, &id), PW_ERR_USAGE);
	expect_err(pw_catalog_op_begin(c, NULL, &id), PW_ERR_USAGE);
	pw_attempt_rec a = { .operation_id = 77, .argv = MUT("x"), .klass = MUT("ok") };
	expect_err(pw_catalog_attempt_add(c, &a), PW_ERR_NOTFOUND);
	pw_catalog_close(&c);
}

static void test_attempts_in_order(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	int64_t other = begin(c, "venv.install", "/other");
	int64_t id = begin(c, "venv.install", "/ws/.venv");
	static const char *const index[] = { NULL, "https://mirror.example/simple", "https://pypi.org/simple" };
	static const char *const klass[] = { "network", "network", "ok" };
	int64_t last_id = 0;
	for (int i = 0; i < 3; i++) {
		pw_attempt_rec a = {
			.operation_id = id, .index_url = MUT(index[i]),
			.proxy = i == 2 ? MUT("http://127.0.0.1:3128") : NULL,
			.argv = MUT("python -m pip install requests"), .exit_code = i == 2 ? 0 : 1,
			.klass = MUT(klass[i]), .started_at = i == 0 ? NULL : MUT("2026-12-02T10:00:01.000Z"),
			.duration_ms = 100 * (i + 1), .output_tail = i == 2 ? NULL : MUT("ConnectionError"),
		};
		assert_ok(pw_catalog_attempt_add(c, &a));
		assert_int_equal(a.seq, i + 1);
		assert_true(a.id > last_id);
		last_id = a.id;
	}
	pw_attempt_rec o = { .operation_id = other, .argv = MUT("x"), .klass = MUT("ok") };
	assert_ok(pw_catalog_attempt_add(c, &o));
	assert_int_equal(o.seq, 1);
	assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL));

	pw_op_rec op;
	pw_attempt_list att;
	assert_ok(pw_catalog_op_get(c, id, &op, &att));
	assert_int_equal(op.attempt_count, 3);
	assert_int_equal(att.count, 3);
	for (int i = 0; i < 3; i++) {
		pw_attempt_rec *a = &att.items[i];
		assert_int_equal(a->seq, i + 1);
		assert_int_equal(a->operation_id, id);
		if (index[i])
			assert_string_equal(a->index_url, index[i]);
		else
			assert_null(a->index_url);
		assert_string_equal(a->klass, klass[i]);
		assert_string_equal(a->argv, "python -m pip install requests");
		assert_int_equal(a->exit_code, i == 2 ? 0 : 1);
		assert_int_equal(a->duration_ms, 100 * (i + 1));
		assert_int_equal(strlen(a->started_at), 24);
	}
	assert_string_equal(att.items[1].started_at, "2026-12-02T10:00:01.000Z");
	assert_string_equal(att.items[2].proxy, "http://127.0.0.1:3128");
	assert_null(att.items[0].proxy);
	assert_string_equal(att.items[0].output_tail, "ConnectionError");
	assert_null(att.items[2].output_tail);
	pw_op_rec_clear(&op);
	pw_attempt_list_clear(&att);
	assert_null(att.items);

	pw_op_filter fl = { .target = "/ws/" };
	pw_op_list l = query(c, &fl);
	assert_int_equal(l.count, 1);
	assert_int_equal(l.items[0].attempt_count, 3);
	pw_op_list_clear(&l);
	pw_catalog_close(&c);
}

/* ---------------------------------------------------------------- queries */

static void expect_ids(pw_catalog *c, const pw_op_filter *f, const int64_t *ids, size_t n)
{
	pw_op_list l = query(c, f);
	if (l.count != n)
		fail_msg("expected %zu operations, got %zu", n, l.count);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(l.items[i].id, ids[i]);
	pw_op_list_clear(&l);
}

static void test_filters(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	int64_t a = done(c, "runtime.install", "3.12.13", PW_OUTCOME_OK);
	int64_t b = done(c, "runtime.remove", "3.11.9", PW_OUTCOME_FAILED);
	int64_t d = done(c, "runtimes.list", NULL, PW_OUTCOME_OK);
	int64_t e = done(c, "venv.create", "/srv/100%_done/.venv", PW_OUTCOME_TIMED_OUT);
	int64_t g = done(c, "venv.install", "/srv/100xxdone/.venv", PW_OUTCOME_OK);
	set_started(c, a, "2026-11-30T23:59:59.999Z");
	set_started(c, b, "2026-12-01T00:00:00.000Z");
	set_started(c, d, "2026-12-01T08:00:00.000Z");
	set_started(c, e, "2026-12-02T12:00:00.000Z");
	set_started(c, g, "2026-12-03T09:30:00.000Z");

	pw_op_filter exact = { .kind = "runtime.install" };
	expect_ids(c, &exact, (int64_t[]){ a }, 1);
	pw_op_filter no_partial = { .kind = "runtime" };
	expect_ids(c, &no_partial, NULL, 0);
	pw_op_filter dot = { .kind = "runtime." };
	expect_ids(c, &dot, (int64_t[]){ b, a }, 2);
	pw_op_filter star = { .kind = "runtime*" };
	expect_ids(c, &star, (int64_t[]){ d, b, a }, 3);

	/* '%' and '_' are literal, not LIKE wildcards. */
	pw_op_filter pct = { .target = "100%_" };
	expect_ids(c, &pct, (int64_t[]){ e }, 1);
	pw_op_filter sub = { .target = ".venv" };
	expect_ids(c, &sub, (int64_t[]){ g, e }, 2);

	pw_op_filter ok = { .outcome = "ok" };
	expect_ids(c, &ok, (int64_t[]){ g, d, a }, 3);
	pw_op_filter to = { .outcome = "timed-out" };
	expect_ids(c, &to, (int64_t[]){ e }, 1);

	pw_op_filter since_day = { .since = "2026-12-01" };
	expect_ids(c, &since_day, (int64_t[]){ g, e, d, b }, 4);
	pw_op_filter since_time = { .since = "2026-12-01T08:00" };
	expect_ids(c, &since_time, (int64_t[]){ g, e, d }, 3);
	pw_op_filter since_z = { .since = "2026-12-01T08:00Z" };
	expect_ids(c, &since_z, (int64_t[]){ g, e, d }, 3);

	pw_op_filter lim = { .limit = 2 };
	expect_ids(c, &lim, (int64_t[]){ g, e }, 2);
	pw_op_filter combo = { .kind = "runtime*", .outcome = "ok", .since = "2026-12-01", .limit = 5 };
	expect_ids(c, &combo, (int64_t[]){ d }, 1);
	pw_catalog_close(&c);
}

static void test_newest_first_and_limits(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	int64_t ids[60];
	for (int i = 0; i < 60; i++) {
		char ts[32];
		ids[i] = done(c, "venv.list", NULL, PW_OUTCOME_OK);
		/* Out of id order, with ties broken by the higher id. */
		snprintf(ts, sizeof ts, "2026-12-%02dT10:00:00.000Z", 1 + (i % 20));
		set_started(c, ids[i], ts);
	}
	pw_op_filter all = { .limit = -1 };
	pw_op_list l = query(c, &all);
	assert_int_equal(l.count, 60);
	for (size_t i = 1; i < l.count; i++) {
		int cmp = strcmp(l.items[i - 1].started_at, l.items[i].started_at);
		assert_true(cmp > 0 || (cmp == 0 && l.items[i - 1].id > l.items[i].id));
	}
	assert_int_equal(l.items[0].id, ids[59]);
	pw_op_list_clear(&l);

	pw_op_filter deflt = { 0 };
	l = query(c, &deflt);
	assert_int_equal(l.count, 50);
	pw_op_list_clear(&l);
	l = query(c, NULL);
	assert_int_equal(l.count, 50);
	pw_op_list_clear(&l);
	pw_catalog_close(&c);
}

static void test_derived_outcomes(void **state)
{
	fixture *f = *state;
	pw_actor me;
	pw_catalog_actor_current(&me);
	pw_actor gone = me;
	/* Forked before the catalog is open: no handle crosses the fork. */
	gone.pid = dead_pid();
	pw_catalog *c = open_rw(f->path);
	pw_actor elsewhere = me;
	snprintf(elsewhere.host, sizeof elsewhere.host, "elsewhere.invalid");

	int64_t id;
	pw_op_start s_old = { .kind = "runtime.install", .args = "old", .actor = &gone };
	assert_ok(pw_catalog_op_begin(c, &s_old, &id));
	int64_t old = id;
	int64_t fin = done(c, "venv.create", NULL, PW_OUTCOME_OK);
	pw_op_start s_far = { .kind = "runtime.install", .args = "far", .actor = &elsewhere };
	assert_ok(pw_catalog_op_begin(c, &s_far, &id));
	int64_t far = id;
	int64_t live = begin(c, "venv.install", "/ws/.venv");

	pw_op_list l = query(c, NULL);
	assert_int_equal(l.count, 4);
	assert_int_equal(l.items[0].id, live);
	assert_string_equal(l.items[0].outcome, "running");
	assert_int_equal(l.items[0].duration_ms, -1);
	assert_string_equal(l.items[1].outcome, "interrupted");
	assert_string_equal(l.items[2].outcome, "ok");
	assert_string_equal(l.items[3].outcome, "interrupted");
	assert_null(l.items[3].finished_at);
	pw_op_list_clear(&l);

	pw_op_filter run = { .outcome = "running" };
	expect_ids(c, &run, (int64_t[]){ live }, 1);
	pw_op_filter intr = { .outcome = "interrupted" };
	expect_ids(c, &intr, (int64_t[]){ far, old }, 2);
	/* The limit counts matches, not rows looked at. */
	pw_op_filter intr1 = { .outcome = "interrupted", .limit = 1 };
	expect_ids(c, &intr1, (int64_t[]){ far }, 1);
	pw_op_filter ok = { .outcome = "ok" };
	expect_ids(c, &ok, (int64_t[]){ fin }, 1);

	pw_op_rec op;
	assert_ok(pw_catalog_op_get(c, old, &op, NULL));
	assert_string_equal(op.outcome, "interrupted");
	pw_op_rec_clear(&op);
	/* Our own pid on an operation begun long before this process started:
	 * the pid was handed out again, the operation's process is gone. */
	int64_t recycled = begin(c, "venv.create", "/ws/old");
	char sql[128];
	snprintf(sql, sizeof sql, "UPDATE operations SET started_at = '2001-01-01T00:00:00.000Z' WHERE id = %lld",
		 (long long)recycled);
	raw_exec(pw_catalog_db(c), sql);
	assert_ok(pw_catalog_op_get(c, recycled, &op, NULL));
	assert_string_equal(op.outcome, "interrupted");
	pw_op_rec_clear(&op);
	assert_ok(pw_catalog_op_get(c, live, &op, NULL));
	assert_string_equal(op.outcome, "running");
	pw_op_rec_clear(&op);
	/* Finishing sets a stored outcome that replaces the derived one. */
	assert_ok(pw_catalog_op_finish(c, live, PW_OUTCOME_OK, NULL));
	expect_ids(c, &run, NULL, 0);
	pw_catalog_close(&c);
}

static void test_actor_current(void **state)
{
	(void)state;
	pw_actor a;
	char *saved_user = getenv("SUDO_USER") ? xstrdup(getenv("SUDO_USER")) : NULL;
	char *saved_uid = getenv("SUDO_UID") ? xstrdup(getenv("SUDO_UID")) : NULL;
	setenv("SUDO_USER", "carol", 1);
	setenv("SUDO_UID", "4321", 1);
	pw_catalog_actor_current(&a);
	if (getuid() == 0) {
		assert_string_equal(a.user, "carol");
		assert_int_equal(a.uid, 4321);
	} else {
		/* Not root: SUDO_* is just something anyone can set. */
		assert_string_not_equal(a.user, "carol");
		assert_int_equal(a.uid, getuid());
	}
	unsetenv("SUDO_USER");
	unsetenv("SUDO_UID");
	pw_catalog_actor_current(&a);
	struct passwd *pw = getpwuid(getuid());
	if (pw)
		assert_string_equal(a.user, pw->pw_name);
	assert_int_equal(a.uid, getuid());
	assert_int_equal(a.pid, getpid());
	assert_true(a.host[0] != '\0');
	if (saved_user)
		setenv("SUDO_USER", saved_user, 1);
	if (saved_uid)
		setenv("SUDO_UID", saved_uid, 1);
	free(saved_user);
	free(saved_uid);
}

/* ---------------------------------------------------------------- concurrency */

#define CYCLES 200

/* In a child: no cmocka asserts, just an exit status. */
static int writer(const char *path, int cycles)
{
	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c);
	for (int i = 0; !e && i < cycles; i++) {
		pw_op_start s = { .kind = "venv.install", .target = "/ws/.venv", .args = "pyward venv install x" };
		int64_t id;
		e = pw_catalog_op_begin(c, &s, &id);
		pw_attempt_rec a = { .operation_id = id, .argv = MUT("pip install x"), .klass = MUT("ok") };
		if (!e)
			e = pw_catalog_attempt_add(c, &a);
		if (!e && a.seq != 1)
			e = pw_err_new(PW_ERR_FAILED, NULL, "seq %d", a.seq);
		if (!e)
			e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	}
	pw_catalog_close(&c);
	if (!e)
		return 0;
	fprintf(stderr, "writer %d: %s\n", (int)getpid(), pw_err_message(e));
	pw_err_free(e);
	return 1;
}

static void run_writers(const char *path, int cycles)
{
	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0)
			_exit(writer(path, cycles));
	}
	for (int i = 0; i < 2; i++) {
		int status = 0;
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void check_counts(const char *path, int64_t n)
{
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_ONLY, &c));
	sqlite3 *db = pw_catalog_db(c);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM operations"), n);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM attempts"), n);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM operations WHERE outcome = 'ok'"), n);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM attempts WHERE seq = 1"), n);
	char *ok = raw_text(db, "PRAGMA integrity_check");
	assert_string_equal(ok, "ok");
	free(ok);
	pw_catalog_close(&c);
}

static void test_two_writers(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	pw_catalog_close(&c);
	run_writers(f->path, CYCLES);
	check_counts(f->path, 2 * CYCLES);
}

/* Both create the file: one makes the schema, the other finds it made. */
static void test_two_creators(void **state)
{
	fixture *f = *state;
	run_writers(f->path, 20);
	check_counts(f->path, 40);
}

/* A raised token stops a query over the whole history part way; without
 * it the same query runs to its end. */
static void test_query_cancel(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	done(c, "venv.install", "/ws/env", PW_OUTCOME_OK);
	assert_int_equal(sqlite3_exec(pw_catalog_db(c),
				      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2999) "
				      "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, "
				      "uid, host, pid, pyward_version, duration_ms) SELECT kind, target, args, started_at, "
				      "finished_at, outcome, user, uid, host, pid, pyward_version, duration_ms "
				      "FROM n, (SELECT * FROM operations WHERE id = 1)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	pw_cancel *cancel = pw_cancel_new();
	pw_op_filter fl = { .text = "no such text", .limit = -1, .cancel = cancel };
	pw_op_list l = query(c, &fl);
	assert_int_equal(l.count, 0);
	pw_op_list_clear(&l);
	fl.text = "env";
	l = query(c, &fl);
	assert_int_equal(l.count, 3000);
	pw_op_list_clear(&l);
	pw_cancel_raise(cancel);
	pw_err *e = pw_catalog_ops_query(c, &fl, &l);
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_CANCELLED);
	assert_int_equal(l.count, 0);
	pw_err_free(e);
	pw_cancel_free(&cancel);
	pw_catalog_close(&c);
}

/* ---------------------------------------------------------------- --target on its index */

/* What the catalog ran, caught through SQLite's trace: each statement's SQL
 * and its virtual machine steps (the work done, whatever the machine's load). */
typedef struct traced {
	char *sql[16];
	int count;
	long long steps;
	bool paused; /* while the test explains what was caught */
} traced;

static int on_profile(unsigned type, void *ctx, void *p, void *x)
{
	(void)type;
	(void)x;
	traced *t = ctx;
	sqlite3_stmt *st = p;
	if (t->paused)
		return 0;
	t->steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
	if (t->count < 16)
		t->sql[t->count++] = xstrdup(sqlite3_sql(st));
	return 0;
}

/* Every line of the plans of what t caught, one per line. */
static char *plans(sqlite3 *db, traced *t)
{
	char *all = xstrdup("");
	t->paused = true;
	for (int i = 0; i < t->count; i++) {
		char *eqp = xasprintf("EXPLAIN QUERY PLAN %s", t->sql[i]);
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_prepare_v2(db, eqp, -1, &st, NULL), SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			char *next = xasprintf("%s%s\n", all, (const char *)sqlite3_column_text(st, 3));
			free(all);
			all = next;
		}
		sqlite3_finalize(st);
		free(eqp);
	}
	t->paused = false;
	return all;
}

static void traced_clear(traced *t)
{
	for (int i = 0; i < t->count; i++)
		free(t->sql[i]);
	t->count = 0;
	t->steps = 0;
}

/* The ids SQLite itself gives for a substring of target, newest first. */
static void expect_target_ids(pw_catalog *c, const pw_op_filter *f, int limit, traced *t)
{
	if (t)
		t->paused = true; /* only the catalog's own statements are caught */
	sqlite3 *db = pw_catalog_db(c);
	char *keyset = f->before_started ? sqlite3_mprintf(" AND (started_at, id) < (%Q, %lld)", f->before_started,
							     (long long)f->before_id)
					 : sqlite3_mprintf("%s", "");
	char *sql = sqlite3_mprintf("SELECT id FROM operations WHERE instr(target, %Q) > 0%s%s"
				    " ORDER BY started_at DESC, id DESC LIMIT %d", f->target, keyset,
				    f->kind ? " AND kind = 'venv.install'" : "", limit);
	sqlite3_free(keyset);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	int64_t want[64];
	int n = 0;
	while (n < 64 && sqlite3_step(st) == SQLITE_ROW)
		want[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	if (t)
		t->paused = false;
	pw_op_list l = query(c, f);
	assert_int_equal(l.count, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(l.items[i].id, want[i]);
	pw_op_list_clear(&l);
}

/* history --target TEXT reads the target index (schema 6), not every
 * operation: a text no target contains costs a walk over the distinct
 * targets; one that some contain reads those targets' rows newest first,
 * merged; and the answers are the same as a scan's. */
static void test_target_indexed(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f->path);
	sqlite3 *db = pw_catalog_db(c);
	done(c, "venv.install", "/srv/ws0/.venv", PW_OUTCOME_OK);
	/* 4000 operations over 40 environments, a minute apart */
	assert_int_equal(sqlite3_exec(db,
				      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3999) "
				      "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, "
				      "uid, host, pid, pyward_version, duration_ms) SELECT kind, '/srv/ws' || (i % 40) || '/.venv', "
				      "args, strftime('%Y-%m-%dT%H:%M:%S.000Z', 1767225600 + i * 60, 'unixepoch'), finished_at, "
				      "outcome, user, uid, host, pid, pyward_version, duration_ms "
				      "FROM n, (SELECT * FROM operations WHERE id = 1)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	traced t = { 0 };
	sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, on_profile, &t);

	/* nothing contains it: the target index is walked, no operation read */
	pw_op_filter none = { .target = "nosuch", .limit = -1 };
	pw_op_list l = query(c, &none);
	assert_int_equal(l.count, 0);
	pw_op_list_clear(&l);
	char *plan = plans(db, &t);
	if (!strstr(plan, "INDEX operations_target") || strstr(plan, "SCAN o") || strstr(plan, "SCAN operations"))
		fail_msg("--target nosuch is not answered from the target index:\n%s", plan);
	/* 41 probes take about 1,500 steps; reading the 4001 rows took 20,010 */
	if (t.steps > 8000)
		fail_msg("--target nosuch took %lld virtual machine steps over 4001 operations:\n%s", t.steps, plan);
	free(plan);
	traced_clear(&t);

	/* one target: its own rows, newest first, off the index, no sort */
	pw_op_filter one = { .target = "/ws7/", .limit = 5 };
	expect_target_ids(c, &one, 5, &t);
	plan = plans(db, &t);
	if (!strstr(plan, "SEARCH o USING INDEX operations_target (target=?") || strstr(plan, "TEMP B-TREE"))
		fail_msg("--target /ws7/ does not read its target's rows in order off the index:\n%s", plan);
	free(plan);
	traced_clear(&t);

	/* eleven targets (ws1, ws10-ws19): merged in time order, each arm off the index */
	pw_op_filter some = { .target = "ws1", .limit = 10 };
	expect_target_ids(c, &some, 10, &t);
	plan = plans(db, &t);
	if (!strstr(plan, "MERGE (UNION ALL)") || strstr(plan, "TEMP B-TREE") || strstr(plan, "SCAN o"))
		fail_msg("--target ws1 is not a merge of index walks:\n%s", plan);
	if (t.steps > 8000)
		fail_msg("--target ws1 --limit 10 took %lld steps", t.steps);
	free(plan);
	traced_clear(&t);
	sqlite3_trace_v2(db, 0, NULL, NULL);

	/* paging on (keyset), with other filters, and many targets (the time index) */
	pw_op_filter page2 = { .target = "ws1", .limit = 10, .before_started = "2026-01-03T12:00:00.000Z",
			       .before_id = 2000 };
	expect_target_ids(c, &page2, 10, NULL);
	pw_op_filter kind = { .target = "ws3", .kind = "venv.install", .limit = 7 };
	expect_target_ids(c, &kind, 7, NULL); /* every row's kind is venv.install */
	pw_op_filter many = { .target = "/srv/", .limit = 12 };
	expect_target_ids(c, &many, 12, NULL);
	pw_catalog_close(&c);

	/* read-only, the same answers */
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	expect_target_ids(c, &some, 10, NULL);
	expect_target_ids(c, &none, 0, NULL);
	pw_catalog_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_schema, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_data, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_zero_byte_file_is_initialised, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_readonly_missing_is_empty, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_text_file_refused, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_foreign_sqlite_refused, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_clobbered_catalog, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_fields, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_duration_from_timestamps, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_finish_errors, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_attempts_in_order, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_filters, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_newest_first_and_limits, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_derived_outcomes, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_query_cancel, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_target_indexed, catalog_setup, catalog_teardown),
		cmocka_unit_test(test_actor_current),
		cmocka_unit_test_setup_teardown(test_two_writers, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_two_creators, catalog_setup, catalog_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
