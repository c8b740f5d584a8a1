/*
 * Unit tests: the scratchpad client API against a real host (forked from
 * this test, serving a private socket folder) and real CPython workers:
 * the calls the TUI's Python pane makes.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "scratch_client.h"
#include "scratch_host.h"
#include "testlib.h"
#include "xalloc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct world {
	char dir[PATH_MAX];
	char worker[PATH_MAX];
	pid_t host;
} world;

static const char *python_path(void)
{
	const char *py = tl_python();
	if (py[0] == '/')
		return py;
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : NULL;
}

static int teardown(void **state);

/* A host (forked from this test) on a private socket folder. */
static int start_world(void **state, int grace_ms)
{
	world *w = xcalloc(1, sizeof *w);
	if (tl_make_temp_dir(w->dir, sizeof w->dir, "scratch-client") != 0)
		return -1;
	tl_fixture_path(w->worker, sizeof w->worker, "../../data/pyward_worker.py");
	int ready[2];
	if (pipe(ready) != 0)
		return -1;
	w->host = fork();
	if (w->host == 0) {
		close(ready[0]);
		pw_scratch_host_opts o = { .dir = w->dir, .worker_script = w->worker, .idle_timeout_s = 60,
					   .max_workers = 2, .grace_ms = grace_ms, .ready_fd = ready[1],
					   .owner_uid = getuid() };
		pw_err *e = pw_scratch_host_run(&o);
		_exit(e ? 1 : 0);
	}
	close(ready[1]);
	struct pollfd p = { .fd = ready[0], .events = POLLIN };
	char byte = 0;
	bool up = poll(&p, 1, 10000) == 1 && read(ready[0], &byte, 1) == 1 && byte == 'R';
	close(ready[0]);
	*state = w;
	if (!up) /* no teardown follows a failed setup: stop our child here */
		teardown(state);
	return up ? 0 : -1;
}

static int setup(void **state)
{
	return start_world(state, 500);
}

static int teardown(void **state)
{
	world *w = *state;
	if (w->host > 0) {
		kill(w->host, SIGTERM);
		tl_wait_child(w->host);
	}
	tl_remove_tree(w->dir);
	free(w);
	return 0;
}

static pw_scratch_client *connect_to(const world *w)
{
	pw_scratch_connect_opts o = { .dir = w->dir };
	pw_scratch_client *c = NULL;
	pw_err *e = pw_scratch_connect(&o, &c);
	assert_null(e);
	assert_false(pw_scratch_started_host(c));
	return c;
}

static pw_scratch_result *run_with(pw_scratch_client *c, const char *session, const char *code,
				   const pw_cancel *cancel, int64_t timeout_ms, size_t max_output)
{
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .session = (char[65]){ 0 }, .code = code ? xstrdup(code) : NULL,
				   .python = xstrdup(python_path()), .project_dir = xstrdup(cwd), .env = environ,
				   .timeout_ms = timeout_ms, .max_output = max_output };
	strcpy(req.session, session);
	pw_scratch_result *r = NULL;
	pw_err *e = pw_scratch_run(c, &req, cancel, &r);
	if (e)
		fail_msg("run failed: %s", pw_err_message(e));
	free(req.code);
	free(req.python);
	free(req.project_dir);
	return r;
}

static pw_scratch_result *run(pw_scratch_client *c, const char *session, const char *code, const pw_cancel *cancel)
{
	return run_with(c, session, code, cancel, 0, 0);
}

static const char *state_in_list(pw_scratch_client *c, const char *session, char *buf, size_t n)
{
	pw_scratch_list *l = NULL;
	assert_null(pw_scratch_sessions(c, &l));
	snprintf(buf, n, "absent");
	for (size_t i = 0; i < l->count; i++)
		if (strcmp(l->sessions[i].name, session) == 0)
			snprintf(buf, n, "%s", l->sessions[i].state);
	pw_scratch_list_free(&l);
	return buf;
}

