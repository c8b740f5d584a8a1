/* Process runner tests, with real child processes (/bin/sh scripts). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "runner.h"
#include "cancel.h"
#include "clock.h"
#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define TEN_MB 10485760

/* ---------------------------------------------------------------- helpers */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Run argv with opts (argv filled in here); assert it started. */
static pw_run_result *run_ok(pw_run_opts *o, const char *const *argv)
{
	pw_run_result *r = NULL;
	o->argv = argv;
	pw_err *e = pw_run(o, &r);
	if (e)
		fail_msg("pw_run failed: %s", pw_err_message(e));
	assert_non_null(r);
	return r;
}

/* Start argv; it must fail with code. Returns the error's hint presence. */
static bool run_fails(pw_run_opts *o, const char *const *argv, pw_errcode code)
{
	pw_run_result *r = NULL;
	o->argv = argv;
	pw_err *e = pw_run(o, &r);
	assert_non_null(e);
	assert_null(r);
	assert_int_equal(pw_err_code(e), code);
	bool hint = pw_err_hint(e) != NULL;
	pw_err_free(e);
	return hint;
}

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* A process is gone when kill() says ESRCH, or when it is a zombie (it was
 * reparented and its new parent has not reaped it yet). */
static bool process_gone(pid_t pid)
{
	char path[64], buf[512];
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'Z';
}

static bool wait_gone(pid_t pid, long ms)
{
	for (long waited = 0; waited <= ms; waited += 20) {
		if (process_gone(pid))
			return true;
		sleep_ms(20);
	}
	return false;
}

/* True when text has a line starting with prefix. */
static bool has_line(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, n) == 0)
			return true;
	return false;
}

static char *make_temp_dir(void)
{
	char *d = strdup("/tmp/pw-runner-test-XXXXXX");
	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static char *write_temp_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char *path = NULL;
	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* Lines seen by the callback, per stream. */
#define MAX_LINES 32
struct lines {
	char *text[2][MAX_LINES];
	size_t count[2];
	size_t pieces, max_piece, bytes;
	bool keep;
};

static void on_line(void *ud, pw_stream s, const char *line, size_t len)
{
	struct lines *l = ud;
	assert_true(s == PW_STREAM_STDOUT || s == PW_STREAM_STDERR);
	l->pieces++;
	l->bytes += len;
	if (len > l->max_piece)
		l->max_piece = len;
	if (!l->keep)
		return;
	size_t i = l->count[s - 1]++;
	assert_true(i < MAX_LINES);
	l->text[s - 1][i] = strndup(line, len);
}

static void lines_free(struct lines *l)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < l->count[s]; i++)
			free(l->text[s][i]);
}

/* ---------------------------------------------------------------- environment */

