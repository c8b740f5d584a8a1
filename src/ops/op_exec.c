/* exec: see op_exec.h. */
#include "config.h"

#include "ops/op_exec.h"

#include "ops/json.h"

#include "clock.h"
#include "i18n.h"
#include "runtime.h"
#include "runtime_fixup.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Which of args is the script file the interpreter will run, or -1 for
 * -c, -m and '-' (standard input). Interpreter options may come first;
 * -W and -X take a value. */
static long script_index(const char *const *args)
{
	for (long i = 0; args && args[i]; i++) {
		const char *s = args[i];
		if (strcmp(s, "-") == 0 || strncmp(s, "-c", 2) == 0 || strncmp(s, "-m", 2) == 0)
			return -1;
		if (s[0] != '-')
			return i;
		if ((strcmp(s, "-W") == 0 || strcmp(s, "-X") == 0) && args[i + 1])
			i++;
	}
	return -1;
}

pw_err *pw_op_exec(const pw_ops_ctx *ctx, const pw_op_exec_request *rq, const pw_op_io *io, pw_op_exec_result *r)
{
	r->python = NULL;
	r->run = NULL;
	r->budget = ctx->timeout;
	/* A script can write anywhere its user can: refused in read-only mode. */
	pw_err *e = pw_ops_require_write(ctx, _("running a script"));
	/* The file comes from inside the allowed roots (links followed). */
	long at = script_index(rq->args);
	char *script = NULL;
	if (!e && at >= 0)
		e = pw_guard_resolve(ctx->guard, rq->args[at], &script);
	if (!e)
		e = pw_runtime_python(ctx->box_root, &r->python);
	if (e) {
		free(script);
		return e;
	}
	size_t n = 0;
	while (rq->args && rq->args[n])
		n++;
	const char **av = xcalloc(n + 2, sizeof *av);
	av[0] = r->python;
	for (size_t i = 0; i < n; i++)
		av[i + 1] = rq->args[i];
	if (script)
		av[at + 1] = script; /* the confined, symlink-free path */
	/* the runtime's bundled terminfo when the system has none for $TERM */
	char *current = xasprintf("%s/runtime/python/current", ctx->box_root);
	char *terminfo = pw_runtime_terminfo_env(current, getenv("TERM"));
	free(current);
	const char *env_add[] = { "PYTHONIOENCODING=utf-8", "PYTHONNOUSERSITE=1", terminfo, NULL };
	pw_run_opts o = {
		.argv = av, .cwd = ctx->workspace, .env_add = env_add,
		.deadline_ms = pw_clock_deadline_after(ctx->timeout), .cancel = io ? io->cancel : NULL,
		.cap_bytes = rq->cap_bytes, .stdin_path = rq->stdin_path, .on_line = rq->on_line, .ud = rq->line_ud,
	};
	e = pw_run(&o, &r->run);
	free(av);
	free(terminfo);
	free(script);
	return e;
}

static const char *status_name(pw_run_status s)
{
	switch (s) {
	case PW_RUN_EXITED: return "exited";
	case PW_RUN_SIGNALLED: return "signalled";
	case PW_RUN_TIMED_OUT: return "timed-out";
	case PW_RUN_CANCELLED: return "cancelled";
	}
	return "exited";
}

json_t *pw_op_exec_json(const pw_op_exec_result *r)
{
	const pw_run_result *x = r->run;
	pw_run_status st = pw_run_result_status(x);
	return json_pack("{s:i,s:o,s:s,s:o,s:o,s:I,s:o,s:o,s:{s:I,s:I},s:o}", "schema", 1, "python",
			 pw_json_str(r->python), "status", status_name(st), "exit_code",
			 st == PW_RUN_EXITED ? json_integer(pw_run_result_exit_code(x)) : json_null(), "signal",
			 st == PW_RUN_SIGNALLED ? json_integer(pw_run_result_signal(x)) : json_null(), "duration_ms",
			 (json_int_t)pw_run_result_duration_ms(x), "stdout",
			 pw_json_str(pw_run_result_output(x, PW_STREAM_STDOUT)), "stderr",
			 pw_json_str(pw_run_result_output(x, PW_STREAM_STDERR)), "truncated", "stdout",
			 (json_int_t)pw_run_result_dropped_bytes(x, PW_STREAM_STDOUT), "stderr",
			 (json_int_t)pw_run_result_dropped_bytes(x, PW_STREAM_STDERR), "budget_s",
			 r->budget > 0 ? json_real(r->budget) : json_null());
}

int pw_op_exec_exit_status(const pw_op_exec_result *r)
{
	switch (pw_run_result_status(r->run)) {
	case PW_RUN_EXITED: return pw_run_result_exit_code(r->run);
	case PW_RUN_SIGNALLED: return 128 + pw_run_result_signal(r->run);
	case PW_RUN_TIMED_OUT: return PW_EXIT_TIMEOUT;
	case PW_RUN_CANCELLED: return PW_EXIT_INTERRUPTED;
	}
	return PW_EXIT_FAILED;
}

void pw_op_exec_clear(pw_op_exec_result *r)
{
	pw_run_result_free(&r->run);
	free(r->python);
	r->python = NULL;
}
