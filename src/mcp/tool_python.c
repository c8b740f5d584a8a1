/* The `python` tool: the persistent scratchpad, one session per connection. */
#include "config.h"

#include "mcp/fastcall.h"
#include "mcp/pads.h"
#include "mcp/rpc.h"
#include "mcp/tools.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* What the agent can do when there is no interpreter (the scratchpad
 * operation's refusals otherwise name CLI options). */
static const pw_op_scratch_hints hints = {
	.no_python = "ask the human to install the managed runtime (the runtime_install tool asks them), "
		     "or pass venv: the path of a virtual environment",
	.not_venv = "create one with the pyenv_create tool",
};

/* The session named, or the connection's own one. */
void *pw_mcp_python_admit(pw_mcp_call *call, const char *named)
{
	if (named && !pw_op_scratch_session_ok(named))
		return NULL; /* refused in run */
	char *own = pw_mcp_pads_own_session(pw_mcp_call_opts(call)->ctx->workspace);
	pw_mcp_pad_ticket *t = pw_mcp_pads_queue(named ? named : own);
	free(own);
	return t;
}

static void *admit_python(pw_mcp_call *call, const json_t *args)
{
	return pw_mcp_python_admit(call, json_string_value(json_object_get(args, "session")));
}

static void forget_python(void *admitted)
{
	if (admitted)
		pw_mcp_pads_drop(admitted);
}

/* The result's text as the response, sent as soon as the worker replied
 * (the call ends without another answer: see run_tool). */
static bool answer_early(void *arg, const char *text, size_t len, bool error)
{
	pw_mcp_call *call = arg;
	char *head = pw_rpc_result_head(pw_mcp_call_id(call));
	size_t n = 0;
	char *line = head ? pw_mcp_text_result_line(head, text, len, pw_mcp_call_version(call), error, &n) : NULL;
	free(head);
	if (!line)
		return false;
	pw_mcp_call_send_line(call, line, n);
	free(line);
	return true;
}

void pw_mcp_python_run(pw_mcp_call *call, const pw_mcp_python_args *a, void *admitted, pw_mcp_tool_result *out)
{
	const pw_ops_ctx *o = pw_mcp_call_opts(call)->ctx;
	const char *code = a->code, *session = a->session;
	bool reset = a->reset;
	pw_err *e = NULL;
	if (session && !pw_op_scratch_session_ok(session))
		e = pw_err_new(PW_ERR_USAGE, "use 1 to 64 of A-Z a-z 0-9 . _ -", "session name '%s'", session);
	if (!e && !*code && !reset)
		e = pw_err_new(PW_ERR_USAGE, "give code, or reset: true", "no code to run");
	if (e) {
		forget_python(admitted);
		pw_mcp_tool_fail(out, e);
		return;
	}
	char *own = pw_mcp_pads_own_session(o->workspace);
	pw_op_scratch_request rq = {
		.code = code, .reset = reset, .venv = a->venv,
		.lease = !session || strcmp(session, own) == 0, .hints = &hints,
		.hand_over = a->hand_over, .hand_over_arg = a->hand_over_arg, .watch_fd = a->watch_fd,
	};
	/* one response line, in a revision whose results carry nothing more */
	if (!pw_mcp_call_batched(call) && !pw_mcp_is_stateless(pw_mcp_call_version(call))) {
		rq.answer = answer_early;
		rq.answer_arg = call;
	}
	pw_op_scratch_result r = { 0 };
	e = pw_mcp_pads_run(admitted, o, &rq, pw_mcp_call_cancel(call), &r);
	free(own);
	if (e) {
		pw_op_scratch_clear(&r);
		pw_mcp_tool_fail(out, e);
		return;
	}
	out->answered = r.cell->answered;
	if (!out->answered)
		out->text = pw_op_scratch_json_text(&r); /* the bytes of pw_op_scratch_json, written directly */
	out->is_error = strcmp(r.cell->status, "ok") != 0 && strcmp(r.cell->status, "reset") != 0;
	pw_op_scratch_clear(&r);
}

static void run_python(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	pw_mcp_python_args a = {
		.code = json_string_value(json_object_get(args, "code")),
		.venv = json_string_value(json_object_get(args, "venv")),
		.session = json_string_value(json_object_get(args, "session")),
		.reset = json_is_true(json_object_get(args, "reset")),
	};
	pw_mcp_python_run(call, &a, admitted, out);
}

const pw_mcp_tool pw_mcp_tool_python = {
	.name = "python",
	.title = "Python scratchpad",
	.description =
		"Run Python code in a persistent interpreter (a scratchpad): variables, imports and `_` survive "
		"between calls of the same session, and top-level await works. The value of the last expression "
		"comes back as `value`, with stdout, stderr and a traceback. Every loss of state (the worker was "
		"restarted, evicted, reset or killed) is reported in `notices` before anything else: when a "
		"notice is there, earlier variables are gone. One session per connection unless you name one. "
		"Use it for quick computation, inspecting data and trying things out; run project commands, "
		"test suites, servers and other long-running work in the shell instead.",
	.input_schema = PW_MCP_PYTHON_INPUT_SCHEMA, /* the fast path's scanner follows it */
	.output_schema =
		"{\"type\": \"object\","
		" \"required\": [\"notices\", \"session\", \"status\", \"execution\", \"generation\", \"stdout\","
		" \"stderr\", \"truncated\"],"
		" \"properties\": {"
		"  \"notices\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": [\"kind\", \"message\"],"
		"   \"properties\": {\"kind\": {\"type\": \"string\"}, \"message\": {\"type\": \"string\"}}}},"
		"  \"session\": {\"type\": \"string\"},"
		"  \"status\": {\"type\": \"string\", \"enum\": [\"ok\", \"error\", \"interrupted\", \"timed_out\","
		" \"lost\", \"reset\"]},"
		"  \"execution\": {\"type\": \"integer\"}, \"generation\": {\"type\": \"integer\"},"
		"  \"value\": {\"type\": [\"string\", \"null\"]}, \"traceback\": {\"type\": [\"string\", \"null\"]},"
		"  \"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"},"
		"  \"truncated\": {\"type\": \"object\", \"properties\": {\"stdout\": {\"type\": \"integer\"},"
		" \"stderr\": {\"type\": \"integer\"}}},"
		"  \"interpreter\": {\"type\": [\"object\", \"null\"]},"
		"  \"duration_ms\": {\"type\": \"integer\"}}}",
	.read_only = false,
	.destructive = false,
	.idempotent = false,
	.open_world = false,
	.admit = admit_python,
	.forget = forget_python,
	.run = run_python,
};
