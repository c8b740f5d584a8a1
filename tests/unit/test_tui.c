/* Unit tests: the full-screen interface's pure parts (number formatting) and
 * its background jobs (thread -> pipe -> main thread), without a terminal. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/fmt.h"
#include "tui/worker.h"

#include "xalloc.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fn (a pw_fmt_* of value into a buffer) writes want. */
#define assert_fmt(fn, value, want) \
	do { \
		char b_[32]; \
		fn(value, b_, sizeof b_); \
		assert_string_equal(b_, want); \
	} while (0)

static void test_bytes(void **state)
{
	(void)state;
	assert_fmt(pw_fmt_bytes, -1, "?");
	assert_fmt(pw_fmt_bytes, 812, "812 B");
	assert_fmt(pw_fmt_bytes, 12345, "12.3 kB");
	assert_fmt(pw_fmt_bytes, 9267017, "9.3 MB");
	assert_fmt(pw_fmt_bytes, 1500000000, "1.50 GB");
}

static void test_rate_and_eta(void **state)
{
	(void)state;
	assert_fmt(pw_fmt_rate, 0, "-");
	assert_fmt(pw_fmt_rate, 1234567, "1.2 MB/s");
	assert_fmt(pw_fmt_eta, -1, "?");
	assert_fmt(pw_fmt_eta, 42.4, "0:42");
	assert_fmt(pw_fmt_eta, 725, "12:05");
	assert_fmt(pw_fmt_eta, 3723, "1:02:03");
}

static void test_time(void **state)
{
	(void)state;
	assert_fmt(pw_fmt_time, "2026-12-02T19:38:04.123Z", "2026-12-02 19:38:04");
	assert_fmt(pw_fmt_time, NULL, "-");
}

/* ---------------------------------------------------------------- jobs */

enum { MSG_HELLO = 7 };

static pw_err *chatty_job(pw_job *job, void *ud)
{
	int *count = ud;
	pw_events_log(pw_job_events(job), PW_LOG_INFO, "line %d", 1);
	for (int i = 0; i <= 1000; i++) {
		pw_progress p = { .stage = "download", .done = i, .total = 1000, .eta_seconds = -1 };
		pw_events_progress(pw_job_events(job), &p);
	}
	pw_job_post(job, MSG_HELLO, xstrdup("hello"), free);
	*count = 42;
	return pw_err_new(PW_ERR_FAILED, "a hint", "it failed on purpose");
}

typedef struct seen {
	int logs, progress, messages, done;
	int64_t last_done;
	char text[64], message[64], err[64];
	bool ud_alive;
	int main_thread_order; /* DONE must be last */
} seen;

static void record(const pw_job_event *ev, void *ctx)
{
	seen *s = ctx;
	switch (ev->kind) {
	case PW_JOB_LOG:
		s->logs++;
		snprintf(s->text, sizeof s->text, "%s", ev->text);
		break;
	case PW_JOB_PROGRESS:
		s->progress++;
		s->last_done = ev->progress.done;
		assert_string_equal(ev->progress.stage, "download");
		break;
	case PW_JOB_MESSAGE:
		s->messages++;
		assert_int_equal(ev->code, MSG_HELLO);
		snprintf(s->message, sizeof s->message, "%s", (const char *)ev->data);
		break;
	case PW_JOB_DONE:
		s->done++;
		snprintf(s->err, sizeof s->err, "%s", ev->err ? pw_err_message(ev->err) : "");
		s->ud_alive = ev->ud && *(int *)ev->ud == 42;
		s->main_thread_order = s->logs + s->progress + s->messages;
		break;
	}
}

static void drain_until_done(pw_workers *jobs, seen *s)
{
	struct pollfd pfd = { .fd = pw_workers_fd(jobs), .events = POLLIN };
	for (int i = 0; i < 1000 && !s->done; i++) {
		poll(&pfd, 1, 100);
		pw_workers_dispatch(jobs, record, s);
	}
}

/* Paths in a pane are shown from the workspace when they are inside it. */
static void test_under(void **state)
{
	(void)state;
	assert_string_equal(pw_fmt_under("/w/s/.venv", "/w/s"), ".venv");
	assert_string_equal(pw_fmt_under("/w/s/a/b/env", "/w/s/"), "a/b/env");
	assert_string_equal(pw_fmt_under("/w/s", "/w/s"), ".");
	assert_string_equal(pw_fmt_under("/w/sx/.venv", "/w/s"), "/w/sx/.venv"); /* a sibling, not inside */
	assert_string_equal(pw_fmt_under("/other/.venv", "/w/s"), "/other/.venv");
	assert_string_equal(pw_fmt_under("/srv/env", "/"), "srv/env");
	assert_string_equal(pw_fmt_under("/w/s/.venv", ""), "/w/s/.venv");
	assert_null(pw_fmt_under(NULL, "/w"));
}

