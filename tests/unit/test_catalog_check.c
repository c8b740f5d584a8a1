/* When a writing open checks the whole catalog, and what protects a large
 * one between checks: on real SQLite files in fresh /tmp directories, with
 * pages damaged by hand and writers that die without closing. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_fixture.h"
#include "catalog_file.h"
#include "err.h"
#include "catalog_stats.h"
#include "history_admin.h"
#include "xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static int64_t record(pw_catalog *c)
{
	pw_op_start s = { .kind = "runtime.verify", .target = "3.12", .args = "pyward runtime verify" };
	int64_t id = 0;
	assert_ok(pw_catalog_op_begin(c, &s, &id));
	assert_ok(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL));
	return id;
}

/* The leaf pages of the operations table: the middle one, which an
 * operation recorded now does not touch, and the rightmost, where it goes. */
static void operation_leaves(const char *path, int64_t *middle, int64_t *rightmost)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	int64_t n = raw_int(db, "SELECT count(*) FROM dbstat WHERE name = 'operations' AND pagetype = 'leaf'");
	assert_true(n > 20);
	char *sql = xasprintf("SELECT pageno FROM dbstat WHERE name = 'operations' AND pagetype = 'leaf'"
			      " ORDER BY path LIMIT 1 OFFSET %lld", (long long)(n / 2));
	*middle = raw_int(db, sql);
	free(sql);
	*rightmost = raw_int(db, "SELECT pageno FROM dbstat WHERE name = 'operations' AND pagetype = 'leaf'"
				 " ORDER BY path DESC LIMIT 1");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A catalog of 6,000 operations (about 4 MiB, past the size a writing open
 * checks every time), closed cleanly: no -wal left; its operations' leaf
 * pages as operation_leaves gives them. */
static void make_large(const char *path, int64_t *middle, int64_t *rightmost)
{
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c));
	record(c);
	raw_exec(pw_catalog_db(c),
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5999) "
		 "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, uid, host, "
		 "pid, pyward_version, duration_ms) SELECT 'venv.install', '/ws/' || (i % 50) || '/.venv', "
		 "printf('pyward venv install %.400c', 'x'), printf('2026-01-01T00:00:%06d.000Z', i), "
		 "printf('2026-01-01T00:00:%06d.500Z', i), 'ok', 'alice', 1000, 'h', i, 'test', 500 FROM n");
	pw_catalog_close(&c);
	assert_false(side_file_exists(path, "-wal"));
	operation_leaves(path, middle, rightmost);
}

/* Point the page's last cell at its last two bytes: a damage plain SQLite
 * would write past (the cell runs off the page), that its per-page check
 * (cell_size_check) and quick_check both see. */
static void damage_page(const char *path, int64_t page)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	unsigned char hdr[8];
	off_t at = (off_t)(page - 1) * PAGE;
	assert_int_equal(pread(fd, hdr, sizeof hdr, at), (ssize_t)sizeof hdr);
	assert_true(hdr[0] == 13 || hdr[0] == 10); /* a table leaf, or an index leaf (a WITHOUT ROWID table) */
	unsigned cells = (unsigned)hdr[3] << 8 | hdr[4];
	assert_true(cells > 1);
	unsigned char ptr[2] = { (PAGE - 2) >> 8, (PAGE - 2) & 0xff };
	assert_int_equal(pwrite(fd, ptr, 2, at + 8 + 2 * (cells - 1)), 2);
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

static void expect_corrupt(pw_err *e)
{
	if (!e)
		fail_msg("expected corrupt, got success");
	if (pw_err_code(e) != PW_ERR_CORRUPT)
		fail_msg("expected corrupt, got %s: %s", pw_err_code_name(pw_err_code(e)), pw_err_message(e));
	assert_non_null(pw_err_hint(e));
	assert_non_null(strstr(pw_err_hint(e), "restore a backup"));
	pw_err_free(e);
}

/* A writer that records one operation and then waits: killed, it leaves its
 * -wal with frames and holds nothing; alive, it holds the catalog open.
 * Returns its pid once the operation is committed. */
static pid_t writer_child(const char *path, int *release)
{
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		pw_catalog *c = NULL;
		pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c);
		if (e)
			_exit(3);
		pw_op_start s = { .kind = "venv.install", .target = "/ws/x", .args = "pyward venv install x" };
		int64_t id;
		if (pw_catalog_op_begin(c, &s, &id) || pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL))
			_exit(4);
		char b = 'r';
		if (write(ready[1], &b, 1) != 1)
			_exit(5);
		if (read(go[0], &b, 1) < 0)
			_exit(6);
		_exit(0); /* never closes the catalog */
	}
	close(ready[1]);
	close(go[0]);
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	close(ready[0]);
	*release = go[1];
	return pid;
}