/* A raw connection to the host, as any same-uid program may open one. */
static int raw_connect(const world *w)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *path = xasprintf("%s/host.sock", w->dir);
	assert_true(strlen(path) < sizeof sa.sun_path);
	strcpy(sa.sun_path, path);
	free(path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

/* Send len bytes, then read one reply line (malloc'd), or NULL when the
 * host closed the connection (or said nothing within 10 s). */
static char *raw_exchange(int fd, const char *bytes, size_t len)
{
	assert_int_equal(send(fd, bytes, len, MSG_NOSIGNAL), (ssize_t)len);
	char buf[4096];
	size_t got = 0;
	while (got < sizeof buf - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 10000) != 1)
			return NULL;
		ssize_t n = read(fd, buf + got, 1);
		if (n <= 0)
			return NULL;
		if (buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = '\0';
	return xstrdup(buf);
}

static bool host_alive(const world *w)
{
	return waitpid(w->host, NULL, WNOHANG) == 0;
}

/* Item 17: any byte sequence gets an error reply or a closed connection,
 * and the host (with every session's state) lives on. */
static void test_garbage_lines_get_errors(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "g", "kept = 5", NULL);
	pw_scratch_result_free(&r);
#define L(s) { s, sizeof s - 1 }
	static const struct {
		const char *bytes;
		size_t len;
	} lines[] = {
		L("not json\n"),
		L("{\n"),
		L("\n"),
		L("[1,2]\n"),
		L("\"op\"\n"),
		L("{\"op\":7}\n"),
		L("{\"op\":\"run\"}\n"),
		L("\xff\xfe\x00garbage\n"),
		L("{\"op\":\"run\",\"session\":\"g\",\"code\":\"1\"}\n"),
	};
#undef L
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		int fd = raw_connect(w);
		char *reply = raw_exchange(fd, lines[i].bytes, lines[i].len);
		if (reply) { /* an error, never a result */
			assert_non_null(strstr(reply, "\"error\""));
			assert_non_null(strstr(reply, "malformed scratchpad request"));
		}
		free(reply);
		close(fd);
		assert_true(host_alive(w));
	}
	r = run(c, "g", "kept", NULL); /* the state survived */
	assert_string_equal(r->value, "5");
	assert_int_equal(r->notice_count, 0);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
}

/* Item 20: a session name that would forge lines in the record file or on
 * a terminal is refused by the host itself, not only by the CLI. */
static void test_hostile_session_names_refused(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	static const char *const names[] = { "a\\nsession forged 9", "t\\u001b]0;TITLE\\u0007", "x y",
					     "../up", "" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *line = xasprintf("{\"op\":\"run\",\"session\":\"%s\",\"code\":\"1\",\"python\":\"%s\","
				       "\"project_dir\":\"%s\"}\n", names[i], python_path(), cwd);
		int fd = raw_connect(w);
		char *reply = raw_exchange(fd, line, strlen(line));
		assert_non_null(reply);
		assert_non_null(strstr(reply, "\"error\""));
		free(reply);
		free(line);
		close(fd);
	}
	char *path = xasprintf("%s/sessions", w->dir);
	FILE *f = fopen(path, "r");
	free(path);
	assert_non_null(f);
	char text[4096] = "";
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_null(strstr(text, "forged"));
	assert_null(strstr(text, "TITLE"));
	pw_scratch_client *c = connect_to(w);
	pw_scratch_list *l = NULL;
	assert_null(pw_scratch_sessions(c, &l));
	for (size_t i = 0; i < l->count; i++)
		assert_true(pw_scratch_session_name_ok(l->sessions[i].name));
	pw_scratch_list_free(&l);
	pw_scratch_close(&c);
}

static void test_state_persists_across_clients(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "a", "x = 20", NULL);
	assert_string_equal(r->status, "ok");
	assert_null(r->value);
	assert_non_null(r->interp); /* a fresh worker names its interpreter */
	assert_non_null(r->interp->version);
	assert_int_equal(r->execution, 1);
	assert_int_equal(r->generation, 1);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);

	c = connect_to(w);
	r = run(c, "a", "print('hi'); x + 22", NULL);
	assert_string_equal(r->value, "42");
	assert_string_equal(r->out, "hi\n");
	assert_null(r->interp);
	assert_int_equal(r->execution, 2);
	assert_int_equal(pw_scratch_result_exit_status(r), 0);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
}

static void *raise_later(void *arg)
{
	tl_sleep_ms(400);
	pw_cancel_raise(arg);
	return NULL;
}

