/* Unit tests for background jobs: the bounded log, the catalog rows (and the
 * schema 1 -> 2 migration that added them), process liveness, and a real
 * detached child. Real SQLite files and real processes in a fresh temporary
 * directory per test (catalog_fixture.h). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_fixture.h"
#include "err.h"
#include "joblog.h"
#include "jobs.h"
#include "proc.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The log as text so far; "" while the pump has not made it yet. */
static char *log_text(const char *path)
{
	size_t n;
	return tl_exists(path) ? slurp(path, &n) : xstrdup("");
}

static off_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* ---------------------------------------------------------------- joblog */

static void test_joblog_under_cap_passes_through(void **state)
{
	fixture *f = *state;
	const char *p = tl_path(f->dir, "a.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pw_joblog *l = pw_joblog_new(fd, 100, 20);
	pw_joblog_write(l, "hello\n", 6);
	assert_int_equal(file_size(p), 6); /* written at once, for --follow */
	pw_joblog_write(l, "world\n", 6);
	assert_int_equal(pw_joblog_dropped(l), 0);
	pw_joblog_close(&l);
	assert_null(l);
	close(fd);
	char *t = log_text(p);
	assert_string_equal(t, "hello\nworld\n");
	free(t);
}

static void test_joblog_keeps_head_and_tail(void **state)
{
	fixture *f = *state;
	const char *p = tl_path(f->dir, "b.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pw_joblog *l = pw_joblog_new(fd, 10, 8);
	/* 26 letters in pieces of 3: head "abcdefghij", tail "stuvwxyz" */
	const char *abc = "abcdefghijklmnopqrstuvwxyz";
	for (size_t i = 0; i < 26; i += 3)
		pw_joblog_write(l, abc + i, 26 - i < 3 ? 26 - i : 3);
	assert_int_equal(file_size(p), 10);
	assert_int_equal(pw_joblog_dropped(l), 8); /* k..r */
	pw_joblog_close(&l);
	close(fd);
	char *t = log_text(p);
	assert_int_equal(strncmp(t, "abcdefghij", 10), 0);
	assert_non_null(strstr(t, "8 bytes of output left out"));
	size_t n = strlen(t);
	assert_string_equal(t + n - 8, "stuvwxyz");
	free(t);
}

static void test_joblog_one_big_write(void **state)
{
	fixture *f = *state;
	const char *p = tl_path(f->dir, "c.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t big = 1 << 20;
	char *buf = xmalloc(big);
	for (size_t i = 0; i < big; i++)
		buf[i] = (char)('a' + i % 26);
	pw_joblog *l = pw_joblog_new(fd, 4096, 1024);
	pw_joblog_write(l, buf, big);
	pw_joblog_close(&l);
	close(fd);
	off_t size = file_size(p);
	assert_true(size > 4096 + 1024 && size < 4096 + 1024 + 200); /* bounded: head, note, tail */
	char *t = log_text(p);
	assert_memory_equal(t + size - 1024, buf + big - 1024, 1024);
	free(t);
	free(buf);
}

static void test_joblog_without_tail(void **state)
{
	fixture *f = *state;
	const char *p = tl_path(f->dir, "d.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pw_joblog *l = pw_joblog_new(fd, 4, 0);
	pw_joblog_write(l, "123456789", 9);
	assert_int_equal(pw_joblog_dropped(l), 5);
	pw_joblog_close(&l);
	close(fd);
	char *t = log_text(p);
	assert_int_equal(strncmp(t, "1234", 4), 0);
	assert_non_null(strstr(t, "5 bytes"));
	free(t);
}

/* ---------------------------------------------------------------- log tail */

static void test_log_tail(void **state)
{
	fixture *f = *state;
	const char *p = tl_path(f->dir, "t.log");
	tl_write_text(p, "one\ntwo\nthree\nfour\n");
	char *t = NULL;
	assert_ok(pw_jobs_log_tail(p, 2, &t));
	assert_string_equal(t, "three\nfour\n");
	free(t);
	assert_ok(pw_jobs_log_tail(p, 10, &t));
	assert_string_equal(t, "one\ntwo\nthree\nfour\n");
	free(t);
	tl_write_text(p, "a\nb\nno newline");
	assert_ok(pw_jobs_log_tail(p, 1, &t));
	assert_string_equal(t, "no newline");
	free(t);
	expect_err(pw_jobs_log_tail(tl_path(f->dir, "missing.log"), 3, &t), PW_ERR_IO);
	assert_null(t);
}

/* ---------------------------------------------------------------- migration */

/* What a schema-1 catalog file holds (pyward before background jobs). */
static const char V1_SCHEMA[] =
	"CREATE TABLE operations (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, target TEXT, args TEXT NOT NULL,"
	" started_at TEXT NOT NULL, finished_at TEXT, outcome TEXT, stop_reason TEXT, user TEXT NOT NULL,"
	" uid INTEGER NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, pyward_version TEXT NOT NULL,"
	" duration_ms INTEGER);"
	"CREATE INDEX operations_started_at ON operations(started_at);"
	"CREATE TABLE attempts (id INTEGER PRIMARY KEY, operation_id INTEGER NOT NULL REFERENCES operations(id)"
	" ON DELETE CASCADE, seq INTEGER NOT NULL, index_url TEXT, proxy TEXT, argv TEXT NOT NULL,"
	" exit_code INTEGER NOT NULL, class TEXT NOT NULL, started_at TEXT NOT NULL, duration_ms INTEGER NOT NULL,"
	" output_tail TEXT);"
	"CREATE UNIQUE INDEX attempts_operation_seq ON attempts(operation_id, seq);"
	"CREATE TABLE pins (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL,"
	" platform TEXT NOT NULL, url TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER, source TEXT);"
	"CREATE TABLE runtimes (id INTEGER PRIMARY KEY, pin_id INTEGER REFERENCES pins(id), path TEXT NOT NULL,"
	" state TEXT NOT NULL, installed_at TEXT, removed_at TEXT);"
	"CREATE TABLE runtime_files (runtime_id INTEGER NOT NULL REFERENCES runtimes(id) ON DELETE CASCADE,"
	" path TEXT NOT NULL, size INTEGER NOT NULL, mode INTEGER NOT NULL, sha256 TEXT NOT NULL,"
	" PRIMARY KEY (runtime_id, path));"
	"CREATE TABLE venvs (id INTEGER PRIMARY KEY, path TEXT NOT NULL, base_python TEXT, version TEXT,"
	" created_at TEXT NOT NULL, removed_at TEXT);"
	"CREATE INDEX venvs_path ON venvs(path);"
	"INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, uid, host, pid,"
	" pyward_version, duration_ms) VALUES ('venv.install', '/w/.venv', 'pyward venv install x',"
	" '2026-01-02T03:04:05.000Z', '2026-01-02T03:04:06.000Z', 'ok', 'ann', 1000, 'h', 42, '0.1', 1000);"
	"INSERT INTO attempts (operation_id, seq, argv, exit_code, class, started_at, duration_ms)"
	" VALUES (1, 1, 'pip install x', 0, 'ok', '2026-01-02T03:04:05.000Z', 900);"
	"PRAGMA application_id = 1348032324;";

static void write_raw(const char *path, const char *sql, int version)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	char *v = xasprintf("PRAGMA user_version = %d", version);
	assert_int_equal(sqlite3_exec(db, v, NULL, NULL, NULL), SQLITE_OK);
	free(v);
	sqlite3_close(db);
}

static void test_v1_catalog_is_migrated(void **state)
{
	fixture *f = *state;
	write_raw(f->path, V1_SCHEMA, 1);
	pw_catalog *c = NULL;
	/* Reading never migrates, yet it reads: an auditor opens an old file
	 * read-only and sees its history, and the file stays version 1. */
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	pw_op_rec op;
	pw_attempt_list att;
	assert_ok(pw_catalog_op_get(c, 1, &op, &att));
	assert_string_equal(op.kind, "venv.install");
	assert_int_equal(att.count, 1);
	pw_op_rec_clear(&op);
	pw_attempt_list_clear(&att);
	pw_job_list jl;
	assert_ok(pw_jobs_list(c, 0, &jl));
	assert_int_equal(jl.count, 0);
	pw_job_list_clear(&jl);
	pw_catalog_close(&c);
	{
		sqlite3 *raw = NULL;
		assert_int_equal(sqlite3_open_v2(f->path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(raw_int(raw, "PRAGMA user_version"), 1);
		assert_int_equal(raw_int(raw, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
		sqlite3_close(raw);
	}
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	sqlite3 *db = pw_catalog_db(c);
	assert_int_equal(pw_catalog_schema_version(c), PW_CATALOG_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), PW_CATALOG_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'operations_kind'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('jobs', 'operations_job')"), 2);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM operations WHERE job_id IS NULL"), 1);
	/* The old history reads as before, attempts included. */
	assert_ok(pw_catalog_op_get(c, 1, &op, &att));
	assert_string_equal(op.kind, "venv.install");
	assert_string_equal(op.outcome, "ok");
	assert_int_equal(att.count, 1);
	pw_op_rec_clear(&op);
	pw_attempt_list_clear(&att);
	assert_ok(pw_jobs_list(c, 0, &jl));
	assert_int_equal(jl.count, 0);
	pw_job_list_clear(&jl);
	pw_catalog_close(&c);
	/* And now it opens read-only too. */
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	pw_catalog_close(&c);
}

static void test_newer_catalog_still_refused(void **state)
{
	fixture *f = *state;
	write_raw(f->path, V1_SCHEMA, PW_CATALOG_SCHEMA_VERSION + 1);
	expect_newer_refused(f->path, PW_CATALOG_READ_WRITE);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), PW_CATALOG_SCHEMA_VERSION + 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
	sqlite3_close(db);
}

/* ---------------------------------------------------------------- job rows */

static pw_catalog *open_rw(const fixture *f)
{
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	return c;
}

static int64_t new_job(pw_catalog *c, const fixture *f)
{
	pw_job_start s = { .kind = "venv.install", .target = "/w/.venv", .args = "pyward venv install x",
			   .workspace = "/w", .log_dir = f->dir, .budget_s = 120 };
	int64_t id = 0;
	assert_ok(pw_jobs_begin(c, &s, &id));
	assert_true(id > 0);
	return id;
}

static char *state_of(pw_catalog *c, int64_t id)
{
	pw_job_rec r;
	assert_ok(pw_jobs_get(c, id, &r));
	char *s = xstrdup(r.state);
	pw_job_rec_clear(&r);
	return s;
}

#define assert_state(c, id, want) \
	do { \
		char *s_ = state_of(c, id); \
		assert_string_equal(s_, want); \
		free(s_); \
	} while (0)

static void test_job_lifecycle_with_cancel(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f);
	int64_t id = new_job(c, f);
	pw_job_rec r;
	assert_ok(pw_jobs_get(c, id, &r));
	char *want_log = xasprintf("%s/%lld.log", f->dir, (long long)id);
	assert_string_equal(r.log_path, want_log);
	free(want_log);
	assert_string_equal(r.state, "interrupted"); /* no process yet */
	assert_int_equal(pw_jobs_exit_status(&r), 130);
	pw_job_rec_clear(&r);
	expect_err(pw_jobs_claim(c, id), PW_ERR_REFUSED);

	assert_ok(pw_jobs_attach(c, id, getpid(), pw_proc_start(getpid())));
	assert_state(c, id, "running");
	assert_ok(pw_jobs_claim(c, id));
	expect_err(pw_jobs_claim(c, id + 1), PW_ERR_NOTFOUND);

	pw_op_start os = { .kind = "venv.install", .target = "/w/.venv", .args = "x", .job_id = id };
	int64_t op = 0;
	assert_ok(pw_catalog_op_begin(c, &os, &op));
	int64_t *ids = NULL;
	size_t n = 0;
	assert_ok(pw_jobs_operations(c, id, &ids, &n));
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], op);
	free(ids);

	assert_ok(pw_jobs_request_cancel(c, id, "ann"));
	assert_ok(pw_catalog_op_finish(c, op, PW_OUTCOME_CANCELLED, "interrupted during attempt 1"));
	assert_ok(pw_jobs_finish(c, id, 130));
	assert_ok(pw_jobs_get(c, id, &r));
	assert_string_equal(r.state, "cancelled");
	assert_int_equal(r.exit_status, 130);
	assert_string_equal(r.cancelled_by, "ann");
	assert_non_null(r.finished_at);
	assert_true(strncmp(r.stop_reason, "cancelled by ann at ", 20) == 0);
	assert_non_null(strstr(r.stop_reason, "\ninterrupted during attempt 1"));
	assert_int_equal(pw_jobs_exit_status(&r), 130);
	pw_job_rec_clear(&r);
	/* Over is over: a second end changes nothing. */
	assert_ok(pw_jobs_close_dead(c, id, PW_OUTCOME_OK, 0, NULL));
	assert_state(c, id, "cancelled");
	pw_catalog_close(&c);
}

static void test_finish_without_operations(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f);
	int64_t a = new_job(c, f), b = new_job(c, f);
	assert_ok(pw_jobs_finish(c, a, 4));
	assert_ok(pw_jobs_finish(c, b, 0));
	pw_job_rec r;
	assert_ok(pw_jobs_get(c, a, &r));
	assert_string_equal(r.state, "timed-out");
	assert_non_null(strstr(r.stop_reason, "status 4"));
	assert_int_equal(pw_jobs_exit_status(&r), 4);
	pw_job_rec_clear(&r);
	assert_ok(pw_jobs_get(c, b, &r));
	assert_string_equal(r.state, "ok");
	assert_null(r.stop_reason);
	pw_job_rec_clear(&r);
	pw_job_list l;
	assert_ok(pw_jobs_list(c, 0, &l));
	assert_int_equal(l.count, 2);
	assert_int_equal(l.items[0].id, b); /* newest first */
	pw_job_list_clear(&l);
	pw_catalog_close(&c);
}