static void test_name_is_secret(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool secret;
	} cases[] = {
		{ "MY_API_TOKEN", true }, { "GITHUB_TOKEN", true }, { "github_token", true },
		{ "NPM_TOKEN", true }, { "AWS_REGION", true }, { "aws_profile", true },
		{ "AZURE_CLIENT_ID", true }, { "GCP_PROJECT", true },
		{ "GOOGLE_APPLICATION_CREDENTIALS", true }, { "PROXY_PASSWORD", true },
		{ "PGPASSWD", true }, { "MYAPIKEY", true }, { "OPENAI_API_KEY", true },
		{ "SSH_PRIVATE_KEY", true }, { "Authorization", true },
		{ "X_SESSION_KEY", true }, { "DB_CREDENTIALS", true },
		{ "client_secret", true }, { "TOKENIZER_MODE", true },
		{ "PATH", false }, { "HOME", false }, { "https_proxy", false },
		{ "HTTP_PROXY", false }, { "LANG", false }, { "LC_ALL", false },
		{ "XDG_RUNTIME_DIR", false }, { "SESSION", false }, { "KEY", false },
		{ "PASS", false }, { "", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (pw_runner_name_is_secret(cases[i].name) != cases[i].secret)
			fail_msg("%s: expected %s", cases[i].name,
				cases[i].secret ? "secret" : "not secret");
	assert_false(pw_runner_name_is_secret(NULL));
}

static void test_build_env(void **state)
{
	(void)state;
	const char *const envp[] = {
		"PATH=/bin", "HOME=/h", "LC_ALL=C", "XDG_CONFIG_HOME=/x",
		"HTTP_PROXY=http://u:p@proxy:1", "no_proxy=localhost", "PYTHONPATH=/p",
		"EDITOR=vi", "AWS_REGION=eu", "XDG_AUTH_TOKEN=t", "PROXY_PASSWORD=pw",
		"PATH=/second", "NOEQUALS", "=weird", NULL,
	};
	const char *const add[] = { "HOME=/new", "SECRET_ONE=chosen", "BAD", NULL };
	const char *const want[] = {
		"PATH=/bin", "LC_ALL=C", "XDG_CONFIG_HOME=/x", "HTTP_PROXY=http://u:p@proxy:1",
		"no_proxy=localhost", "HOME=/new", "SECRET_ONE=chosen", NULL,
	};
	char **env = pw_runner_build_env(envp, add);
	size_t i;
	for (i = 0; want[i]; i++) {
		assert_non_null(env[i]);
		assert_string_equal(env[i], want[i]);
	}
	assert_null(env[i]);
	pw_runner_env_free(env);

	env = pw_runner_build_env(NULL, NULL);
	assert_non_null(env);
	assert_null(env[0]);
	pw_runner_env_free(env);
	pw_runner_env_free(NULL);
}

/* Only the XDG base directories pass (issue 13 item 9); a caller may keep
 * more names, never credential-shaped ones. */
static void test_build_env_xdg_and_keeping(void **state)
{
	(void)state;
	const char *const envp[] = {
		"XDG_SESSION_COOKIE=c", "XDG_SESSION_ID=7", "XDG_CACHE_HOME=/c", "XDG_DATA_DIRS=/d",
		"VIRTUAL_ENV=/v", "PYWARD_HOME=/b", "PYWARD_TOKEN=t", "OTHER=o", NULL,
	};
	const char *const keep[] = { "VIRTUAL_ENV", "PYWARD_*", NULL };
	const char *const want_plain[] = { "XDG_CACHE_HOME=/c", "XDG_DATA_DIRS=/d", NULL };
	const char *const want_kept[] = { "XDG_CACHE_HOME=/c", "XDG_DATA_DIRS=/d", "VIRTUAL_ENV=/v",
					  "PYWARD_HOME=/b", NULL };
	char **env = pw_runner_build_env(envp, NULL);
	size_t i;
	for (i = 0; want_plain[i]; i++)
		assert_string_equal(env[i], want_plain[i]);
	assert_null(env[i]);
	pw_runner_env_free(env);
	env = pw_runner_build_env_keeping(envp, keep, NULL);
	for (i = 0; want_kept[i]; i++)
		assert_string_equal(env[i], want_kept[i]);
	assert_null(env[i]);
	pw_runner_env_free(env);
}

static void test_env_in_child(void **state)
{
	(void)state;
	if (!getenv("PATH"))
		setenv("PATH", "/usr/bin:/bin", 1);
	setenv("MY_API_TOKEN", "x", 1);
	setenv("GITHUB_TOKEN", "y", 1);
	setenv("PROXY_PASSWORD", "z", 1);
	setenv("PYTHONPATH", "/nowhere", 1);
	setenv("https_proxy", "http://u:p@proxy.example:3128", 1);
	const char *const add[] = { "PW_ADDED=1", "MY_TOKEN_OK=chosen", NULL };
	const char *const argv[] = { "env", NULL };
	pw_run_opts o = { .env_add = add };
	pw_run_result *r = run_ok(&o, argv);
	const char *out = pw_run_result_output(r, PW_STREAM_STDOUT);
	assert_int_equal(pw_run_result_exit_code(r), 0);
	assert_false(has_line(out, "MY_API_TOKEN="));
	assert_false(has_line(out, "GITHUB_TOKEN="));
	assert_false(has_line(out, "PROXY_PASSWORD="));
	assert_false(has_line(out, "PYTHONPATH="));
	assert_true(has_line(out, "PATH="));
	assert_true(has_line(out, "https_proxy=http://u:p@proxy.example:3128\n"));
	assert_true(has_line(out, "PW_ADDED=1\n"));
	assert_true(has_line(out, "MY_TOKEN_OK=chosen\n"));
	pw_run_result_free(&r);
	assert_null(r);
	unsetenv("MY_API_TOKEN");
	unsetenv("GITHUB_TOKEN");
	unsetenv("PROXY_PASSWORD");
	unsetenv("PYTHONPATH");
	unsetenv("https_proxy");
}

/* ---------------------------------------------------------------- outcomes */

static void test_exit_code(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c", "exit 7", NULL };
	pw_run_opts o = { 0 };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(pw_run_result_status(r), PW_RUN_EXITED);
	assert_int_equal(pw_run_result_exit_code(r), 7);
	assert_int_equal(pw_run_result_signal(r), 0);
	assert_string_equal(pw_run_result_describe(r), "exited 7");
	assert_true(pw_run_result_duration_ms(r) >= 0);
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "");
	assert_null(pw_run_result_spill_path(r, PW_STREAM_STDOUT));
	pw_run_result_free(&r);

	const char *const ok[] = { "true", NULL };
	r = run_ok(&o, ok);
	assert_string_equal(pw_run_result_describe(r), "exited 0");
	pw_run_result_free(&r);
}