static void test_short_digest_and_url(void **state)
{
	(void)state;
	const char *sha = "d63b69e3a451e9e7dd3dc510a6708b5ead069b3a14c80cb23507215c01d42b7f";
	char buf[80];
	pw_fmt_digest_short(sha, 46, "~", buf, sizeof buf);
	assert_string_equal(buf, "d63b69e3a451~01d42b7f");
	pw_fmt_digest_short(sha, 64, "~", buf, sizeof buf);
	assert_string_equal(buf, sha); /* fits: whole */
	pw_fmt_digest_short("abc", 2, "~", buf, sizeof buf);
	assert_string_equal(buf, "abc"); /* nothing to gain */
	pw_fmt_digest_short(NULL, 10, "~", buf, sizeof buf);
	assert_string_equal(buf, "-");

	const char *url = "https://localhost:34051/rel/1/cpython-fixture-install_only.tar.gz";
	char *u = pw_fmt_url_short(url, 46, "~");
	assert_string_equal(u, "https://localhost:34051/~/cpython-fixture-install_only.tar.gz");
	free(u);
	u = pw_fmt_url_short(url, 80, "~");
	assert_string_equal(u, url);
	free(u);
	u = pw_fmt_url_short("https://h/only-one-part-but-long.tar.gz", 10, "~");
	assert_string_equal(u, "https://h/only-one-part-but-long.tar.gz"); /* nothing between host and file */
	free(u);
	u = pw_fmt_url_short("file-without-scheme/a/b/c.tar.gz", 10, "~");
	assert_string_equal(u, "file-without-scheme/~/c.tar.gz");
	free(u);
}

static void test_job_events_reach_the_main_thread(void **state)
{
	(void)state;
	pw_workers *jobs = pw_workers_new();
	assert_non_null(jobs);
	int *ud = xcalloc(1, sizeof *ud);
	int id = pw_workers_start(jobs, "chatty", NULL, chatty_job, ud, free);
	assert_true(id > 0);
	seen s = { 0 };
	drain_until_done(jobs, &s);
	assert_int_equal(s.done, 1);
	assert_int_equal(s.logs, 1);
	assert_string_equal(s.text, "line 1");
	assert_int_equal(s.messages, 1);
	assert_string_equal(s.message, "hello");
	assert_string_equal(s.err, "it failed on purpose");
	assert_true(s.ud_alive);
	/* Progress is coalesced, but the end of the stage always arrives. */
	assert_true(s.progress >= 2 && s.progress < 1001);
	assert_int_equal(s.last_done, 1000);
	assert_int_equal(pw_workers_running(jobs), 0);
	pw_workers_free(&jobs);
	assert_null(jobs);
}

static pw_err *waits_for_cancel(pw_job *job, void *ud)
{
	(void)ud;
	while (!pw_cancel_raised(pw_job_cancel_token(job))) {
		struct pollfd none;
		poll(&none, 0, 5);
	}
	return pw_err_new(PW_ERR_CANCELLED, NULL, "cancelled");
}

static void test_cancel_and_free_with_running_jobs(void **state)
{
	(void)state;
	pw_workers *jobs = pw_workers_new();
	int a = pw_workers_start(jobs, "first", NULL, waits_for_cancel, NULL, NULL);
	int b = pw_workers_start(jobs, "second", NULL, waits_for_cancel, NULL, NULL);
	assert_int_equal(pw_workers_running(jobs), 2);
	/* A quiet job is neither counted nor named. */
	pw_workers_set_quiet(jobs, b);
	assert_int_equal(pw_workers_running(jobs), 1);
	assert_string_equal(pw_workers_any_name(jobs), "first");
	assert_true(pw_workers_cancel(jobs, a));
	assert_false(pw_workers_cancel(jobs, 9999));
	seen s = { 0 };
	drain_until_done(jobs, &s);
	assert_int_equal(s.done, 1);
	assert_string_equal(s.err, "cancelled");
	assert_int_equal(pw_workers_running(jobs), 0);
	assert_null(pw_workers_any_name(jobs));
	/* Freeing cancels and joins the one still running. */
	pw_workers_free(&jobs);
	assert_null(jobs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_rate_and_eta),
		cmocka_unit_test(test_short_digest_and_url),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_under),
		cmocka_unit_test(test_job_events_reach_the_main_thread),
		cmocka_unit_test(test_cancel_and_free_with_running_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
