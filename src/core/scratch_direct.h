/*
 * Direct mode: cells run over a worker's own pipes, lent by the host.
 *
 * Through the host a cell costs two extra process wake-ups (client, host,
 * worker, host, client), which on a small VM is more than the cell itself.
 * A client that makes many calls can borrow the session's worker instead
 * (pw_scratch_lease in scratch_client.h): the host passes the worker's four
 * pipes over the socket and stays out of the way until they come back.
 * This module is the host's part of a call done in the client: write the
 * request, capture output within the bound, wait for the reply, enforce
 * the time budget and the cancel token (SIGINT, then a kill after the
 * grace period), and say when the worker was lost.
 */
#ifndef PW_SCRATCH_DIRECT_H
#define PW_SCRATCH_DIRECT_H

#include "cancel.h"
#include "err.h"
#include "scratch_proto.h"

#include <stdbool.h>

typedef struct pw_scratch_direct pw_scratch_direct;

/* Takes over fds (requests, replies, stdout, stderr of the worker) and the
 * lease's strings. */
pw_scratch_direct *pw_scratch_direct_new(pw_scratch_lease_info *lease, const int fds[4]);
/* Closes this process's copies of the pipes (the host keeps its own). */
void pw_scratch_direct_free(pw_scratch_direct **d);

/* Run one cell (req->code set, no reset). Every cell that was sent gives a
 * result; an error only when it could not be sent to a worker that had
 * already gone (then pw_scratch_direct_lost says so). */
pw_err *pw_scratch_direct_run(pw_scratch_direct *d, const pw_scratch_request *req, const pw_cancel *cancel,
			      pw_scratch_result **out);

const char *pw_scratch_direct_session(const pw_scratch_direct *d);
int64_t pw_scratch_direct_executions(const pw_scratch_direct *d);
/* The notice kind and message of a lost worker, or NULL while it lives. */
const char *pw_scratch_direct_lost_kind(const pw_scratch_direct *d);
const char *pw_scratch_direct_lost_message(const pw_scratch_direct *d);

#endif