static void test_signalled(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c", "kill -9 $$", NULL };
	pw_run_opts o = { 0 };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(pw_run_result_status(r), PW_RUN_SIGNALLED);
	assert_int_equal(pw_run_result_signal(r), 9);
	assert_int_equal(pw_run_result_exit_code(r), -1);
	assert_string_equal(pw_run_result_describe(r), "killed by signal 9");
	pw_run_result_free(&r);
}

static void test_usage_errors(void **state)
{
	(void)state;
	pw_run_result *r = NULL;
	pw_err *e = pw_run(NULL, &r);
	assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
	pw_err_free(e);
	const char *const empty[] = { NULL };
	pw_run_opts o = { .argv = empty };
	e = pw_run(&o, &r);
	assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
	assert_null(r);
	pw_err_free(e);
	assert_string_equal(pw_run_result_output(NULL, PW_STREAM_STDOUT), "");
	pw_run_result_free(NULL);
}

/* ---------------------------------------------------------------- output */

static void test_lines_streamed(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c",
		"echo o1; echo e1 >&2; echo o2; echo e2 >&2; echo; printf o3", NULL };
	struct lines l = { .keep = true };
	pw_run_opts o = { .on_line = on_line, .ud = &l };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(l.count[0], 4);
	assert_string_equal(l.text[0][0], "o1");
	assert_string_equal(l.text[0][1], "o2");
	assert_string_equal(l.text[0][2], "");
	assert_string_equal(l.text[0][3], "o3");
	assert_int_equal(l.count[1], 2);
	assert_string_equal(l.text[1][0], "e1");
	assert_string_equal(l.text[1][1], "e2");
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "o1\no2\n\no3");
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDERR), "e1\ne2\n");
	assert_int_equal(pw_run_result_total_bytes(r, PW_STREAM_STDOUT), 9);
	assert_int_equal(pw_run_result_dropped_bytes(r, PW_STREAM_STDERR), 0);
	pw_run_result_free(&r);
	lines_free(&l);
}

