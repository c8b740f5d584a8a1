/* Unit tests: scratchpad protocol pieces (framing, capture, messages, names). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "scratch_client.h"
#include "scratch_proto.h"
#include "jsontext.h"
#include "sigpipe.h"
#include "xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_linebuf_splits_and_joins(void **state)
{
	(void)state;
	pw_scratch_linebuf *lb = pw_scratch_linebuf_new();
	assert_null(pw_scratch_linebuf_take(lb));
	assert_true(pw_scratch_linebuf_feed(lb, "{\"a\":1}\n{\"b\"", 12));
	char *l = pw_scratch_linebuf_take(lb);
	assert_string_equal(l, "{\"a\":1}");
	free(l);
	assert_null(pw_scratch_linebuf_take(lb)); /* the second line is incomplete */
	assert_true(pw_scratch_linebuf_feed(lb, ":2}\n\n", 5));
	l = pw_scratch_linebuf_take(lb);
	assert_string_equal(l, "{\"b\":2}");
	free(l);
	l = pw_scratch_linebuf_take(lb);
	assert_string_equal(l, ""); /* an empty line is a line */
	free(l);
	assert_null(pw_scratch_linebuf_take(lb));
	pw_scratch_linebuf_free(&lb);
	assert_null(lb);
}

static void test_linebuf_many_small_feeds(void **state)
{
	(void)state;
	pw_scratch_linebuf *lb = pw_scratch_linebuf_new();
	char big[10000];
	memset(big, 'x', sizeof big);
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof big; i += 7)
			assert_true(pw_scratch_linebuf_feed(lb, big + i, i + 7 <= sizeof big ? 7 : sizeof big - i));
		assert_true(pw_scratch_linebuf_feed(lb, "\n", 1));
		char *l = pw_scratch_linebuf_take(lb);
		assert_int_equal(strlen(l), sizeof big);
		free(l);
	}
	pw_scratch_linebuf_free(&lb);
}

static void test_capture_under_limit_keeps_all(void **state)
{
	(void)state;
	pw_scratch_capture *c = pw_scratch_capture_new(100);
	pw_scratch_capture_add(c, "hello ", 6);
	pw_scratch_capture_add(c, "world", 5);
	char *t = pw_scratch_capture_text(c);
	assert_string_equal(t, "hello world");
	free(t);
	assert_int_equal(pw_scratch_capture_dropped(c), 0);
	assert_int_equal(pw_scratch_capture_total(c), 11);
	pw_scratch_capture_free(&c);
}

static void test_capture_keeps_head_and_tail(void **state)
{
	(void)state;
	pw_scratch_capture *c = pw_scratch_capture_new(10);
	/* 26 letters in uneven pieces: head "abcde", tail "vwxyz", 16 dropped */
	const char *abc = "abcdefghijklmnopqrstuvwxyz";
	pw_scratch_capture_add(c, abc, 3);
	pw_scratch_capture_add(c, abc + 3, 11);
	for (int i = 14; i < 26; i++)
		pw_scratch_capture_add(c, abc + i, 1);
	assert_int_equal(pw_scratch_capture_dropped(c), 16);
	assert_int_equal(pw_scratch_capture_total(c), 26);
	char *t = pw_scratch_capture_text(c);
	assert_true(strncmp(t, "abcde", 5) == 0);
	assert_non_null(strstr(t, "16 bytes"));
	assert_string_equal(t + strlen(t) - 5, "vwxyz");
	free(t);
	pw_scratch_capture_reset(c, 4);
	pw_scratch_capture_add(c, "0123456789", 10);
	t = pw_scratch_capture_text(c);
	assert_true(strncmp(t, "01", 2) == 0);
	assert_string_equal(t + strlen(t) - 2, "89");
	assert_int_equal(pw_scratch_capture_dropped(c), 6);
	free(t);
	pw_scratch_capture_free(&c);
}

