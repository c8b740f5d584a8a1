/*
 * The hot path's request scanner. A `tools/call` of the `python` tool in
 * the plain shape clients send (a legacy-revision request: "jsonrpc",
 * "id", "method", "params" with "name" and "arguments", the arguments
 * among code, venv, session and reset) is read straight into C strings,
 * without building a jansson tree or checking the arguments against the
 * schema: jansson's parse alone cost a third of the server's work per
 * call (DESIGN.md "Speed (bench/mcp.sh)").
 *
 * The scanner never refuses anything: a line it does not know through
 * and through (another method or tool, _meta, an unknown or duplicate
 * key, a real or long id, \u0000, a lone surrogate, invalid UTF-8,
 * trailing bytes, a session of the wrong length, ...) makes it say no,
 * and the line goes through jansson and the schema check as before, with
 * their answers. What it accepts, jansson accepts with the same values
 * and the python tool's inputSchema admits (fuzz/fuzz_mcp_fastcall.c
 * compares the two on every input).
 */
#ifndef PW_MCP_FASTCALL_H
#define PW_MCP_FASTCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The python tool's inputSchema (JSON text), which the scanner's
 * acceptance follows: change both together. */
#define PW_MCP_PYTHON_INPUT_SCHEMA \
	"{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"code\"]," \
	" \"properties\": {" \
	"  \"code\": {\"type\": \"string\", \"description\": \"Python source to run (may be empty with reset)\"}," \
	"  \"reset\": {\"type\": \"boolean\", \"description\": \"start from a fresh interpreter first\"}," \
	"  \"session\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 64," \
	"   \"description\": \"share a named session deliberately (1-64 of A-Z a-z 0-9 . _ -)\"}," \
	"  \"venv\": {\"type\": \"string\", \"description\": \"run in this virtual environment's interpreter" \
	" (default: the managed runtime)\"}}}"

typedef struct pw_mcp_fastcall {
	bool id_is_string;            /* the id: id_text, else id_int */
	const char *id_text;
	int64_t id_int;
	const char *code;             /* decoded, NUL-terminated (without NULs) */
	const char *venv, *session;   /* NULL when not given */
	bool reset;
	char *store;                  /* where the decoded strings live */
} pw_mcp_fastcall;

/* True (f filled) when line[0..len) is such a call; false (nothing to
 * free) for anything else. */
bool pw_mcp_fastcall_scan(const char *line, size_t len, pw_mcp_fastcall *f);
void pw_mcp_fastcall_clear(pw_mcp_fastcall *f);

#endif
