/*
 * Virtual environments, against the machine's real CPython ($PYTHON3, else
 * /usr/bin/python3): discovery over fake environments made by hand in a
 * private temporary directory T, the choice of a base interpreter with a
 * fake old python on PATH, real creation (fast seeding, ensurepip, none),
 * pip repair, guarded removal, the per-environment lock across a fork, and
 * the workspace state folder.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "venv.h"
#include "venv_base.h"
#include "durable.h"
#include "cancel.h"
#include "clock.h"
#include "err.h"
#include "events.h"
#include "extract.h"
#include "guard.h"
#include "paths.h"
#include "runner.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_tmp[64];
static char g_given[256];  /* $PYTHON3 as given: may be a wrapper (pyenv's shims) */
static char g_python[256]; /* the interpreter itself: its sys.executable */

/* ---------------------------------------------------------------- helpers */

/* T/rel: for immediate use only (see tl_path). */
static const char *tpath(const char *rel)
{
	return tl_path(g_tmp, rel);
}

static void ok(pw_err *e)
{
	if (e)
		fail_msg("unexpected error: %s (%s)", pw_err_message(e), pw_err_hint(e) ? pw_err_hint(e) : "");
}

/* e must be an error of code whose message holds want; freed. */
static void fails(pw_err *e, pw_errcode code, const char *want)
{
	assert_non_null(e);
	if (pw_err_code(e) != code)
		fail_msg("wanted %s, got %s: %s", pw_err_code_name(code), pw_err_code_name(pw_err_code(e)),
			 pw_err_message(e));
	if (want && !strstr(pw_err_message(e), want))
		fail_msg("'%s' not in '%s'", want, pw_err_message(e));
	pw_err_free(e);
}

static void mkdirs(const char *path)
{
	ok(pw_paths_mkdirs(path, 0755));
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	char *buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_script(const char *path, const char *text)
{
	tl_write_text(path, text);
	assert_int_equal(chmod(path, 0755), 0);
}

static void link_to(const char *target, const char *path)
{
	if (symlink(target, path) != 0)
		fail_msg("symlink %s: %s", path, strerror(errno));
}

/* A hand-made environment: dir/pyvenv.cfg (when cfg), bin/python linked
 * to python, and lib/python3.11/site-packages[/pip]. */
static void fake_env(const char *dir, const char *cfg, const char *python, bool pip)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/bin", dir);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/bin/python", dir);
	link_to(python, p);
	snprintf(p, sizeof p, "%s/lib/python3.11/site-packages%s", dir, pip ? "/pip" : "");
	mkdirs(p);
	if (cfg) {
		snprintf(p, sizeof p, "%s/pyvenv.cfg", dir);
		tl_write_text(p, cfg);
	}
}

/* Run argv; returns its stdout (malloc'd), failing unless it exits 0. */
static char *run_out(const char *const *argv)
{
	pw_run_opts o = { .argv = argv, .deadline_ms = pw_clock_deadline_after(60) };
	pw_run_result *r = NULL;
	ok(pw_run(&o, &r));
	if (pw_run_result_status(r) != PW_RUN_EXITED || pw_run_result_exit_code(r) != 0)
		fail_msg("%s: %s: %s", argv[0], pw_run_result_describe(r),
			 pw_run_result_output(r, PW_STREAM_STDERR));
	char *out = strdup(pw_run_result_output(r, PW_STREAM_STDOUT));
	pw_run_result_free(&r);
	return out;
}

static pw_guard *guard_for(const char *root)
{
	pw_guard *g = pw_guard_new();
	ok(pw_guard_add_root(g, root));
	return g;
}

/* The events sink of the tests: log lines appended to one buffer. */
struct logbook {
	char text[8192];
	int lines;
};

static void log_line(void *ud, pw_log_level level, const char *msg)
{
	struct logbook *b = ud;
	(void)level;
	size_t n = strlen(b->text);
	snprintf(b->text + n, sizeof b->text - n, "%s\n", msg);
	b->lines++;
}

