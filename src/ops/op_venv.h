/*
 * A workspace's environments, one function each, one catalog kind each:
 * venv discover (read only, not recorded), venv.create, venv.install,
 * venv.uninstall, venv.remove. The CLI's `pyward venv` and the agent tool
 * server call these; each result has one JSON form, built here (new
 * references), the CLI's --json.
 * Threading: any thread (op.h).
 */
#ifndef PW_OPS_OP_VENV_H
#define PW_OPS_OP_VENV_H

#include "ops/ctx.h"
#include "ops/op.h"
#include "ops/venvops.h"

#include "jobs.h"
#include "pip.h"
#include "runner.h"
#include "venv.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- discover: environments under dir (NULL: the allowed roots), depth 0: 2. */
typedef struct pw_op_venv_discover_result {
	pw_venv_list list;
} pw_op_venv_discover_result;
pw_err *pw_op_venv_discover(const pw_ops_ctx *ctx, const char *dir, int depth, pw_op_venv_discover_result *r);
json_t *pw_op_venv_discover_json(const pw_op_venv_discover_result *r);
void pw_op_venv_discover_clear(pw_op_venv_discover_result *r);

/* ---- create: name or path (NULL: .venv), an interpreter (NULL: the managed
 * one, else python3), seed "fast" (NULL), "pip" or "none". */
typedef struct pw_op_venv_create_request {
	const char *name;
	const char *python;
	const char *seed;
} pw_op_venv_create_request;
pw_err *pw_op_venv_create(const pw_ops_ctx *ctx, const pw_op_venv_create_request *rq, const pw_op_io *io,
			  pw_created *r);
json_t *pw_op_venv_create_json(const pw_created *r);

/* ---- install and uninstall: pip with the attempt chain (install) or
 * offline (uninstall), under the environment's lock. */
typedef struct pw_op_venv_pip_request {
	bool install;                    /* else uninstall */
	const char *venv;                /* NULL: the one in the workspace (install: else a new .venv) */
	const char *const *specs;
	size_t spec_count;
	const char *const *requirements; /* -r files (install) */
	size_t req_count;
	const char *const *editables;    /* -e folders (install) */
	size_t editable_count;
	const char *index, *proxy;       /* NULL: the settings */
	bool upgrade;
	const char *lock_note;           /* who holds the lock, for a waiting caller (the command line) */
	pw_line_fn on_line;              /* pip's output as it comes, may be NULL */
	void *line_ud;
	void (*say)(void *ud, const char *text); /* notes for a person (creating .venv, repairing pip); may be NULL */
	void *say_ud;
} pw_op_venv_pip_request;

typedef struct pw_op_venv_pip_result {
	int64_t operation;   /* 0 when it was refused before it began, or its outcome
			      * could not be recorded (the error says so) */
	char *venv;
	pw_pip_result pip;
} pw_op_venv_pip_result;

/* What can be refused before anything runs (mode, specs, the target):
 * for a caller that starts the run as a background job. *venv: the target
 * (the job creates .venv when it is new). */
pw_err *pw_op_venv_pip_check(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, char **venv);
pw_err *pw_op_venv_pip(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, const pw_op_io *io,
		       pw_op_venv_pip_result *r);
/* The same run as a background job (op_jobs.h): checked now, then run by
 * a detached pyward that records it as the caller's (ctx->who). */
pw_err *pw_op_venv_pip_start(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, pw_job_rec *job);
/* The run's JSON, meaningful once r->operation is set; e: how it ended. */
json_t *pw_op_venv_pip_json(const pw_op_venv_pip_result *r, const pw_err *e);
void pw_op_venv_pip_clear(pw_op_venv_pip_result *r);

/* The named environment (resolved, confined), else the one environment
 * found in the workspace (*out stays NULL when there is none and create_ok). */
pw_err *pw_op_venv_find(const pw_ops_ctx *ctx, const char *venv, char **out, bool create_ok);

/* ---- remove: a folder carrying pyvenv.cfg (or conda-meta/), confined. */
pw_err *pw_op_venv_remove(const pw_ops_ctx *ctx, const char *name, char **removed);
json_t *pw_op_venv_remove_json(const char *removed);

#endif
