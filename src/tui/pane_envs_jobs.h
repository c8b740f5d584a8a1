/*
 * The Environments pane's background work: discovery, probing the base
 * interpreters for the create chooser, create, install, uninstall and
 * remove. Each runs on a worker thread through the same calls and set-up
 * as `pyward venv` (venvops.h): mode check, guard, child environment,
 * catalog operation, lock, pip chain with mirrors and proxy ports, budget.
 * pip jobs post the operation they opened and pip's output lines, which
 * the Attempts pane follows.
 */
#ifndef PW_TUI_PANE_ENVS_JOBS_H
#define PW_TUI_PANE_ENVS_JOBS_H

#include "ops/venvops.h"

#include "tui/worker.h"

#include <stdbool.h>
#include <stdint.h>

/* Message codes of the pane's pip jobs (ev->owner is the pane's state). */
enum {
	PW_ENVS_MSG_OP = 0x456e01,  /* data: pw_envs_op_msg *, the operation has begun */
	PW_ENVS_MSG_LINE,           /* data: char *, one line of pip's output */
};

typedef struct pw_envs_op_msg {
	int64_t id;
	char *kind;
	char *target;
} pw_envs_op_msg;

typedef enum pw_envs_job_kind {
	PW_ENVS_DISCOVER,
	PW_ENVS_PROBE,
	PW_ENVS_CREATE,
	PW_ENVS_INSTALL,
	PW_ENVS_UNINSTALL,
	PW_ENVS_REMOVE,
} pw_envs_job_kind;

/* One base interpreter the create chooser offers. */
typedef struct pw_envs_candidate {
	char *label;        /* "automatic", "managed runtime", "python3 on PATH" … */
	char *python;       /* what create is given as the explicit interpreter; NULL: automatic */
	char *path;         /* the interpreter found, NULL when none */
	char *version;
	char *why;          /* core's words for the choice, or why it cannot be used */
	bool usable;
} pw_envs_candidate;

#define PW_ENVS_CANDIDATES 4

typedef struct pw_envs_job {
	pw_envs_job_kind kind;
	const pw_ops_ctx *ctx;
	/* inputs */
	char *target;           /* create: NAME|PATH as typed; others: the environment's path */
	char *python;           /* create: explicit interpreter, NULL for automatic */
	pw_spec_list specs;     /* install / uninstall, checked */
	bool upgrade;
	char *index, *proxy;    /* install: NULL = settings, then the chain */
	/* results (read in the DONE event) */
	pw_venv_list list;
	pw_envs_candidate cand[PW_ENVS_CANDIDATES];
	int cand_count;
	pw_created created;
	pw_pip_result pip;
	int64_t op;
	bool repaired_pip;
} pw_envs_job;

pw_envs_job *pw_envs_job_new(pw_envs_job_kind kind, const pw_ops_ctx *ctx);
void pw_envs_job_free(void *job);
/* The worker function for every kind. */
pw_err *pw_envs_job_run(pw_job *job, void *ud);

/* Parse what the user typed for install/uninstall: specs separated by
 * blanks, "-r FILE", "-e PATH" and "-U"/"--upgrade" (install only), each
 * checked as the CLI checks its operands. */
pw_err *pw_envs_parse_specs(const pw_ops_ctx *ctx, const char *text, bool install, pw_spec_list *l, bool *upgrade);

#endif
