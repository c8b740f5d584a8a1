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

typedef struct pw_op_job_show_result {
	pw_job_rec job;
	json_t *operations;  /* array */
	char *log_tail;      /* or NULL when the log is gone */
} pw_op_job_show_result;

pw_err *pw_op_job_show(const pw_ops_ctx *ctx, int64_t id, int log_lines, pw_op_job_show_result *r);
/* {"schema": 1, "job": {..., "operations": [...], "log_tail": ...}} */
json_t *pw_op_job_show_json(const pw_op_job_show_result *r);
void pw_op_job_show_clear(pw_op_job_show_result *r);

#endif
