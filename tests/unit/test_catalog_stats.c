/* The counters /metrics reads (catalog_stats.h, schema 7): kept by the
 * catalog's triggers as operations finish, attempts are recorded and rows
 * are deleted, so they always say what counting the rows says; filled once
 * from the rows when an older catalog is migrated, all or nothing; counted
 * from the rows when an older file is only read. On real SQLite files in a
 * fresh temporary directory (catalog_fixture.h). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_fixture.h"
#include "catalog_stats.h"
#include "err.h"
#include "history_admin.h"
#include "pkgdb.h"
#include "xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *path; /* the fixture's catalog */

static int setup(void **state)
{
	if (catalog_setup(state))
		return -1;
	path = ((fixture *)*state)->path;
	return 0;
}

static void raw(const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	raw_exec(db, sql);
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

/* The kept counters against the rows, both ways: a count missing, extra or
 * off by one is a row of the symmetric difference. */
static void assert_counters_are_the_rows(void)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	static const char *const diffs[] = {
		"SELECT count(*) FROM (SELECT kind, outcome, n FROM operation_counts EXCEPT"
		" SELECT kind, outcome, count(*) FROM operations WHERE outcome IS NOT NULL GROUP BY kind, outcome)",
		"SELECT count(*) FROM (SELECT kind, outcome, count(*) FROM operations WHERE outcome IS NOT NULL"
		" GROUP BY kind, outcome EXCEPT SELECT kind, outcome, n FROM operation_counts)",
		"SELECT count(*) FROM (SELECT class, n FROM attempt_counts EXCEPT"
		" SELECT class, count(*) FROM attempts GROUP BY class)",
		"SELECT count(*) FROM (SELECT class, count(*) FROM attempts GROUP BY class EXCEPT"
		" SELECT class, n FROM attempt_counts)",
		"SELECT count(*) FROM (SELECT kind, operation_id, finished_at, outcome FROM last_finished EXCEPT"
		" SELECT o.kind, o.id, o.finished_at, o.outcome FROM (SELECT DISTINCT kind FROM operations) k"
		" JOIN operations o ON o.id = (SELECT id FROM operations WHERE kind = k.kind AND outcome IS NOT NULL"
		" AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1))",
		"SELECT count(*) FROM (SELECT o.kind, o.id, o.finished_at, o.outcome FROM (SELECT DISTINCT kind FROM operations) k"
		" JOIN operations o ON o.id = (SELECT id FROM operations WHERE kind = k.kind AND outcome IS NOT NULL"
		" AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1)"
		" EXCEPT SELECT kind, operation_id, finished_at, outcome FROM last_finished)",
	};
	for (size_t i = 0; i < sizeof diffs / sizeof diffs[0]; i++) {
		int64_t n = raw_int(db, diffs[i]);
		if (n)
			fail_msg("%lld rows differ: %s", (long long)n, diffs[i]);
	}
	sqlite3_close(db);
}

static pw_err *export_nothing(const pw_op_rec *op, const pw_attempt_list *attempts, const char *env,
			      const pw_pkg_changes *changes, const pw_apijob_rec *job, void *ud)
{
	(void)op, (void)attempts, (void)env, (void)changes, (void)job;
	++*(int *)ud;
	return NULL;
}

/* What the counters say is what counting the rows says, after every kind
 * of change the catalog sees: operations finishing, an undo linked to what
 * it reverses, an export and a check (which only read), a prune of part
 * of the history (its attempts going with their operations) and a prune of
 * all of it. On 539e54f there are no counters; 70096c7 kept them past a
 * prune, so they stopped saying what the rows say. */
