/*
 * The set-up the catalog's unit tests share (test_catalog*, test_jobs):
 * a fresh temporary directory per test with the catalog's path in it, removed
 * afterwards, and the raw-SQLite and file helpers their checks use. Uses
 * cmocka's assertions, so only for test programs.
 */
#ifndef PW_CATALOG_FIXTURE_H
#define PW_CATALOG_FIXTURE_H

#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "testlib.h"

typedef struct fixture {
	char dir[PATH_MAX];
	char *path; /* dir/catalog.sqlite3, not made yet */
} fixture;

/* cmocka group/test set-up and tear-down: *state is a fixture. */
int catalog_setup(void **state);
int catalog_teardown(void **state);

/* SQL on a raw handle: run it, or read the first column of its first row;
 * any error fails the test. */
void raw_exec(sqlite3 *db, const char *sql);
int64_t raw_int(sqlite3 *db, const char *sql);

/* Opening the catalog at path in mode is refused as written by a newer
 * pyward: CORRUPT, a hint saying so, and no handle. */
void expect_newer_refused(const char *path, pw_catalog_mode mode);

/* path + suffix ("-wal", "-shm") exists. */
bool side_file_exists(const char *path, const char *suffix);
/* A file's bytes now, to show later that nothing was written to it. */
typedef struct file_copy {
	char *bytes;
	size_t len;
} file_copy;
file_copy file_copy_of(const char *path);
/* path still holds exactly the bytes of *was (which it frees). */
void assert_file_unchanged(const char *path, file_copy *was);

/* The whole file, NUL-terminated past *len bytes (free it). */
char *slurp(const char *path, size_t *len);

#endif
