/* Unit tests for path confinement, on real directories and symlinks. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "guard.h"
#include "xalloc.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Layout under a fresh T = /tmp/pw-guard-XXXXXX (realpath'd):
 *   T/ws/            the workspace (root 0)
 *   T/ws/sub/        a directory
 *   T/ws/file        a file
 *   T/ws/envs/       where venvs live
 *   T/ws2/           a sibling sharing the prefix "ws"
 *   T/out/secret     outside every root
 *   T/ws/out_link    -> T/out              (directory outside)
 *   T/ws/secret_link -> T/out/secret       (file outside)
 *   T/ws/in_link     -> T/ws/sub           (inside)
 *   T/ws/dangle      -> T/out/not-yet      (dangling, outside)
 *   T/ws/dangle_in   -> T/ws/not-yet       (dangling, inside)
 *   T/ws/loop        -> T/ws/loop
 *   T/ws/envs/escape -> T/out
 *   T/ws/envs/alias  -> T/ws/sub
 */
struct fx {
	char *t, *ws, *ws2, *out;
	pw_guard *g;
};

static char *at(const struct fx *f, const char *rel)
{
	return xasprintf("%s/%s", f->t, rel);
}

static void make_dir(const struct fx *f, const char *rel)
{
	char *p = at(f, rel);
	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
}

static void make_file(const struct fx *f, const char *rel)
{
	char *p = at(f, rel);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fputs("x\n", fp);
	assert_int_equal(fclose(fp), 0);
	free(p);
}

static void make_link(const struct fx *f, const char *rel, const char *target_rel)
{
	char *p = at(f, rel), *t = at(f, target_rel);
	assert_int_equal(symlink(t, p), 0);
	free(p);
	free(t);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	char tmpl[] = "/tmp/pw-guard-XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	f->t = realpath(tmpl, NULL);
	*state = f;
	if (!f->t)
		return -1;
	f->ws = at(f, "ws");
	f->ws2 = at(f, "ws2");
	f->out = at(f, "out");
	const char *dirs[] = { "ws", "ws/sub", "ws/envs", "ws2", "out" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		make_dir(f, dirs[i]);
	make_file(f, "ws/file");
	make_file(f, "out/secret");
	make_link(f, "ws/out_link", "out");
	make_link(f, "ws/secret_link", "out/secret");
	make_link(f, "ws/in_link", "ws/sub");
	make_link(f, "ws/dangle", "out/not-yet");
	make_link(f, "ws/dangle_in", "ws/not-yet");
	make_link(f, "ws/loop", "ws/loop");
	make_link(f, "ws/envs/escape", "out");
	make_link(f, "ws/envs/alias", "ws/sub");
	f->g = pw_guard_new();
	pw_err *err = pw_guard_add_root(f->g, f->ws);
	pw_err_free(err);
	return err ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	pw_guard_free(&f->g);
	if (f->t)
		nftw(f->t, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->t);
	free(f->ws);
	free(f->ws2);
	free(f->out);
	free(f);
	return 0;
}

/* A non-NULL value that a failing call must replace with NULL. */
static char sentinel;

/* path must resolve to T/want_rel. */
static void expect_ok(const struct fx *f, const char *path, const char *want_rel)
{
	char *out = NULL, *want = at(f, want_rel);
	pw_err *err = pw_guard_resolve(f->g, path, &out);
	if (err)
		fail_msg("%s: unexpected error: %s", path, pw_err_message(err));
	assert_string_equal(out, want);
	assert_true(pw_guard_contains(f->g, out));
	free(out);
	free(want);
}

/* path must be refused (PW_ERR_REFUSED, with the hint), *out left NULL. */
static void expect_refused(const struct fx *f, const char *path)
{
	char *out = &sentinel;          /* must be reset to NULL */
	pw_err *err = pw_guard_resolve(f->g, path, &out);
	if (!err)
		fail_msg("%s: accepted as %s", path, out);
	assert_null(out);
	if (pw_err_code(err) != PW_ERR_REFUSED)
		fail_msg("%s: code %d: %s", path, pw_err_code(err), pw_err_message(err));
	assert_string_equal(pw_err_hint(err), "pass --root DIR to allow another directory");
	assert_non_null(strstr(pw_err_message(err), f->ws));   /* names the roots */
	assert_null(strchr(pw_err_message(err), '\n'));
	pw_err_free(err);
}

/* ----------------------------------------------------------------- roots */

static void test_guard_roots(void **state)
{
	struct fx *f = *state;
	assert_int_equal(pw_guard_root_count(f->g), 1);
	assert_string_equal(pw_guard_root(f->g, 0), f->ws);
	assert_null(pw_guard_root(f->g, 1));
	/* Adding the same directory again (here through a symlink) is a no-op. */
	make_link(f, "wslink", "ws");
	char *link = at(f, "wslink");
	assert_null(pw_guard_add_root(f->g, link));
	assert_int_equal(pw_guard_root_count(f->g), 1);
	free(link);
	/* A symlinked workspace is stored realpath'd. */
	pw_guard *g = pw_guard_new();
	char *sub = at(f, "ws/in_link");
	assert_null(pw_guard_add_root(g, sub));
	char *want = at(f, "ws/sub");
	assert_string_equal(pw_guard_root(g, 0), want);
	free(want);
	free(sub);
	pw_guard_free(&g);
	assert_null(g);
}

static void test_guard_add_root_errors(void **state)
{
	struct fx *f = *state;
	char *missing = at(f, "nope"), *file = at(f, "ws/file");
	const char *bad[] = { missing, file, "", NULL };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pw_err *err = pw_guard_add_root(f->g, bad[i]);
		assert_non_null(err);
		assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
		pw_err_free(err);
	}
	assert_int_equal(pw_guard_root_count(f->g), 1);
	free(missing);
	free(file);
}

