/*
 * The Python pane's background work (worker threads, no curses): running
 * one cell through the scratchpad operation (ops/op_scratch.h: it starts
 * the shared host when none runs; the job's cancel token interrupts), and
 * reading the session's state (without starting anything) for the pane's
 * header.
 */
#ifndef PW_TUI_PANE_PYTHON_JOBS_H
#define PW_TUI_PANE_PYTHON_JOBS_H

#include "tui/worker.h"

#include "ops/op_scratch.h"

#include <stdbool.h>
#include <stdint.h>

/* One cell: what the pane fills in, what the job leaves for its DONE. */
typedef struct pw_pycell {
	const pw_ops_ctx *ctx; /* the app's (prepared: read-only, shared by threads) */
	char *session, *code;
	char *python, *venv;   /* chosen in the pane (Ctrl-T), or NULL: the CLI's default */
	char *fallback_python; /* the session's running interpreter, used when
				  there is no managed runtime (or NULL) */
	bool reset;	       /* a fresh worker first (code may be NULL) */
	pw_scratch_result *result;
} pw_pycell;

pw_err *pw_pycell_run(pw_job *job, void *ud);
void pw_pycell_free(void *ud);

/* The header's facts: the managed runtime's interpreter, and the session
 * as the host knows it (when a host runs and has it). */
typedef struct pw_pystatus {
	const pw_ops_ctx *ctx;
	char *box_root, *session;
	char *runtime_python, *runtime_version; /* NULL when not installed */
	char *no_runtime;			/* why not, for people */
	bool host_running, found;
	char *state, *python; /* the session's, when found */
	int64_t executions, generation;
	unsigned cells_at_start; /* the pane's count when the read began */
} pw_pystatus;

pw_err *pw_pystatus_read(pw_job *job, void *ud);
void pw_pystatus_free(void *ud);

#endif
