/*
 * The server's side of stdout: one JSON-RPC message per line, written
 * whole under a lock so concurrent requests never interleave their bytes.
 * Nothing else may write to this fd.
 */
#ifndef PW_MCP_WIRE_H
#define PW_MCP_WIRE_H

#include <jansson.h>
#include <stdbool.h>

typedef struct pw_mcp_wire pw_mcp_wire;

pw_mcp_wire *pw_mcp_wire_new(int fd);
void pw_mcp_wire_free(pw_mcp_wire **w);
/* Write msg as one compact line; false once the reader has gone (then
 * every later send is dropped too). */
bool pw_mcp_wire_send(pw_mcp_wire *w, const json_t *msg);
/* The same for a message already serialised: line holds len bytes, one
 * compact JSON text and its final newline. */
bool pw_mcp_wire_send_line(pw_mcp_wire *w, const char *line, size_t len);
/* Log a line on stderr, prefixed "pyward mcp: " (never stdout). */
void pw_mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
