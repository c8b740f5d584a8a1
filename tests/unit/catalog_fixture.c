/* The catalog tests' shared set-up: see catalog_fixture.h. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "catalog_fixture.h"
#include "err.h"
#include "testlib.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int catalog_setup(void **state)
{
	fixture *f = xcalloc(1, sizeof *f);
	if (tl_make_temp_dir(f->dir, sizeof f->dir, "pw-catalog") != 0) {
		free(f);
		return -1;
	}
	f->path = xasprintf("%s/catalog.sqlite3", f->dir);
	*state = f;
	return 0;
}

int catalog_teardown(void **state)
{
	fixture *f = *state;
	tl_remove_tree(f->dir);
	free(f->path);
	free(f);
	return 0;
}

void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void expect_newer_refused(const char *path, pw_catalog_mode mode)
{
	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(path, mode, &c);
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_CORRUPT);
	assert_non_null(strstr(pw_err_hint(e), "newer pyward"));
	pw_err_free(e);
	assert_null(c);
}

bool side_file_exists(const char *path, const char *suffix)
{
	char *p = xasprintf("%s%s", path, suffix);
	struct stat st;
	bool r = stat(p, &st) == 0;
	free(p);
	return r;
}

char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *buf = xmalloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

file_copy file_copy_of(const char *path)
{
	file_copy c;
	c.bytes = slurp(path, &c.len);
	return c;
}

void assert_file_unchanged(const char *path, file_copy *was)
{
	size_t len;
	char *now = slurp(path, &len);
	assert_int_equal(len, was->len);
	assert_memory_equal(now, was->bytes, len);
	free(now);
	free(was->bytes);
	was->bytes = NULL;
}