/* dir/<first entry starting with prefix and ending with suffix>, or "". */
static const char *find_entry(const char *dir, const char *prefix, const char *suffix)
{
	static char out[PATH_MAX];
	DIR *d = opendir(dir);
	out[0] = '\0';
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t n = strlen(de->d_name), m = strlen(suffix);
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && n >= m &&
		    strcmp(de->d_name + n - m, suffix) == 0) {
			snprintf(out, sizeof out, "%s/%s", dir, de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return out;
}

/* ------------------------------------------------------------ discovery */

/* T/ws: five environments within the default depth, the rest not to be
 * found (too deep, pruned, behind symlinks). */
static void make_workspace(void)
{
	mkdirs(tpath("home"));
	link_to(g_python, tpath("home/python3"));
	char cfg[PATH_MAX + 64];
	snprintf(cfg, sizeof cfg, "home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n",
		 tpath("home"));
	fake_env(tpath("ws/.venv"), cfg, g_python, true);
	fake_env(tpath("ws/proj/venv"),
		 "home = /nonexistent/bin\nimplementation = CPython\nversion_info = 3.10.4.final.0\n"
		 "virtualenv = 20.25.0\nexecutable = /opt/py/bin/python3.10\n", g_python, false);
	fake_env(tpath("ws/a/b/deep"), "version = 3.9.1\n", g_python, false);
	fake_env(tpath("ws/node_modules/hidden"), "version = 3.9.1\n", g_python, false);
	fake_env(tpath("ws/stale"), "VERSION = 3.8.10\n", "/nonexistent/python3", false);
	fake_env(tpath("ws/conda1"), NULL, g_python, false);
	mkdirs(tpath("ws/conda1/conda-meta"));
	tl_write_text(tpath("ws/conda1/conda-meta/python-dateutil-2.8.2-pyhd8ed1ab_0.json"), "{}");
	tl_write_text(tpath("ws/conda1/conda-meta/python-3.12.1-hab00c5b_1_cpython.json"), "{}");
	fake_env(tpath("ws/legacy/.venv"), NULL, g_python, false);
	mkdirs(tpath("ws/plain/src/pkg"));
	fake_env(tpath("outside/venvo"), "version = 3.11.2\n", g_python, false);
	link_to(tpath("outside/venvo"), tpath("ws/linkenv"));
	link_to(tpath("ws/proj"), tpath("ws/linkproj"));
}

static int group_setup(void **state)
{
	(void)state;
	const char *py = getenv("PYTHON3");
	snprintf(g_given, sizeof g_given, "%s", py && *py ? py : "/usr/bin/python3");
	/* Links and a bare PATH need the real binary: a shim finds its
	 * interpreter through PATH and its own name. */
	const char *argv[] = { g_given, "-c", "import sys; print(sys.executable)", NULL };
	char *exe = run_out(argv);
	exe[strcspn(exe, "\n")] = '\0';
	snprintf(g_python, sizeof g_python, "%s", exe);
	free(exe);
	char tmpl[] = "/tmp/pw-venv-XXXXXX";
	char *real = mkdtemp(tmpl) ? realpath(tmpl, NULL) : NULL;
	if (!real || strlen(real) >= sizeof g_tmp)
		return -1;
	strcpy(g_tmp, real);
	free(real);
	make_workspace();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	pw_err *e = pw_extract_remove_tree(g_tmp);
	pw_err_free(e);
	return e ? -1 : 0;
}

static void test_discover_finds_and_prunes(void **state)
{
	(void)state;
	pw_guard *g = guard_for(tpath("ws"));
	pw_venv_list l;
	ok(pw_venv_discover(g, NULL, 0, 0, pw_clock_deadline_after(10), &l));
	assert_int_equal(l.root_count, 1);
	assert_string_equal(l.roots[0], tpath("ws"));
	assert_false(l.truncated);
	assert_int_equal(l.count, 5);
	const char *want[] = { "ws/.venv", "ws/conda1", "ws/legacy/.venv", "ws/proj/venv", "ws/stale" };
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(l.items[i].path, tpath(want[i]));

	const pw_venv_info *v = &l.items[0];
	assert_string_equal(v->kind, "venv");
	assert_string_equal(v->version, "3.11.2");
	assert_string_equal(v->base, tpath("home/python3"));
	assert_string_equal(v->python, tpath("ws/.venv/bin/python"));
	assert_true(v->python_exists);
	assert_true(v->has_pip);

	v = &l.items[1];
	assert_string_equal(v->kind, "conda");
	assert_string_equal(v->version, "3.12.1");
	assert_null(v->base);
	assert_false(v->has_pip);

	v = &l.items[2]; /* no pyvenv.cfg: known by its name, version probed */
	assert_string_equal(v->kind, "venv");
	assert_non_null(v->version);
	assert_true(strncmp(v->version, "3.", 2) == 0);
	assert_true(v->python_exists);

	v = &l.items[3];
	assert_string_equal(v->kind, "virtualenv");
	assert_string_equal(v->version, "3.10.4");
	assert_string_equal(v->base, "/opt/py/bin/python3.10");
	assert_false(v->has_pip);

	v = &l.items[4];
	assert_string_equal(v->version, "3.8.10");
	assert_false(v->python_exists);
	pw_venv_list_clear(&l);
	pw_guard_free(&g);
}

static void test_discover_depth(void **state)
{
	(void)state;
	pw_guard *g = guard_for(tpath("ws"));
	pw_venv_list l;
	ok(pw_venv_discover(g, NULL, 3, 0, 0, &l));
	assert_int_equal(l.count, 6);
	assert_string_equal(l.items[0].path, tpath("ws/.venv"));
	assert_string_equal(l.items[1].path, tpath("ws/a/b/deep"));
	assert_string_equal(l.items[1].version, "3.9.1");
	pw_venv_list_clear(&l);
	pw_guard_free(&g);
}

static void test_discover_cap(void **state)
{
	(void)state;
	pw_guard *g = guard_for(tpath("ws"));
	pw_venv_list l;
	ok(pw_venv_discover(g, NULL, 0, 2, 0, &l));
	assert_true(l.truncated);
	assert_int_equal(l.dirs_visited, 2);
	pw_venv_list_clear(&l);
	pw_guard_free(&g);
}

static void test_discover_start(void **state)
{
	(void)state;
	pw_guard *g = guard_for(tpath("ws"));
	pw_venv_list l;
	ok(pw_venv_discover(g, "proj", 0, 0, 0, &l));
	assert_int_equal(l.root_count, 1);
	assert_string_equal(l.roots[0], tpath("ws/proj"));
	assert_int_equal(l.count, 1);
	assert_string_equal(l.items[0].path, tpath("ws/proj/venv"));
	pw_venv_list_clear(&l);
	/* The start is confined like any path. */
	fails(pw_venv_discover(g, tpath("outside"), 0, 0, 0, &l), PW_ERR_REFUSED, NULL);
	assert_int_equal(l.count, 0);
	pw_guard_free(&g);
}

static void test_inspect(void **state)
{
	(void)state;
	pw_venv_info i;
	ok(pw_venv_inspect(tpath("ws/proj/venv"), &i));
	assert_string_equal(i.kind, "virtualenv");
	assert_string_equal(i.version, "3.10.4");
	pw_venv_info_clear(&i);
	fails(pw_venv_inspect(tpath("ws/plain"), &i), PW_ERR_NOTFOUND, "not an environment");
	assert_null(i.path);
}

/* ----------------------------------------------------------- base choice */

static const char old_python[] =
	"#!/bin/sh\n"
	"echo 3.7.9\n"
	"echo cpython\n"
	"echo /nonexistent/lib/python3.7\n";

static void make_fake_pythons(void)
{
	if (tl_exists(tpath("fake/python3")))
		return;
	mkdirs(tpath("fake"));
	write_script(tpath("fake/python3"), old_python);
	write_script(tpath("fake/python"), old_python);
	mkdirs(tpath("realbin"));
	link_to(g_python, tpath("realbin/python3"));
}

static void test_choose_explicit(void **state)
{
	(void)state;
	char *base = NULL, *version = NULL, *why = NULL;
	ok(pw_venv_choose_base(g_given, NULL, &base, &version, &why));
	assert_string_equal(base, g_given);
	assert_true(strncmp(version, "3.", 2) == 0);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "--python %s (CPython %s)", g_given, version);
	assert_string_equal(why, want);
	free(base);
	free(version);
	free(why);

	fails(pw_venv_choose_base("/nonexistent/python3", NULL, &base, &version, &why), PW_ERR_USAGE,
	      "/nonexistent/python3");
	assert_null(base);
	make_fake_pythons();
	fails(pw_venv_choose_base(tpath("fake/python3"), NULL, &base, NULL, NULL), PW_ERR_USAGE, "3.7.9");
}

