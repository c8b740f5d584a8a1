/* Background jobs' records as JSON: see op_jobs.h. */
#include "config.h"

#include "ops/op_jobs.h"

#include "ops/json.h"

#include <stdlib.h>
#include <string.h>

json_t *pw_json_job(const pw_job_rec *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "id", json_integer(r->id));
	json_object_set_new(j, "state", pw_json_str(r->state));
	json_object_set_new(j, "kind", pw_json_str(r->kind));
	json_object_set_new(j, "target", pw_json_str(r->target));
	json_object_set_new(j, "command", pw_json_str(r->args));
	json_object_set_new(j, "workspace", pw_json_str(r->workspace));
	json_object_set_new(j, "log", pw_json_str(r->log_path));
	json_object_set_new(j, "budget_s", json_real(r->budget_s));
	json_object_set_new(j, "user", pw_json_str(r->user));
	json_object_set_new(j, "host", pw_json_str(r->host));
	json_object_set_new(j, "pid", r->pid > 0 ? json_integer(r->pid) : json_null());
	json_object_set_new(j, "started_at", pw_json_str(r->started_at));
	json_object_set_new(j, "finished_at", pw_json_str(r->finished_at));
	json_object_set_new(j, "duration_ms", json_integer(r->duration_ms));
	json_object_set_new(j, "exit_status", r->exit_status >= 0 ? json_integer(r->exit_status) : json_null());
	json_object_set_new(j, "stop_reason", pw_json_str(r->stop_reason));
	json_object_set_new(j, "cancel_requested_at", pw_json_str(r->cancel_requested_at));
	json_object_set_new(j, "cancelled_by", pw_json_str(r->cancelled_by));
	return j;
}

json_t *pw_json_job_operation(const pw_op_rec *op, const pw_attempt_list *att)
{
	json_t *a = json_array();
	for (size_t k = 0; k < att->count; k++)
		json_array_append_new(a, pw_json_attempt_rec(&att->items[k], true));
	return json_pack("{s:I,s:s,s:o,s:s,s:o,s:o}", "id", (json_int_t)op->id, "kind", op->kind, "target",
			 pw_json_str(op->target), "outcome", op->outcome, "stop_reason", pw_json_str(op->stop_reason),
			 "attempts", a);
}

static pw_err *operations(pw_catalog *cat, int64_t job, json_t *out)
{
	int64_t *ids = NULL;
	size_t n = 0;
	pw_err *e = pw_jobs_operations(cat, job, &ids, &n);
	for (size_t i = 0; !e && i < n; i++) {
		pw_op_rec op = { 0 };
		pw_attempt_list att = { 0 };
		e = pw_catalog_op_get(cat, ids[i], &op, &att);
		if (!e)
			json_array_append_new(out, pw_json_job_operation(&op, &att));
		pw_op_rec_clear(&op);
		pw_attempt_list_clear(&att);
	}
	free(ids);
	return e;
}

pw_err *pw_op_job_show(const pw_ops_ctx *ctx, int64_t id, int log_lines, pw_op_job_show_result *r)
{
	memset(r, 0, sizeof *r);
	r->operations = json_array();
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_jobs_get(cat, id, &r->job);
	if (!e)
		pw_err_free(pw_jobs_log_tail(r->job.log_path, log_lines, &r->log_tail)); /* a log may be gone */
	if (!e)
		e = operations(cat, id, r->operations);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_job_show_json(const pw_op_job_show_result *r)
{
	json_t *j = pw_json_job(&r->job);
	json_object_set(j, "operations", r->operations);
	json_object_set_new(j, "log_tail", pw_json_str(r->log_tail));
	return json_pack("{s:i,s:o}", "schema", 1, "job", j);
}

void pw_op_job_show_clear(pw_op_job_show_result *r)
{
	pw_job_rec_clear(&r->job);
	json_decref(r->operations);
	r->operations = NULL;
	free(r->log_tail);
	r->log_tail = NULL;
}
