/* The `execute_code` tool: one run in the managed runtime, output captured. */
#include "config.h"

#include "mcp/tools.h"

#include "ops/op_exec.h"
#include "ops/op_runtime.h"

#include "xalloc.h"

#include <stdlib.h>

/* No runtime: say how the human provisions it and how big it is. */
static pw_err *not_provisioned(const pw_ops_ctx *ctx, pw_err *e)
{
	pw_runtime_request rq = { 0 };
	pw_op_runtime_status_result st = { 0 };
	pw_err *se = pw_op_runtime_status(ctx, &rq, &st);
	char *what = !se && st.pin ? (st.pin->size > 0 ? xasprintf("CPython %s, a %.1f MB download", st.pin->version,
								       (double)st.pin->size / 1e6)
							: xasprintf("CPython %s", st.pin->version))
				   : xstrdup("the pinned CPython");
	pw_err *n = pw_err_new(PW_ERR_REFUSED,
			       "ask the human to run 'pyward runtime install' (it shows what it downloads and asks), or "
			       "call runtime_install, which asks them through the client",
			       "execute_code runs only in pyward's managed runtime (%s), which is not provisioned here: %s",
			       what, pw_err_message(e));
	free(what);
	pw_err_free(se);
	pw_op_runtime_status_clear(&st);
	pw_err_free(e);
	return n;
}

static void run_exec(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "execute_code", args, NULL, &ctx);
	json_t *t = json_object_get(args, "timeout_s");
	ctx.timeout = t ? json_number_value(t) : ctx.timeout > 0 ? ctx.timeout : 60;
	const char *code = json_string_value(json_object_get(args, "code"));
	const char *argv[] = { "-c", code, NULL };
	pw_op_exec_request rq = { .args = argv, .cap_bytes = 256 * 1024 };
	pw_op_io io = { .cancel = pw_mcp_call_cancel(call) };
	pw_op_exec_result r = { 0 };
	pw_err *e = pw_op_exec(&ctx, &rq, &io, &r);
	if (e && !r.python)
		e = not_provisioned(&ctx, e);
	if (e) {
		pw_mcp_tool_fail(out, e);
	} else {
		out->structured = pw_op_exec_json(&r);
		out->is_error = pw_op_exec_exit_status(&r) != 0;
	}
	pw_op_exec_clear(&r);
}

const pw_mcp_tool pw_mcp_tool_execute_code = {
	.name = "execute_code",
	.title = "Run code once in the managed runtime",
	.description = "Run a Python snippet once in a fresh process of pyward's managed runtime: scrubbed "
		       "environment, the workspace as its folder, a hard timeout (timeout_s, default 60) that kills "
		       "the whole process group. No state is kept (use the python tool for that) and there is no "
		       "fallback to another Python: without the runtime the error says how the human installs it.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"code\"], \"properties\": {"
			"\"code\": {\"type\": \"string\"},"
			"\"timeout_s\": {\"type\": \"number\", \"minimum\": 0.1, \"maximum\": 86400}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"status\", \"exit_code\", \"stdout\", \"stderr\"],"
			 " \"properties\": {\"status\": {\"type\": \"string\", \"enum\": [\"exited\", \"signalled\","
			 " \"timed-out\", \"cancelled\"]}, \"exit_code\": {\"type\": [\"integer\", \"null\"]},"
			 " \"signal\": {\"type\": [\"integer\", \"null\"]}, \"stdout\": {\"type\": [\"string\", \"null\"]},"
			 " \"stderr\": {\"type\": [\"string\", \"null\"]}, \"duration_ms\": {\"type\": \"integer\"}}}",
	.read_only = false,
	.destructive = false,
	.idempotent = false,
	.open_world = true,
	.run = run_exec,
};