static void test_choose_managed(void **state)
{
	(void)state;
	char *base = NULL, *why = NULL;
	ok(pw_venv_choose_base(NULL, g_python, &base, NULL, &why));
	assert_string_equal(base, g_python);
	assert_true(strncmp(why, "the managed runtime (CPython 3.", 31) == 0);
	free(base);
	free(why);
}

static void test_choose_from_path(void **state)
{
	(void)state;
	make_fake_pythons();
	char *saved = strdup(getenv("PATH") ? getenv("PATH") : "");
	char path[2 * PATH_MAX];
	snprintf(path, sizeof path, "%s:%s", tpath("fake"), tpath("realbin"));
	setenv("PATH", path, 1);
	char *base = NULL, *version = NULL, *why = NULL;
	pw_err *e = pw_venv_choose_base(NULL, NULL, &base, &version, &why);
	setenv("PATH", tpath("fake"), 1);
	char *nobase = NULL;
	pw_err *none = pw_venv_choose_base(NULL, NULL, &nobase, NULL, NULL);
	setenv("PATH", saved, 1);
	free(saved);
	ok(e);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "python3 on PATH: %s (CPython %s)", tpath("realbin/python3"), version);
	assert_string_equal(base, tpath("realbin/python3"));
	assert_string_equal(why, want);
	free(base);
	free(version);
	free(why);
	assert_null(nobase);
	assert_non_null(none);
	assert_non_null(pw_err_hint(none));
	assert_non_null(strstr(pw_err_hint(none), "pyward runtime install"));
	fails(none, PW_ERR_NOTFOUND, "no Python 3.8");
}

