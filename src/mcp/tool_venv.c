/* The environment tools: pyenv_discover, pyenv_create, pyenv_install, pyenv_uninstall, pyenv_remove. */
#include "config.h"

#include "mcp/tools.h"

#include "ops/op_jobs.h"
#include "ops/op_venv.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *str_arg(const json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

/* A string array argument as a NULL-terminated vector of borrowed strings. */
static const char **strings(const json_t *args, const char *key, size_t *n)
{
	const json_t *a = json_object_get(args, key);
	*n = json_array_size(a);
	const char **v = xcalloc(*n + 1, sizeof *v);
	for (size_t i = 0; i < *n; i++)
		v[i] = json_string_value(json_array_get(a, i));
	return v;
}

/* ---------------------------------------------------------------- discover */

static void run_discover(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "pyenv_discover", args, NULL, &ctx);
	pw_op_venv_discover_result r = { 0 };
	json_t *depth = json_object_get(args, "depth");
	pw_err *e = pw_op_venv_discover(&ctx, str_arg(args, "root_dir"), depth ? (int)json_integer_value(depth) : 0, &r);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_venv_discover_json(&r);
	pw_op_venv_discover_clear(&r);
}

const pw_mcp_tool pw_mcp_tool_pyenv_discover = {
	.name = "pyenv_discover",
	.title = "Python environments: discover",
	.description = "List the virtual environments (and conda environments) under the workspace, or under "
		       "root_dir inside the allowed roots: path, kind, interpreter and its version, whether pip is "
		       "there. Read only; works in every mode.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
			"\"root_dir\": {\"type\": \"string\", \"description\": \"where to look (inside the workspace or a --root)\"},"
			"\"depth\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 8, \"description\": \"folder levels (default 2)\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"environments\", \"roots\", \"truncated\"], \"properties\": {"
			 "\"environments\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": [\"path\"],"
			 " \"properties\": {\"path\": {\"type\": \"string\"}, \"has_pip\": {\"type\": \"boolean\"}}}},"
			 "\"roots\": {\"type\": \"array\"}, \"dirs_visited\": {\"type\": \"integer\"},"
			 " \"truncated\": {\"type\": \"boolean\"}}}",
	.read_only = true,
	.destructive = false,
	.idempotent = true,
	.open_world = false,
	.run = run_discover,
};

/* ---------------------------------------------------------------- create */

static void run_create(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "pyenv_create", args, NULL, &ctx);
	pw_events ev = pw_mcp_call_events(call);
	pw_op_io io = { .events = &ev, .cancel = pw_mcp_call_cancel(call) };
	pw_op_venv_create_request rq = { .name = str_arg(args, "path"), .python = str_arg(args, "python") };
	pw_created c = { 0 };
	pw_err *e = pw_op_venv_create(&ctx, &rq, &io, &c);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_venv_create_json(&c);
	pw_created_clear(&c);
}

const pw_mcp_tool pw_mcp_tool_pyenv_create = {
	.name = "pyenv_create",
	.title = "Python environments: create",
	.description = "Create a virtual environment inside the workspace (default .venv) from the managed runtime, "
		       "else python3, or the interpreter named, with pip ready. Existing environments are left as "
		       "they are. Use this instead of python -m venv.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
			"\"path\": {\"type\": \"string\", \"description\": \"a name in the workspace or a path inside the allowed roots\"},"
			"\"python\": {\"type\": \"string\", \"description\": \"the base interpreter (default: the managed runtime)\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"path\", \"existed\"], \"properties\": {"
			 "\"path\": {\"type\": \"string\"}, \"existed\": {\"type\": \"boolean\"},"
			 " \"python\": {\"type\": [\"string\", \"null\"]}, \"version\": {\"type\": [\"string\", \"null\"]}}}",
	.read_only = false,
	.destructive = false,
	.idempotent = true,
	.open_world = false,
	.run = run_create,
};

/* ---------------------------------------------------------------- install, uninstall */

/* pip's lines become progress messages (its last line, throttled). */
static void pip_line(void *ud, pw_stream s, const char *line, size_t len)
{
	(void)s;
	char *text = xstrndup(line, len);
	pw_mcp_call_progress(ud, 0, -1, text);
	free(text);
}