static void reap(pid_t pid, int release)
{
	close(release);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void read_page(const char *path, int64_t page, unsigned char *buf)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, PAGE, (off_t)(page - 1) * PAGE), PAGE);
	close(fd);
}

/* ---------------------------------------------------------------- tests */

static pw_err *count_exported(const pw_op_rec *op, const pw_attempt_list *att, const char *env,
			      const pw_pkg_changes *ch, const pw_apijob_rec *job, void *ud)
{
	(void)op, (void)att, (void)env, (void)ch, (void)job;
	++*(int *)ud;
	return NULL;
}

/* Damage met by the modules that use the catalog's connection for their
 * own statements (the counts of /metrics here; jobs, API jobs, package
 * changes, runtimes, export) is reported as damage with what to do, as the catalog's own
 * errors are: before 2026-12-04 it came without a hint. */
static void test_damage_met_elsewhere_has_the_hint(void **state)
{
	fixture *f = *state;
	int64_t middle, rightmost;
	make_large(f->path, &middle, &rightmost);
	damage_page(f->path, middle);
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	int seen = 0;
	expect_corrupt(pw_history_export(c, NULL, NULL, count_exported, &seen));
	assert_true(seen > 0);
	pw_catalog_close(&c);
	/* The counts read the counters the catalog keeps, not the operations. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	int64_t counts = raw_int(db, "SELECT rootpage FROM sqlite_master WHERE name = 'operation_counts'");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	damage_page(f->path, counts);
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_ONLY, &c));
	pw_catalog_stats st;
	expect_corrupt(pw_catalog_stats_read(c, &st));
	pw_catalog_close(&c);
}

/* A large catalog is not read whole on every writing open: damage in a page
 * the operation does not reach does not stop it from being recorded, the
 * damaged page stays as it was, and a read that reaches it still says the
 * catalog is damaged. (Before 2026-12-04 the open read every page and
 * refused.) */
static void test_large_damaged_elsewhere_records(void **state)
{
	fixture *f = *state;
	int64_t middle, rightmost;
	make_large(f->path, &middle, &rightmost);
	damage_page(f->path, middle);
	unsigned char before[PAGE], after[PAGE];
	read_page(f->path, middle, before);

	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	int64_t id = record(c);
	assert_true(id > 6000);
	pw_op_filter all = { .limit = -1 };
	pw_op_list l = { 0 };
	expect_corrupt(pw_catalog_ops_query(c, &all, &l));
	pw_op_list_clear(&l);
	pw_catalog_close(&c);

	read_page(f->path, middle, after);
	assert_memory_equal(before, after, PAGE);
}

/* The page an operation is written to is damaged: the write is refused as
 * damage, with the hint, and nothing is written to the file (whether the
 * open or the write says so). Without the per-page check SQLite wrote a
 * new row into that page. */
static void test_large_write_to_damaged_page_refused(void **state)
{
	fixture *f = *state;
	int64_t middle, rightmost;
	make_large(f->path, &middle, &rightmost);
	damage_page(f->path, rightmost);
	file_copy before = file_copy_of(f->path);

	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c);
	if (!e) {
		pw_op_start s = { .kind = "runtime.verify", .args = "pyward runtime verify" };
		int64_t id = 0;
		e = pw_catalog_op_begin(c, &s, &id);
		pw_catalog_close(&c);
	}
	expect_corrupt(e);

	assert_file_unchanged(f->path, &before);
	assert_false(side_file_exists(f->path, "-wal"));
}

/* A writer killed with its -wal behind: the next writing open checks the
 * whole file, and refuses a damaged one however large, leaving it as it
 * was. */