typedef struct raiser {
	pw_cancel *cancel;
	char *mark;
} raiser;

/* Raise the token once the cell runs: it makes the mark file first. */
static void *raise_when_marked(void *arg)
{
	raiser *ra = arg;
	for (int i = 0; i < 3000 && access(ra->mark, F_OK) != 0; i++)
		tl_sleep_ms(10);
	pw_cancel_raise(ra->cancel);
	return NULL;
}

static void test_cancel_token_interrupts_the_cell(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	raiser ra = { .cancel = pw_cancel_new() };
	ra.mark = xasprintf("%s/running", w->dir);
	char *code = xasprintf("open('%s', 'w').close()\nwhile True: pass", ra.mark);
	pthread_t t;
	pthread_create(&t, NULL, raise_when_marked, &ra);
	pw_scratch_result *r = run(c, "b", code, ra.cancel);
	pthread_join(t, NULL);
	free(code);
	free(ra.mark);
	assert_string_equal(r->status, "interrupted");
	assert_int_equal(r->execution, 1);
	assert_non_null(strstr(r->traceback, "KeyboardInterrupt"));
	assert_int_equal(pw_scratch_result_exit_status(r), 130);
	pw_scratch_result_free(&r);
	r = run(c, "b", "'alive'", NULL); /* the same worker goes on */
	assert_string_equal(r->value, "'alive'");
	assert_int_equal(r->notice_count, 0);
	pw_scratch_result_free(&r);
	pw_cancel_free(&ra.cancel);
	pw_scratch_close(&c);
}

/* Item 23: an interrupt that arrives while the session's worker is still
 * starting cancels the cell; the worker, once up, serves the next call
 * with nothing lost (it used to be killed by a SIGINT that came before
 * Python had its handler). */
static void test_cancel_before_the_worker_is_up(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_cancel *cancel = pw_cancel_new();
	pw_cancel_raise(cancel); /* the interrupt follows the request at once */
	pw_scratch_result *r = run(c, "early", "import time; time.sleep(30)", cancel);
	assert_string_equal(r->status, "interrupted");
	assert_int_equal(r->execution, 0); /* the cell never ran */
	assert_int_equal(pw_scratch_result_exit_status(r), 130);
	assert_int_equal(r->notice_count, 0);
	pw_scratch_result_free(&r);
	pw_cancel_free(&cancel);
	r = run(c, "early", "'up'", NULL);
	assert_string_equal(r->status, "ok");
	assert_string_equal(r->value, "'up'");
	assert_int_equal(r->notice_count, 0); /* no loss: the same, first worker */
	assert_int_equal(r->generation, 1);
	assert_int_equal(r->execution, 1);
	assert_non_null(r->interp);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
}

/* Wait (at most 10 s) until a file exists. */
static bool wait_file(const char *path)
{
	for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++)
		tl_sleep_ms(10);
	return access(path, F_OK) == 0;
}

/* A cell that leaves a task behind which, once the cell is answered, makes
 * the mark file and then holds the worker's loop for 3 s: the worker is up
 * and between cells, and reads nothing meanwhile. */
static char *hog_cell(const char *mark)
{
	return xasprintf("import asyncio, time\n"
			 "async def hog():\n"
			 "    await asyncio.sleep(0.2)\n"
			 "    open('%s', 'w').close()\n"
			 "    time.sleep(3)\n"
			 "t = asyncio.create_task(hog())\n"
			 "'set'",
			 mark);
}

/* Item 23, an idle worker: an interrupt that reaches a worker that is up
 * but has not read the cell it was sent yet cancels that cell: none of it
 * runs, the call answers interrupted with execution 0 (the number goes to
 * the next cell), and the worker and its state live on; through the host
 * and in direct mode alike. It used to be ignored (the worker was between
 * cells): the cell then ran to its end as if nobody had interrupted it,
 * or was killed, with the session's state, after the grace period. */