static void run_pip(pw_mcp_call *call, const json_t *args, bool install, pw_mcp_tool_result *out)
{
	const char *name = install ? "pyenv_install" : "pyenv_uninstall";
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, name, args, NULL, &ctx);
	json_t *ms = json_object_get(args, "timeout_ms");
	if (ms)
		ctx.timeout = (double)json_integer_value(ms) / 1000.0;
	size_t np = 0, nr = 0, ne = 0;
	const char **packages = strings(args, "packages", &np);
	const char **reqs = strings(args, "requirements", &nr);
	const char **edit = strings(args, "editable", &ne);
	pw_op_venv_pip_request rq = {
		.install = install, .venv = str_arg(args, "venv"),
		.specs = packages, .spec_count = np, .requirements = reqs, .req_count = nr,
		.editables = edit, .editable_count = ne,
		.index = str_arg(args, "index"), .proxy = str_arg(args, "proxy"),
		.upgrade = json_is_true(json_object_get(args, "upgrade")),
		.lock_note = "pyward mcp", .on_line = pip_line, .line_ud = call,
	};
	if (json_is_true(json_object_get(args, "background"))) {
		/* a job id at once: a detached pyward runs it, recorded as this call */
		pw_job_rec job = { 0 };
		pw_err *e = pw_op_venv_pip_start(&ctx, &rq, &job);
		if (e)
			pw_mcp_tool_fail(out, e);
		else
			out->structured = pw_op_job_started_json(&job);
		pw_job_rec_clear(&job);
		free(packages);
		free(reqs);
		free(edit);
		return;
	}
	pw_events ev = pw_mcp_call_events(call);
	pw_op_io io = { .events = &ev, .cancel = pw_mcp_call_cancel(call) };
	pw_op_venv_pip_result r = { 0 };
	pw_err *e = pw_op_venv_pip(&ctx, &rq, &io, &r);
	if (e && !r.operation) {
		pw_mcp_tool_fail(out, e);
	} else {
		/* the run's JSON, attempts and stop reason included, also when it failed */
		out->structured = pw_op_venv_pip_json(&r, e);
		out->is_error = e != NULL;
		pw_err_free(e);
	}
	pw_op_venv_pip_clear(&r);
	free(packages);
	free(reqs);
	free(edit);
}

static void run_install(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	run_pip(call, args, true, out);
}

static void run_uninstall(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	run_pip(call, args, false, out);
}

#define PIP_OUTPUT_SCHEMA \
	"{\"type\": \"object\", \"anyOf\": [{\"type\": \"object\", \"required\": [\"job_id\", \"job\"]," \
	" \"properties\": {\"job_id\": {\"type\": \"integer\"}, \"job\": {\"type\": \"object\"}}}, " \
	"{\"type\": \"object\", \"required\": [\"operation\", \"outcome\", \"venv\", \"attempts\", \"stop_reason\"]," \
	" \"properties\": {\"operation\": {\"type\": \"integer\"}," \
	" \"outcome\": {\"type\": \"string\", \"enum\": [\"ok\", \"failed\", \"timed-out\"]}," \
	" \"venv\": {\"type\": \"string\"}, \"stop_reason\": {\"type\": [\"string\", \"null\"]}," \
	" \"attempts\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {" \
	"  \"index_url\": {\"type\": [\"string\", \"null\"]}, \"proxy\": {\"type\": [\"string\", \"null\"]}," \
	"  \"exit_code\": {\"type\": [\"integer\", \"null\"]}, \"class\": {\"type\": [\"string\", \"null\"]}," \
	"  \"duration_ms\": {\"type\": [\"integer\", \"null\"]}}}}}}]}"

