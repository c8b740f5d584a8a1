/* The counters /metrics reads (catalog_stats.h, schema 7): kept by the
 * catalog's triggers as operations finish and attempts are recorded, not
 * lowered by a prune, filled once from the rows when an older catalog is
 * migrated, and counted from the rows when an older file is only read. On
 * real SQLite files in a fresh /tmp directory. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_stats.h"
#include "err.h"
#include "history_admin.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define assert_ok(expr) \
	do { \
		pw_err *e_ = (expr); \
		if (e_) \
			fail_msg("unexpected error: %s", pw_err_message(e_)); \
	} while (0)

static char dir[64], path[96];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/pw-catstats-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/catalog.sqlite3", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *const ext[] = { "", "-wal", "-shm" };
	for (size_t i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, ext[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	return 0;
}

static void raw(const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static int64_t count_of(const pw_stat_count *v, size_t n, const char *key, const char *key2)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].key, key) == 0 && ((!key2 && !v[i].key2) || (key2 && v[i].key2 && strcmp(v[i].key2, key2) == 0)))
			return v[i].count;
	return 0;
}

static int64_t op_count(const pw_catalog_stats *st, const char *kind, const char *outcome)
{
	return count_of(st->ops, st->op_count, kind, outcome);
}

static int64_t attempt_count(const pw_catalog_stats *st, const char *klass)
{
	return count_of(st->attempts, st->attempt_count, klass, NULL);
}

static void stats(pw_catalog_mode mode, pw_catalog_stats *st)
{
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, mode, &c));
	assert_ok(pw_catalog_stats_read(c, st));
	pw_catalog_close(&c);
}

/* One finished operation through the catalog's API, with attempts of the
 * given classes; returns its id. outcome NULL: left running. */
static int64_t operation(pw_catalog *c, const char *kind, const char *outcome, const char *const *classes)
{
	int64_t id = 0;
	assert_ok(pw_catalog_op_begin(c, &(pw_op_start){ .kind = kind, .target = "t", .args = "a" }, &id));
	for (size_t i = 0; classes && classes[i]; i++) {
		pw_attempt_rec a = { .operation_id = id, .argv = xstrdup("pip"), .klass = xstrdup(classes[i]),
				     .started_at = xstrdup("2026-12-04T00:00:00.000Z") };
		assert_ok(pw_catalog_attempt_add(c, &a));
		free(a.argv);
		free(a.klass);
		free(a.started_at);
	}
	if (outcome)
		assert_ok(pw_catalog_op_finish(c, id, outcome, NULL));
	return id;
}

/* Counted as they finish; a running one is a gauge, not a count. */
static void test_counts_follow_operations(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "network", "ok", NULL });
	operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "ok", NULL });
	operation(c, "venv.install", PW_OUTCOME_FAILED, (const char *const[]){ "resolution", NULL });
	operation(c, "runtime.verify", PW_OUTCOME_OK, NULL);
	int64_t running = operation(c, "venv.create", NULL, NULL);
	pw_catalog_stats st;
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 2);
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_FAILED), 1);
	assert_int_equal(op_count(&st, "runtime.verify", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "venv.create", PW_OUTCOME_RUNNING), 1);
	assert_int_equal(attempt_count(&st, "ok"), 2);
	assert_int_equal(attempt_count(&st, "network"), 1);
	assert_int_equal(attempt_count(&st, "resolution"), 1);
	assert_non_null(st.verify_outcome);
	assert_string_equal(st.verify_outcome, PW_OUTCOME_OK);
	pw_catalog_stats_clear(&st);
	/* The running one ends: counted once, no longer running. */
	assert_ok(pw_catalog_op_finish(c, running, PW_OUTCOME_OK, NULL));
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.create", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "venv.create", PW_OUTCOME_RUNNING), 0);
	pw_catalog_stats_clear(&st);
	pw_catalog_close(&c);
}

/* The last verification is the one that finished last, though it started
 * first. */