/* ------------------------------------------------------------- creation */

static pw_venv_create_opts create_opts(const char *target, pw_venv_seed seed, const pw_events *ev)
{
	static const char *const env[] = { "PIP_NO_INPUT=1", NULL };
	pw_venv_create_opts o = { .target = target, .base = g_python, .seed = seed, .env_add = env,
				  .deadline_ms = pw_clock_deadline_after(120), .events = ev };
	return o;
}

/* Every RECORD row with a hash must match its file, as pip checks. */
static const char record_check[] =
	"import base64, csv, hashlib, os, sys\n"
	"site, info = sys.argv[1], sys.argv[2]\n"
	"n = bad = 0\n"
	"for row in csv.reader(open(os.path.join(site, info, 'RECORD'))):\n"
	"    if not row[1]: continue\n"
	"    data = open(os.path.normpath(os.path.join(site, row[0])), 'rb').read()\n"
	"    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
	"    n += 1\n"
	"    bad += row[1] != 'sha256=' + h or int(row[2]) != len(data)\n"
	"print(n, bad)\n";

static void check_record(const char *venv, const char *python)
{
	char lib[PATH_MAX], site[PATH_MAX];
	snprintf(lib, sizeof lib, "%s/lib", venv);
	snprintf(site, sizeof site, "%s/site-packages", find_entry(lib, "python", ""));
	const char *info = find_entry(site, "pip-", ".dist-info");
	assert_true(*info);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/INSTALLER", info);
	char *text = read_text(path);
	assert_string_equal(text, "pyward\n");
	free(text);
	snprintf(path, sizeof path, "%s/RECORD", info);
	text = read_text(path);
	assert_non_null(strstr(text, "../../../bin/pip,sha256="));
	assert_non_null(strstr(text, "../../../bin/pip3,sha256="));
	assert_non_null(strstr(text, "pip/__init__.py,sha256="));
	assert_non_null(strstr(text, "/RECORD,,\n"));
	free(text);
	const char *argv[] = { python, "-c", record_check, site, strrchr(info, '/') + 1, NULL };
	char *out = run_out(argv);
	int n = 0, bad = -1;
	assert_int_equal(sscanf(out, "%d %d", &n, &bad), 2);
	assert_true(n > 100);
	assert_int_equal(bad, 0);
	free(out);
}