static void test_interrupt_before_an_idle_worker_reads_the_cell(void **state)
{
	(void)state;
	if (!python_path())
		skip();
	void *own = NULL;
	assert_int_equal(start_world(&own, 10000), 0); /* a grace period longer than the hog */
	world *w = own;
	pw_scratch_client *c = connect_to(w);
	for (int direct = 0; direct < 2; direct++) {
		char *mark = xasprintf("%s/hogging-%d", w->dir, direct);
		char *code = hog_cell(mark);
		pw_scratch_result *r = run(c, "idle", code, NULL);
		free(code);
		assert_string_equal(r->status, "ok");
		int64_t before = r->execution;
		pw_scratch_result_free(&r);
		assert_true(wait_file(mark));
		free(mark);
		pw_cancel *cancel = pw_cancel_new();
		pw_cancel_raise(cancel); /* the interrupt follows the cell at once */
		r = run(c, "idle", "ran = True", cancel);
		pw_cancel_free(&cancel);
		assert_string_equal(r->status, "interrupted");
		assert_int_equal(r->execution, 0);
		assert_int_equal(pw_scratch_result_exit_status(r), 130);
		assert_non_null(strstr(r->traceback, "none of it ran"));
		assert_int_equal(r->notice_count, 0);
		pw_scratch_result_free(&r);
		r = run(c, "idle", "'ran' in globals(), t.done()", NULL);
		assert_string_equal(r->status, "ok");
		assert_string_equal(r->value, "(False, True)");
		assert_int_equal(r->notice_count, 0); /* the same worker, nothing lost */
		assert_int_equal(r->generation, 1);
		assert_int_equal(r->execution, before + 1);
		pw_scratch_result_free(&r);
		if (!direct)
			assert_null(pw_scratch_lease(c, "idle")); /* the second round over the worker's own pipes */
	}
	assert_null(pw_scratch_release(c));
	pw_scratch_close(&c);
	teardown(&own);
}

static void test_list_discard_and_notice(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "d", "kept = 1", NULL);
	pw_scratch_result_free(&r);
	pw_scratch_list *l = NULL;
	assert_null(pw_scratch_sessions(c, &l));
	bool found = false;
	for (size_t i = 0; i < l->count; i++)
		if (strcmp(l->sessions[i].name, "d") == 0) {
			found = true;
			assert_string_equal(l->sessions[i].state, "idle");
			assert_true(l->sessions[i].pid > 0);
		}
	assert_true(found);
	assert_int_equal(l->host_pid, w->host);
	pw_scratch_list_free(&l);
	assert_null(pw_scratch_discard(c, "d"));
	r = run(c, "d", "'kept' in globals()", NULL);
	assert_string_equal(r->value, "False");
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "discarded");
	assert_int_equal(r->generation, 2);
	pw_scratch_result_free(&r);
	pw_err *e = pw_scratch_interrupt(c, "d"); /* idle: nothing to interrupt */
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	pw_err_free(e);
	pw_scratch_close(&c);
}

typedef struct waiter {
	const world *w;
	pw_scratch_result *r;
	long long done_ms;
} waiter;

static void *run_behind_lease(void *arg)
{
	waiter *wt = arg;
	pw_scratch_client *c = connect_to(wt->w);
	wt->r = run(c, "lent", "x * 100", NULL);
	wt->done_ms = tl_now_ms();
	pw_scratch_close(&c);
	return NULL;
}

/* Direct mode: the same results as through the host, the session's calls
 * from others wait for the lease, and the count carries on after it. */
