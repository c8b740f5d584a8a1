/*
 * Requests in flight. Every tools/call runs on its own thread with its own
 * cancel token, so a slow install never holds up a scratchpad cell, and a
 * notifications/cancelled for its id reaches it while it runs. A call
 * sends progress notifications (throttled) and may ask the client for
 * input (elicitation/create) and wait for the answer, which the reading
 * thread hands over. Batches (2025-03-26) collect their responses here.
 */
#ifndef PW_MCP_CALLS_H
#define PW_MCP_CALLS_H

#include "mcp/mcp.h"
#include "mcp/proto.h"
#include "mcp/wire.h"

#include "cancel.h"
#include "events.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct pw_mcp_calls pw_mcp_calls;
typedef struct pw_mcp_call pw_mcp_call;
typedef struct pw_mcp_batch pw_mcp_batch;

/* ---- one request, as a tool sees it */
typedef struct pw_mcp_peer {
	pw_mcp_version version;
	const json_t *caps;    /* the client's capabilities (copied into the call) */
	const char *name;      /* clientInfo, or NULL */
	const char *version_text;
} pw_mcp_peer;

const json_t *pw_mcp_call_id(const pw_mcp_call *c);
const pw_cancel *pw_mcp_call_cancel(const pw_mcp_call *c);
pw_mcp_version pw_mcp_call_version(const pw_mcp_call *c);
const json_t *pw_mcp_call_params(const pw_mcp_call *c);
const char *pw_mcp_call_client_name(const pw_mcp_call *c);    /* "" when not told */
const char *pw_mcp_call_client_version(const pw_mcp_call *c); /* "" when not told */
const pw_mcp_opts *pw_mcp_call_opts(const pw_mcp_call *c);
/* The operations context for this call: the server's, with who naming
 * the front end ("mcp"), the client's name and version and the request
 * (tool and arguments), so History shows the agent beside the user. The
 * strings live as long as the call. */
void pw_mcp_call_ctx(pw_mcp_call *c, const char *tool, const json_t *args, const char *note, pw_ops_ctx *out);

/* The client declared form elicitation (for this request, or in initialize). */
bool pw_mcp_call_can_elicit(const pw_mcp_call *c);

/* A progress notification when the request asked for them (a progressToken
 * in _meta): progress is raised to stay strictly increasing, and notices
 * closer than 250 ms to the last one sent wait for the next (the latest
 * wins). total < 0: unknown. */
void pw_mcp_call_progress(pw_mcp_call *c, double progress, double total, const char *message);
/* An events sink that turns an operation's progress and log lines into
 * such notifications; its log lines (pyward's own, few: which attempt of
 * the chain starts, a lock wait) are sent at once, past the throttle. */
pw_events pw_mcp_call_events(pw_mcp_call *c);

typedef enum pw_mcp_elicit_action {
	PW_MCP_ELICIT_ACCEPT,
	PW_MCP_ELICIT_DECLINE,
	PW_MCP_ELICIT_CANCEL,
	PW_MCP_ELICIT_FAILED,  /* no answer: the client errored, went away, or the call was cancelled */
} pw_mcp_elicit_action;

/* Ask the human through the client (elicitation/create, legacy revisions)
 * and wait. *content (may be NULL) gets the accepted form's values. */
pw_mcp_elicit_action pw_mcp_call_elicit(pw_mcp_call *c, const char *message, const json_t *schema,
					json_t **content);

/* Send the response (stolen; NULL for none) and end the call. After a
 * notifications/cancelled nothing is sent (2025-06-18 basic/utilities/
 * cancellation: the receiver SHOULD NOT send a response). */
void pw_mcp_call_finish(pw_mcp_call *c, json_t *response);
/* The same with the response already serialised (line: len bytes ending
 * in a newline; stolen). Only for a call outside a batch. */
void pw_mcp_call_finish_line(pw_mcp_call *c, char *line, size_t len);
/* The call's response line written now, unless the call was cancelled;
 * the call stays open until finished (then with a NULL line). */
void pw_mcp_call_send_line(pw_mcp_call *c, const char *line, size_t len);
/* True when the call came inside a batch (its answer goes into the batch's array). */
bool pw_mcp_call_batched(const pw_mcp_call *c);

/* ---- the registry, driven by the reading thread */
pw_mcp_calls *pw_mcp_calls_new(pw_mcp_wire *w, const pw_mcp_opts *o);
void pw_mcp_calls_free(pw_mcp_calls **r);

/* Register request id; NULL with *why set when the id is already in
 * flight or too many calls run. progress_token may be NULL. */
pw_mcp_call *pw_mcp_calls_begin(pw_mcp_calls *r, const json_t *id, const json_t *params,
				const pw_mcp_peer *peer, pw_mcp_batch *batch, const char **why);
/* Run fn(c, ud) on a new thread; fn must end with pw_mcp_call_finish. */
bool pw_mcp_calls_spawn(pw_mcp_call *c, void (*fn)(pw_mcp_call *c, void *ud), void *ud);

/* notifications/cancelled for id: raise its token; its response is dropped. */
void pw_mcp_calls_cancel(pw_mcp_calls *r, const json_t *id);
void pw_mcp_calls_cancel_all(pw_mcp_calls *r);
/* Stop waiting for client answers (stdin closed). */
void pw_mcp_calls_hangup(pw_mcp_calls *r);
/* Wait until no call runs (timeout_ms < 0: no limit); false on timeout. */
bool pw_mcp_calls_wait_idle(pw_mcp_calls *r, int timeout_ms);
/* A response from the client: true when it answered one of our requests. */
bool pw_mcp_calls_take_response(pw_mcp_calls *r, const json_t *msg);

/* ---- batches (2025-03-26): one array of responses, sent when all are in */
pw_mcp_batch *pw_mcp_batch_new(pw_mcp_wire *w);
void pw_mcp_batch_hold(pw_mcp_batch *b);
/* msg stolen, may be NULL (a notification); the last put sends and frees. */
void pw_mcp_batch_put(pw_mcp_batch *b, json_t *msg);

/* Deliver a response: into the batch when there is one, else on the wire. */
void pw_mcp_reply(pw_mcp_wire *w, pw_mcp_batch *b, json_t *msg);

#endif
