/* Unit tests for settings files and box-root/paths selection. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "paths.h"
#include "settings.h"
#include "xalloc.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- fixtures */

struct fx {
	char *dir;      /* a fresh directory under /tmp, removed afterwards */
	char *oldcwd;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	char tmpl[] = "/tmp/pw-settings-XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	/* Compare against what getcwd()/realpath() report, even if /tmp is a link. */
	f->dir = realpath(tmpl, NULL);
	f->oldcwd = getcwd(NULL, 0);
	*state = f;
	return f->dir && f->oldcwd ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = chdir(f->oldcwd);
	nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->dir);
	free(f->oldcwd);
	free(f);
	return rc;
}

/* Write len bytes to dir/name; returns the malloc'd path. */
static char *write_file_n(const struct fx *f, const char *name, const char *text, size_t len)
{
	char *path = xasprintf("%s/%s", f->dir, name);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	return path;
}

static char *write_file(const struct fx *f, const char *name, const char *text)
{
	return write_file_n(f, name, text, strlen(text));
}

/* Loading text must fail with PW_ERR_USAGE and a message containing want. */
static void expect_text_error(const char *text, const char *want)
{
	pw_settings *s = pw_settings_new();
	pw_err *err = pw_settings_load_text(s, "t.conf", text);
	assert_non_null(err);
	assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
	if (!strstr(pw_err_message(err), want))
		fail_msg("message \"%s\" lacks \"%s\"", pw_err_message(err), want);
	assert_non_null(pw_err_hint(err));
	pw_err_free(err);
	pw_settings_free(&s);
}

static void expect_text_ok(const char *text)
{
	pw_settings *s = pw_settings_new();
	pw_err *err = pw_settings_load_text(s, "t.conf", text);
	if (err)
		fail_msg("\"%s\": %s", text, pw_err_message(err));
	pw_settings_free(&s);
}

/* ------------------------------------------------------------- settings */

static void test_settings_good_file(void **state)
{
	struct fx *f = *state;
	char *path = write_file(f, "good.conf",
		"# pyward settings\n"
		"\n"
		"   # an indented comment\n"
		"box_root = /srv/pyward\n"
		"\t timeout\t=   30  \n"
		"   \n"
		"mode=read-only\n"
		"mirrors = https://a.example/ https://b.example/\n"
		"python_max_workers = 8");      /* no final newline */
	pw_settings *s = pw_settings_new();
	bool loaded = false;
	pw_err *err = pw_settings_load_file(s, path, &loaded);
	assert_null(err);
	assert_true(loaded);
	assert_string_equal(pw_settings_get(s, "box_root"), "/srv/pyward");
	assert_string_equal(pw_settings_get(s, "timeout"), "30");
	assert_string_equal(pw_settings_get(s, "mode"), "read-only");
	assert_string_equal(pw_settings_get(s, "mirrors"), "https://a.example/ https://b.example/");
	assert_string_equal(pw_settings_get(s, "python_max_workers"), "8");
	assert_null(pw_settings_get(s, "proxy"));
	assert_null(pw_settings_origin(s, "proxy"));
	assert_null(pw_settings_get(s, "nonsense"));
	pw_settings_free(&s);
	assert_null(s);
	free(path);
}

static void test_settings_value_with_eq_and_hash(void **state)
{
	(void)state;
	pw_settings *s = pw_settings_new();
	assert_null(pw_settings_load_text(s, "t.conf",
		"index_url = https://pypi.example/simple?a=b#frag\n"
		"proxy = http://u:p@proxy:3128 # kept: not at line start\n"));
	assert_string_equal(pw_settings_get(s, "index_url"), "https://pypi.example/simple?a=b#frag");
	assert_string_equal(pw_settings_get(s, "proxy"), "http://u:p@proxy:3128 # kept: not at line start");
	pw_settings_free(&s);
}