static void test_final_line_without_newline(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c", "printf 'a\\nb'", NULL };
	struct lines l = { .keep = true };
	pw_run_opts o = { .on_line = on_line, .ud = &l };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(l.count[0], 2);
	assert_string_equal(l.text[0][0], "a");
	assert_string_equal(l.text[0][1], "b");
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "a\nb");
	pw_run_result_free(&r);
	lines_free(&l);
}

/* A line of exactly 64 KiB is one piece; one byte more makes two. */
static void test_long_lines(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c",
		"head -c 65536 /dev/zero | tr '\\0' b; echo; "
		"head -c 65537 /dev/zero | tr '\\0' c; echo", NULL };
	struct lines l = { 0 };
	pw_run_opts o = { .on_line = on_line, .ud = &l };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(l.pieces, 3);
	assert_int_equal(l.max_piece, 65536);
	assert_int_equal(l.bytes, 65536 + 65537);
	pw_run_result_free(&r);
}

/* Head and tail are exactly the first and last halves of the cap. */
static void test_cap_keeps_head_and_tail(void **state)
{
	(void)state;
	const char *const argv[] = { "seq", "1", "20000", NULL };
	pw_run_opts o = { .cap_bytes = 1000 };
	pw_run_result *r = run_ok(&o, argv);
	size_t len = 0, cap = 0;
	char *all = NULL;
	FILE *f = open_memstream(&all, &cap);
	for (int i = 1; i <= 20000; i++)
		fprintf(f, "%d\n", i);
	fclose(f);
	len = strlen(all);
	size_t dropped = len - 1000;
	char marker[64];
	snprintf(marker, sizeof marker, "\n[... %zu bytes dropped ...]\n", dropped);
	const char *out = pw_run_result_output(r, PW_STREAM_STDOUT);
	assert_int_equal(pw_run_result_total_bytes(r, PW_STREAM_STDOUT), len);
	assert_int_equal(pw_run_result_dropped_bytes(r, PW_STREAM_STDOUT), dropped);
	assert_int_equal(strlen(out), 1000 + strlen(marker));
	assert_memory_equal(out, all, 500);
	assert_memory_equal(out + 500, marker, strlen(marker));
	assert_string_equal(out + 500 + strlen(marker), all + len - 500);
	assert_null(pw_run_result_spill_path(r, PW_STREAM_STDOUT));
	free(all);
	pw_run_result_free(&r);
}

static void test_big_output_capped_and_spilled(void **state)
{
	(void)state;
	char *dir = make_temp_dir();
	const char *const argv[] = { "/bin/sh", "-c",
		"head -c 10485760 /dev/zero | tr '\\0' a", NULL };
	struct lines l = { 0 };
	const size_t cap = 100000;
	pw_run_opts o = { .cap_bytes = cap, .spill_dir = dir, .on_line = on_line, .ud = &l };
	pw_run_result *r = run_ok(&o, argv);
	assert_int_equal(pw_run_result_exit_code(r), 0);
	size_t total = pw_run_result_total_bytes(r, PW_STREAM_STDOUT);
	size_t dropped = pw_run_result_dropped_bytes(r, PW_STREAM_STDOUT);
	assert_int_equal(total, TEN_MB);
	char marker[64];
	snprintf(marker, sizeof marker, "\n[... %zu bytes dropped ...]\n", dropped);
	const char *out = pw_run_result_output(r, PW_STREAM_STDOUT);
	assert_true(strlen(out) <= cap + strlen(marker));
	assert_int_equal(dropped, total - (strlen(out) - strlen(marker)));
	assert_non_null(strstr(out, marker));
	assert_int_equal(out[0], 'a');
	assert_int_equal(out[strlen(out) - 1], 'a');

	/* The spill file holds the whole stream. */
	const char *spill = pw_run_result_spill_path(r, PW_STREAM_STDOUT);
	assert_non_null(spill);
	char prefix[PATH_MAX];
	snprintf(prefix, sizeof prefix, "%s/pyward-stdout-", dir);
	assert_int_equal(strncmp(spill, prefix, strlen(prefix)), 0);
	assert_string_equal(spill + strlen(spill) - 4, ".log");
	struct stat st;
	assert_int_equal(stat(spill, &st), 0);
	assert_int_equal(st.st_size, TEN_MB);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_null(pw_run_result_spill_path(r, PW_STREAM_STDERR));
	assert_int_equal(pw_run_result_total_bytes(r, PW_STREAM_STDERR), 0);

	/* No newline in 10 MB: 64 KiB pieces. */
	assert_int_equal(l.bytes, TEN_MB);
	assert_int_equal(l.max_piece, 65536);
	assert_int_equal(l.pieces, TEN_MB / 65536);

	unlink(spill);
	pw_run_result_free(&r);
	assert_int_equal(rmdir(dir), 0);
	free(dir);
}

