/* The runtime tools: runtime_status and runtime_install (consent from a human only). */
#include "config.h"

#include "mcp/tools.h"

#include "ops/op_runtime.h"

#include "xalloc.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

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
	bool input_required;   /* 2026-07-28: ask through an input_required result */
	char *statement;       /* what the consent showed, for a refusal's message */
	char *question;
} consent_state;

/* ---- 2026-07-28 (basic/patterns/mrtr): the consent travels as an
 * input_required result and comes back with the retry. The requestState
 * is attacker-controlled input, so it carries an HMAC (a key made at
 * start) over the statement, the client's name and an expiry: an answer
 * counts only for the same statement, the same client, within 10 minutes. */

static unsigned char state_key[32];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
	if (RAND_bytes(state_key, sizeof state_key) != 1)
		abort(); /* no randomness: refuse to sign anything */
}

static char *state_mac(const char *statement, const char *client, long long expiry)
{
	pthread_once(&key_once, make_key);
	char *msg = xasprintf("%lld\n%s\n%s", expiry, client, statement);
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	HMAC(EVP_sha256(), state_key, sizeof state_key, (const unsigned char *)msg, strlen(msg), mac, &len);
	free(msg);
	char *hex = xmalloc(2 * len + 1);
	for (unsigned int i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", mac[i]);
	return hex;
}

static char *state_make(const char *statement, const char *client)
{
	long long expiry = (long long)time(NULL) + 600;
	char *mac = state_mac(statement, client, expiry);
	char *s = xasprintf("v1.%lld.%s", expiry, mac);
	free(mac);
	return s;
}

static bool state_valid(const char *state, const char *statement, const char *client)
{
	long long expiry = 0;
	int used = 0;
	if (!state || sscanf(state, "v1.%lld.%n", &expiry, &used) != 1 || used == 0 || expiry < (long long)time(NULL))
		return false;
	char *mac = state_mac(statement, client, expiry);
	bool ok = strlen(state + used) == strlen(mac) && CRYPTO_memcmp(state + used, mac, strlen(mac)) == 0;
	free(mac);
	return ok;
}

static json_t *consent_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:b}}}", "type", "object", "properties", "install", "type",
			 "boolean", "title", "Install", "description",
			 "Leave it on and accept to install; decline to refuse.", "default", 1);
}

/* The answer a retry carries: yes, no, or none (ask again). */
static pw_consent_answer modern_answer(consent_state *st)
{
	const json_t *params = pw_mcp_call_params(st->call);
	const char *state = json_string_value(json_object_get(params, "requestState"));
	const json_t *answer = json_object_get(json_object_get(params, "inputResponses"), "consent");
	if (!answer || !state_valid(state, st->statement, pw_mcp_call_client_name(st->call)))
		return PW_CONSENT_CANNOT_ASK;
	const char *action = json_string_value(json_object_get(answer, "action"));
	if (action && strcmp(action, "accept") == 0 &&
	    !json_is_false(json_object_get(json_object_get(answer, "content"), "install")))
		return PW_CONSENT_YES;
	return PW_CONSENT_NO;
}

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
	free(st->question);
	st->question = xstrdup(what->question);
	if (st->operator_consent)
		return PW_CONSENT_YES;
	if (!pw_mcp_call_can_elicit(st->call)) {
		st->could_not_ask = true;
		return PW_CONSENT_CANNOT_ASK;
	}
	if (pw_mcp_call_version(st->call) >= PW_MCP_2026_07_28) {
		pw_consent_answer a = modern_answer(st);
		st->input_required = a == PW_CONSENT_CANNOT_ASK;
		return a == PW_CONSENT_CANNOT_ASK ? PW_CONSENT_NO : a;
	}
	char *message = xasprintf("%s\n%s", st->statement, what->question);
	json_t *schema = consent_schema();
	json_t *content = NULL;
	pw_mcp_elicit_action a = pw_mcp_call_elicit(st->call, message, schema, &content);
	bool yes = a == PW_MCP_ELICIT_ACCEPT && !json_is_false(json_object_get(content, "install"));
	json_decref(content);
	json_decref(schema);
	free(message);
	return yes ? PW_CONSENT_YES : PW_CONSENT_NO;
}

/* A 2026-07-28 request from a client that can be asked: make the plan as
 * the install would (nothing downloaded, nothing recorded) and check the
 * answer the request carries against its statement. *asking: no valid
 * answer, so the reply is input_required. Returns true when *planned holds
 * a plan for the install to take (so the statement it asks about is the
 * one that was signed). A plan that cannot be made leaves it to the
 * install, which records that failure. */
