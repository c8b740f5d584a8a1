/* Unit tests: file stamps say when a path no longer names the file it did. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "filestamp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/pw-filestamp-XXXXXX";

static char *at(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_unchanged_is_same(void **state)
{
	(void)state;
	put("cfg", "home = /usr/bin\n");
	pw_filestamp s;
	pw_filestamp_take(at("cfg"), true, &s);
	assert_true(s.exists);
	assert_true(pw_filestamp_same(at("cfg"), true, &s));
	assert_true(pw_filestamp_same(at("cfg"), false, &s));
}

/* Two stamps compared with each other (the API's status cache): "absent
 * then, absent now" is no change; appearing, vanishing or a rewrite is. */
static void test_equal_compares_two_stamps(void **state)
{
	(void)state;
	pw_filestamp gone1, gone2, here, again;
	pw_filestamp_take(at("never"), true, &gone1);
	pw_filestamp_take(at("never"), true, &gone2);
	assert_true(pw_filestamp_equal(&gone1, &gone2));
	put("eq", "x\n");
	pw_filestamp_take(at("eq"), true, &here);
	assert_false(pw_filestamp_equal(&gone1, &here));
	assert_false(pw_filestamp_equal(&here, &gone1));
	pw_filestamp_take(at("eq"), true, &again);
	assert_true(pw_filestamp_equal(&here, &again));
	struct timespec pause = { 0, 20 * 1000000L };
	nanosleep(&pause, NULL);
	put("eq", "y\n");
	pw_filestamp_take(at("eq"), true, &again);
	assert_false(pw_filestamp_equal(&here, &again));
}

static void test_changes_differ(void **state)
{
	(void)state;
	pw_filestamp s;
	put("a", "home = /usr/bin\n");
	pw_filestamp_take(at("a"), true, &s);
	/* rewritten in place, same size: the change time moves */
	struct timespec pause = { 0, 20 * 1000000L };
	nanosleep(&pause, NULL);
	put("a", "home = /opt/bin\n");
	assert_false(pw_filestamp_same(at("a"), true, &s));
	/* replaced by rename */
	pw_filestamp_take(at("a"), true, &s);
	put("b", "home = /usr/bin\n");
	assert_int_equal(rename(at("b"), at("a")), 0);
	assert_false(pw_filestamp_same(at("a"), true, &s));
	/* removed; and a path that never existed is never the same */
	pw_filestamp_take(at("a"), true, &s);
	assert_int_equal(unlink(at("a")), 0);
	assert_false(pw_filestamp_same(at("a"), true, &s));
	pw_filestamp_take(at("nothing"), true, &s);
	assert_false(s.exists);
	assert_false(pw_filestamp_same(at("nothing"), true, &s));
}

static void test_links_followed_or_not(void **state)
{
	(void)state;
	put("t1", "one\n");
	put("t2", "two\n");
	assert_int_equal(symlink("t1", at("link")), 0);
	pw_filestamp target, link;
	pw_filestamp_take(at("link"), true, &target);
	pw_filestamp_take(at("link"), false, &link);
	assert_true(S_ISLNK(link.mode));
	assert_false(S_ISLNK(target.mode));
	/* pointed elsewhere: both the link and what it leads to differ */
	assert_int_equal(unlink(at("link")), 0);
	assert_int_equal(symlink("t2", at("link")), 0);
	assert_false(pw_filestamp_same(at("link"), true, &target));
	assert_false(pw_filestamp_same(at("link"), false, &link));
	/* a directory swapped for a link to it is not the directory */
	assert_int_equal(mkdir(at("d"), 0700), 0);
	pw_filestamp d;
	pw_filestamp_take(at("d"), false, &d);
	assert_int_equal(rename(at("d"), at("d2")), 0);
	assert_int_equal(symlink("d2", at("d")), 0);
	assert_false(pw_filestamp_same(at("d"), false, &d));
}

/* Stamps relative to a folder held open: the same answers as by path,
 * without walking the folder's path. */
static void test_relative_to_a_folder(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("v"), 0700), 0);
	assert_int_equal(mkdir(at("v/bin"), 0700), 0);
	put("v/t1", "one\n");
	put("v/t2", "two\n");
	put("v/pyvenv.cfg", "home = /usr/bin\n");
	assert_int_equal(symlink("../t1", at("v/bin/python")), 0);
	int fd = open(at("v"), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	assert_true(fd >= 0);
	pw_filestamp cfg, link, target, by_path;
	pw_filestamp_take_at(fd, "pyvenv.cfg", true, &cfg);
	pw_filestamp_take_at(fd, "bin/python", false, &link);
	pw_filestamp_take_at(fd, "bin/python", true, &target);
	pw_filestamp_take(at("v/bin/python"), true, &by_path);
	assert_true(cfg.exists && S_ISLNK(link.mode) && S_ISREG(target.mode));
	assert_true(pw_filestamp_equal(&target, &by_path));
	assert_true(pw_filestamp_same_at(fd, "pyvenv.cfg", true, &cfg));
	assert_true(pw_filestamp_same_at(fd, "bin/python", false, &link));
	assert_true(pw_filestamp_same_at(fd, "bin/python", true, &target));
	/* the link pointed elsewhere; the file replaced by rename */
	assert_int_equal(unlink(at("v/bin/python")), 0);
	assert_int_equal(symlink("../t2", at("v/bin/python")), 0);
	assert_false(pw_filestamp_same_at(fd, "bin/python", false, &link));
	assert_false(pw_filestamp_same_at(fd, "bin/python", true, &target));
	put("v/new.cfg", "home = /opt/bin\n");
	assert_int_equal(rename(at("v/new.cfg"), at("v/pyvenv.cfg")), 0);
	assert_false(pw_filestamp_same_at(fd, "pyvenv.cfg", true, &cfg));
	/* AT_FDCWD: the working folder, as the plain functions use */
	pw_filestamp_take_at(AT_FDCWD, at("v/t1"), true, &by_path);
	assert_true(pw_filestamp_same(at("v/t1"), true, &by_path));
	close(fd);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged_is_same),
		cmocka_unit_test(test_changes_differ),
		cmocka_unit_test(test_equal_compares_two_stamps),
		cmocka_unit_test(test_links_followed_or_not),
		cmocka_unit_test(test_relative_to_a_folder),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