static void test_direct_mode_results(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_err *e = pw_scratch_lease(c, "lent"); /* no worker yet */
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	pw_err_free(e);
	pw_scratch_result *r = run(c, "lent", "x = 1", NULL);
	assert_int_equal(r->execution, 1);
	pw_scratch_result_free(&r);
	assert_null(pw_scratch_lease(c, "lent"));
	pw_scratch_client *other = connect_to(w);
	char st[32];
	assert_string_equal(state_in_list(other, "lent", st, sizeof st), "leased");
	pw_scratch_close(&other);

	r = run(c, "lent", "x += 1; 40 + x", NULL);
	assert_string_equal(r->status, "ok");
	assert_string_equal(r->value, "42");
	assert_int_equal(r->execution, 2);
	assert_int_equal(r->generation, 1);
	assert_null(r->interp);
	assert_int_equal(r->notice_count, 0);
	pw_scratch_result_free(&r);
	r = run(c, "lent", "_", NULL);
	assert_string_equal(r->value, "42");
	pw_scratch_result_free(&r);
	r = run_with(c, "lent", "import os, sys; print('o' * 1000); os.write(2, b'direct\\n'); None", NULL, 0, 100);
	assert_int_equal(r->out_dropped, 1001 - 100);
	assert_non_null(strstr(r->err, "direct"));
	pw_scratch_result_free(&r);
	r = run(c, "lent", "1/0", NULL);
	assert_string_equal(r->status, "error");
	assert_non_null(strstr(r->traceback, "ZeroDivisionError"));
	assert_int_equal(pw_scratch_result_exit_status(r), 1);
	pw_scratch_result_free(&r);

	/* Another client's call waits until the lease comes back. */
	waiter wt = { .w = w };
	pthread_t t;
	pthread_create(&t, NULL, run_behind_lease, &wt);
	tl_sleep_ms(300);
	long long released_ms = tl_now_ms();
	assert_null(wt.r);
	assert_null(pw_scratch_release(c));
	pthread_join(t, NULL);
	assert_non_null(wt.r);
	assert_true(wt.done_ms >= released_ms);
	assert_string_equal(wt.r->value, "200");
	assert_int_equal(wt.r->execution, 6); /* 1 through the host, 4 direct, then this */
	pw_scratch_result_free(&wt.r);
	assert_string_equal(state_in_list(c, "lent", st, sizeof st), "idle");
	pw_scratch_close(&c);
}

typedef struct watch_log {
	int calls;
	long long first_ms;
} watch_log;

static void note_hand_over(void *arg)
{
	watch_log *log = arg;
	if (!log->calls++)
		log->first_ms = tl_now_ms();
}

static pw_scratch_result *run_watched(pw_scratch_client *c, const char *session, const char *code, int fd,
				      watch_log *log)
{
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .session = xstrdup(session), .code = xstrdup(code),
				   .python = xstrdup(python_path()), .project_dir = xstrdup(cwd), .env = environ,
				   .hand_over = note_hand_over, .hand_over_arg = log, .watch_fd = fd };
	pw_scratch_result *r = NULL;
	pw_err *e = pw_scratch_run(c, &req, NULL, &r);
	if (e)
		fail_msg("run failed: %s", pw_err_message(e));
	req.env = NULL;
	pw_scratch_request_clear(&req);
	return r;
}

typedef struct late_writer {
	int fd, after_ms;
} late_writer;

static void *write_late(void *arg)
{
	late_writer *lw = arg;
	tl_sleep_ms(lw->after_ms);
	assert_int_equal(write(lw->fd, "x", 1), 1);
	return NULL;
}

/* The caller's own input (the MCP server's stdin) is watched while a
 * leased cell runs: input that comes meanwhile is handed over at once, and
 * once only though it stays unread; without input nothing is handed over;
 * a call through the host hands over before it waits. */
static void test_direct_mode_hands_over_the_watched_input(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	int in[2];
	assert_int_equal(pipe(in), 0);
	pw_scratch_client *c = connect_to(w);
	watch_log log = { 0 };
	pw_scratch_result *r = run_watched(c, "watched", "x = 1", in[0], &log);
	assert_string_equal(r->status, "ok");
	assert_int_equal(log.calls, 1); /* through the host: handed over first */
	pw_scratch_result_free(&r);
	assert_null(pw_scratch_lease(c, "watched"));

	log = (watch_log){ 0 };
	r = run_watched(c, "watched", "x + 1", in[0], &log);
	assert_string_equal(r->value, "2");
	assert_int_equal(log.calls, 0); /* leased, no input: this thread read on */
	pw_scratch_result_free(&r);

	late_writer lw = { .fd = in[1], .after_ms = 150 };
	pthread_t t;
	long long start_ms = tl_now_ms();
	pthread_create(&t, NULL, write_late, &lw);
	r = run_watched(c, "watched", "import time; time.sleep(0.8); x + 2", in[0], &log);
	long long end_ms = tl_now_ms();
	pthread_join(t, NULL);
	assert_string_equal(r->value, "3");
	assert_int_equal(r->execution, 3); /* it ran in direct mode */
	assert_int_equal(log.calls, 1);    /* the byte stays unread: still once */
	assert_true(log.first_ms - start_ms >= 150);
	assert_true(end_ms - log.first_ms >= 500); /* during the cell, not after it */
	pw_scratch_result_free(&r);
	assert_null(pw_scratch_release(c));
	pw_scratch_close(&c);
	close(in[0]);
	close(in[1]);
}