static bool modern_round(pw_mcp_call *call, const pw_ops_ctx *ctx, consent_state *st, pw_runtime_request *rq,
			 pw_op_runtime_install_result *planned, bool *asking)
{
	*asking = false;
	if (st->operator_consent || !pw_mcp_call_can_elicit(call) || pw_mcp_call_version(call) < PW_MCP_2026_07_28)
		return false;
	rq->plan_only = true;
	pw_err *e = pw_op_runtime_install(ctx, rq, NULL, planned);
	rq->plan_only = false;
	if (e) {
		pw_err_free(e);
		return false;
	}
	char *lines[PW_OP_INSTALL_CONSENT_LINES];
	pw_consent what;
	pw_op_runtime_install_consent(rq, &planned->plan, lines, &what);
	free(st->statement);
	st->statement = statement_of(&what);
	free(st->question);
	st->question = xstrdup(what.question);
	for (size_t i = 0; i < what.line_count; i++)
		free(lines[i]);
	*asking = modern_answer(st) == PW_CONSENT_CANNOT_ASK;
	st->input_required = *asking;
	return true;
}

static void run_install(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	const pw_mcp_opts *o = pw_mcp_call_opts(call);
	consent_state st = { .call = call, .operator_consent = o->allow_runtime_install };
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "runtime_install", args,
			st.operator_consent	       ? "(consent: the operator's, pyward mcp --allow-runtime-install)"
			: pw_mcp_call_can_elicit(call) ? "(consent: asked of the human through the client)"
						       : "(consent: this client cannot ask a human)", &ctx);
	pw_runtime_request rq = { .version = json_string_value(json_object_get(args, "version")),
				  .no_baseline = json_is_false(json_object_get(args, "baseline")) };
	/* 2026-07-28: a request without a valid answer is a question, not an
	 * operation: the plan alone, then input_required, nothing recorded.
	 * Only the retry carrying the human's answer is the install (DESIGN.md,
	 * "Consent in the catalog"). */
	pw_op_runtime_install_result planned = { 0 };
	bool asking = false;
	if (modern_round(call, &ctx, &st, &rq, &planned, &asking)) {
		rq.plan = &planned.plan;
	}
	pw_events ev = pw_mcp_call_events(call);
	pw_op_io io = { .events = &ev, .consent = ask_human, .consent_ud = &st, .cancel = pw_mcp_call_cancel(call),
			.cannot_ask = "the agent's client cannot ask a human (it has no elicitation)" };
	pw_op_runtime_install_result r = { 0 };
	pw_err *e = asking ? pw_err_new(PW_ERR_REFUSED, NULL, "input required")
			   : pw_op_runtime_install(&ctx, &rq, &io, &r);
	if (e && st.could_not_ask) {
		pw_err *n = pw_err_new(PW_ERR_REFUSED,
				       "ask the human to run 'pyward runtime install' in a terminal (it shows the same and "
				       "asks), or to start the server with 'pyward mcp --allow-runtime-install'",
				       "installing the runtime needs a human's consent, and this client cannot ask for it "
				       "(no elicitation). %s", st.statement ? st.statement : "");
		pw_err_free(e);
		e = n;
	}
	if (e && st.input_required) {
		/* schema.ts InputRequiredResult: the elicitation, and the state the retry echoes */
		char *message = xasprintf("%s\n%s", st.statement, st.question ? st.question : "");
		json_t *req = json_pack("{s:s, s:{s:s, s:s, s:o}}", "method", "elicitation/create", "params", "mode",
					"form", "message", message, "requestedSchema", consent_schema());
		char *token = state_make(st.statement, pw_mcp_call_client_name(call));
		out->raw = json_pack("{s:s, s:{s:o}, s:s}", "resultType", "input_required", "inputRequests", "consent", req,
				     "requestState", token);
		free(token);
		free(message);
		pw_err_free(e);
	} else if (e) {
		pw_mcp_tool_fail(out, e);
	} else {
		out->structured = pw_op_runtime_install_json(&rq, &r);
	}
	pw_op_runtime_install_clear(&r);
	pw_op_runtime_install_clear(&planned);
	free(st.statement);
	free(st.question);
}

const pw_mcp_tool pw_mcp_tool_runtime_install = {
	.name = "runtime_install",
	.title = "Managed runtime: install",
	.description = "Download, verify (pinned SHA256) and install pyward's managed CPython. It needs a human's "
		       "consent: the client shows them what, from where, how big and where to, and installs only "
		       "when they accept. Never answer that question yourself. Long: reports progress.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
			"\"version\": {\"type\": \"string\", \"description\": \"a pinned version (default: the newest pin)\"},"
			"\"baseline\": {\"type\": \"boolean\", \"description\": \"also install the document baseline"
			" (python-docx, openpyxl, python-pptx, reportlab) under the same consent (default true)\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"result\", \"version\", \"path\"], \"properties\": {"
			 "\"result\": {\"type\": \"string\"}, \"version\": {\"type\": \"string\"},"
			 " \"path\": {\"type\": \"string\"}, \"operation\": {\"type\": \"integer\"}}}",
	.read_only = false,
	.destructive = false,
	.idempotent = true,
	.open_world = true,
	.run = run_install,
};