static void test_counters_are_the_rows(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	pw_catalog_close(&c);
	/* Old rows a dated prune takes, ties in finish time included. */
	raw("INSERT INTO operations (id, kind, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)"
	    " VALUES (1, 'runtime.verify', 'a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:05.000Z', 'ok', 'u', 0, 'h', 1, '0'),"
	    " (2, 'runtime.verify', 'a', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:05.000Z', 'failed', 'u', 0, 'h', 1, '0'),"
	    " (3, 'venv.install', 'a', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:01.000Z', 'ok', 'u', 0, 'h', 1, '0'),"
	    " (4, 'venv.install', 'a', '2026-03-02T00:00:00.000Z', '2026-03-02T00:00:01.000Z', 'failed', 'u', 0, 'h', 1, '0');"
	    "INSERT INTO attempts (operation_id, seq, argv, exit_code, class, started_at, duration_ms)"
	    " VALUES (3, 1, 'pip', 1, 'network', '2026-01-02T00:00:00.000Z', 1), (3, 2, 'pip', 0, 'ok', '2026-01-02T00:00:00.000Z', 1),"
	    " (4, 1, 'pip', 1, 'resolution', '2026-03-02T00:00:00.000Z', 1);");
	assert_counters_are_the_rows();
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	int64_t install = operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "ok", "network", NULL });
	operation(c, "runtime.verify", PW_OUTCOME_FAILED, NULL);
	operation(c, "venv.create", NULL, NULL); /* running: not counted */
	assert_counters_are_the_rows();
	int64_t undo = operation(c, "venv.undo", PW_OUTCOME_OK, (const char *const[]){ "ok", NULL });
	assert_ok(pw_pkgdb_link_undo(c, undo, install));
	assert_counters_are_the_rows();
	int exported = 0;
	assert_ok(pw_history_export(c, NULL, NULL, export_nothing, &exported));
	assert_true(exported >= 7);
	pw_history_check_result chk;
	assert_ok(pw_history_check(c, NULL, &chk));
	assert_int_equal(chk.count, 0);
	pw_history_check_clear(&chk);
	assert_counters_are_the_rows();

	/* Part of the history: the January rows, both verifications among them. */
	pw_prune_result pr;
	assert_ok(pw_history_prune(c, "2026-02-01", "prune", &pr));
	assert_int_equal(pr.operations, 3);
	assert_int_equal(pr.attempts, 2);
	assert_counters_are_the_rows();
	pw_catalog_stats st;
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_FAILED), 1);
	assert_int_equal(op_count(&st, "runtime.verify", PW_OUTCOME_OK), 0);
	assert_int_equal(attempt_count(&st, "network"), 1);
	assert_int_equal(attempt_count(&st, "resolution"), 1);
	assert_string_equal(st.verify_outcome, PW_OUTCOME_FAILED); /* the one left */
	pw_catalog_stats_clear(&st);

	/* All of it but what is running (and the prune's own record). */
	assert_ok(pw_history_prune(c, "2999-01-01", "prune", &pr));
	assert_counters_are_the_rows();
	assert_ok(pw_catalog_stats_read(c, &st));
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 0);
	assert_int_equal(op_count(&st, "history.prune", PW_OUTCOME_OK), 1);
	assert_int_equal(op_count(&st, "venv.create", PW_OUTCOME_RUNNING), 1);
	assert_int_equal(st.attempt_count, 0);
	assert_null(st.verify_outcome); /* never verified, as far as the rows know */
	pw_catalog_stats_clear(&st);
	pw_catalog_close(&c);
}

/* Ties in finish time: the higher id is the last, as history orders. */
static void test_last_finished_tie_takes_the_higher_id(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	pw_catalog_close(&c);
	raw("INSERT INTO operations (id, kind, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)"
	    " VALUES (9, 'runtime.verify', 'a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:05.000Z', 'failed', 'u', 0, 'h', 1, '0'),"
	    " (5, 'runtime.verify', 'a', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:05.000Z', 'ok', 'u', 0, 'h', 1, '0')");
	pw_catalog_stats st;
	stats(PW_CATALOG_READ_WRITE, &st);
	assert_string_equal(st.verify_outcome, PW_OUTCOME_FAILED);
	pw_catalog_stats_clear(&st);
	assert_counters_are_the_rows();
}

/* A catalog of schema 6 with rows written before counters were kept: read
 * only, the counts come from the rows; the first writer migrates it and
 * fills the counters from the same rows, and counts on from there. */
static const char V7_OBJECTS[] =
	"DROP TRIGGER operations_count_insert; DROP TRIGGER operations_count_finish;"
	" DROP TRIGGER operations_count_delete; DROP TRIGGER last_finished_delete; DROP INDEX operations_kind_finished;"
	" DROP TRIGGER attempts_count_insert; DROP TRIGGER attempts_count_delete; DROP TABLE operation_counts;"
	" DROP TABLE attempt_counts; DROP TABLE last_finished; PRAGMA user_version = 6;";

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

/* The schema step is all or nothing: one that fails half-way (a table it
 * creates is already there, after the counters' first table was made and
 * filled) leaves the file at schema 6 as it was, still read through the
 * shims; once the obstacle is gone the next writer migrates it whole. */
static void test_failed_migration_leaves_schema_6(void **state)
{
	(void)state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	operation(c, "venv.install", PW_OUTCOME_OK, (const char *const[]){ "ok", NULL });
	pw_catalog_close(&c);
	raw(V7_OBJECTS);
	raw("CREATE TABLE attempt_counts (x);");
	pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c);
	assert_non_null(e);
	pw_err_free(e);
	pw_catalog_close(&c);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 6);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('operation_counts', 'last_finished')"
				    " OR type = 'trigger'"), 0);
	sqlite3_close(db);
	raw("DROP TABLE attempt_counts;");
	pw_catalog_stats st;
	stats(PW_CATALOG_READ_ONLY, &st);
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 1);
	pw_catalog_stats_clear(&st);
	stats(PW_CATALOG_READ_WRITE, &st); /* migrates */
	assert_int_equal(op_count(&st, "venv.install", PW_OUTCOME_OK), 1);
	assert_int_equal(attempt_count(&st, "ok"), 1);
	pw_catalog_stats_clear(&st);
	assert_counters_are_the_rows();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_follow_operations, setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_last_verify_by_finish, setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_counters_are_the_rows, setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_last_finished_tie_takes_the_higher_id, setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_failed_migration_leaves_schema_6, setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_older_catalog_filled_once, setup, catalog_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