static void test_settings_later_file_overrides(void **state)
{
	struct fx *f = *state;
	char *sys = write_file(f, "sys.conf", "proxy = http://sys\ntimeout = 10\n");
	char *user = write_file(f, "user.conf", "# user\ntimeout = 99\n");
	pw_settings *s = pw_settings_new();
	assert_null(pw_settings_load_file(s, sys, NULL));
	assert_null(pw_settings_load_file(s, user, NULL));
	assert_string_equal(pw_settings_get(s, "timeout"), "99");
	assert_string_equal(pw_settings_get(s, "proxy"), "http://sys");
	char *o_user = xasprintf("%s:2", user), *o_sys = xasprintf("%s:1", sys);
	assert_string_equal(pw_settings_origin(s, "timeout"), o_user);
	assert_string_equal(pw_settings_origin(s, "proxy"), o_sys);
	free(o_user);
	free(o_sys);
	pw_settings_free(&s);
	free(sys);
	free(user);
}

static void test_settings_origin_line(void **state)
{
	struct fx *f = *state;
	char *path = write_file(f, "o.conf", "# one\n\nca_bundle = /etc/ssl/x.pem\n");
	pw_settings *s = pw_settings_new();
	assert_null(pw_settings_load_file(s, path, NULL));
	char *want = xasprintf("%s:3", path);
	assert_string_equal(pw_settings_origin(s, "ca_bundle"), want);
	free(want);
	pw_settings_free(&s);
	free(path);
}

static void test_settings_missing_file(void **state)
{
	struct fx *f = *state;
	char *path = xasprintf("%s/absent.conf", f->dir);
	pw_settings *s = pw_settings_new();
	bool loaded = true;
	assert_null(pw_settings_load_file(s, path, &loaded));
	assert_false(loaded);
	assert_null(pw_settings_load_file(s, path, NULL));
	pw_settings_free(&s);
	free(path);
}

/* A bad line in a file: USAGE, "FILE:LINE" in the message, nothing applied. */
static void expect_file_error(const struct fx *f, const char *text, int line, const char *what)
{
	char *path = write_file(f, "bad.conf", text);
	pw_settings *s = pw_settings_new();
	bool loaded = false;
	pw_err *err = pw_settings_load_file(s, path, &loaded);
	assert_non_null(err);
	assert_true(loaded);
	assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
	char *where = xasprintf("%s:%d", path, line);
	if (!strstr(pw_err_message(err), where) || !strstr(pw_err_message(err), what))
		fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", pw_err_message(err), where, what);
	assert_non_null(pw_err_hint(err));
	assert_null(pw_settings_get(s, "proxy"));       /* a bad file never half-applies */
	free(where);
	pw_err_free(err);
	pw_settings_free(&s);
	free(path);
}

static void test_settings_bad_line(void **state)
{
	expect_file_error(*state, "proxy = http://p\njust some words\n", 2, "key = value");
}

static void test_settings_unknown_key(void **state)
{
	struct fx *f = *state;
	expect_file_error(f, "proxy = http://p\n\n\nbox-root = /x\n", 4, "box-root");
	pw_settings *s = pw_settings_new();
	pw_err *err = pw_settings_load_text(s, "t.conf", "colour = blue\n");
	assert_non_null(err);
	assert_non_null(strstr(pw_err_hint(err), "known keys: box_root"));
	pw_err_free(err);
	pw_settings_free(&s);
}

static void test_settings_empty_key(void **state)
{
	expect_file_error(*state, "proxy = http://p\n  = value\n", 2, "missing key");
}

static void test_settings_bad_timeout(void **state)
{
	struct fx *f = *state;
	expect_file_error(f, "proxy = http://p\ntimeout = 0\n", 2, "timeout");
	expect_text_error("timeout = -1", "t.conf:1");
	expect_text_error("timeout = abc", "timeout");
	expect_text_error("timeout = inf", "timeout");
	expect_text_error("timeout = 1e3", "timeout");
	expect_text_error("timeout = 1.2.3", "timeout");
	expect_text_error("timeout =", "timeout");
	expect_text_error("python_idle_timeout = 0.0", "python_idle_timeout");
	expect_text_ok("timeout = 30");
	expect_text_ok("timeout = 2.5");
	expect_text_ok("python_idle_timeout = 600");
}

