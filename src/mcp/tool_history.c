/* The `history` tool: the catalog's operations, newest first, as `pyward history --json` lists them. */
#include "config.h"

#include "mcp/tools.h"

#include "ops/op_history.h"

#include "catalog.h"

#include <stdio.h>
#include <string.h>

static bool date_ok(const char *s)
{
	int y, m, d, n = 0;
	return sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) == 3 && n == 10 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

static void run_history(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "history", args, NULL, &ctx);
	const char *since = json_string_value(json_object_get(args, "since"));
	json_t *limit = json_object_get(args, "limit");
	pw_op_filter f = {
		.kind = json_string_value(json_object_get(args, "kind")),
		.target = json_string_value(json_object_get(args, "target")),
		.outcome = json_string_value(json_object_get(args, "outcome")),
		.since = since,
		.limit = limit ? (int)json_integer_value(limit) : 50,
		.cancel = pw_mcp_call_cancel(call),
	};
	pw_op_list ops = { 0 };
	pw_err *e = since && !date_ok(since)
			    ? pw_err_new(PW_ERR_USAGE, "give a UTC date, YYYY-MM-DD, or a date-time YYYY-MM-DDTHH:MM:SS",
					 "since: '%s' is not a date", since)
			    : pw_op_history_list(&ctx, &f, &ops);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_history_list_json(&ops);
	pw_op_list_clear(&ops);
}

const pw_mcp_tool pw_mcp_tool_history = {
	.name = "history",
	.title = "History of operations",
	.description = "What pyward did, newest first, from its catalog: each operation's kind (runtime.install, "
		       "venv.install, ...), target, outcome, who ran it (the user, and the agent for changes made "
		       "through this server), when, and how many attempts. Read only; works in every mode.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
			"\"kind\": {\"type\": \"string\", \"description\": \"exact, or a prefix ending in '.' (venv.)\"},"
			"\"target\": {\"type\": \"string\", \"description\": \"a substring of the target\"},"
			"\"outcome\": {\"type\": \"string\", \"enum\": [\"ok\", \"failed\", \"refused\", \"timed-out\","
			" \"cancelled\", \"running\", \"interrupted\"]},"
			"\"since\": {\"type\": \"string\", \"description\": \"UTC date YYYY-MM-DD or date-time\"},"
			"\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 1000, \"description\": \"default 50\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"operations\"], \"properties\": {"
			 "\"operations\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": [\"id\", \"kind\"],"
			 " \"properties\": {\"id\": {\"type\": \"integer\"}, \"kind\": {\"type\": \"string\"}}}}}}",
	.read_only = true,
	.destructive = false,
	.idempotent = true,
	.open_world = false,
	.run = run_history,
};
