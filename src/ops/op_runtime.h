/*
 * The managed runtime's operations, one function each, one catalog kind
 * each: runtime.status (read only, not recorded), runtime.install,
 * runtime.verify, runtime.rollback, runtime.remove, runtime.baseline.
 * Each takes the context, its request, the io (events, consent, cancel:
 * op.h) and fills its result; each result has one JSON form, built here
 * (pw_op_runtime_*_json, new references) for every front end.
 *
 * Ownership: results own what they hold; clear them with their _clear.
 * A result may be partly filled when the operation fails (the operation id,
 * the attempts), and its JSON is still meaningful then where noted.
 * Threading: any thread (op.h); the TUI runs these on worker threads.
 */
#ifndef PW_OPS_OP_RUNTIME_H
#define PW_OPS_OP_RUNTIME_H

#include "ops/ctx.h"
#include "ops/op.h"
#include "ops/runtime_plan.h"

#include "pip.h"
#include "runtime.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- status: what is installed, the pin an install would take, and
 * whether the installed runtime has its baseline. */
typedef struct pw_op_runtime_status_result {
	pw_runtime_info info;
	pw_pins *pins;
	const pw_pin *pin;     /* NULL when the pins say nothing for this machine */
	char *baseline;        /* the baseline file an install uses; NULL: none */
	char *baseline_names;  /* what it lists */
	char **baseline_missing; /* installed runtime only: names it lacks (NULL-terminated) */
	size_t missing_count;
} pw_op_runtime_status_result;
/* "installed, baseline missing" and the like: the state for people. */
const char *pw_op_runtime_status_state(const pw_op_runtime_status_result *r);
pw_err *pw_op_runtime_status(const pw_ops_ctx *ctx, const pw_runtime_request *rq, pw_op_runtime_status_result *r);
json_t *pw_op_runtime_status_json(const pw_op_runtime_status_result *r);
void pw_op_runtime_status_clear(pw_op_runtime_status_result *r);

/* ---- install: plan, one consent for both parts (the archive's lines and
 * the baseline's), download, verify, swap, then the baseline step inside
 * the same catalog operation. When the baseline fails the runtime stays
 * installed: the error says "runtime installed, baseline failed" (exit
 * status 1), runtime_installed is true and the baseline's attempts are in
 * the result (and its JSON, which is meaningful then). */
typedef struct pw_op_runtime_install_result {
	pw_runtime_plan plan;
	bool dry_run;          /* only the plan was made */
	int64_t operation;     /* the catalog operation (0 for a dry run, and when its
				* outcome could not be recorded: the error says so) */
	pw_runtime_install_result install;
	bool runtime_installed; /* the runtime part finished */
	bool baseline_ran;
	bool baseline_failed;
	char *baseline_error;  /* why, when it failed */
	pw_pip_result pip;     /* the baseline's attempts */
	pw_runtime_changes changes;
} pw_op_runtime_install_result;
#define PW_OP_INSTALL_CONSENT_LINES (PW_RUNTIME_PLAN_LINES + 3)
/* The consent statement for a plan: the archive's lines, then the
 * baseline's when it has one (lines owned by *lines: free each). */
void pw_op_runtime_install_consent(const pw_runtime_request *rq, const pw_runtime_plan *plan,
				   char *lines[PW_OP_INSTALL_CONSENT_LINES], pw_consent *what);
pw_err *pw_op_runtime_install(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			      pw_op_runtime_install_result *r);
json_t *pw_op_runtime_install_json(const pw_runtime_request *rq, const pw_op_runtime_install_result *r);
void pw_op_runtime_install_clear(pw_op_runtime_install_result *r);

/* ---- verify: the files against the manifest. In read-only mode it reads
 * the catalog and records nothing. Differences are no error: diffs > 0. */
typedef struct pw_op_runtime_verify_result {
	pw_runtime_verify_result verify;
	size_t diffs;
} pw_op_runtime_verify_result;
pw_err *pw_op_runtime_verify(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_verify_result *r);
json_t *pw_op_runtime_verify_json(const pw_op_runtime_verify_result *r);
void pw_op_runtime_verify_clear(pw_op_runtime_verify_result *r);

/* ---- rollback: the previous install becomes current. */
typedef struct pw_op_runtime_rollback_result {
	char *version;         /* now current */
} pw_op_runtime_rollback_result;
pw_err *pw_op_runtime_rollback(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_rollback_result *r);
json_t *pw_op_runtime_rollback_json(const pw_op_runtime_rollback_result *r);
void pw_op_runtime_rollback_clear(pw_op_runtime_rollback_result *r);

/* ---- remove: every install, for every user; asks consent first. */
typedef struct pw_op_runtime_remove_result {
	int64_t removed;       /* installs removed (0: there was none) */
} pw_op_runtime_remove_result;
pw_err *pw_op_runtime_remove(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_remove_result *r);
json_t *pw_op_runtime_remove_json(const pw_op_runtime_remove_result *r);

/* ---- baseline: a requirements file (rq->requirements, else the `baseline`
 * setting, else data/requirements-baseline.txt) installed into the runtime
 * as binary wheels through the attempt chain (rq->index first); what it adds
 * goes into the runtime's manifest. The JSON is meaningful on failure too. */
typedef struct pw_op_runtime_baseline_result {
	char *requirements;    /* the file used */
	int64_t operation;
	pw_pip_result pip;
	pw_runtime_changes changes;
	bool failed;
} pw_op_runtime_baseline_result;
pw_err *pw_op_runtime_baseline(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			       pw_op_runtime_baseline_result *r);
json_t *pw_op_runtime_baseline_json(const pw_op_runtime_baseline_result *r);
void pw_op_runtime_baseline_clear(pw_op_runtime_baseline_result *r);

#endif