const pw_mcp_tool pw_mcp_tool_pyenv_install = {
	.name = "pyenv_install",
	.title = "Python environments: install packages",
	.description = "pip install into a virtual environment of the workspace (the one there, or venv; a new "
		       ".venv when there is none), through pyward's attempt chain: the default index, then the "
		       "configured mirrors and a probed local proxy when the network fails. Every attempt is in "
		       "the result (index, proxy, exit code, class, duration) and in the catalog. A time budget "
		       "that runs out is a tool error with the stop reason. Use this instead of pip in a shell; pip "
		       "never runs against a global interpreter.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"packages\"], \"properties\": {"
			"\"packages\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 200,"
			" \"description\": \"requirement specifiers (name, name==1.2, name>=1)\"},"
			"\"venv\": {\"type\": \"string\", \"description\": \"the environment (a name in the workspace or a path)\"},"
			"\"requirements\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 16,"
			" \"description\": \"requirements files inside the allowed roots\"},"
			"\"editable\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 16,"
			" \"description\": \"local project folders to install editable\"},"
			"\"index\": {\"type\": \"string\", \"description\": \"the first index of the chain (default: settings)\"},"
			"\"proxy\": {\"type\": \"string\", \"description\": \"an HTTP proxy for pip\"},"
			"\"upgrade\": {\"type\": \"boolean\"},"
			"\"background\": {\"type\": \"boolean\", \"description\": \"return a job id at once; job_status"
			" follows it (the install outlives this call)\"},"
			"\"timeout_ms\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 604800000,"
			" \"description\": \"the time budget of the whole install\"}}}",
	.output_schema = PIP_OUTPUT_SCHEMA,
	.read_only = false,
	.destructive = false,
	.idempotent = false,
	.open_world = true,
	.run = run_install,
};

const pw_mcp_tool pw_mcp_tool_pyenv_uninstall = {
	.name = "pyenv_uninstall",
	.title = "Python environments: uninstall packages",
	.description = "pip uninstall from a virtual environment of the workspace (offline; never creates one). "
		       "Recorded in the catalog like any change.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"packages\"], \"properties\": {"
			"\"packages\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": 1, \"maxItems\": 200},"
			"\"venv\": {\"type\": \"string\"}, \"background\": {\"type\": \"boolean\"}}}",
	.output_schema = PIP_OUTPUT_SCHEMA,
	.read_only = false,
	.destructive = true,
	.idempotent = true,
	.open_world = false,
	.run = run_uninstall,
};

/* ---------------------------------------------------------------- remove */

static void run_remove(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "pyenv_remove", args, NULL, &ctx);
	char *removed = NULL;
	pw_err *e = pw_op_venv_remove(&ctx, str_arg(args, "venv"), &removed);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_venv_remove_json(removed);
	free(removed);
}

const pw_mcp_tool pw_mcp_tool_pyenv_remove = {
	.name = "pyenv_remove",
	.title = "Python environments: remove",
	.description = "Delete a virtual environment: only a folder carrying pyvenv.cfg (or conda-meta/) inside "
		       "the allowed roots, never through a symbolic link. Recorded in the catalog.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"venv\"], \"properties\": {"
			"\"venv\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"a name in the workspace or a path\"}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"removed\"], \"properties\": {"
			 "\"removed\": {\"type\": \"string\"}}}",
	.read_only = false,
	.destructive = true,
	.idempotent = false,
	.open_world = false,
	.run = run_remove,
};

/* ---------------------------------------------------------------- job_status */

static void run_job_status(pw_mcp_call *call, const json_t *args, void *admitted, pw_mcp_tool_result *out)
{
	(void)admitted;
	pw_ops_ctx ctx;
	pw_mcp_call_ctx(call, "job_status", args, NULL, &ctx);
	pw_op_job_show_result r = { 0 };
	pw_err *e = pw_op_job_show(&ctx, json_integer_value(json_object_get(args, "job_id")), 20, &r);
	if (e)
		pw_mcp_tool_fail(out, e);
	else
		out->structured = pw_op_job_show_json(&r);
	pw_op_job_show_clear(&r);
}

const pw_mcp_tool pw_mcp_tool_job_status = {
	.name = "job_status",
	.title = "Background job: status",
	.description = "The state of a background job (running, ok, failed, timed-out, cancelled, interrupted), "
		       "its operations with every attempt, its stop reason and the last lines of its log. Read only.",
	.input_schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"job_id\"],"
			" \"properties\": {\"job_id\": {\"type\": \"integer\", \"minimum\": 1}}}",
	.output_schema = "{\"type\": \"object\", \"required\": [\"job\"], \"properties\": {\"job\": {\"type\": \"object\","
			 " \"required\": [\"id\", \"state\"], \"properties\": {\"id\": {\"type\": \"integer\"},"
			 " \"state\": {\"type\": \"string\"}, \"operations\": {\"type\": \"array\"}}}}}",
	.read_only = true,
	.destructive = false,
	.idempotent = true,
	.open_world = false,
	.run = run_job_status,
};