static void test_small_output_makes_no_spill(void **state)
{
	(void)state;
	char *dir = make_temp_dir();
	const char *const argv[] = { "echo", "hi", NULL };
	pw_run_opts o = { .spill_dir = dir };
	pw_run_result *r = run_ok(&o, argv);
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "hi\n");
	assert_null(pw_run_result_spill_path(r, PW_STREAM_STDOUT));
	assert_int_equal(pw_run_result_dropped_bytes(r, PW_STREAM_STDOUT), 0);
	pw_run_result_free(&r);
	assert_int_equal(rmdir(dir), 0); /* fails if a file was left */
	free(dir);
}

/* ---------------------------------------------------------------- stopping */

static void test_deadline_kills_group(void **state)
{
	(void)state;
	/* Everything ignores SIGTERM; the grandchild prints its pid (exec keeps
	 * $$) and holds the pipes. */
	const char *const argv[] = { "/bin/sh", "-c",
		"trap '' TERM; sh -c 'echo $$; exec sleep 30' & sleep 30", NULL };
	int64_t t0 = pw_clock_mono_ms();
	pw_run_opts o = { .deadline_ms = t0 + 500, .grace_ms = 300 };
	pw_run_result *r = run_ok(&o, argv);
	int64_t took = pw_clock_mono_ms() - t0;
	assert_int_equal(pw_run_result_status(r), PW_RUN_TIMED_OUT);
	assert_string_equal(pw_run_result_describe(r), "timed out");
	assert_int_equal(pw_run_result_signal(r), SIGKILL);
	assert_int_equal(pw_run_result_exit_code(r), -1);
	assert_true(took >= 750);
	assert_true(took < 3000);
	long gpid = strtol(pw_run_result_output(r, PW_STREAM_STDOUT), NULL, 10);
	assert_true(gpid > 1);
	assert_true(wait_gone((pid_t)gpid, 1000));
	pw_run_result_free(&r);
}

static void *raise_later(void *arg)
{
	sleep_ms(300);
	pw_cancel_raise(arg);
	return NULL;
}

static void test_cancel_from_thread(void **state)
{
	(void)state;
	pw_cancel *c = pw_cancel_new();
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, raise_later, c), 0);
	const char *const argv[] = { "sleep", "30", NULL };
	pw_run_opts o = { .cancel = c };
	int64_t t0 = pw_clock_mono_ms();
	pw_run_result *r = run_ok(&o, argv);
	int64_t took = pw_clock_mono_ms() - t0;
	pthread_join(th, NULL);
	assert_int_equal(pw_run_result_status(r), PW_RUN_CANCELLED);
	assert_string_equal(pw_run_result_describe(r), "cancelled");
	assert_int_equal(pw_run_result_signal(r), SIGTERM);
	assert_true(took >= 250);
	assert_true(took < 2000);
	pw_run_result_free(&r);
	pw_cancel_free(&c);
}

/* The child exits, a background grandchild keeps the pipes: pw_run returns
 * after a short quiet period instead of waiting for it. */
