/*
 * The tool table: name, schemas, annotations and the function that runs
 * each tool. tools/list lists them in this table's order, always the same.
 * A tool's structuredContent is the operation's JSON (the CLI's --json);
 * an error is the CLI's {"error": {code, message, hint, exit_status}}, so
 * every outputSchema allows either.
 */
#ifndef PW_MCP_TOOLS_H
#define PW_MCP_TOOLS_H

#include "mcp/calls.h"
#include "mcp/proto.h"

#include "err.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct pw_mcp_tool_result {
	json_t *structured;  /* the result object, or {"error": ...} with is_error */
	char *text;          /* or that object already as compact JSON text (the python tool) */
	bool is_error;
	json_t *raw;         /* a whole result to send as it is (input_required) */
	bool answered;       /* already sent by the tool (the python tool's early answer) */
} pw_mcp_tool_result;

typedef struct pw_mcp_tool {
	const char *name, *title, *description;
	const char *input_schema;   /* JSON text */
	const char *output_schema;  /* JSON text: the success object */
	bool read_only, destructive, idempotent, open_world;
	/* Optional, on the reading thread before the call's thread starts:
	 * take a place in an ordered queue; what it returns reaches run
	 * (or forget, when the call does not start). */
	void *(*admit)(pw_mcp_call *call, const json_t *args);
	void (*forget)(void *admitted);
	void (*run)(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out);
} pw_mcp_tool;

typedef struct pw_mcp_toolbox pw_mcp_toolbox;

pw_mcp_toolbox *pw_mcp_toolbox_new(void);
void pw_mcp_toolbox_free(pw_mcp_toolbox **tb);
/* The tools array of tools/list for v (a new reference). */
json_t *pw_mcp_toolbox_list(pw_mcp_toolbox *tb, pw_mcp_version v);
/* The tool called name and its parsed inputSchema, or NULL. */
const pw_mcp_tool *pw_mcp_toolbox_find(const pw_mcp_toolbox *tb, const char *name, const json_t **input_schema);

/* The CallToolResult for v: structuredContent (2025-06-18 on) and the same
 * JSON as text. Consumes r. */
json_t *pw_mcp_tool_result_json(pw_mcp_tool_result *r, pw_mcp_version v);
/* The same CallToolResult as the JSON-RPC response line: head is the
 * response with the rest of the result (resultType, _meta; no content) as
 * compact JSON text, and the result's content, structuredContent and isError are written
 * into it, the structured object serialised once (jansson would write it
 * twice and escape one copy again: a sixth of the server's time per
 * python call). Consumes r's structured object. The line ends with its
 * newline; *len its length. NULL (r untouched) for a raw result or a
 * response that cannot take the members. */
char *pw_mcp_tool_result_line(pw_mcp_tool_result *r, pw_mcp_version v, const char *head, size_t *len);
/* The same line for a result given as text (tl bytes of compact JSON),
 * head as above; NULL when head cannot take the members. */
char *pw_mcp_text_result_line(const char *head, const char *text, size_t tl, pw_mcp_version v, bool is_error,
			      size_t *len);
/* Fill out as the error e (consumed), the CLI's JSON error shape. */
void pw_mcp_tool_fail(pw_mcp_tool_result *out, pw_err *e);

/* The python tool's parts, for the fast path (fastcall.h), which has its
 * arguments as C strings: the admission (on the reading thread) and the run. */
typedef struct pw_mcp_python_args {
	const char *code, *venv, *session;  /* venv, session: NULL when not given */
	bool reset;
	/* the server's input, read by this thread until handed over (see
	 * pw_scratch_hand_over_fn); hand_over NULL: another thread reads it */
	void (*hand_over)(void *arg);
	void *hand_over_arg;
	int watch_fd;
} pw_mcp_python_args;
void *pw_mcp_python_admit(pw_mcp_call *call, const char *session);
void pw_mcp_python_run(pw_mcp_call *call, const pw_mcp_python_args *a, void *admitted, pw_mcp_tool_result *out);

/* The tools, defined beside the code that runs them. */
extern const pw_mcp_tool pw_mcp_tool_pyenv_discover;
extern const pw_mcp_tool pw_mcp_tool_pyenv_create;
extern const pw_mcp_tool pw_mcp_tool_pyenv_install;
extern const pw_mcp_tool pw_mcp_tool_pyenv_uninstall;
extern const pw_mcp_tool pw_mcp_tool_pyenv_remove;
extern const pw_mcp_tool pw_mcp_tool_python;
extern const pw_mcp_tool pw_mcp_tool_execute_code;
extern const pw_mcp_tool pw_mcp_tool_runtime_status;
extern const pw_mcp_tool pw_mcp_tool_runtime_install;
extern const pw_mcp_tool pw_mcp_tool_history;
extern const pw_mcp_tool pw_mcp_tool_job_status;

#endif