static void test_create_fast(void **state)
{
	(void)state;
	const char *target = tpath("cw/fast");
	struct logbook book = { .lines = 0 };
	pw_events ev = { .log = log_line, .ud = &book };
	pw_venv_create_opts o = create_opts(target, PW_SEED_FAST, &ev);
	pw_venv_create_result r;
	ok(pw_venv_create(&o, &r));
	assert_false(r.existed);
	assert_true(r.seeded_fast);
	assert_non_null(r.pip_wheel);
	assert_non_null(strstr(r.pip_wheel, ".whl"));
	assert_non_null(strstr(book.text, "seeded pip"));
	char python[PATH_MAX], pip[PATH_MAX];
	snprintf(python, sizeof python, "%s/bin/python", target);
	snprintf(pip, sizeof pip, "%s/bin/pip", target);
	assert_string_equal(r.python, python);
	assert_true(strncmp(r.version, "3.", 2) == 0);
	pw_venv_create_result_clear(&r);

	const char *argv[] = { pip, "--version", NULL };
	char *out = run_out(argv);
	assert_non_null(strstr(out, target));
	free(out);
	struct stat st;
	assert_int_equal(stat(pip, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	check_record(target, python);

	/* Again: reported, not redone. */
	ok(pw_venv_create(&o, &r));
	assert_true(r.existed);
	assert_false(r.seeded_fast);
	assert_string_equal(r.python, python);
	assert_non_null(r.version);
	pw_venv_create_result_clear(&r);

	pw_venv_info i;
	ok(pw_venv_inspect(target, &i));
	assert_true(i.has_pip);
	assert_string_equal(i.kind, "venv");
	pw_venv_info_clear(&i);
}

/* A chain of n folders under T/name, a file at the bottom. */
static void deep_tree(const char *name, int n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", tpath(name));
	assert_int_equal(mkdir(path, 0755), 0);
	for (int i = 0; i < n; i++) {
		strcat(path, "/d");
		assert_int_equal(mkdir(path, 0755), 0);
	}
	strcat(path, "/f");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("x\n", f);
	fclose(f);
}

/* The flush of a tree reaches its deepest folder or fails: it never stops
 * quietly at a depth. */
static void test_sync_tree_depth(void **state)
{
	(void)state;
	deep_tree("deep64", 64);
	ok(pw_durable_sync_tree(tpath("deep64"), false));
	deep_tree("deep70", 70);
	fails(pw_durable_sync_tree(tpath("deep70"), false), PW_ERR_IO, "more than 64 folders deep");
	fails(pw_durable_sync_tree(tpath("deep70"), true), PW_ERR_IO, "not flushed");
}

/* Both routes of create say a failed flush the same way, with the flush's
 * own reason and hint. */
static void test_not_flushed_wrapping(void **state)
{
	(void)state;
	assert_null(pw_venv_not_flushed(NULL, "/x/env"));
	pw_err *e = pw_venv_not_flushed(pw_err_new(PW_ERR_IO, "the hint", "the reason"), "/x/env");
	assert_int_equal(pw_err_code(e), PW_ERR_IO);
	assert_string_equal(pw_err_message(e),
			    "the new environment could not be flushed to disk, so /x/env was not created (the reason)");
	assert_string_equal(pw_err_hint(e), "the hint");
	pw_err_free(e);
	/* the folders above a missing environment cannot be opened */
	fails(pw_venv_sync_names(tpath("nowhere/a/env"), tpath("nowhere/a")), PW_ERR_IO,
	      "could not be flushed to disk, so ");
	ok(pw_venv_sync_names(tpath("env-here"), NULL));
}

static void test_create_pip(void **state)
{
	(void)state;
	const char *target = tpath("cw/pipseed");
	pw_venv_create_opts o = create_opts(target, PW_SEED_PIP, NULL);
	pw_venv_create_result r;
	ok(pw_venv_create(&o, &r));
	assert_false(r.seeded_fast);
	assert_null(r.pip_wheel);
	pw_venv_create_result_clear(&r);
	char pip[PATH_MAX];
	snprintf(pip, sizeof pip, "%s/bin/pip", target);
	const char *argv[] = { pip, "--version", NULL };
	char *out = run_out(argv);
	assert_non_null(strstr(out, target));
	free(out);
}

static void test_create_none_then_repair(void **state)
{
	(void)state;
	const char *target = tpath("cw/bare");
	pw_venv_create_opts o = create_opts(target, PW_SEED_NONE, NULL);
	pw_venv_create_result r;
	ok(pw_venv_create(&o, &r));
	pw_venv_create_result_clear(&r);
	char pip[PATH_MAX];
	snprintf(pip, sizeof pip, "%s/bin/pip", target);
	assert_false(tl_exists(pip));
	pw_venv_info i;
	ok(pw_venv_inspect(target, &i));
	assert_false(i.has_pip);
	pw_venv_info_clear(&i);

	ok(pw_venv_repair_pip(target, NULL, pw_clock_deadline_after(120), NULL));
	ok(pw_venv_inspect(target, &i));
	assert_true(i.has_pip);
	char python[PATH_MAX];
	snprintf(python, sizeof python, "%s/bin/python", target);
	const char *argv[] = { python, "-m", "pip", "--version", NULL };
	char *out = run_out(argv);
	assert_non_null(strstr(out, target));
	free(out);
	pw_venv_info_clear(&i);
}

static void test_create_refuses_busy_target(void **state)
{
	(void)state;
	mkdirs(tpath("cw/busy"));
	tl_write_text(tpath("cw/busy/notes.txt"), "mine\n");
	pw_venv_create_opts o = create_opts(tpath("cw/busy"), PW_SEED_NONE, NULL);
	pw_venv_create_result r;
	fails(pw_venv_create(&o, &r), PW_ERR_REFUSED, "not an environment");
	assert_true(tl_exists(tpath("cw/busy/notes.txt")));
	o.target = "relative/path";
	fails(pw_venv_create(&o, &r), PW_ERR_USAGE, NULL);
}

/* A base whose venv module is missing, as on Debian without python3-venv:
 * the error names the package and the half-made folders go. */
static void test_create_missing_venv_module(void **state)
{
	(void)state;
	mkdirs(tpath("debpy"));
	write_script(tpath("debpy/python3"),
		     "#!/bin/sh\n"
		     "if [ \"$2\" = -c ]; then echo 3.11.0; echo cpython; echo /nonexistent; exit 0; fi\n"
		     "mkdir -p \"$5/bin\"\n"
		     "echo '/usr/bin/python3: No module named venv' >&2\n"
		     "exit 1\n");
	pw_venv_create_opts o = create_opts(tpath("cw/newparent/deb"), PW_SEED_FAST, NULL);
	o.base = tpath("debpy/python3");
	pw_venv_create_result r;
	pw_err *e = pw_venv_create(&o, &r);
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_FAILED);
	assert_non_null(pw_err_hint(e));
	assert_non_null(strstr(pw_err_hint(e), "python3.11-venv"));
	pw_err_free(e);
	assert_false(tl_exists(tpath("cw/newparent")));
	assert_null(r.python);

	o.base = tpath("fake/python3"); /* too old */
	make_fake_pythons();
	fails(pw_venv_create(&o, &r), PW_ERR_USAGE, "3.8");
	assert_false(tl_exists(tpath("cw/newparent")));
}

/* -------------------------------------------------------------- removal */

static void test_remove(void **state)
{
	(void)state;
	fake_env(tpath("rw/v1"), "version = 3.11.2\n", g_python, false);
	fake_env(tpath("rw/v2"), "version = 3.11.2\n", g_python, false);
	mkdirs(tpath("rw/plain"));
	tl_write_text(tpath("rw/plain/keep.txt"), "keep\n");
	link_to(tpath("rw/v2"), tpath("rw/link"));
	fake_env(tpath("rw-out/v3"), "version = 3.11.2\n", g_python, false);
	pw_guard *g = guard_for(tpath("rw"));

	ok(pw_venv_remove(g, "v1"));
	assert_false(tl_exists(tpath("rw/v1")));
	assert_true(tl_exists(g_python)); /* its bin/python link was not followed */

	fails(pw_venv_remove(g, "plain"), PW_ERR_REFUSED, "not an environment: no pyvenv.cfg");
	assert_true(tl_exists(tpath("rw/plain/keep.txt")));

	fails(pw_venv_remove(g, tpath("rw/link")), PW_ERR_REFUSED, "symlink");
	assert_true(tl_exists(tpath("rw/link")));
	assert_true(tl_exists(tpath("rw/v2/pyvenv.cfg")));

	fails(pw_venv_remove(g, tpath("rw-out/v3")), PW_ERR_REFUSED, NULL);
	assert_true(tl_exists(tpath("rw-out/v3/pyvenv.cfg")));
	fails(pw_venv_remove(g, "../rw-out/v3"), PW_ERR_REFUSED, NULL);
	assert_true(tl_exists(tpath("rw-out/v3/pyvenv.cfg")));
	fails(pw_venv_remove(g, "missing"), PW_ERR_NOTFOUND, NULL);
	pw_guard_free(&g);

	/* An environment that is itself the allowed root stays. */
	g = guard_for(tpath("rw/v2"));
	fails(pw_venv_remove(g, tpath("rw/v2")), PW_ERR_REFUSED, "allowed root");
	fails(pw_venv_remove(g, "."), PW_ERR_REFUSED, NULL);
	assert_true(tl_exists(tpath("rw/v2/pyvenv.cfg")));
	pw_guard_free(&g);
}

/* ----------------------------------------------------------------- lock */

/* In a forked child: try the lock, return the exit status that says
 * whether it failed with code, naming the holder and logging once. */
static int child_try_lock(const char *ws, const char *venv, pid_t holder, pw_errcode code, bool cancel)
{
	struct logbook book = { .lines = 0 };
	pw_events ev = { .log = log_line, .ud = &book };
	pw_cancel *c = pw_cancel_new();
	if (cancel)
		pw_cancel_raise(c);
	int fd = -1;
	int64_t t0 = pw_clock_mono_ms();
	pw_err *e = pw_venv_lock(ws, venv, "child", pw_clock_deadline_after(0.35), c, &ev, &fd);
	int64_t waited = pw_clock_mono_ms() - t0;
	char pid[32];
	snprintf(pid, sizeof pid, "pid %ld pyward test", (long)holder);
	bool good = e && pw_err_code(e) == code && fd < 0 && book.lines == 1 && strstr(book.text, pid) &&
		(cancel || (strstr(pw_err_message(e), pid) && waited >= 300));
	pw_err_free(e);
	pw_cancel_free(&c);
	return good ? 0 : 1;
}

static int fork_and_wait(const char *ws, const char *venv, pw_errcode code, bool cancel)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_try_lock(ws, venv, parent, code, cancel));
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static void test_lock(void **state)
{
	(void)state;
	const char *ws = tpath("lk");
	mkdirs(ws);
	const char *venv = tpath("lk/.venv");
	int fd = -1;
	ok(pw_venv_lock(ws, venv, "pyward test", pw_clock_deadline_after(1), NULL, NULL, &fd));
	assert_true(fd >= 0);
	assert_int_equal(fork_and_wait(ws, venv, PW_ERR_TIMEOUT, false), 0);
	assert_int_equal(fork_and_wait(ws, venv, PW_ERR_CANCELLED, true), 0);
	pw_venv_unlock(&fd);
	assert_int_equal(fd, -1);
	pw_venv_unlock(&fd);

	/* Free again: taken at once, and the file names the new holder. */
	ok(pw_venv_lock(ws, venv, "second", pw_clock_deadline_after(1), NULL, NULL, &fd));
	char want[64];
	snprintf(want, sizeof want, "pid %ld second\n", (long)getpid());
	const char *lock = find_entry(tpath("lk/.pyward/locks"), "", ".lock");
	assert_int_equal(strlen(strrchr(lock, '/') + 1), 16 + 5);
	char *text = read_text(lock);
	assert_string_equal(text, want);
	free(text);
	pw_venv_unlock(&fd);
}

