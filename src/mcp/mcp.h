/*
 * pyward mcp: a Model Context Protocol server on stdin/stdout. The front
 * end for agents: JSON-RPC in, the operations' results out, as tools.
 * main.c parses the command line and hands over these options.
 */
#ifndef PW_MCP_H
#define PW_MCP_H

#include <stdbool.h>
#include <stddef.h>

/* The documented default limit of one incoming message (bytes, without its newline). */
#define PW_MCP_DEFAULT_MAX_MESSAGE (4 * 1024 * 1024)

typedef struct pw_mcp_opts {
	const char *box_root;
	const char *workspace;
	const char *mode;           /* read-only, workspace-write, full-access */
	bool read_only;
	double timeout;             /* seconds for a tool call; 0: none */
	bool allow_runtime_install; /* the operator's standing consent (recorded as such) */
	size_t max_message;         /* 0: PW_MCP_DEFAULT_MAX_MESSAGE */
	const char *skill_file;     /* SKILL.md: its body is the server's instructions */
	const char *worker_script;  /* pyward_worker.py, for scratchpad hosts it starts */
} pw_mcp_opts;

/* Serve stdin/stdout until the client closes stdin (then the calls still
 * running finish) or a SIGTERM/SIGINT (then they are cancelled). Returns
 * an exit status. */
int pw_mcp_serve(const pw_mcp_opts *o);

#endif
