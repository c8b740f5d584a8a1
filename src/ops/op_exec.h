/*
 * exec: one run of the managed runtime's interpreter as a child (its own
 * process group, scrubbed environment, the workspace as its folder), with
 * a hard time budget and no fallback to another Python. Not recorded in
 * the catalog (it changes nothing pyward manages). The CLI passes the
 * output through as it comes; the agent tool server takes the captured
 * result as JSON, built here.
 * Threading: any thread (op.h).
 */
#ifndef PW_OPS_OP_EXEC_H
#define PW_OPS_OP_EXEC_H

#include "ops/ctx.h"
#include "ops/op.h"

#include "runner.h"

#include <jansson.h>

typedef struct pw_op_exec_request {
	const char *const *args;   /* the interpreter's arguments, NULL-terminated ("-c", code) */
	const char *stdin_path;    /* NULL: /dev/null */
	size_t cap_bytes;          /* captured per stream (head and tail); 0: 1 MiB */
	pw_line_fn on_line;        /* the output as it comes; may be NULL */
	void *line_ud;
} pw_op_exec_request;

typedef struct pw_op_exec_result {
	char *python;
	double budget;             /* seconds (the context's timeout); 0: none */
	pw_run_result *run;
} pw_op_exec_result;

/* PW_ERR_NOTFOUND (with the hint to install it) when no runtime is
 * provisioned; every run that started is a result. */
pw_err *pw_op_exec(const pw_ops_ctx *ctx, const pw_op_exec_request *rq, const pw_op_io *io, pw_op_exec_result *r);
json_t *pw_op_exec_json(const pw_op_exec_result *r);
/* The exit status a command gives: the child's, 128 + signal, 4 timed out, 130 cancelled. */
int pw_op_exec_exit_status(const pw_op_exec_result *r);
void pw_op_exec_clear(pw_op_exec_result *r);

#endif
