/* The runtime tools: runtime_status and runtime_install (consent from a human only). */
#include "config.h"

#include "mcp/tools.h"

#include "ops/op_runtime.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static void run_status(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "runtime_status", args, NULL, &ctx);
	pw_runtime_request rq = { 0 };
	pw_op_runtime_status_result r = { 0 };
	pw_err *e = pw_op_runtime_status(&ctx, &rq, &r);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_runtime_status_json(&r);
	pw_op_runtime_status_clear(&r);
}

const pw_mcp_tool pw_mcp_tool_runtime_status = {
	.name = "runtime_status",
	.title = "Managed runtime: status",
	.description = "What pyward's managed CPython is: installed or not, its version and path, and the pinned "
		       "archive an install would take (version, size, SHA256). Read only.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"state\"], \"properties\": {"
			 "\"state\": {\"type\": \"string\"}, \"version\": {\"type\": [\"string\", \"null\"]},"
			 " \"python\": {\"type\": [\"string\", \"null\"]},"
			 " \"pinned_version\": {\"type\": [\"string\", \"null\"]},"
			 " \"pinned_size\": {\"type\": [\"integer\", \"null\"]}}}",
	.read_only = true,
	.destructive = false,
	.idempotent = true,
	.open_world = false,
	.run = run_status,
};

/* ---------------------------------------------------------------- install */

typedef struct consent_state {
	pw_mcp_call *call;
	bool operator_consent;
	bool could_not_ask;
	char *statement;  /* what the consent showed, for a refusal's message */
} consent_state;

static char *statement_of(const pw_consent *what)
{
	size_t len = strlen(what->heading) + 2;
	for (size_t i = 0; i < what->line_count; i++)
		len += strlen(what->lines[i]) + 3;
	char *s = xmalloc(len + 1);
	char *p = s + sprintf(s, "%s", what->heading);
	for (size_t i = 0; i < what->line_count; i++)
		p += sprintf(p, "\n  %s", what->lines[i]);
	return s;
}

static pw_consent_answer ask_human(const pw_consent *what, void *ud)
{
	consent_state *st = ud;
	free(st->statement);
	st->statement = statement_of(what);
	if (st->operator_consent)
		return PW_CONSENT_YES;
	if (pw_mcp_call_version(st->call) >= PW_MCP_2026_07_28 || !pw_mcp_call_can_elicit(st->call)) {
		st->could_not_ask = true;
		return PW_CONSENT_CANNOT_ASK;
	}
	char *message = xasprintf("%s\n%s", st->statement, what->question);
	json_t *schema = json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:b}}}", "type", "object", "properties", "install",
				   "type", "boolean", "title", "Install", "description",
				   "Leave it on and accept to install; decline to refuse.", "default", 1);
	json_t *content = NULL;
	pw_mcp_elicit_action a = pw_mcp_call_elicit(st->call, message, schema, &content);
	bool yes = a == PW_MCP_ELICIT_ACCEPT && !json_is_false(json_object_get(content, "install"));
	json_decref(content);
	json_decref(schema);
	free(message);
	return yes ? PW_CONSENT_YES : PW_CONSENT_NO;
}

static void run_install(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	const pw_mcp_opts *o = pw_mcp_call_opts(call);
	consent_state st = { .call = call, .operator_consent = o->allow_runtime_install };
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "runtime_install", args,
			st.operator_consent ? "(consent: the operator's, pyward mcp --allow-runtime-install)"
					    : "(consent: asked of the human through the client)", &ctx);
	pw_runtime_request rq = { .version = json_string_value(json_object_get(args, "version")) };
	pw_events ev = pw_mcp_call_events(call);
	pw_op_io io = { .events = &ev, .consent = ask_human, .consent_ud = &st, .cancel = pw_mcp_call_cancel(call) };
	pw_op_runtime_install_result r = { 0 };
	pw_err *e = pw_op_runtime_install(&ctx, &rq, &io, &r);
	if (e && st.could_not_ask) {
		pw_err *n = pw_err_new(PW_ERR_REFUSED,
				       "ask the human to run 'pyward runtime install' in a terminal (it shows the same and "
				       "asks), or to start the server with 'pyward mcp --allow-runtime-install'",
				       "installing the runtime needs a human's consent, and this client cannot ask for it "
				       "(no elicitation). %s", st.statement ? st.statement : "");
		pw_err_free(e);
		e = n;
	}
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_runtime_install_json(&rq, &r);
	pw_op_runtime_install_clear(&r);
	free(st.statement);
}

const pw_mcp_tool pw_mcp_tool_runtime_install = {
	.name = "runtime_install",
	.title = "Managed runtime: install",
	.description = "Download, verify (pinned SHA256) and install pyward's managed CPython. It needs a human's "
		       "consent: the client shows them what, from where, how big and where to, and installs only "
		       "when they accept. Never answer that question yourself. Long: reports progress.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
			"\"version\": {\"type\": \"string\", \"description\": \"a pinned version (default: the newest pin)\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"result\", \"version\", \"path\"], \"properties\": {"
			 "\"result\": {\"type\": \"string\"}, \"version\": {\"type\": \"string\"},"
			 " \"path\": {\"type\": \"string\"}, \"operation\": {\"type\": \"integer\"}}}",
	.read_only = false,
	.destructive = false,
	.idempotent = true,
	.open_world = true,
	.run = run_install,
};