static void test_background_grandchild_does_not_hang(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c", "sleep 5 & echo $!; echo done", NULL };
	pw_run_opts o = { 0 };
	int64_t t0 = pw_clock_mono_ms();
	pw_run_result *r = run_ok(&o, argv);
	int64_t took = pw_clock_mono_ms() - t0;
	assert_int_equal(pw_run_result_status(r), PW_RUN_EXITED);
	assert_int_equal(pw_run_result_exit_code(r), 0);
	assert_true(took < 1500);
	const char *out = pw_run_result_output(r, PW_STREAM_STDOUT);
	assert_true(has_line(out, "done\n"));
	long bg = strtol(out, NULL, 10);
	assert_true(bg > 1);
	kill((pid_t)bg, SIGKILL); /* the sleep this test started */
	pw_run_result_free(&r);
}

/* A grandchild that never pauses is cut off grace_ms after the reap; once
 * we close the pipe its next write kills it with SIGPIPE. */
static void test_chatty_grandchild_is_cut_off(void **state)
{
	(void)state;
	const char *const argv[] = { "/bin/sh", "-c",
		"(while :; do echo x; sleep 0.05; done) & echo pid=$!", NULL };
	pw_run_opts o = { .grace_ms = 300 };
	int64_t t0 = pw_clock_mono_ms();
	pw_run_result *r = run_ok(&o, argv);
	int64_t took = pw_clock_mono_ms() - t0;
	assert_int_equal(pw_run_result_status(r), PW_RUN_EXITED);
	assert_true(took < 1500);
	/* The grandchild may print before its parent names it: find the line. */
	const char *pid_line = strstr(pw_run_result_output(r, PW_STREAM_STDOUT), "pid=");
	assert_non_null(pid_line);
	long bg = strtol(pid_line + 4, NULL, 10);
	assert_true(bg > 1);
	assert_true(wait_gone((pid_t)bg, 1000));
	pw_run_result_free(&r);
}

/* ---------------------------------------------------------------- starting */

static void test_not_found(void **state)
{
	(void)state;
	char *dir = make_temp_dir();
	char *plain = write_temp_file(dir, "plain", "#!/bin/sh\necho hi\n", 0644);
	char *junk = write_temp_file(dir, "junk", "not a program\n", 0755);
	pw_run_opts o = { 0 };
	const char *const missing[] = { "pyward-no-such-program-42", NULL };
	assert_true(run_fails(&o, missing, PW_ERR_NOTFOUND));
	const char *const missing_abs[] = { "/nonexistent-pyward/prog", NULL };
	run_fails(&o, missing_abs, PW_ERR_NOTFOUND);
	const char *const not_exec[] = { plain, NULL };
	assert_true(run_fails(&o, not_exec, PW_ERR_FAILED));
	const char *const bad_format[] = { junk, NULL };
	assert_true(run_fails(&o, bad_format, PW_ERR_FAILED));
	/* argv[0] is looked up on the child's PATH. */
	const char *const add[] = { "PATH=/nonexistent-pyward", NULL };
	pw_run_opts o2 = { .env_add = add };
	const char *const sh[] = { "sh", "-c", "true", NULL };
	run_fails(&o2, sh, PW_ERR_NOTFOUND);
	unlink(plain);
	unlink(junk);
	rmdir(dir);
	free(plain);
	free(junk);
	free(dir);
}

static void test_cwd(void **state)
{
	(void)state;
	char *dir = make_temp_dir();
	char real[PATH_MAX], want[PATH_MAX + 2];
	assert_non_null(realpath(dir, real));
	snprintf(want, sizeof want, "%s\n", real);
	const char *const argv[] = { "/bin/sh", "-c", "pwd -P", NULL };
	pw_run_opts o = { .cwd = dir };
	pw_run_result *r = run_ok(&o, argv);
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), want);
	pw_run_result_free(&r);
	pw_run_opts bad = { .cwd = "/nonexistent-pyward-dir" };
	run_fails(&bad, argv, PW_ERR_NOTFOUND);
	rmdir(dir);
	free(dir);
}

