/* The tool table and CallToolResult: see tools.h. */
#include "config.h"

#include "mcp/tools.h"

#include "ops/json.h"

#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tools/list order: what an agent reaches for first. */
static const pw_mcp_tool *const table[] = {
	&pw_mcp_tool_pyenv_discover,
	&pw_mcp_tool_pyenv_create,
	&pw_mcp_tool_pyenv_install,
	&pw_mcp_tool_pyenv_uninstall,
	&pw_mcp_tool_pyenv_remove,
	&pw_mcp_tool_python,
	&pw_mcp_tool_execute_code,
	&pw_mcp_tool_runtime_status,
	&pw_mcp_tool_runtime_install,
	&pw_mcp_tool_history,
	&pw_mcp_tool_job_status,
};
#define TOOL_COUNT (sizeof table / sizeof table[0])

struct pw_mcp_toolbox {
	json_t *input[TOOL_COUNT];
	json_t *output[TOOL_COUNT];
	json_t *lists[PW_MCP_2026_07_28 + 1];  /* built once per revision */
};

static const char error_schema[] =
	"{\"type\": \"object\", \"required\": [\"schema\", \"error\"], \"properties\": {\"schema\": {\"const\": 1},"
	" \"error\": {\"type\": \"object\","
	" \"required\": [\"code\", \"message\"], \"properties\": {\"code\": {\"type\": \"string\"},"
	" \"message\": {\"type\": \"string\"}, \"hint\": {\"type\": [\"string\", \"null\"]},"
	" \"exit_status\": {\"type\": \"integer\"}}}}}";

static json_t *parse_schema(const char *name, const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);
	if (!json_is_object(j)) {
		/* a bug in this file, found by the first test that lists the tools */
		fprintf(stderr, "pyward mcp: schema of tool %s: %s (line %d)\n", name, err.text, err.line);
		abort();
	}
	return j;
}

/* The success object or the CLI's error object. */
static json_t *output_schema(const pw_mcp_tool *t)
{
	json_t *ok = parse_schema(t->name, t->output_schema);
	json_t *bad = parse_schema(t->name, error_schema);
	return json_pack("{s:s, s:[o, o]}", "type", "object", "anyOf", ok, bad);
}

pw_mcp_toolbox *pw_mcp_toolbox_new(void)
{
	pw_mcp_toolbox *tb = xcalloc(1, sizeof *tb);
	for (size_t i = 0; i < TOOL_COUNT; i++) {
		tb->input[i] = parse_schema(table[i]->name, table[i]->input_schema);
		tb->output[i] = output_schema(table[i]);
	}
	return tb;
}

void pw_mcp_toolbox_free(pw_mcp_toolbox **tb)
{
	if (!*tb)
		return;
	for (size_t i = 0; i < TOOL_COUNT; i++) {
		json_decref((*tb)->input[i]);
		json_decref((*tb)->output[i]);
	}
	for (size_t v = 0; v <= PW_MCP_2026_07_28; v++)
		json_decref((*tb)->lists[v]);
	free(*tb);
	*tb = NULL;
}

static json_t *annotations(const pw_mcp_tool *t)
{
	json_t *a = json_object();
	json_object_set_new(a, "title", json_string(t->title));
	json_object_set_new(a, "readOnlyHint", json_boolean(t->read_only));
	json_object_set_new(a, "destructiveHint", json_boolean(t->destructive));
	json_object_set_new(a, "idempotentHint", json_boolean(t->idempotent));
	json_object_set_new(a, "openWorldHint", json_boolean(t->open_world));
	return a;
}

static json_t *describe(const pw_mcp_toolbox *tb, size_t i, pw_mcp_version v)
{
	const pw_mcp_tool *t = table[i];
	json_t *d = json_object();
	json_object_set_new(d, "name", json_string(t->name));
	if (pw_mcp_has_structured(v))
		json_object_set_new(d, "title", json_string(t->title));
	json_object_set_new(d, "description", json_string(t->description));
	json_object_set(d, "inputSchema", tb->input[i]);
	if (pw_mcp_has_structured(v))
		json_object_set(d, "outputSchema", tb->output[i]);
	json_object_set_new(d, "annotations", annotations(t));
	return d;
}

json_t *pw_mcp_toolbox_list(pw_mcp_toolbox *tb, pw_mcp_version v)
{
	if (!tb->lists[v]) {
		json_t *a = json_array();
		for (size_t i = 0; i < TOOL_COUNT; i++)
			json_array_append_new(a, describe(tb, i, v));
		tb->lists[v] = a;
	}
	return json_incref(tb->lists[v]);
}