/* Budgets and interrupts hold in direct mode, and a lost worker is told
 * in the result and again, through the host, in the next one. */
static void test_direct_mode_budget_interrupt_loss(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "lent2", "kept = 'yes'", NULL);
	pw_scratch_result_free(&r);
	assert_null(pw_scratch_lease(c, "lent2"));
	r = run_with(c, "lent2", "while True: pass", NULL, 300, 0);
	assert_string_equal(r->status, "timed_out");
	assert_int_equal(pw_scratch_result_exit_status(r), 4);
	pw_scratch_result_free(&r);
	pw_cancel *cancel = pw_cancel_new();
	pthread_t t;
	pthread_create(&t, NULL, raise_later, cancel);
	r = run(c, "lent2", "while True: pass", cancel);
	pthread_join(t, NULL);
	pw_cancel_free(&cancel);
	assert_string_equal(r->status, "interrupted");
	pw_scratch_result_free(&r);
	r = run(c, "lent2", "kept", NULL);
	assert_string_equal(r->value, "'yes'");
	pw_scratch_result_free(&r);
	/* A cell that ignores the interrupt: killed after the grace period. */
	r = run_with(c, "lent2", "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass",
		     NULL, 300, 0);
	assert_string_equal(r->status, "timed_out");
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "timeout_kill");
	pw_scratch_result_free(&r);
	r = run(c, "lent2", "'kept' in globals()", NULL); /* back through the host */
	assert_string_equal(r->value, "False");
	assert_int_equal(r->generation, 2);
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "timeout_kill");
	pw_scratch_result_free(&r);

	assert_null(pw_scratch_lease(c, "lent2"));
	r = run(c, "lent2", "import os; os._exit(3)", NULL);
	assert_string_equal(r->status, "lost");
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "worker_crashed");
	pw_scratch_result_free(&r);
	r = run(c, "lent2", "1", NULL);
	assert_string_equal(r->value, "1");
	assert_int_equal(r->generation, 3);
	assert_int_equal(r->execution, 1);
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "worker_crashed");
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
}

/* A leaseholder that dies without handing back: the host asks the worker
 * for its count, and the state and the numbering carry on. A discard
 * meanwhile reaches the leaseholder as a lost worker. */
static void test_direct_mode_abandoned_and_discarded(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "lent3", "y = 1", NULL);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
	pid_t child = fork();
	if (child == 0) {
		pw_scratch_connect_opts o = { .dir = w->dir };
		pw_scratch_client *cc = NULL;
		if (pw_scratch_connect(&o, &cc) || pw_scratch_lease(cc, "lent3"))
			_exit(1);
		for (int i = 0; i < 3; i++) {
			pw_scratch_result *rr = run(cc, "lent3", "y += 2", NULL);
			if (!rr || strcmp(rr->status, "ok") != 0)
				_exit(2);
			pw_scratch_result_free(&rr);
		}
		_exit(0); /* no release, no close */
	}
	assert_int_equal(tl_wait_child(child), 0);
	c = connect_to(w);
	r = run(c, "lent3", "y", NULL);
	assert_string_equal(r->value, "7");
	assert_int_equal(r->execution, 5);
	assert_int_equal(r->notice_count, 0);
	pw_scratch_result_free(&r);

	assert_null(pw_scratch_lease(c, "lent3"));
	pw_scratch_client *other = connect_to(w);
	assert_null(pw_scratch_discard(other, "lent3"));
	char st[32];
	assert_string_equal(state_in_list(other, "lent3", st, sizeof st), "leased");
	/* The leaseholder's next call finds the worker gone before sending:
	 * it hands the lease back and the host runs the call afresh. */
	r = run(c, "lent3", "'y' in globals()", NULL);
	assert_string_equal(r->status, "ok");
	assert_string_equal(r->value, "False");
	assert_int_equal(r->notice_count, 1);
	assert_string_equal(r->notices[0].kind, "discarded");
	pw_scratch_result_free(&r);
	r = run(other, "lent3", "2", NULL);
	assert_int_equal(r->notice_count, 0);
	assert_string_equal(state_in_list(other, "lent3", st, sizeof st), "idle");
	pw_scratch_result_free(&r);
	pw_scratch_close(&other);
	pw_scratch_close(&c);
}

