/* Unit tests: the API's kept catalog connections read the catalog as it is
 * now: created after the server started, replaced by another file, or
 * migrated by a newer pyward while a writer holds it open. Real SQLite
 * files in a fresh temporary folder per test (catalog_fixture.h). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "api/catalog_pool.h"

#include "apijobs.h"
#include "catalog.h"
#include "catalog_fixture.h"
#include "err.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A job row in the catalog at file, through the writer's own code. */
static int64_t add_job(const char *file, const char *kind)
{
	pw_catalog *w = NULL;
	assert_ok(pw_catalog_open(file, PW_CATALOG_READ_WRITE, &w));
	int64_t id = 0;
	assert_ok(pw_apijobs_begin(w, kind, "t", "u", "a", "2026-12-04T00:00:00.000Z", &id));
	pw_catalog_close(&w);
	return id;
}

/* How many jobs a connection from the pool reads. */
static size_t jobs_seen(pw_api_catalog_pool *p)
{
	pw_api_catalog_lease l;
	assert_ok(pw_api_catalog_pool_take(p, &l));
	pw_apijob_rec *recs = NULL;
	size_t n = 0;
	assert_ok(pw_apijobs_list(l.c, 100, &recs, &n));
	for (size_t i = 0; i < n; i++)
		pw_apijob_rec_clear(&recs[i]);
	free(recs);
	pw_api_catalog_pool_give(p, &l);
	assert_null(l.c);
	return n;
}

/* Unchanged file: one open for many reads; a new job is seen without one. */
static void test_kept_between_reads(void **state)
{
	fixture *f = *state;
	add_job(f->path, "venv.install");
	pw_api_catalog_pool *p = pw_api_catalog_pool_new(f->path, 2);
	for (int i = 0; i < 5; i++)
		assert_int_equal(jobs_seen(p), 1);
	assert_int_equal(pw_api_catalog_pool_opens(p), 1);
	/* a writer that keeps its connection open: no checkpoint, the main
	 * file is untouched; SQLite gives the kept reader the new row */
	pw_catalog *w = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &w));
	int64_t id;
	assert_ok(pw_apijobs_begin(w, "runtime.install", NULL, "u", NULL, "2026-12-04T00:00:01.000Z", &id));
	assert_int_equal(jobs_seen(p), 2);
	pw_catalog_close(&w);
	pw_api_catalog_pool_free(&p);
}

/* No catalog when the server started (an empty stand-in), one later. */
static void test_created_later(void **state)
{
	fixture *f = *state;
	pw_api_catalog_pool *p = pw_api_catalog_pool_new(f->path, 2);
	assert_int_equal(jobs_seen(p), 0);
	add_job(f->path, "venv.install");
	assert_int_equal(jobs_seen(p), 1);
	pw_api_catalog_pool_free(&p);
}

/* Another file renamed over it (a restore): the new file is read. */
static void test_replaced(void **state)
{
	fixture *f = *state;
	add_job(f->path, "venv.install");
	pw_api_catalog_pool *p = pw_api_catalog_pool_new(f->path, 2);
	assert_int_equal(jobs_seen(p), 1);
	char other[PATH_MAX];
	tl_textf(other, sizeof other, "%s/other.sqlite3", f->dir);
	for (int i = 0; i < 3; i++)
		add_job(other, "venv.create");
	assert_int_equal(rename(other, f->path), 0);
	assert_int_equal(jobs_seen(p), 3);
	pw_api_catalog_pool_free(&p);
}

/* An older schema read with shims (an empty temporary api_jobs), then
 * migrated by a writer that stays open, so the main file's stamp may not
 * move: the version in the header says to open again. */
static void test_migrated(void **state)
{
	fixture *f = *state;
	pw_catalog *w = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &w));
	pw_catalog_close(&w);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE api_jobs; DROP INDEX operations_target; DROP TABLE operation_counts;"
				      " DROP TABLE attempt_counts; DROP TABLE last_finished; DROP TRIGGER operations_count_insert;"
				      " DROP TRIGGER operations_count_finish; DROP TRIGGER operations_count_delete; DROP TRIGGER last_finished_delete; DROP INDEX operations_kind_finished; DROP TRIGGER attempts_count_delete; DROP TRIGGER attempts_count_insert;"
				      " PRAGMA user_version = 4; PRAGMA wal_checkpoint(TRUNCATE)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	pw_api_catalog_pool *p = pw_api_catalog_pool_new(f->path, 2);
	assert_int_equal(jobs_seen(p), 0);
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &w)); /* migrates 4 -> current */
	int64_t id;
	assert_ok(pw_apijobs_begin(w, "venv.install", NULL, "u", NULL, "2026-12-04T00:00:01.000Z", &id));
	assert_int_equal(jobs_seen(p), 1);
	pw_catalog_close(&w);
	pw_api_catalog_pool_free(&p);
}

/* More takers than the pool keeps: each gets its own; the extras close. */
static void test_more_than_kept(void **state)
{
	fixture *f = *state;
	add_job(f->path, "venv.install");
	pw_api_catalog_pool *p = pw_api_catalog_pool_new(f->path, 1);
	pw_api_catalog_lease a, b;
	assert_ok(pw_api_catalog_pool_take(p, &a));
	assert_ok(pw_api_catalog_pool_take(p, &b));
	assert_ptr_not_equal(a.c, b.c);
	pw_api_catalog_pool_give(p, &a);
	pw_api_catalog_pool_give(p, &b);
	assert_null(b.c);
	assert_int_equal(jobs_seen(p), 1);
	assert_int_equal(pw_api_catalog_pool_opens(p), 2);
	pw_api_catalog_pool_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kept_between_reads, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_created_later, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_replaced, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_migrated, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_more_than_kept, catalog_setup, catalog_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