/* --------------------------------------------------------------- resolve */

static void test_guard_inside_existing(void **state)
{
	struct fx *f = *state;
	expect_ok(f, "sub", "ws/sub");
	expect_ok(f, "./sub/./", "ws/sub");
	expect_ok(f, "file", "ws/file");
	expect_ok(f, ".", "ws");
	expect_ok(f, f->ws, "ws");
	char *abs = xasprintf("%s//sub/../file", f->ws);
	expect_ok(f, abs, "ws/file");   /* ".." that stays inside is fine */
	free(abs);
}

static void test_guard_inside_new(void **state)
{
	struct fx *f = *state;
	expect_ok(f, "new", "ws/new");
	expect_ok(f, "new/./deeper//file.txt", "ws/new/deeper/file.txt");
	expect_ok(f, "sub/new", "ws/sub/new");
	char *abs = xasprintf("%s/brand/new", f->ws);
	expect_ok(f, abs, "ws/brand/new");
	free(abs);
}

static void test_guard_dotdot(void **state)
{
	struct fx *f = *state;
	expect_refused(f, "../x");
	expect_refused(f, "..");
	expect_refused(f, "sub/../../x");
	expect_refused(f, "new/../../x");       /* ".." after a missing directory */
	expect_refused(f, "new/..");
	/* Lexically inside, but ".." after a missing directory is never trusted. */
	char *out = NULL;
	pw_err *err = pw_guard_resolve(f->g, "new/../x", &out);
	assert_non_null(err);
	assert_non_null(strstr(pw_err_message(err), "\"..\" after a directory that does not exist"));
	pw_err_free(err);
	/* "/ws/a/../../etc", with a existing and with a missing. */
	char *p = xasprintf("%s/sub/../../etc", f->ws);
	expect_refused(f, p);
	free(p);
	p = xasprintf("%s/a/../../etc", f->ws);
	expect_refused(f, p);
	free(p);
}

static void test_guard_absolute_outside(void **state)
{
	struct fx *f = *state;
	expect_refused(f, "/");
	expect_refused(f, "/etc/passwd");
	expect_refused(f, f->t);
	char *p = at(f, "out/secret");
	expect_refused(f, p);
	free(p);
	p = at(f, "out/new-file");
	expect_refused(f, p);
	free(p);
}

static void test_guard_sibling_prefix(void **state)
{
	struct fx *f = *state;
	expect_refused(f, f->ws2);
	char *p = xasprintf("%s/x", f->ws2);
	expect_refused(f, p);
	free(p);
	assert_false(pw_guard_contains(f->g, f->ws2));
	assert_true(pw_guard_contains(f->g, f->ws));
	p = xasprintf("%s/anything", f->ws);
	assert_true(pw_guard_contains(f->g, p));
	free(p);
}