static void test_unclosed_writer_makes_open_check(void **state)
{
	fixture *f = *state;
	int64_t middle, rightmost;
	make_large(f->path, &middle, &rightmost);
	assert_false(pw_catalog_file_left_open(f->path));

	int release;
	pid_t pid = writer_child(f->path, &release);
	/* alive and holding the catalog: its -wal is no reason */
	assert_false(pw_catalog_file_left_open(f->path));
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(release);
	assert_true(side_file_exists(f->path, "-wal"));
	assert_true(pw_catalog_file_left_open(f->path));

	damage_page(f->path, middle);
	file_copy before = file_copy_of(f->path);
	for (int i = 0; i < 2; i++) {
		pw_catalog *c = NULL;
		expect_corrupt(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
		assert_null(c);
	}
	assert_file_unchanged(f->path, &before);
}

/* A writer that is still running keeps its -wal: an open beside it does not
 * read the whole file (it records despite damage it does not reach), and
 * after a clean close there is no reason either. */
static void test_live_writer_is_no_reason(void **state)
{
	fixture *f = *state;
	int64_t middle, rightmost;
	make_large(f->path, &middle, &rightmost);
	damage_page(f->path, middle);

	int release;
	pid_t pid = writer_child(f->path, &release);
	assert_true(side_file_exists(f->path, "-wal"));
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	record(c);
	pw_catalog_close(&c);
	reap(pid, release);
}

/* A small catalog is still checked whole on every writing open: damage in a
 * page no operation reaches is refused before anything is written. */
static void test_small_checked_every_open(void **state)
{
	fixture *f = *state;
	pw_catalog *c = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	raw_exec(pw_catalog_db(c),
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 999) "
		 "INSERT INTO operations (kind, target, args, started_at, user, uid, host, pid, pyward_version) "
		 "SELECT 'venv.install', '/ws/.venv', printf('pyward venv install %.400c', 'x'), "
		 "printf('2026-01-01T00:00:%06d.000Z', i), 'alice', 1000, 'h', i, 'test' FROM n");
	pw_catalog_close(&c);
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(st.st_size < (1 << 20));
	int64_t middle, rightmost;
	operation_leaves(f->path, &middle, &rightmost);
	damage_page(f->path, middle);
	file_copy before = file_copy_of(f->path);
	expect_corrupt(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &c));
	assert_null(c);
	assert_file_unchanged(f->path, &before);
}

/* Does this process hold a POSIX lock on path (from /proc/locks)? */
static bool holds_lock(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	FILE *fp = fopen("/proc/locks", "re");
	if (!fp)
		return true; /* cannot tell */
	char line[256];
	bool held = false;
	while (!held && fgets(line, sizeof line, fp)) {
		char kind[16];
		int pid;
		unsigned long long ino;
		if (!strstr(line, "->") &&
		    sscanf(line, "%*d: %15s %*s %*s %d %*x:%*x:%llu", kind, &pid, &ino) == 3)
			held = strcmp(kind, "POSIX") == 0 && pid == getpid() && ino == (unsigned long long)st.st_ino;
	}
	fclose(fp);
	return held;
}

/* A second connection opened and closed in the same process (a server
 * opens the catalog per request while an operation holds it) leaves the
 * first one's SQLite locks in place: another process still sees the
 * catalog held open. Before 2026-12-04 the header read and the mode check
 * opened and closed the catalog, its -wal and its -shm themselves, which
 * dropped them. */
static void test_second_open_keeps_first_locks(void **state)
{
	fixture *f = *state;
	pw_catalog *a = NULL, *b = NULL;
	assert_ok(pw_catalog_open(f->path, PW_CATALOG_READ_WRITE, &a));
	record(a);
	assert_true(side_file_exists(f->path, "-wal"));
	/* a connection in WAL mode holds a shared lock on the file as long as it is open */
	assert_true(holds_lock(f->path));
	for (int i = 0; i < 2; i++) {
		assert_ok(pw_catalog_open(f->path, i ? PW_CATALOG_READ_ONLY : PW_CATALOG_READ_WRITE, &b));
		pw_op_filter all = { .limit = -1 };
		pw_op_list l = { 0 };
		assert_ok(pw_catalog_ops_query(b, &all, &l));
		assert_true(l.count >= 1);
		pw_op_list_clear(&l);
		pw_catalog_close(&b);
		if (!holds_lock(f->path))
			fail_msg("the first connection's lock on the catalog was dropped by the second's close");
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pw_catalog_file_left_open(f->path) ? 1 : 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("the first connection's lock on the -shm was dropped by the second's close");
	record(a);
	pw_catalog_close(&a);
	assert_false(side_file_exists(f->path, "-wal"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_large_damaged_elsewhere_records, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_large_write_to_damaged_page_refused, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_unclosed_writer_makes_open_check, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_live_writer_is_no_reason, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_small_checked_every_open, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_second_open_keeps_first_locks, catalog_setup, catalog_teardown),
		cmocka_unit_test_setup_teardown(test_damage_met_elsewhere_has_the_hint, catalog_setup, catalog_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
