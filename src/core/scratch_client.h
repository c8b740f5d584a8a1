/*
 * Scratchpad client: the one API the CLI, the TUI's Python pane and later
 * surfaces use to reach the shared scratchpad host. The host listens on
 * <dir>/host.sock, where dir is $XDG_RUNTIME_DIR/pyward (else
 * /tmp/pyward-UID), mode 0700 and ours; the first connect starts it.
 *
 * Calls block; pw_scratch_run polls a cancel token and, once it is raised,
 * asks the host to interrupt the running cell and still waits for its
 * (interrupted) result. A client handle serves one thread at a time.
 */
#ifndef PW_SCRATCH_CLIENT_H
#define PW_SCRATCH_CLIENT_H

#include "cancel.h"
#include "err.h"
#include "scratch_proto.h"

#include <stdbool.h>

typedef struct pw_scratch_client pw_scratch_client;

typedef struct pw_scratch_connect_opts {
	const char *dir;        /* socket folder; NULL: pw_scratch_dir() */
	bool autostart;         /* start the host when none answers */
	/* How to start it: host_exe (NULL: /proc/self/exe) with host_argv
	 * (NULL: {"pyward", "python", "--host", NULL}). */
	const char *host_exe;
	const char *const *host_argv;
} pw_scratch_connect_opts;

/* The socket folder: created 0700 when missing; refused when it is not a
 * real folder owned by us with mode 0700. *dir is malloc'd. */
pw_err *pw_scratch_dir(char **dir);
/* A session name for a workspace: its base name and a short hash of its
 * path ("proj-1a2b3c4d"); malloc'd. */
char *pw_scratch_default_session(const char *workspace);

/* Connect (starting the host when asked). PW_ERR_NOTFOUND when no host
 * runs and autostart is off. */
pw_err *pw_scratch_connect(const pw_scratch_connect_opts *o, pw_scratch_client **out);
void pw_scratch_close(pw_scratch_client **c);
/* True when this connect started the host. */
bool pw_scratch_started_host(const pw_scratch_client *c);

/* Run a cell (req->op must be PW_SCRATCH_OP_RUN). An error for a call the
 * host refused (capacity, interpreter mismatch) or a broken connection;
 * every cell that ran gives a result, whatever its status. */
pw_err *pw_scratch_run(pw_scratch_client *c, const pw_scratch_request *req, const pw_cancel *cancel,
		       pw_scratch_result **out);
/* Interrupt the cell a session is running (KeyboardInterrupt, then a kill
 * after the host's grace period). */
pw_err *pw_scratch_interrupt(pw_scratch_client *c, const char *session);
/* End a session: its worker is killed; its next result says so. */
pw_err *pw_scratch_discard(pw_scratch_client *c, const char *session);
pw_err *pw_scratch_sessions(pw_scratch_client *c, pw_scratch_list **out);

/* Direct mode, for programs that make many calls: the host lends this
 * client the session's worker (its pipes, over the socket) and steps out of
 * the path, so a cell costs one process wake-up each way instead of two
 * (scratch_direct.h). pw_scratch_run on that session then talks to the
 * worker itself, with the same results, bounds, budgets, interrupts and
 * loss notices. Meanwhile other clients' calls on the session wait, as
 * behind a running cell, and --list shows it "leased". The session must
 * have an idle worker with nothing to report (run a call first).
 * pw_scratch_release (or close, or this process ending) hands it back; a
 * reset, discard or --python call on the session releases it first. */
pw_err *pw_scratch_lease(pw_scratch_client *c, const char *session);
pw_err *pw_scratch_release(pw_scratch_client *c);
/* True while c holds session's lease and its worker is not known lost. */
bool pw_scratch_leased(const pw_scratch_client *c, const char *session);
/* pw_scratch_run for a call that may only go to the leased worker (one
 * that must not start an interpreter): no error and *out NULL, nothing
 * sent to the host, when it would have to go through the host (not
 * leased, reset, another interpreter, or the worker found gone before the
 * cell was sent; the lease is then handed back). */
pw_err *pw_scratch_run_leased(pw_scratch_client *c, const pw_scratch_request *req, const pw_cancel *cancel,
			      pw_scratch_result **out);

#endif
