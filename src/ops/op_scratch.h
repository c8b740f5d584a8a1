/*
 * The scratchpad operations: run a cell (or a reset) in a session's
 * persistent worker, interrupt or discard a session, list the sessions,
 * and serve the shared host (the hidden `pyward python --host`). The CLI's
 * `python`, the full-screen Python pane and the MCP `python` tool all call
 * these; the JSON of a result and of a session list is built here.
 *
 * A cell can change whatever its user can: refused in read-only mode (a
 * reset alone changes nothing and is allowed). An environment is confined
 * by the guard and its interpreter must resolve into it, the managed
 * runtime or the base its pyvenv.cfg names. Like exec, nothing is recorded
 * in the catalog (a cell changes nothing pyward manages), so a cell costs
 * no catalog round trip. Workers get the caller's environment (scrubbed by
 * the client and again by the host) and, as exec's children do, the
 * runtime's bundled terminfo when the system has none for $TERM.
 *
 * Threading: any thread (op.h). A connection serves one thread at a time.
 */
#ifndef PW_OPS_OP_SCRATCH_H
#define PW_OPS_OP_SCRATCH_H

#include "ops/ctx.h"
#include "ops/op.h"

#include "scratch_proto.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A connection to the host that a front end keeps between calls (the MCP
 * server keeps one per session and leases its own session); NULL starts
 * one. Closing hands a lease back. */
typedef struct pw_op_scratch_conn pw_op_scratch_conn;
void pw_op_scratch_conn_close(pw_op_scratch_conn **c);

/* What the front end tells people to do when no interpreter is there; NULL
 * members (or NULL hints) take the CLI's words. */
typedef struct pw_op_scratch_hints {
	const char *no_python;         /* no managed runtime, nothing chosen */
	/* the same when the workspace has exactly one environment: a malloc'd
	 * hint naming it (NULL: no_python) */
	char *(*no_python_one_env)(const char *name);
	const char *not_venv;          /* the named folder is no environment */
} pw_op_scratch_hints;

typedef struct pw_op_scratch_request {
	const char *session;         /* NULL: the workspace's default session */
	const char *code;            /* NULL or "": nothing to run (then reset is needed) */
	bool reset;                  /* a fresh worker first */
	const char *venv;            /* this environment's interpreter (a bare name is a
					folder of the workspace), or NULL */
	const char *python;          /* else this interpreter (a path, or a name on PATH), or NULL */
	const char *fallback_python; /* else the managed runtime, else this one, else refused */
	size_t max_output;           /* per stream; 0: the default */
	bool lease;                  /* lease the session afterwards (direct mode; needs a kept conn) */
	const pw_op_scratch_hints *hints;
	/* When set, a leased cell's result may come here as soon as the worker
	 * replied, as the text pw_op_scratch_json_text would give (the result
	 * then says answered: see pw_scratch_answer_fn) */
	pw_scratch_answer_fn answer;
	void *answer_arg;
	/* When set, the caller's input, watched while a leased cell runs;
	 * handed over at once on any other path (see pw_scratch_hand_over_fn) */
	pw_scratch_hand_over_fn hand_over;
	void *hand_over_arg;
	int watch_fd;
} pw_op_scratch_request;

typedef struct pw_op_scratch_result {
	pw_scratch_result *cell;
	double budget;               /* the cell's budget in seconds; 0: none */
} pw_op_scratch_result;

/* True when name is a valid session name (1-64 of A-Z a-z 0-9 . _ -). */
bool pw_op_scratch_session_ok(const char *name);
/* The workspace's default session name (malloc'd). */
char *pw_op_scratch_default_session(const char *workspace);
/* A cell's budget: the context's timeout, else the `timeout` setting, else none. */
double pw_op_scratch_budget(const pw_ops_ctx *ctx);

/* Run rq's code (or reset) through *conn (NULL conn: a connection for this
 * call only; *conn NULL: one is made and kept). io's cancel token
 * interrupts the cell; consent is never asked. An error for a refusal,
 * a call the host refused or a broken connection; every cell that ran
 * gives a result, whatever its status. */
pw_err *pw_op_scratch_run(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, const pw_op_io *io,
			  pw_op_scratch_conn **conn, pw_op_scratch_result *r);
/* {"notices": [...], "session", ..., "schema": 1}: the host's result with
 * the schema member every --json document has (last: notices stay first). */
json_t *pw_op_scratch_json(const pw_op_scratch_result *r);
/* The same JSON as compact text, written without building the tree (the
 * MCP server's python tool answers with it). */
char *pw_op_scratch_json_text(const pw_op_scratch_result *r);
/* 0 ok or reset, 1 error or lost, 4 timed out, 130 interrupted. */
int pw_op_scratch_exit_status(const pw_op_scratch_result *r);
void pw_op_scratch_clear(pw_op_scratch_result *r);

/* The host's sessions; PW_ERR_NOTFOUND when no host runs (none is started). */
pw_err *pw_op_scratch_list(const pw_ops_ctx *ctx, pw_scratch_list **out);
/* {"sessions": [...], "host": {...}, "schema": 1}; NULL l: no host runs (an empty list). */
json_t *pw_op_scratch_list_json(const pw_scratch_list *l);
/* Interrupt a session's running cell / end a session (its worker is killed,
 * its next result says so). PW_ERR_NOTFOUND when no host runs. */
pw_err *pw_op_scratch_interrupt(const pw_ops_ctx *ctx, const char *session);
pw_err *pw_op_scratch_discard(const pw_ops_ctx *ctx, const char *session);
/* {"session": S, "done": "interrupted"|"discarded", "schema": 1} */
json_t *pw_op_scratch_done_json(const char *session, bool discarded);

/* Serve the shared host until it ends (the process a client started as
 * `pyward python --host`); setup is an error the front end met preparing
 * the context (then no host runs; it is returned). *ready_fd is the
 * starter's pipe: on an error the front end reports it, then closes the
 * pipe, and the starter reads the reason from the host's log. */
pw_err *pw_op_scratch_serve(const pw_ops_ctx *ctx, pw_err *setup, int *ready_fd);

#endif