static void test_dead_or_recycled_process_is_interrupted(void **state)
{
	fixture *f = *state;
	pw_catalog *c = open_rw(f);
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	assert_int_equal(tl_wait_child(child), 0);
	int64_t dead = new_job(c, f), recycled = new_job(c, f);
	assert_ok(pw_jobs_attach(c, dead, child, 0));
	/* Our own pid with another start time: a pid the kernel gave again. */
	assert_ok(pw_jobs_attach(c, recycled, getpid(), pw_proc_start(getpid()) + 1));
	assert_state(c, dead, "interrupted");
	assert_state(c, recycled, "interrupted");
	assert_true(pw_proc_alive(getpid(), 0));
	assert_false(pw_proc_alive(child, 0));
	assert_false(pw_proc_alive(-1, 0));
	pw_catalog_close(&c);
}

/* ---------------------------------------------------------------- detach */

typedef struct started {
	pid_t pid;
	int64_t start;
	bool fail;
} started;

static pw_err *on_started(void *ud, pid_t pid, int64_t start)
{
	started *s = ud;
	s->pid = pid;
	s->start = start;
	return s->fail ? pw_err_new(PW_ERR_IO, NULL, "catalog unavailable") : NULL;
}

static void detach_sh(const char *log, const char *script, started *s)
{
	char *const argv[] = { (char *)(uintptr_t)"sh", (char *)(uintptr_t)"-c", (char *)(uintptr_t)script, NULL };
	const char *env[] = { "PW_TEST_VAR=from-the-caller", NULL };
	pw_job_spawn sp = { .exe = "/bin/sh", .argv = argv, .env_add = env, .log_path = log, .head_cap = 1 << 16,
			    .tail_cap = 1 << 12, .started = on_started, .ud = s };
	pw_err *e = pw_jobs_detach(&sp);
	if (s->fail) {
		expect_err(e, PW_ERR_IO);
		return;
	}
	assert_ok(e);
	assert_true(s->pid > 0);
}