static void test_guard_symlink_outside(void **state)
{
	struct fx *f = *state;
	expect_refused(f, "secret_link");       /* final component */
	expect_refused(f, "out_link");
	expect_refused(f, "out_link/secret");   /* middle component */
	expect_refused(f, "out_link/new-file"); /* middle, rest not existing */
	expect_refused(f, "sub/../out_link/secret");
}

static void test_guard_symlink_inside(void **state)
{
	struct fx *f = *state;
	expect_ok(f, "in_link", "ws/sub");
	expect_ok(f, "in_link/new", "ws/sub/new");
	make_file(f, "ws/sub/real");
	expect_ok(f, "in_link/real", "ws/sub/real");
}

static void test_guard_dangling_symlink(void **state)
{
	struct fx *f = *state;
	expect_refused(f, "dangle");            /* could be created outside later */
	expect_refused(f, "dangle/x");
	expect_refused(f, "dangle_in");         /* inside or not, it is not checkable */
	expect_refused(f, "sub/../dangle_in");
	expect_refused(f, "loop");
	expect_refused(f, "loop/x");
}

static void test_guard_control_chars(void **state)
{
	struct fx *f = *state;
	expect_refused(f, "a\nb");
	expect_refused(f, "sub\r");
	expect_refused(f, "tab\there");
	expect_refused(f, "esc\033[2J");
	char *out = NULL;
	pw_err *err = pw_guard_resolve(f->g, "evil\nFAKE LINE", &out);
	assert_non_null(strstr(pw_err_message(err), "evil\\nFAKE LINE"));
	pw_err_free(err);
	/* A clean name inside can lead, by symlink, to one that is not. */
	make_dir(f, "ws/odd\nname");
	make_link(f, "ws/odd_link", "ws/odd\nname");
	expect_refused(f, "odd_link");
	expect_refused(f, "odd_link/new");
	char *odd = at(f, "ws/odd\nname"), *odd_link = at(f, "ws/odd_link");
	const char *bad_roots[] = { odd, odd_link };
	for (size_t i = 0; i < 2; i++) {
		err = pw_guard_add_root(f->g, bad_roots[i]);
		assert_non_null(err);
		assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
		assert_null(strchr(pw_err_message(err), '\n'));
		pw_err_free(err);
	}
	assert_int_equal(pw_guard_root_count(f->g), 1);
	free(odd);
	free(odd_link);
}

static void test_guard_empty_path(void **state)
{
	struct fx *f = *state;
	const char *bad[] = { "", NULL };
	for (size_t i = 0; i < 2; i++) {
		char *out = NULL;
		pw_err *err = pw_guard_resolve(f->g, bad[i], &out);
		assert_non_null(err);
		assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
		assert_null(out);
		pw_err_free(err);
	}
}

static void test_guard_no_roots(void **state)
{
	(void)state;
	pw_guard *g = pw_guard_new();
	char *out = NULL;
	pw_err *err = pw_guard_resolve(g, "/tmp", &out);
	assert_non_null(err);
	assert_int_equal(pw_err_code(err), PW_ERR_REFUSED);
	assert_null(out);
	pw_err_free(err);
	assert_false(pw_guard_contains(g, "/tmp"));
	assert_int_equal(pw_guard_root_count(g), 0);
	pw_guard_free(&g);
}

static void test_guard_second_root(void **state)
{
	struct fx *f = *state;
	assert_null(pw_guard_add_root(f->g, f->out));
	assert_int_equal(pw_guard_root_count(f->g), 2);
	assert_string_equal(pw_guard_root(f->g, 1), f->out);
	char *p = at(f, "out/secret");
	expect_ok(f, p, "out/secret");
	free(p);
	expect_ok(f, "secret_link", "out/secret");
	expect_ok(f, "out_link/new", "out/new");
	expect_ok(f, "sub", "ws/sub");          /* relative still means root 0 */
	expect_refused(f, "dangle");            /* dangling even into an allowed root */
	expect_refused(f, f->ws2);
}

static void test_guard_slash_root(void **state)
{
	(void)state;
	pw_guard *g = pw_guard_new();
	assert_null(pw_guard_add_root(g, "/"));
	char *out = NULL;
	assert_null(pw_guard_resolve(g, "/", &out));
	assert_string_equal(out, "/");
	free(out);
	assert_null(pw_guard_resolve(g, "no-such-dir-here/x", &out));
	assert_string_equal(out, "/no-such-dir-here/x");
	free(out);
	pw_guard_free(&g);
}

