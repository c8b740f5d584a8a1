/*
 * Background jobs as their callers see them: one job's record, its
 * operations with their attempts and the tail of its log, as the JSON every
 * front end shows (`pyward jobs show --json`, the job_status tool).
 * Threading: any thread (op.h).
 */
#ifndef PW_OPS_OP_JOBS_H
#define PW_OPS_OP_JOBS_H

#include "ops/ctx.h"

#include "catalog.h"
#include "jobs.h"

#include <jansson.h>

/* A job's record as an object (id, state, kind, target, command, ...). */
json_t *pw_json_job(const pw_job_rec *r);
/* One of a job's operations with its attempts. */
json_t *pw_json_job_operation(const pw_op_rec *op, const pw_attempt_list *att);

/* ---- the list: every job, newest first (read only: any mode). */
pw_err *pw_op_jobs_list(const pw_ops_ctx *ctx, pw_job_list *out);
/* {"schema": 1, "jobs": [pw_json_job, ...]} */
json_t *pw_op_jobs_list_json(const pw_job_list *l);

/* ---- cancel (needs a mode that writes): SIGTERM to the job's process
 * group (it records "cancelled" itself), SIGKILL after 15 s; a job whose
 * process ended without a record is closed as cancelled. *r: the job after. */
pw_err *pw_op_job_cancel(const pw_ops_ctx *ctx, int64_t id, pw_job_rec *r);
/* {"schema": 1, "job": {...}}: a job's record (jobs wait, jobs cancel). */
json_t *pw_op_job_json(const pw_job_rec *r);

/* ---- starting one: the operation runs in a detached copy of pyward, so
 * it outlives the caller (a terminal, an agent's connection). The job and
 * every operation it records carry the starter's identity (ctx->who: front
 * end, client, request, actor) exactly as a foreground call would. */
typedef struct pw_op_job_start_request {
	const char *kind;            /* the catalog kind the job runs, "venv.install" */
	const char *target;          /* what it acts on; may be NULL */
	double budget_s;             /* the budget it runs under */
	const char *const *command;  /* pyward's command that does the work, its word first */
	size_t command_count;
} pw_op_job_start_request;

/* Record the job, start it detached (pyward's own program with the
 * context's box root, workspace, mode, roots and budget, then command,
 * and $PYWARD_JOB), and fill *job once its process is recorded. */
pw_err *pw_op_job_start(const pw_ops_ctx *ctx, const pw_op_job_start_request *rq, pw_job_rec *job);
/* {"schema": 1, "job_id": ID, "job": {...}}: what starting one answers. */
json_t *pw_op_job_started_json(const pw_job_rec *job);

/* ---- in the detached process */
/* True when this process runs a job ($PYWARD_JOB is set). */
bool pw_op_job_running_here(void);
typedef struct pw_op_job_here {
	pw_job_rec job;   /* the job's record as its starter wrote it */
	pw_actor actor;   /* who started it */
} pw_op_job_here;
/* Claim the job named by $PYWARD_JOB (it must name this very process) and
 * take its starter's identity into ctx->who, pointing into *here (keep it
 * until pw_op_job_leave): what this process records is the starter's. */
pw_err *pw_op_job_enter(pw_ops_ctx *ctx, pw_op_job_here *here);
/* Record the job's end with exit status rc; *out: the finished record. */
pw_err *pw_op_job_leave(const pw_ops_ctx *ctx, pw_op_job_here *here, int rc, pw_job_rec *out);

/* One of a job's operations with its attempts, as recorded. */
typedef struct pw_op_job_operation {
	pw_op_rec op;
	pw_attempt_list attempts;
} pw_op_job_operation;

/* A job as `jobs show` and job_status show it: read in one walk of the
 * catalog; front ends render these records (text) or the JSON below. */
typedef struct pw_op_job_show_result {
	pw_job_rec job;
	pw_op_job_operation *operations; /* oldest first */
	size_t operation_count;
	char *log_tail;      /* or NULL when the log is gone */
} pw_op_job_show_result;

pw_err *pw_op_job_show(const pw_ops_ctx *ctx, int64_t id, int log_lines, pw_op_job_show_result *r);
/* {"schema": 1, "job": {..., "operations": [...], "log_tail": ...}} */
json_t *pw_op_job_show_json(const pw_op_job_show_result *r);
void pw_op_job_show_clear(pw_op_job_show_result *r);

#endif
