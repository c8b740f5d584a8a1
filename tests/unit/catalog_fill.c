/*
 * Test helper: fill a catalog through the core API with a known history,
 * so the CLI's history command can be checked against it.
 * Usage: catalog_fill CATALOG_PATH [EXTRA_OPERATIONS]
 * (extra operations, one attempt each, are for the benchmarks)
 */
#include "config.h"

#include "catalog.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(pw_err *e)
{
	fprintf(stderr, "catalog_fill: %s\n", pw_err_message(e));
	pw_err_free(e);
	return 1;
}

static pw_err *add_attempt(pw_catalog *c, int64_t op, const char *index, const char *proxy,
			   int code, const char *klass, const char *tail)
{
	pw_attempt_rec a = {
		.operation_id = op, .index_url = (char *)(uintptr_t)index,
		.proxy = (char *)(uintptr_t)proxy,
		.argv = (char *)(uintptr_t)"/ws/.venv/bin/python -m pip install requests",
		.exit_code = code, .klass = (char *)(uintptr_t)klass,
		.started_at = (char *)(uintptr_t)"2026-12-02T10:00:01.000Z",
		.duration_ms = 1500, .output_tail = (char *)(uintptr_t)tail,
	};
	return pw_catalog_attempt_add(c, &a);
}

/* A pid that surely does not exist any more: a child we already reaped. */
static pid_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

static pw_err *fill(pw_catalog *c)
{
	int64_t id;
	pw_op_start s1 = { .kind = "runtime.install", .target = "3.12.13", .args = "pyward runtime install" };
	pw_err *e = pw_catalog_op_begin(c, &s1, &id);
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	pw_op_start s2 = { .kind = "venv.install", .target = "/ws/.venv", .args = "pyward venv install requests" };
	if (!e)
		e = pw_catalog_op_begin(c, &s2, &id);
	if (!e)
		e = add_attempt(c, id, NULL, NULL, 1, "network", "ConnectionError: refused");
	if (!e)
		e = add_attempt(c, id, "https://mirror.example/simple", NULL, 1, "network", "timed out");
	if (!e)
		e = add_attempt(c, id, "https://mirror.example/simple", "http://127.0.0.1:3128", 0, "ok",
				"Successfully installed requests");
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	pw_op_start s3 = { .kind = "venv.create", .target = "/ws/100%_café", .args = "pyward venv create" };
	if (!e)
		e = pw_catalog_op_begin(c, &s3, &id);
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_TIMED_OUT, "the 30 s budget ran out during pip");
	pw_actor gone;
	pw_catalog_actor_current(&gone);
	gone.pid = dead_pid();
	pw_op_start s4 = { .kind = "runtime.verify", .target = "current", .args = "pyward runtime verify",
			   .actor = &gone };
	if (!e)
		e = pw_catalog_op_begin(c, &s4, &id);
	return e;
}

static pw_err *fill_many(pw_catalog *c, long n)
{
	pw_err *e = NULL;
	for (long i = 0; !e && i < n; i++) {
		char target[32];
		snprintf(target, sizeof target, "/ws/env%ld", i);
		pw_op_start s = { .kind = "venv.install", .target = target, .args = "pyward venv install x" };
		int64_t id;
		e = pw_catalog_op_begin(c, &s, &id);
		if (!e)
			e = add_attempt(c, id, NULL, NULL, 0, "ok", "Successfully installed x");
		if (!e)
			e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	}
	return e;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: catalog_fill CATALOG_PATH [EXTRA_OPERATIONS]\n");
		return 2;
	}
	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(argv[1], PW_CATALOG_READ_WRITE, &c);
	if (e)
		return fail(e);
	e = fill(c);
	if (!e && argc == 3)
		e = fill_many(c, strtol(argv[2], NULL, 10));
	pw_catalog_close(&c);
	return e ? fail(e) : 0;
}