static void test_utf8_clean_replaces_invalid_bytes(void **state)
{
	(void)state;
	char *s = pw_scratch_utf8_clean("ok \xc3\xa9 \xff\xc3", 8);
	assert_string_equal(s, "ok \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd");
	free(s);
	s = pw_scratch_utf8_clean("\xed\xa0\x80x\xe0\x80\x80", 7); /* a surrogate, an overlong form */
	assert_string_equal(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
	s = pw_scratch_utf8_clean("a\0b", 3);
	assert_string_equal(s, "a\xef\xbf\xbd" "b");
	free(s);
	/* a capture cut in the middle of a character still gives text */
	pw_scratch_capture *c = pw_scratch_capture_new(4);
	pw_scratch_capture_add(c, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8);
	char *t = pw_scratch_capture_text(c);
	json_t *j = json_string(t);
	assert_non_null(j);
	json_decref(j);
	free(t);
	pw_scratch_capture_free(&c);
}

static void test_request_round_trip(void **state)
{
	(void)state;
	char **env = xcalloc(3, sizeof *env);
	env[0] = xstrdup("PATH=/usr/bin");
	env[1] = xstrdup("X=a=b");
	pw_scratch_request r = {
		.op = PW_SCRATCH_OP_RUN, .session = xstrdup("s1"), .code = xstrdup("1+1"), .reset = true,
		.python = xstrdup("/usr/bin/python3"), .python_explicit = true, .venv = NULL,
		.project_dir = xstrdup("/tmp"), .env = env, .timeout_ms = 1500, .max_output = 4096,
	};
	json_t *j = pw_scratch_request_encode(&r);
	pw_scratch_request back;
	assert_null(pw_scratch_request_decode(j, &back));
	json_decref(j);
	assert_int_equal(back.op, PW_SCRATCH_OP_RUN);
	assert_string_equal(back.session, "s1");
	assert_string_equal(back.code, "1+1");
	assert_true(back.reset);
	assert_true(back.python_explicit);
	assert_null(back.venv);
	assert_string_equal(back.env[1], "X=a=b");
	assert_null(back.env[2]);
	assert_int_equal(back.timeout_ms, 1500);
	assert_int_equal(back.max_output, 4096);
	pw_scratch_request_clear(&back);
	pw_scratch_request_clear(&r);
}

static void test_request_rejects_malformed(void **state)
{
	(void)state;
	const char *bad[] = {
		"{}",
		"{\"op\":\"explode\",\"session\":\"a\"}",
		"{\"op\":\"run\"}",
		"{\"op\":\"run\",\"session\":\"a\",\"code\":\"1\",\"python\":\"python3\",\"project_dir\":\"/\"}",
		"{\"op\":\"run\",\"session\":\"a\",\"python\":\"/p\",\"project_dir\":\"/\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *j = json_loads(bad[i], 0, NULL);
		assert_non_null(j);
		pw_scratch_request r;
		pw_err *e = pw_scratch_request_decode(j, &r);
		assert_non_null(e);
		assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
		pw_err_free(e);
		pw_scratch_request_clear(&r);
		json_decref(j);
	}
	json_t *list = json_loads("{\"op\":\"list\"}", 0, NULL);
	pw_scratch_request r;
	assert_null(pw_scratch_request_decode(list, &r));
	assert_int_equal(r.op, PW_SCRATCH_OP_LIST);
	pw_scratch_request_clear(&r);
	json_decref(list);
}

/* A string of pieces a result may hold: ASCII, every kind of escape,
 * valid multi-byte UTF-8 and (when bad) sequences jansson refuses. */
static char *random_text(unsigned *seed, bool bad)
{
	static const char *const pieces[] = {
		"a", "Z", " ", "/", "\x7f", "\"", "\\", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\x1b[0m",
		"\xc3\xa9", "\xe2\x80\xa8", "\xef\xbf\xbf", "\xf0\x9f\x90\x8d", "\xf4\x8f\xbf\xbf", "'", "<cell 1>",
	};
	static const char *const broken[] = {
		"\xc3", "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",
	};
	size_t n = (size_t)(rand_r(seed) % 12), cap = 1;
	char *s = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		const char *p = pieces[rand_r(seed) % (sizeof pieces / sizeof *pieces)];
		if (bad && i == n / 2)
			p = broken[rand_r(seed) % (sizeof broken / sizeof *broken)];
		cap += strlen(p);
		s = xrealloc(s, cap);
		strcat(s, p);
	}
	return s;
}

/* The UTF-8 check of a cell's code takes what json_string takes, no more,
 * no less (it replaced a json_string made only to be dropped). */
/* The cell line written directly is byte for byte jansson's line for the
 * same cell: every ASCII byte (controls, quotes, backslashes), random
 * ASCII code, and code that is not ASCII (jansson's path). */
static void test_cell_line_matches_jansson(void **state)
{
	(void)state;
	srand(20261205);
	char code[300];
	for (int round = 0; round < 3000; round++) {
		size_t n = 0;
		if (round < 127) { /* each ASCII byte once, between letters */
			code[n++] = 'a';
			code[n++] = (char)(round + 1);
			code[n++] = 'b';
		} else {
			n = (size_t)(rand() % 200);
			for (size_t i = 0; i < n; i++)
				code[i] = (char)(1 + rand() % 127);
		}
		if (round % 500 == 499) /* not ASCII: é, then a 4-byte emoji */
			n += (size_t)snprintf(code + n, sizeof code - n, "\xc3\xa9\xf0\x9f\x99\x82");
		code[n] = '\0';
		int64_t id = round % 7 == 0 ? (int64_t)round * 1000003 : round;
		json_t *msg = json_pack("{s:I, s:s}", "id", (json_int_t)id, "code", code);
		size_t want_len = 0, got_len = 0;
		char *want = pw_scratch_dump_line(msg, &want_len);
		char *got = pw_scratch_cell_line(id, code, &got_len);
		json_decref(msg);
		assert_int_equal(got_len, want_len);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
}

static void test_utf8_check_matches_jansson(void **state)
{
	(void)state;
	unsigned seed = 18;
	int refused = 0;
	for (int i = 0; i < 3000; i++) {
		char *s = random_text(&seed, i % 3 == 0);
		json_t *j = json_string(s);
		assert_int_equal(pw_jsontext_utf8_ok(s), j != NULL);
		refused += j == NULL;
		json_decref(j);
		free(s);
	}
	assert_true(refused > 100);
}

/* The result written directly is byte for byte what jansson writes from
 * the encoded tree, for any content, including strings jansson refuses
 * (then the key is missing in both) and NULL members. */
static void test_result_dump_matches_jansson(void **state)
{
	(void)state;
	unsigned seed = 15;
	int bad_seen = 0;
	for (int i = 0; i < 3000; i++) {
		bool bad = i % 7 == 3;
		pw_scratch_result *r = xcalloc(1, sizeof *r);
		r->session = random_text(&seed, false);
		r->status = rand_r(&seed) % 5 ? xstrdup("ok") : NULL;
		r->execution = (int64_t)rand_r(&seed) - (i % 3 ? 0 : 1000000000);
		r->generation = i % 11 == 0 ? INT64_MIN : i % 13 == 0 ? INT64_MAX : rand_r(&seed) % 100;
		r->value = rand_r(&seed) % 3 ? random_text(&seed, bad && i % 2) : NULL;
		r->traceback = rand_r(&seed) % 3 ? NULL : random_text(&seed, false);
		r->out = rand_r(&seed) % 4 ? random_text(&seed, bad && !(i % 2)) : NULL;
		r->err = random_text(&seed, false);
		r->out_dropped = (size_t)rand_r(&seed) % 3 * 4096;
		r->err_dropped = (size_t)(i % 17);
		r->duration_ms = rand_r(&seed) % 5000;
		for (int k = rand_r(&seed) % 3; k > 0; k--)
			pw_scratch_result_add_notice(r, "evicted", k == 2 && bad ? "\xc3(" : "fresh scratchpad: \"evicted\"\n");
		if (i % 50 == 0) { /* a fresh worker's first result: jansson's path */
			r->interp = xcalloc(1, sizeof *r->interp);
			r->interp->version = xstrdup("3.11.2");
		}
		json_t *j = pw_scratch_result_encode(r);
		char *want = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		size_t len = 0;
		char *got = pw_scratch_result_dump(r, &len);
		assert_non_null(want);
		assert_non_null(got);
		assert_string_equal(got, want);
		assert_int_equal(len, strlen(want));
		bad_seen += bad && !strstr(want, "\"stdout\"") + !strstr(want, "\"value\"") > 0;
		free(want);
		free(got);
		pw_scratch_result_free(&r);
	}
	assert_true(bad_seen > 50); /* the refused strings were met */
}

/* A guarded write to a pipe nobody reads: EPIPE, the process lives, and
 * no SIGPIPE is left pending. */
static void guarded_write_to_gone_reader(void)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	pw_sigpipe_guard g;
	pw_sigpipe_block(&g);
	errno = 0;
	assert_int_equal(write(p[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	pw_sigpipe_unblock(&g);
	close(p[1]);
	sigset_t pending;
	sigemptyset(&pending);
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));
}

static void test_sigpipe_guard(void **state)
{
	(void)state;
	guarded_write_to_gone_reader();
}

/* Last: the process then ignores SIGPIPE for good (the MCP server's way),
 * and the guards, which do nothing now, still leave a write failed, not
 * fatal. */
static void test_sigpipe_ignored_for_good(void **state)
{
	(void)state;
	pw_sigpipe_ignore_for_good();
	guarded_write_to_gone_reader();
	struct sigaction sa;
	sigaction(SIGPIPE, NULL, &sa);
	assert_true(sa.sa_handler == SIG_IGN);
}

static void test_result_round_trip_and_notice_order(void **state)
{
	(void)state;
	pw_scratch_result *r = xcalloc(1, sizeof *r);
	r->session = xstrdup("s");
	r->status = xstrdup("ok");
	r->execution = 3;
	r->generation = 2;
	r->value = xstrdup("'\xc3\xa9'");
	r->out = xstrdup("line\n");
	r->err = xstrdup("");
	r->out_dropped = 7;
	pw_scratch_result_add_notice(r, "host_restarted", "fresh scratchpad: host restarted");
	pw_scratch_result_add_notice(r, "evicted", "fresh scratchpad: evicted");
	json_t *j = pw_scratch_result_encode(r);
	const char *first_key = json_object_iter_key(json_object_iter(j));
	assert_string_equal(first_key, "notices");
	size_t len;
	char *line = pw_scratch_dump_line(j, &len);
	assert_int_equal(line[len - 1], '\n');
	assert_null(strchr(line, '\xc3')); /* ASCII on the wire */
	json_decref(j);
	json_t *back_j = json_loads(line, 0, NULL);
	free(line);
	pw_scratch_result *back = NULL;
	assert_null(pw_scratch_result_decode(back_j, &back));
	json_decref(back_j);
	assert_string_equal(back->value, "'\xc3\xa9'");
	assert_int_equal(back->execution, 3);
	assert_int_equal(back->generation, 2);
	assert_int_equal(back->out_dropped, 7);
	assert_int_equal(back->notice_count, 2);
	assert_string_equal(back->notices[0].kind, "host_restarted");
	assert_null(back->traceback);
	assert_null(back->interp);
	assert_int_equal(pw_scratch_result_exit_status(back), 0);
	free(back->status);
	back->status = xstrdup("interrupted");
	assert_int_equal(pw_scratch_result_exit_status(back), 130);
	free(back->status);
	back->status = xstrdup("timed_out");
	assert_int_equal(pw_scratch_result_exit_status(back), 4);
	free(back->status);
	back->status = xstrdup("lost");
	assert_int_equal(pw_scratch_result_exit_status(back), 1);
	pw_scratch_result_free(&back);
	pw_scratch_result_free(&r);
	assert_null(r);
}

static void test_error_round_trip(void **state)
{
	(void)state;
	pw_err *e = pw_err_new(PW_ERR_REFUSED, "ask the owner", "uid %d refused", 7);
	json_t *j = pw_scratch_error_encode(e);
	pw_err *back = pw_scratch_error_decode(j);
	assert_non_null(back);
	assert_int_equal(pw_err_code(back), PW_ERR_REFUSED);
	assert_string_equal(pw_err_message(back), "uid 7 refused");
	assert_string_equal(pw_err_hint(back), "ask the owner");
	json_decref(j);
	json_t *not_error = json_pack("{s:s}", "status", "ok");
	assert_null(pw_scratch_error_decode(not_error));
	json_decref(not_error);
	pw_err_free(e);
	pw_err_free(back);
}

static void test_list_round_trip(void **state)
{
	(void)state;
	pw_scratch_session_info s[2] = {
		{ .name = (char[]){ "a" }, .state = (char[]){ "idle" }, .python = (char[]){ "/p" }, .executions = 4,
		  .generation = 1, .pid = 99 },
		{ .name = (char[]){ "b" }, .state = (char[]){ "no worker" }, .generation = 3 },
	};
	pw_scratch_list l = { .sessions = s, .count = 2, .host_pid = 5, .workers = 1, .max_workers = 4 };
	json_t *j = pw_scratch_list_encode(&l);
	pw_scratch_list *back = NULL;
	assert_null(pw_scratch_list_decode(j, &back));
	json_decref(j);
	assert_int_equal(back->count, 2);
	assert_string_equal(back->sessions[0].python, "/p");
	assert_null(back->sessions[1].python);
	assert_null(back->sessions[1].last_use);
	assert_int_equal(back->sessions[1].generation, 3);
	assert_int_equal(back->max_workers, 4);
	pw_scratch_list_free(&back);
}

static void test_session_names(void **state)
{
	(void)state;
	assert_true(pw_scratch_session_name_ok("proj-1.a_b"));
	assert_false(pw_scratch_session_name_ok(""));
	assert_false(pw_scratch_session_name_ok("a/b"));
	assert_false(pw_scratch_session_name_ok("a b"));
	char long_name[70];
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	assert_false(pw_scratch_session_name_ok(long_name));
	char *n1 = pw_scratch_default_session("/home/x/my proj");
	char *n2 = pw_scratch_default_session("/srv/my proj");
	assert_true(pw_scratch_session_name_ok(n1));
	assert_true(strncmp(n1, "my_proj-", 8) == 0);
	assert_string_not_equal(n1, n2); /* same base name, other path */
	char *root = pw_scratch_default_session("/");
	assert_true(pw_scratch_session_name_ok(root));
	free(n1);
	free(n2);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linebuf_splits_and_joins),
		cmocka_unit_test(test_linebuf_many_small_feeds),
		cmocka_unit_test(test_capture_under_limit_keeps_all),
		cmocka_unit_test(test_capture_keeps_head_and_tail),
		cmocka_unit_test(test_utf8_clean_replaces_invalid_bytes),
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_request_rejects_malformed),
		cmocka_unit_test(test_result_round_trip_and_notice_order),
		cmocka_unit_test(test_result_dump_matches_jansson),
		cmocka_unit_test(test_utf8_check_matches_jansson),
		cmocka_unit_test(test_cell_line_matches_jansson),
		cmocka_unit_test(test_error_round_trip),
		cmocka_unit_test(test_list_round_trip),
		cmocka_unit_test(test_session_names),
		cmocka_unit_test(test_sigpipe_guard),
		cmocka_unit_test(test_sigpipe_ignored_for_good), /* last: changes the process */
	};
	return cmocka_run_group_tests_name("scratch", tests, NULL, NULL);
}
