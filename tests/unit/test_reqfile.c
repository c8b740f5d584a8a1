/* Unit tests: requirement files read by pyward, on real files, confined by
 * a real guard (issue 13 item 10). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "guard.h"
#include "reqfile.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[] = "/tmp/pw-reqfile-XXXXXX";
static char *ws, *outside;

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(top))
		return -1;
	ws = xasprintf("%s/ws", top);
	outside = xasprintf("%s/outside", top);
	char *dirs[] = { ws, outside, xasprintf("%s/sub", ws), xasprintf("%s/proj", ws), xasprintf("%s/wheels", ws),
			 xasprintf("%s/proj", outside) };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		mkdir(dirs[i], 0755);
		if (i >= 2)
			free(dirs[i]);
	}
	char *p = xasprintf("%s/secret", outside);
	put(p, "topsecret\n");
	free(p);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", top);
	int rc = system(cmd);
	free(cmd);
	free(ws);
	free(outside);
	return rc == 0 ? 0 : -1;
}

static pw_guard *guard(void)
{
	pw_guard *g = pw_guard_new();
	pw_err *e = pw_guard_add_root(g, ws);
	assert_null(e);
	return g;
}

static pw_err *parse(const char *text, pw_reqs *r)
{
	char *path = xasprintf("%s/req.txt", ws);
	put(path, text);
	pw_guard *g = guard();
	pw_err *e = pw_reqs_parse_file(g, path, r);
	pw_guard_free(&g);
	free(path);
	return e;
}

static void test_a_file_read_whole(void **state)
{
	(void)state;
	char *more = xasprintf("%s/sub/more.txt", ws), *cons = xasprintf("%s/sub/cons.txt", ws);
	put(more, "pwtest-beta\n-r more.txt\n");
	put(cons, "pwtest-alpha<2\n");
	char *text = xasprintf("# top\npwtest-alpha==1.0  # pinned\n-r sub/more.txt\n--constraint=sub/cons.txt\n"
			       "--index-url https://u:p@idx.example/simple/\n--extra-index-url https://x.example/simple\n"
			       "-f ./wheels\n--trusted-host idx.example\n--pre\n"
			       "pkg==1 --hash=sha256:abcdef0123 \\\n    --hash sha256:ABCDEF\n-e ./proj[dev]\n"
			       "long\\\n-name>=2\nname @ file://%s/proj ; python_version > '3'\n", ws);
	pw_reqs r = { 0 };
	pw_err *e = parse(text, &r);
	assert_null(e);
	assert_int_equal(r.nlines, 6);
	assert_string_equal(r.lines[0], "pwtest-alpha==1.0");
	assert_string_equal(r.lines[1], "pwtest-beta");
	assert_string_equal(r.lines[2], "pkg==1 --hash=sha256:abcdef0123 --hash=sha256:ABCDEF");
	char *want = xasprintf("-e %s/proj[dev]", ws);
	assert_string_equal(r.lines[3], want);
	free(want);
	assert_string_equal(r.lines[4], "long-name>=2");
	want = xasprintf("name @ file://%s/proj ; python_version > '3'", ws);
	assert_string_equal(r.lines[5], want);
	free(want);
	assert_int_equal(r.nconstraints, 1);
	assert_string_equal(r.constraints[0], "pwtest-alpha<2");
	assert_string_equal(r.index_url, "https://u:p@idx.example/simple/");
	assert_int_equal(r.nextra, 1);
	assert_int_equal(r.nfind, 1);
	want = xasprintf("%s/wheels", ws);
	assert_string_equal(r.find_links[0], want);
	free(want);
	assert_string_equal(r.trusted_hosts[0], "idx.example");
	assert_string_equal(r.pip_flags[0], "--pre");
	assert_string_equal(r.project, "pwtest-alpha");
	pw_reqs_clear(&r);
	free(text);
	free(more);
	free(cons);
}

/* Every line here must be refused, and nothing of it kept. */
static void test_hostile_lines(void **state)
{
	(void)state;
	const char *lines[] = {
		"-r %s/secret", "-c %s/secret", "-r ../outside/secret", "-e file://%s/proj", "--editable=../outside/proj",
		"-e %s/proj", "-e git+https://example.invalid/x.git", "-e https://example.invalid/x.tar.gz",
		"%s/proj", "name @ file://%s/proj", "x @ file:///etc/passwd", "git+https://example.invalid/x.git",
		"name @ git+https://example.invalid/x.git", "--global-option=--x", "pkg --install-option=x",
		"pkg --hash=nothex", "-r https://example.invalid/r.txt", "file:///etc/passwd", "~/proj",
		"name @ ftp://example.invalid/x.tar.gz", "-e", "name @ file://otherhost/x",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		/* Each line names the outside folder at most twice, as "%s". */
		char *line = xstrdup(lines[i]);
		for (char *at; (at = strstr(line, "%s"));) {
			char *next = xasprintf("%.*s%s%s", (int)(at - line), line, outside, at + 2);
			free(line);
			line = next;
		}
		char *text = xasprintf("ok-package\n%s\n", line);
		pw_reqs r = { 0 };
		pw_err *e = parse(text, &r);
		if (!e)
			print_error("not refused: %s\n", line);
		assert_non_null(e);
		assert_null(strstr(pw_err_message(e), "topsecret"));
		pw_err_free(e);
		pw_reqs_clear(&r);
		free(text);
		free(line);
	}
}

static void test_command_line_specs(void **state)
{
	(void)state;
	pw_guard *g = guard();
	char *line = NULL;
	assert_null(pw_reqs_check_spec(g, "pwtest-alpha>=1", &line));
	assert_string_equal(line, "pwtest-alpha>=1");
	free(line);
	assert_null(pw_reqs_check_spec(g, "proj", &line)); /* a name, not a path */
	free(line);
	char *abs = xasprintf("%s/proj", outside);
	pw_err *out = pw_reqs_check_spec(g, abs, &line);
	assert_non_null(out);
	pw_err_free(out);
	free(abs);
	pw_err *e = pw_reqs_check_spec(g, "x @ file:///etc/passwd", &line);
	assert_non_null(e);
	pw_err_free(e);
	assert_null(pw_reqs_check_spec(g, "./proj", &line));
	char *want = xasprintf("%s/proj", ws);
	assert_string_equal(line, want);
	free(want);
	free(line);
	pw_guard_free(&g);
}

/* A file that includes itself, or nests too deep, ends with an answer. */
static void test_cycles_and_depth(void **state)
{
	(void)state;
	char *self = xasprintf("%s/self.txt", ws);
	put(self, "a\n-r self.txt\n");
	pw_guard *g = guard();
	pw_reqs r = { 0 };
	assert_null(pw_reqs_parse_file(g, self, &r));
	assert_int_equal(r.nlines, 1);
	pw_reqs_clear(&r);
	for (int i = 0; i < 12; i++) {
		char *p = xasprintf("%s/d%d.txt", ws, i), *t = xasprintf("p%d\n-r d%d.txt\n", i, i + 1);
		put(p, t);
		free(p);
		free(t);
	}
	char *d0 = xasprintf("%s/d0.txt", ws);
	pw_err *e = pw_reqs_parse_file(g, d0, &r);
	assert_non_null(e);
	pw_err_free(e);
	pw_reqs_clear(&r);
	free(d0);
	free(self);
	pw_guard_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_file_read_whole),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_command_line_specs),
		cmocka_unit_test(test_cycles_and_depth),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