/* ------------------------------------------------------------ workspace */

static void test_workspace_state(void **state)
{
	(void)state;
	mkdirs(tpath("wss"));
	char *cache = NULL, *tmp = NULL;
	ok(pw_venv_workspace_state(tpath("wss"), &cache, &tmp));
	assert_string_equal(cache, tpath("wss/.pyward/cache"));
	assert_string_equal(tmp, tpath("wss/.pyward/tmp"));
	free(cache);
	free(tmp);
	struct stat st;
	assert_int_equal(stat(tpath("wss/.pyward/locks"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(tpath("wss/.pyward/tmp"), &st), 0);
	char *text = read_text(tpath("wss/.pyward/.gitignore"));
	assert_string_equal(text, "*\n");
	free(text);
	/* A .gitignore already there is left as it is. */
	tl_write_text(tpath("wss/.pyward/.gitignore"), "cache/\n");
	ok(pw_venv_workspace_state(tpath("wss"), NULL, NULL));
	text = read_text(tpath("wss/.pyward/.gitignore"));
	assert_string_equal(text, "cache/\n");
	free(text);
	fails(pw_venv_workspace_state(tpath("no-such-ws"), NULL, NULL), PW_ERR_NOTFOUND, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discover_finds_and_prunes),
		cmocka_unit_test(test_discover_depth),
		cmocka_unit_test(test_discover_cap),
		cmocka_unit_test(test_discover_start),
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_choose_explicit),
		cmocka_unit_test(test_choose_managed),
		cmocka_unit_test(test_choose_from_path),
		cmocka_unit_test(test_create_fast),
		cmocka_unit_test(test_create_pip),
		cmocka_unit_test(test_sync_tree_depth),
		cmocka_unit_test(test_not_flushed_wrapping),
		cmocka_unit_test(test_create_none_then_repair),
		cmocka_unit_test(test_create_refuses_busy_target),
		cmocka_unit_test(test_create_missing_venv_module),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_workspace_state),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