static pw_scratch_result *reset_only(pw_scratch_client *c, const char *session)
{
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .session = xstrdup(session), .reset = true,
				   .python = xstrdup(python_path()), .project_dir = xstrdup(cwd) };
	pw_scratch_result *r = NULL;
	pw_err *e = pw_scratch_run(c, &req, NULL, &r);
	if (e)
		fail_msg("reset failed: %s", pw_err_message(e));
	pw_scratch_request_clear(&req);
	return r;
}

static int64_t worker_pid(pw_scratch_client *c, const char *session)
{
	pw_scratch_list *l = NULL;
	assert_null(pw_scratch_sessions(c, &l));
	int64_t pid = -1;
	for (size_t i = 0; i < l->count; i++)
		if (strcmp(l->sessions[i].name, session) == 0)
			pid = l->sessions[i].pid;
	pw_scratch_list_free(&l);
	return pid;
}

/* Item 22: a reset alone discards the state and starts no worker; the
 * notice comes with the next result, whose worker is new. */
static void test_reset_alone_starts_no_worker(void **state)
{
	world *w = *state;
	if (!python_path())
		skip();
	pw_scratch_client *c = connect_to(w);
	pw_scratch_result *r = run(c, "rs", "x = 1", NULL);
	pw_scratch_result_free(&r);
	int64_t old = worker_pid(c, "rs");
	assert_true(old > 1);
	r = reset_only(c, "rs");
	assert_string_equal(r->status, "reset");
	assert_int_equal(r->execution, 0);
	assert_int_equal(r->notice_count, 0);
	assert_int_equal(pw_scratch_result_exit_status(r), 0);
	pw_scratch_result_free(&r);
	char st[32];
	assert_string_equal(state_in_list(c, "rs", st, sizeof st), "no worker");
	assert_int_equal(worker_pid(c, "rs"), 0);
	assert_int_equal(kill((pid_t)old, 0), -1); /* the old worker is gone (and reaped) */
	r = reset_only(c, "rs"); /* again: still nothing starts */
	pw_scratch_result_free(&r);
	assert_int_equal(worker_pid(c, "rs"), 0);
	r = run(c, "rs", "'x' in globals()", NULL);
	assert_string_equal(r->value, "False");
	assert_true(r->notice_count >= 1);
	assert_string_equal(r->notices[0].kind, "reset");
	assert_int_equal(r->generation, 2);
	assert_non_null(r->interp);
	pw_scratch_result_free(&r);
	pw_scratch_close(&c);
}

static void test_no_host_and_no_autostart(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	assert_int_equal(tl_make_temp_dir(dir, sizeof dir, "scratch-empty"), 0);
	pw_scratch_connect_opts o = { .dir = dir };
	pw_scratch_client *c = NULL;
	pw_err *e = pw_scratch_connect(&o, &c);
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	assert_null(c);
	pw_err_free(e);
	tl_remove_tree(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_persists_across_clients),
		cmocka_unit_test(test_cancel_token_interrupts_the_cell),
		cmocka_unit_test(test_list_discard_and_notice),
		cmocka_unit_test(test_direct_mode_results),
		cmocka_unit_test(test_direct_mode_hands_over_the_watched_input),
		cmocka_unit_test(test_direct_mode_budget_interrupt_loss),
		cmocka_unit_test(test_direct_mode_abandoned_and_discarded),
		cmocka_unit_test(test_no_host_and_no_autostart),
		cmocka_unit_test(test_cancel_before_the_worker_is_up),
		cmocka_unit_test(test_interrupt_before_an_idle_worker_reads_the_cell),
		cmocka_unit_test(test_reset_alone_starts_no_worker),
		cmocka_unit_test(test_hostile_session_names_refused),
		cmocka_unit_test(test_garbage_lines_get_errors),
	};
	return cmocka_run_group_tests_name("scratch_client", tests, setup, teardown);
}
