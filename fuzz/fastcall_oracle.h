/*
 * The MCP fast path's scanner (src/mcp/fastcall.c) against jansson and the
 * python tool's schema check, the path every line took before: when the
 * scanner reads a line, jansson must read the same message from it, with
 * nothing else in it, and the schema must admit its arguments. (A line the
 * scanner leaves goes through jansson anyway: there is nothing to compare.)
 * Shared by fuzz/fuzz_mcp_fastcall.c and tests/unit/test_mcp_fastcall.c.
 */
#ifndef PW_FASTCALL_ORACLE_H
#define PW_FASTCALL_ORACLE_H

#include "mcp/argcheck.h"
#include "mcp/fastcall.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static bool oracle_same_string(const json_t *j, const char *s)
{
	/* the same bytes, and no NUL inside jansson's (its length counts them) */
	return json_is_string(j) && strcmp(json_string_value(j), s) == 0 && json_string_length(j) == strlen(s);
}

/* NULL when the scanner and jansson agree on line (or the scanner left
 * it); else what differs. *scanned: whether the scanner read it. */
static const char *fastcall_disagreement(const char *line, size_t len, bool *scanned)
{
	static json_t *schema;
	if (!schema)
		schema = json_loads(PW_MCP_PYTHON_INPUT_SCHEMA, 0, NULL);
	pw_mcp_fastcall f;
	*scanned = pw_mcp_fastcall_scan(line, len, &f);
	if (!*scanned)
		return NULL;
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	json_t *args = json_object_get(params, "arguments");
	const char *why = NULL;
	char *bad = NULL;
	size_t given = 1 + (f.venv != NULL) + (f.session != NULL);
	const json_t *reset = json_object_get(args, "reset");
	if (!json_is_object(msg))
		why = "jansson does not read an object where the scanner read a call";
	else if (json_object_size(msg) != 4 || !oracle_same_string(json_object_get(msg, "jsonrpc"), "2.0") ||
		 !oracle_same_string(json_object_get(msg, "method"), "tools/call"))
		why = "the envelope differs";
	else if (f.id_is_string ? !oracle_same_string(id, f.id_text)
				: !json_is_integer(id) || json_integer_value(id) != (json_int_t)f.id_int)
		why = "the id differs";
	else if (!json_is_object(params) || json_object_size(params) != 2 ||
		 !oracle_same_string(json_object_get(params, "name"), "python") || !json_is_object(args))
		why = "the params differ";
	else if ((bad = pw_mcp_argcheck(schema, args, "arguments")) != NULL)
		why = "the schema refuses what the scanner read";
	else if (!oracle_same_string(json_object_get(args, "code"), f.code) ||
		 (f.venv ? !oracle_same_string(json_object_get(args, "venv"), f.venv) : json_object_get(args, "venv") != NULL) ||
		 (f.session ? !oracle_same_string(json_object_get(args, "session"), f.session)
			    : json_object_get(args, "session") != NULL))
		why = "an argument differs";
	else if (reset ? json_is_true(reset) != f.reset : f.reset)
		why = "reset differs";
	else if (json_object_size(args) != given + (reset != NULL))
		why = "the arguments' count differs";
	free(bad);
	json_decref(msg);
	pw_mcp_fastcall_clear(&f);
	return why;
}

#endif