static void test_stdin(void **state)
{
	(void)state;
	char *dir = make_temp_dir();
	char *in = write_temp_file(dir, "in", "hello\nworld\n", 0644);
	const char *const argv[] = { "cat", NULL };
	pw_run_opts o = { .stdin_path = in };
	pw_run_result *r = run_ok(&o, argv);
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "hello\nworld\n");
	pw_run_result_free(&r);
	pw_run_opts dflt = { 0 };
	r = run_ok(&dflt, argv); /* /dev/null: cat ends at once */
	assert_string_equal(pw_run_result_output(r, PW_STREAM_STDOUT), "");
	assert_int_equal(pw_run_result_exit_code(r), 0);
	pw_run_result_free(&r);
	pw_run_opts missing = { .stdin_path = "/nonexistent-pyward-input" };
	run_fails(&missing, argv, PW_ERR_NOTFOUND);
	unlink(in);
	rmdir(dir);
	free(in);
	free(dir);
}

struct job {
	int n;
	char *out;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	char num[16];
	snprintf(num, sizeof num, "%d", j->n);
	const char *const argv[] = { "/bin/sh", "-c", "sleep 0.1; echo $1", "sh", num, NULL };
	pw_run_opts o = { .argv = argv };
	pw_run_result *r = NULL;
	pw_err *e = pw_run(&o, &r);
	if (!e)
		j->out = strdup(pw_run_result_output(r, PW_STREAM_STDOUT));
	pw_err_free(e);
	pw_run_result_free(&r);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	enum { N = 4 };
	pthread_t th[N];
	struct job jobs[N];
	for (int i = 0; i < N; i++) {
		jobs[i].n = i;
		jobs[i].out = NULL;
		assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		char want[16];
		pthread_join(th[i], NULL);
		snprintf(want, sizeof want, "%d\n", i);
		assert_non_null(jobs[i].out);
		assert_string_equal(jobs[i].out, want);
		free(jobs[i].out);
	}
}

static void test_no_fd_leak(void **state)
{
	(void)state;
	int before = count_open_fds();
	pw_run_opts o = { 0 };
	const char *const ok[] = { "/bin/sh", "-c", "echo out; echo err >&2", NULL };
	pw_run_result *r = run_ok(&o, ok);
	pw_run_result_free(&r);
	const char *const missing[] = { "/nonexistent-pyward/prog", NULL };
	run_fails(&o, missing, PW_ERR_NOTFOUND);
	pw_run_opts bad = { .cwd = "/nonexistent-pyward-dir" };
	run_fails(&bad, ok, PW_ERR_NOTFOUND);
	/* The child sees only 0, 1 and 2 (and ls's own directory handle). */
	const char *const ls[] = { "ls", "/proc/self/fd", NULL };
	r = run_ok(&o, ls);
	const char *out = pw_run_result_output(r, PW_STREAM_STDOUT);
	int n = 0;
	for (const char *p = out; *p; p++)
		n += *p == '\n';
	assert_true(n <= 4);
	pw_run_result_free(&r);
	assert_int_equal(count_open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_is_secret),
		cmocka_unit_test(test_build_env),
		cmocka_unit_test(test_build_env_xdg_and_keeping),
		cmocka_unit_test(test_env_in_child),
		cmocka_unit_test(test_exit_code),
		cmocka_unit_test(test_signalled),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_lines_streamed),
		cmocka_unit_test(test_final_line_without_newline),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_cap_keeps_head_and_tail),
		cmocka_unit_test(test_big_output_capped_and_spilled),
		cmocka_unit_test(test_small_output_makes_no_spill),
		cmocka_unit_test(test_deadline_kills_group),
		cmocka_unit_test(test_cancel_from_thread),
		cmocka_unit_test(test_background_grandchild_does_not_hang),
		cmocka_unit_test(test_chatty_grandchild_is_cut_off),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_stdin),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_no_fd_leak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