static void test_guard_contains_unresolved(void **state)
{
	struct fx *f = *state;
	char *p = xasprintf("%s/../out", f->ws);
	assert_false(pw_guard_contains(f->g, p));       /* not resolved: never inside */
	free(p);
	p = xasprintf("%s/./x", f->ws);
	assert_false(pw_guard_contains(f->g, p));
	free(p);
	p = xasprintf("%s/..x", f->ws);
	assert_true(pw_guard_contains(f->g, p));        /* a name, not ".." */
	free(p);
	assert_false(pw_guard_contains(f->g, "ws/sub"));
	assert_false(pw_guard_contains(f->g, NULL));
}

/* ----------------------------------------------------------------- names */

static void test_guard_names_valid(void **state)
{
	(void)state;
	char max[65];
	memset(max, 'a', 64);
	max[64] = '\0';
	const char *good[] = { "dev", "py3.12", "A-b_c.d", ".venv", "...", "-x", "0", max };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		pw_err *err = pw_guard_check_name(good[i]);
		if (err)
			fail_msg("%s: %s", good[i], pw_err_message(err));
	}
}

static void test_guard_names_invalid(void **state)
{
	(void)state;
	char long_name[66];
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	const char *bad[] = { "", NULL, long_name, ".", "..", "a/b", "a b", "\xc3\xa4",
		"a\nb", "a\\b", "a:b", "*" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pw_err *err = pw_guard_check_name(bad[i]);
		if (!err)
			fail_msg("name %zu accepted", i);
		assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
		assert_non_null(strstr(pw_err_message(err), "1 to 64"));
		assert_null(strchr(pw_err_message(err), '\n'));
		pw_err_free(err);
	}
}

/* ------------------------------------------------------------- join_name */

static void expect_join_refused(const struct fx *f, const char *dir, const char *name, pw_errcode code)
{
	char *out = &sentinel;
	pw_err *err = pw_guard_join_name(f->g, dir, name, &out);
	if (!err)
		fail_msg("%s + %s: accepted as %s", dir, name, out);
	assert_int_equal(pw_err_code(err), code);
	assert_null(out);
	pw_err_free(err);
}

static void test_guard_join_name(void **state)
{
	struct fx *f = *state;
	char *out = NULL, *want = at(f, "ws/envs/dev");
	assert_null(pw_guard_join_name(f->g, "envs", "dev", &out));
	assert_string_equal(out, want);
	free(out);
	char *envs = at(f, "ws/envs");
	assert_null(pw_guard_join_name(f->g, envs, "dev", &out));
	assert_string_equal(out, want);
	free(out);
	free(want);
	make_dir(f, "ws/envs/real");
	want = at(f, "ws/envs/real");
	assert_null(pw_guard_join_name(f->g, "envs", "real", &out));
	assert_string_equal(out, want);
	free(out);
	free(want);
	free(envs);
}

static void test_guard_join_name_refused(void **state)
{
	struct fx *f = *state;
	expect_join_refused(f, "envs", "escape", PW_ERR_REFUSED);   /* symlink outside */
	expect_join_refused(f, "envs", "alias", PW_ERR_REFUSED);    /* symlink elsewhere inside */
	expect_join_refused(f, "envs", "..", PW_ERR_USAGE);
	expect_join_refused(f, "envs", "a/b", PW_ERR_USAGE);
	expect_join_refused(f, "out_link", "dev", PW_ERR_REFUSED); /* dir outside */
	expect_join_refused(f, f->ws2, "dev", PW_ERR_REFUSED);
	expect_join_refused(f, ".", "dangle", PW_ERR_REFUSED);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_guard_roots),
		T(test_guard_add_root_errors),
		T(test_guard_inside_existing),
		T(test_guard_inside_new),
		T(test_guard_dotdot),
		T(test_guard_absolute_outside),
		T(test_guard_sibling_prefix),
		T(test_guard_symlink_outside),
		T(test_guard_symlink_inside),
		T(test_guard_dangling_symlink),
		T(test_guard_control_chars),
		T(test_guard_empty_path),
		T(test_guard_no_roots),
		T(test_guard_second_root),
		T(test_guard_slash_root),
		T(test_guard_contains_unresolved),
		T(test_guard_names_valid),
		T(test_guard_names_invalid),
		T(test_guard_join_name),
		T(test_guard_join_name_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