static void test_last_verify_by_finish(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	pw_catalog_close(&c);
	raw("INSERT INTO operations (kind, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)"
	    " VALUES ('runtime.verify', 'a', '2026-12-01T00:00:00.000Z', '2026-12-01T00:09:00.000Z', 'failed', 'u', 0, 'h', 1, '0'),"
	    " ('runtime.verify', 'a', '2026-12-01T00:01:00.000Z', '2026-12-01T00:02:00.000Z', 'ok', 'u', 0, 'h', 1, '0')");
	pw_catalog_stats st;
	stats(PW_CATALOG_READ_ONLY, &st);
	assert_string_equal(st.verify_outcome, PW_OUTCOME_FAILED);
	assert_string_equal(st.verify_finished_at, "2026-12-01T00:09:00.000Z");
	assert_int_equal(op_count(&st, "runtime.verify", PW_OUTCOME_FAILED), 1);
	pw_catalog_stats_clear(&st);
}

/* A prune deletes rows, not what happened: a Prometheus counter that went
 * down would read as a reset (20c4826's counts fell to what was left). */
static void test_prune_keeps_counts(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "ok", NULL });
	operation(c, "runtime.verify", PW_OUTCOME_OK, NULL);
	pw_prune_result pr;
	assert_ok(pw_history_prune(c, "2999-01-01", "prune", &pr));
	assert_int_equal(pr.operations, 2);
	pw_catalog_stats st;
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "runtime.verify", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "history.prune", PW_OUTCOME_OK), 1);
	assert_int_equal(attempt_count(&st, "ok"), 1);
	assert_non_null(st.verify_outcome);
	pw_catalog_stats_clear(&st);
	pw_catalog_close(&c);
}

/* A catalog of schema 6 with rows written before counters were kept: read
 * only, the counts come from the rows; the first writer migrates it and
 * fills the counters from the same rows, and counts on from there. */
static const char V7_OBJECTS[] =
	"DROP TRIGGER operations_count_insert; DROP TRIGGER operations_count_finish;"
	" DROP TRIGGER attempts_count_insert; DROP TABLE operation_counts; DROP TABLE attempt_counts;"
	" DROP TABLE last_finished; PRAGMA user_version = 6;";

static void test_older_catalog_filled_once(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	pw_catalog_close(&c);
	raw(V7_OBJECTS);
	raw("INSERT INTO operations (id, kind, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)"
	    " VALUES (1, 'venv.install', 'a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', 'ok', 'u', 0, 'h', 1, '0'),"
	    " (2, 'venv.install', 'a', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:01.000Z', 'ok', 'u', 0, 'h', 1, '0'),"
	    " (3, 'runtime.verify', 'a', '2026-01-03T00:00:00.000Z', '2026-01-03T00:00:01.000Z', 'failed', 'u', 0, 'h', 1, '0');"
	    "INSERT INTO attempts (operation_id, seq, argv, exit_code, class, started_at, duration_ms)"
	    " VALUES (1, 1, 'pip', 0, 'ok', '2026-01-01T00:00:00.000Z', 1), (2, 1, 'pip', 1, 'network', '2026-01-02T00:00:00.000Z', 1),"
	    " (2, 2, 'pip', 0, 'ok', '2026-01-02T00:00:00.000Z', 1);");
	pw_catalog_stats st;
	stats(PW_CATALOG_READ_ONLY, &st); /* schema 6, read through the shims */
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 2);
	assert_int_equal(attempt_count(&st, "ok"), 2);
	assert_string_equal(st.verify_outcome, PW_OUTCOME_FAILED);
	pw_catalog_stats_clear(&st);

	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c)); /* migrates 6 -> 7 */
	assert_int_equal(pw_catalog_schema_version(c), PW_CATALOG_SCHEMA_VERSION);
	operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "ok", NULL });
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 3);
	assert_int_equal(op_count(&st, "runtime.verify", PW_OUTCOME_FAILED), 1);
	assert_int_equal(attempt_count(&st, "ok"), 3);
	assert_int_equal(attempt_count(&st, "network"), 1);
	assert_string_equal(st.verify_finished_at, "2026-01-03T00:00:01.000Z");
	pw_catalog_stats_clear(&st);
	pw_catalog_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_follow_operations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_verify_by_finish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune_keeps_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_older_catalog_filled_once, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
