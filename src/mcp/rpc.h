/*
 * JSON-RPC 2.0 message builders and checks for the MCP server, with the
 * error codes the MCP revisions use.
 */
#ifndef PW_MCP_RPC_H
#define PW_MCP_RPC_H

#include <jansson.h>
#include <stdbool.h>

enum {
	PW_RPC_PARSE_ERROR = -32700,
	PW_RPC_INVALID_REQUEST = -32600,
	PW_RPC_METHOD_NOT_FOUND = -32601,
	PW_RPC_INVALID_PARAMS = -32602,
	PW_RPC_INTERNAL_ERROR = -32603,
	/* 2026-07-28, basic/index "Error Codes" */
	PW_RPC_MISSING_CAPABILITY = -32021,
	PW_RPC_UNSUPPORTED_VERSION = -32022,
};

/* id may be NULL (sent as null, for messages whose id could not be read);
 * data is stolen and may be NULL. */
json_t *pw_rpc_error(const json_t *id, int code, const char *message, json_t *data);
json_t *pw_rpc_errorf(const json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* result is stolen. */
json_t *pw_rpc_result(const json_t *id, json_t *result);
/* The compact text of pw_rpc_result(id, {}) written directly (the python
 * tool's answer starts with it), or NULL for an id of another kind than a
 * string or an integer (then build and dump the message). */
char *pw_rpc_result_head(const json_t *id);
/* A request or notification (id NULL); params stolen, may be NULL. */
json_t *pw_rpc_message(const json_t *id, const char *method, json_t *params);

/* MCP ids: a string or a number, never null. */
bool pw_rpc_id_ok(const json_t *id);
bool pw_rpc_id_equal(const json_t *a, const json_t *b);

#endif
