/*
 * The scratchpad sessions this server talks to, one kept connection
 * (ops/op_scratch.h) each. Calls to one session run in order (a later call
 * waits, and a cancelled wait gives up); the connection's own session is
 * then leased (direct mode), so a cell costs no trip through the host. A
 * session named by the caller is shared and never leased.
 */
#ifndef PW_MCP_PADS_H
#define PW_MCP_PADS_H

#include "ops/op_scratch.h"

#include "cancel.h"
#include "err.h"

#include <stdbool.h>

/* The name of this connection's own session: the workspace's default
 * session name and this server's pid ("proj-1a2b3c4d-mcp-4242"). */
char *pw_mcp_pads_own_session(const char *workspace);

/* A place in the session's queue, taken on the reading thread in the
 * order the requests came, so that calls run in that order. */
typedef struct pw_mcp_pad_ticket pw_mcp_pad_ticket;
pw_mcp_pad_ticket *pw_mcp_pads_queue(const char *session);
/* Leave the queue without running (the call never started). */
void pw_mcp_pads_drop(pw_mcp_pad_ticket *t);

/* Wait for the ticket's turn, then run rq through the scratchpad
 * operation on the ticket's session (rq->session is set to it; rq->lease
 * leases it afterwards). Consumes t. */
pw_err *pw_mcp_pads_run(pw_mcp_pad_ticket *t, const pw_ops_ctx *ctx, pw_op_scratch_request *rq,
			const pw_cancel *cancel, pw_op_scratch_result *out);
/* Hand every lease back and close the connections (at exit). */
void pw_mcp_pads_close_all(void);

#endif
