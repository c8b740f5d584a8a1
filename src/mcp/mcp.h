/*
 * pyward mcp: a Model Context Protocol server on stdin/stdout. The front
 * end for agents: JSON-RPC in, the operations' results out, as tools.
 * main.c parses the command line and hands over these options.
 */
#ifndef PW_MCP_H
#define PW_MCP_H

#include "ops/ctx.h"

#include <stdbool.h>
#include <stddef.h>

/* The documented default limit of one incoming message (bytes, without its newline). */
#define PW_MCP_DEFAULT_MAX_MESSAGE (4 * 1024 * 1024)

typedef struct pw_mcp_opts {
	const pw_ops_ctx *ctx;      /* prepared; each call runs with a copy naming its client */
	bool allow_runtime_install; /* the operator's standing consent (recorded as such) */
	size_t max_message;         /* 0: PW_MCP_DEFAULT_MAX_MESSAGE */
	const char *skill_file;     /* SKILL.md: its body is the server's instructions */
} pw_mcp_opts;

/* Serve stdin/stdout until the client closes stdin (then the calls still
 * running finish) or a SIGTERM/SIGINT (then they are cancelled). Returns
 * an exit status. */
int pw_mcp_serve(const pw_mcp_opts *o);

#endif