static void test_settings_bad_mode(void **state)
{
	struct fx *f = *state;
	expect_file_error(f, "proxy = http://p\n\nmode = yolo\n", 3, "mode");
	expect_text_error("mode = Read-Only", "mode");
	expect_text_ok("mode = read-only");
	expect_text_ok("mode = workspace-write");
	expect_text_ok("mode = full-access");
}

static void test_settings_bad_workers(void **state)
{
	(void)state;
	expect_text_error("python_max_workers = 0", "python_max_workers");
	expect_text_error("python_max_workers = 65", "python_max_workers");
	expect_text_error("python_max_workers = 99999999999999999999", "python_max_workers");
	expect_text_error("python_max_workers = 4x", "python_max_workers");
	expect_text_error("python_max_workers = -1", "python_max_workers");
	expect_text_ok("python_max_workers = 1");
	expect_text_ok("python_max_workers = 64");
}

static void test_settings_control_chars(void **state)
{
	struct fx *f = *state;
	expect_text_error("proxy = a\001b\n", "t.conf:1");
	expect_text_error("mode = read-only\r\n", "carriage return");
	expect_text_error("# comment \033[2J\n", "control character");
	expect_text_ok("proxy =\thttp://p\t\n");
	/* A NUL must be reported, not taken as the end of the file. */
	char *path = write_file_n(f, "nul.conf", "proxy = a\0b\ntimeout = x\n", 24);
	pw_settings *s = pw_settings_new();
	pw_err *err = pw_settings_load_file(s, path, NULL);
	assert_non_null(err);
	assert_non_null(strstr(pw_err_message(err), "0x00"));
	pw_err_free(err);
	pw_settings_free(&s);
	free(path);
}

static void test_settings_directory(void **state)
{
	struct fx *f = *state;
	pw_settings *s = pw_settings_new();
	bool loaded = false;
	pw_err *err = pw_settings_load_file(s, f->dir, &loaded);
	assert_non_null(err);
	assert_true(loaded);    /* it exists; it just is not a file */
	assert_int_equal(pw_err_code(err), PW_ERR_IO);
	assert_non_null(strstr(pw_err_message(err), f->dir));
	pw_err_free(err);
	pw_settings_free(&s);
}