/* Wait for text in the log (the pump writes its last note as it ends). */
static bool log_has(const char *log, const char *text, int wait_ms)
{
	for (long long end = tl_now_ms() + wait_ms; tl_now_ms() < end; tl_sleep_ms(50)) {
		char *t = log_text(log);
		bool has = strstr(t, text) != NULL;
		free(t);
		if (has)
			return true;
	}
	return false;
}

static void reap_pumps(void)
{
	for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(50))
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
}

static void test_detach_runs_in_its_own_session(void **state)
{
	fixture *f = *state;
	const char *log = tl_path(f->dir, "job.log");
	started s = { 0 };
	detach_sh(log, "echo \"out $PW_TEST_VAR\"; echo err >&2; read x; echo \"stdin [$x]\"; "
		       "echo \"pgid $(ps -o pgid= -p $$ | tr -d ' ') sid $(ps -o sid= -p $$ | tr -d ' ')\"; exit 3", &s);
	assert_true(log_has(log, "stdin []", 10000)); /* stdin is /dev/null */
	char *want = xasprintf("pgid %ld sid ", (long)s.pid);
	assert_true(log_has(log, want, 10000));
	free(want);
	char *t = log_text(log);
	assert_non_null(strstr(t, "out from-the-caller\n"));
	assert_non_null(strstr(t, "err\n"));
	char *sid = strstr(t, " sid ");
	assert_non_null(sid);
	assert_int_not_equal(atol(sid + 5), (long)getsid(0)); /* a session of its own */
	free(t);
	assert_int_equal(s.start > 0, 1);
	for (long long end = tl_now_ms() + 10000; tl_now_ms() < end && pw_proc_alive(s.pid, s.start);)
		tl_sleep_ms(50);
	assert_false(pw_proc_alive(s.pid, s.start));
	reap_pumps();
}