const pw_mcp_tool *pw_mcp_toolbox_find(const pw_mcp_toolbox *tb, const char *name, const json_t **input_schema)
{
	for (size_t i = 0; name && i < TOOL_COUNT; i++)
		if (strcmp(table[i]->name, name) == 0) {
			*input_schema = tb->input[i];
			return table[i];
		}
	return NULL;
}

/* The structured object as a tree (for a batch, or a raw result). */
static void text_to_tree(pw_mcp_tool_result *r)
{
	if (!r->text)
		return;
	if (!r->structured)
		r->structured = json_loads(r->text, 0, NULL);
	free(r->text);
	r->text = NULL;
}

json_t *pw_mcp_tool_result_json(pw_mcp_tool_result *r, pw_mcp_version v)
{
	text_to_tree(r);
	if (r->raw) {
		json_decref(r->structured);
		return r->raw;
	}
	json_t *res = json_object();
	char *text = json_dumps(r->structured, JSON_COMPACT);
	json_object_set_new(res, "content", json_pack("[{s:s, s:s}]", "type", "text", "text", text ? text : "{}"));
	free(text);
	if (pw_mcp_has_structured(v))
		json_object_set_new(res, "structuredContent", r->structured);
	else
		json_decref(r->structured);
	if (r->is_error)
		json_object_set_new(res, "isError", json_true());
	return res;
}

/* text as the inside of a JSON string (RFC 8259 section 7; UTF-8 kept)
 * into dst, which has room for 6 bytes per byte of text; returns the end. */
static char *put_escaped(char *dst, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *end = p + n; p < end; p++) {
		unsigned char c = *p;
		if (c >= 0x20 && c != '"' && c != '\\') {
			*dst++ = (char)c;
		} else if (c == '"' || c == '\\') {
			dst[0] = '\\';
			dst[1] = (char)c;
			dst += 2;
		} else {
			memcpy(dst, "\\u00", 4);
			dst[4] = hex[c >> 4];
			dst[5] = hex[c & 15];
			dst += 6;
		}
	}
	return dst;
}

#define PUT(dst, lit) (memcpy((dst), (lit), sizeof(lit) - 1), (dst) + sizeof(lit) - 1)

static bool head_takes_members(const char *head, size_t hl)
{
	return hl >= 4 && strcmp(head + hl - 2, "}}") == 0;
}

char *pw_mcp_text_result_line(const char *head, const char *text, size_t tl, pw_mcp_version v, bool is_error,
			      size_t *len)
{
	static const char content[] = "\"content\":[{\"type\":\"text\",\"text\":\"";
	static const char structured[] = "\"}],\"structuredContent\":";
	static const char error[] = ",\"isError\":true";
	size_t hl = head ? strlen(head) : 0;
	if (!head_takes_members(head, hl))
		return NULL;
	/* the response and its result, both left open; the members; "}}\n" */
	size_t cap = hl - 2 + 1 + sizeof content + 6 * tl + sizeof structured + tl + sizeof error + 4;
	char *buf = xmalloc(cap), *d = buf;
	memcpy(d, head, hl - 2);
	d += hl - 2;
	if (head[hl - 3] != '{')
		*d++ = ',';
	d = PUT(d, content);
	d = put_escaped(d, (const unsigned char *)text, tl);
	if (pw_mcp_has_structured(v)) {
		d = PUT(d, structured);
		memcpy(d, text, tl);
		d += tl;
	} else {
		d = PUT(d, "\"}]");
	}
	if (is_error)
		d = PUT(d, error);
	d = PUT(d, "}}\n");
	*d = '\0';
	*len = (size_t)(d - buf);
	return buf;
}

char *pw_mcp_tool_result_line(pw_mcp_tool_result *r, pw_mcp_version v, const char *head, size_t *len)
{
	if (r->raw || !head || !head_takes_members(head, strlen(head)))
		return NULL;
	char *text = r->text ? r->text : json_dumps(r->structured, JSON_COMPACT);
	r->text = NULL;
	if (!text)
		return NULL;
	char *line = pw_mcp_text_result_line(head, text, strlen(text), v, r->is_error, len);
	free(text);
	json_decref(r->structured);
	r->structured = NULL;
	return line;
}

void pw_mcp_tool_fail(pw_mcp_tool_result *out, pw_err *e)
{
	free(out->text);
	out->text = NULL;
	json_decref(out->structured);
	out->structured = pw_json_error(e); /* the CLI's --json error object */
	out->is_error = true;
	pw_err_free(e);
}