/* A FIFO nobody writes to must not hang the program: it reads as empty. */
static void test_settings_fifo(void **state)
{
	struct fx *f = *state;
	char *path = xasprintf("%s/fifo", f->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	pw_settings *s = pw_settings_new();
	bool loaded = false;
	assert_null(pw_settings_load_file(s, path, &loaded));
	assert_true(loaded);
	pw_settings_free(&s);
	free(path);
}

static void test_settings_too_large(void **state)
{
	struct fx *f = *state;
	size_t n = 1024 * 1024 + 1;
	char *big = xmalloc(n);
	memset(big, '\n', n);
	char *path = write_file_n(f, "big.conf", big, n);
	pw_settings *s = pw_settings_new();
	pw_err *err = pw_settings_load_file(s, path, NULL);
	assert_non_null(err);
	assert_non_null(strstr(pw_err_message(err), "too large"));
	pw_err_free(err);
	/* Exactly 1 MiB of blank lines is still a (dull) settings file. */
	free(path);
	path = write_file_n(f, "big.conf", big, n - 1);
	assert_null(pw_settings_load_file(s, path, NULL));
	pw_settings_free(&s);
	free(path);
	free(big);
}

static void test_settings_load_text(void **state)
{
	(void)state;
	pw_settings *s = pw_settings_new();
	assert_null(pw_settings_load_text(s, "-", "runtime_mirror = https://m/\n\nproxy = \n"));
	assert_string_equal(pw_settings_get(s, "runtime_mirror"), "https://m/");
	assert_string_equal(pw_settings_origin(s, "runtime_mirror"), "-:1");
	assert_string_equal(pw_settings_get(s, "proxy"), "");
	assert_null(pw_settings_load_text(s, "-", ""));
	assert_string_equal(pw_settings_get(s, "runtime_mirror"), "https://m/");
	assert_null(pw_settings_load_text(s, "x", "\xEF\xBB\xBFmode = full-access\n"));
	assert_string_equal(pw_settings_get(s, "mode"), "full-access");
	pw_settings_free(&s);
	pw_settings_free(&s);   /* freeing twice through the handle is harmless */
}

static void test_settings_key_known(void **state)
{
	(void)state;
	const char *keys[] = { "box_root", "runtime_mirror", "ca_bundle", "index_url",
		"mirrors", "proxy", "timeout", "mode", "python_idle_timeout", "python_max_workers" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		assert_true(pw_settings_key_known(keys[i]));
	assert_false(pw_settings_key_known("Box_root"));
	assert_false(pw_settings_key_known(""));
	assert_false(pw_settings_key_known(NULL));
}

/* ---------------------------------------------------------------- paths */

static pw_settings *conf_with(const char *text)
{
	pw_settings *s = pw_settings_new();
	assert_null(pw_settings_load_text(s, "c", text));
	return s;
}

/* Resolve in and check both the path and its source. */
static void expect_box(const pw_paths_input *in, const char *want, const char *want_src)
{
	char *out = NULL;
	const char *src = NULL;
	pw_err *err = pw_paths_box_root(in, &out, &src);
	if (err)
		fail_msg("unexpected error: %s", pw_err_message(err));
	assert_string_equal(out, want);
	assert_string_equal(src, want_src);
	free(out);
}

static void test_paths_precedence(void **state)
{
	(void)state;
	pw_settings *sys = conf_with("box_root = /sys/box\n");
	pw_settings *user = conf_with("box_root = /user/box\n");
	pw_settings *other = conf_with("proxy = http://p\n");
	pw_paths_input in = {
		.cli_box_root = "/cli/box", .env_home = "/env/box",
		.system_conf = sys, .user_conf = user,
		.uid = 1000, .xdg_data_home = NULL, .home = "/home/u",
	};
	expect_box(&in, "/cli/box", "--box-root");
	in.cli_box_root = NULL;
	expect_box(&in, "/env/box", "PYWARD_HOME");
	in.env_home = "";               /* empty means unset */
	expect_box(&in, "/sys/box", "system config");
	in.env_home = NULL;
	in.system_conf = other;         /* a system file without box_root */
	expect_box(&in, "/user/box", "user config");
	in.system_conf = NULL;
	expect_box(&in, "/user/box", "user config");
	in.user_conf = other;
	expect_box(&in, "/home/u/.local/share/pyward", "default");
	in.user_conf = NULL;
	expect_box(&in, "/home/u/.local/share/pyward", "default");
	pw_settings_free(&sys);
	pw_settings_free(&user);
	pw_settings_free(&other);
}

static void test_paths_root_default(void **state)
{
	(void)state;
	pw_paths_input in = { .uid = 0, .xdg_data_home = "/x/data", .home = "/root" };
	expect_box(&in, "/var/lib/pyward", "default");
	in.home = NULL;
	expect_box(&in, "/var/lib/pyward", "default");
	in.env_home = "/env";           /* root still honours the overrides */
	expect_box(&in, "/env", "PYWARD_HOME");
}

static void test_paths_xdg_data_home(void **state)
{
	(void)state;
	pw_paths_input in = { .uid = 1000, .xdg_data_home = "/x/data/", .home = "/home/u" };
	expect_box(&in, "/x/data/pyward", "default");
	in.xdg_data_home = "rel/data";  /* relative: invalid per the XDG spec */
	expect_box(&in, "/home/u/.local/share/pyward", "default");
	in.xdg_data_home = "";
	expect_box(&in, "/home/u/.local/share/pyward", "default");
	in.home = "/home/u//";
	expect_box(&in, "/home/u/.local/share/pyward", "default");
}

static void test_paths_no_home(void **state)
{
	(void)state;
	pw_paths_input in = { .uid = 1000, .xdg_data_home = "relative", .home = NULL };
	char sentinel = 0;
	char *out = &sentinel;
	const char *src = "untouched";
	pw_err *err = pw_paths_box_root(&in, &out, &src);
	assert_non_null(err);
	assert_int_equal(pw_err_code(err), PW_ERR_FAILED);
	assert_string_equal(pw_err_hint(err), "set PYWARD_HOME or pass --box-root");
	assert_null(out);
	assert_string_equal(src, "untouched");
	pw_err_free(err);
	in.home = "";
	err = pw_paths_box_root(&in, &out, &src);
	assert_non_null(err);
	pw_err_free(err);
}

static void test_paths_relative_made_absolute(void **state)
{
	struct fx *f = *state;
	assert_int_equal(chdir(f->dir), 0);
	pw_settings *sys = conf_with("box_root = conf/./box\n");
	pw_paths_input in = { .cli_box_root = "cli//box/", .uid = 1000, .home = "/h",
		.system_conf = sys };
	char *want = xasprintf("%s/cli/box", f->dir);
	expect_box(&in, want, "--box-root");
	free(want);
	in.cli_box_root = NULL;
	in.env_home = "./env";
	want = xasprintf("%s/env", f->dir);
	expect_box(&in, want, "PYWARD_HOME");
	free(want);
	in.env_home = NULL;
	want = xasprintf("%s/conf/box", f->dir);
	expect_box(&in, want, "system config");
	free(want);
	in.cli_box_root = "";           /* --box-root '' is a mistake, not "unset" */
	char *out = NULL;
	pw_err *err = pw_paths_box_root(&in, &out, NULL);
	assert_non_null(err);
	assert_int_equal(pw_err_code(err), PW_ERR_USAGE);
	pw_err_free(err);
	pw_settings_free(&sys);
}

static void test_paths_absolute(void **state)
{
	struct fx *f = *state;
	assert_int_equal(chdir(f->dir), 0);
	char *p = pw_paths_absolute("a/./b//c/");
	char *want = xasprintf("%s/a/b/c", f->dir);
	assert_string_equal(p, want);
	free(p);
	free(want);
	p = pw_paths_absolute("//x/./../y/.");
	assert_string_equal(p, "/x/../y");      /* ".." is left for the guard */
	free(p);
	p = pw_paths_absolute("/");
	assert_string_equal(p, "/");
	free(p);
	p = pw_paths_absolute(".");
	assert_string_equal(p, f->dir);
	free(p);
	assert_null(pw_paths_absolute(NULL));
}

static void expect_dir(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void test_paths_mkdirs(void **state)
{
	struct fx *f = *state;
	char *deep = xasprintf("%s/a/b//c/", f->dir);
	assert_null(pw_paths_mkdirs(deep, 0755));
	assert_null(pw_paths_mkdirs(deep, 0755));       /* again: all exist */
	char *p = xasprintf("%s/a/b/c", f->dir);
	expect_dir(p);
	free(p);
	/* A symlink to a directory counts as a directory. */
	char *link = xasprintf("%s/lnk", f->dir);
	char *target = xasprintf("%s/a", f->dir);
	assert_int_equal(symlink(target, link), 0);
	char *via = xasprintf("%s/lnk/b/d", f->dir);
	assert_null(pw_paths_mkdirs(via, 0700));
	p = xasprintf("%s/a/b/d", f->dir);
	expect_dir(p);
	free(p);
	assert_int_equal(chdir(f->dir), 0);
	assert_null(pw_paths_mkdirs("rel/x", 0755));
	expect_dir("rel/x");
	free(deep);
	free(link);
	free(target);
	free(via);
}

static void test_paths_mkdirs_on_file(void **state)
{
	struct fx *f = *state;
	char *file = write_file(f, "plain", "x");
	pw_err *err = pw_paths_mkdirs(file, 0755);
	assert_non_null(err);
	assert_non_null(strstr(pw_err_message(err), file));
	pw_err_free(err);
	char *below = xasprintf("%s/sub/dir", file);
	err = pw_paths_mkdirs(below, 0755);
	assert_non_null(err);
	pw_err_free(err);
	err = pw_paths_mkdirs("", 0755);
	assert_non_null(err);
	pw_err_free(err);
	free(below);
	free(file);
}

/* Set or unset an environment variable. */
static void put_env(const char *name, const char *value)
{
	if (value)
		assert_int_equal(setenv(name, value, 1), 0);
	else
		assert_int_equal(unsetenv(name), 0);
}

static void test_paths_user_config(void **state)
{
	(void)state;
	const char *xdg0 = getenv("XDG_CONFIG_HOME"), *home0 = getenv("HOME");
	char *xdg_saved = xdg0 ? xstrdup(xdg0) : NULL, *home_saved = home0 ? xstrdup(home0) : NULL;
	put_env("XDG_CONFIG_HOME", "/cfg");
	put_env("HOME", "/home/u");
	char *p = pw_paths_user_config();
	assert_string_equal(p, "/cfg/pyward/config");
	free(p);
	put_env("XDG_CONFIG_HOME", "relative/cfg");
	p = pw_paths_user_config();
	assert_string_equal(p, "/home/u/.config/pyward/config");
	free(p);
	put_env("XDG_CONFIG_HOME", NULL);
	p = pw_paths_user_config();
	assert_string_equal(p, "/home/u/.config/pyward/config");
	free(p);
	put_env("HOME", NULL);
	assert_null(pw_paths_user_config());
	put_env("XDG_CONFIG_HOME", xdg_saved);
	put_env("HOME", home_saved);
	free(xdg_saved);
	free(home_saved);
}

static void test_paths_system_config_and_catalog(void **state)
{
	(void)state;
	const char *old = getenv("PYWARD_SYSTEM_CONFIG");
	char *saved = old ? xstrdup(old) : NULL;
	put_env("PYWARD_SYSTEM_CONFIG", "/tmp/sys.conf");
	assert_string_equal(pw_paths_system_config(), "/tmp/sys.conf");
	put_env("PYWARD_SYSTEM_CONFIG", "");
	assert_string_equal(pw_paths_system_config(), "/etc/pyward.conf");
	put_env("PYWARD_SYSTEM_CONFIG", NULL);
	assert_string_equal(pw_paths_system_config(), "/etc/pyward.conf");
	put_env("PYWARD_SYSTEM_CONFIG", saved);
	free(saved);
	char *c = pw_paths_catalog("/srv/box");
	assert_string_equal(c, "/srv/box/catalog.sqlite3");
	free(c);
	c = pw_paths_catalog("/");
	assert_string_equal(c, "/catalog.sqlite3");
	free(c);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_settings_good_file),
		T(test_settings_value_with_eq_and_hash),
		T(test_settings_later_file_overrides),
		T(test_settings_origin_line),
		T(test_settings_missing_file),
		T(test_settings_bad_line),
		T(test_settings_unknown_key),
		T(test_settings_empty_key),
		T(test_settings_bad_timeout),
		T(test_settings_bad_mode),
		T(test_settings_bad_workers),
		T(test_settings_control_chars),
		T(test_settings_directory),
		T(test_settings_fifo),
		T(test_settings_too_large),
		T(test_settings_load_text),
		T(test_settings_key_known),
		T(test_paths_precedence),
		T(test_paths_root_default),
		T(test_paths_xdg_data_home),
		T(test_paths_no_home),
		T(test_paths_relative_made_absolute),
		T(test_paths_absolute),
		T(test_paths_mkdirs),
		T(test_paths_mkdirs_on_file),
		T(test_paths_user_config),
		T(test_paths_system_config_and_catalog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