static void test_killed_job_is_noted_and_its_children_stopped(void **state)
{
	fixture *f = *state;
	const char *log = tl_path(f->dir, "killed.log");
	started s = { 0 };
	detach_sh(log, "sleep 60 & echo \"orphan $!\"; sleep 60", &s);
	assert_true(log_has(log, "orphan ", 10000));
	char *t = log_text(log);
	pid_t orphan = (pid_t)atol(strstr(t, "orphan ") + 7);
	free(t);
	assert_true(pw_proc_alive(s.pid, s.start));
	assert_int_equal(kill(s.pid, SIGKILL), 0);
	assert_true(log_has(log, "killed by signal 9", 10000));
	for (long long end = tl_now_ms() + 10000; tl_now_ms() < end && pw_proc_alive(orphan, 0);)
		tl_sleep_ms(50);
	assert_false(pw_proc_alive(orphan, 0)); /* the pump stopped what the job left behind */
	reap_pumps();
}

static void test_job_does_not_start_when_not_recorded(void **state)
{
	fixture *f = *state;
	const char *log = tl_path(f->dir, "never.log");
	const char *marker = tl_path(f->dir, "ran");
	char *script = xasprintf("touch '%s'", marker);
	started s = { .fail = true };
	detach_sh(log, script, &s);
	free(script);
	assert_true(log_has(log, "did not start", 10000));
	assert_false(tl_exists(marker));
	reap_pumps();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_joblog_under_cap_passes_through, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_joblog_keeps_head_and_tail, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_joblog_one_big_write, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_joblog_without_tail, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_log_tail, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_v1_catalog_is_migrated, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_newer_catalog_still_refused, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_job_lifecycle_with_cancel, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_finish_without_operations, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_dead_or_recycled_process_is_interrupted, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_detach_runs_in_its_own_session, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_killed_job_is_noted_and_its_children_stopped, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_job_does_not_start_when_not_recorded, catalog_setup, catalog_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
