/* Background jobs' records as JSON: see op_jobs.h. */
#include "config.h"

#include "ops/op_jobs.h"

#include "ops/json.h"

#include "i18n.h"
#include "paths.h"
#include "proc.h"
#include "venv.h"
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_HEAD_CAP (1024 * 1024)
#define LOG_TAIL_CAP (256 * 1024)

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

/* ---------------------------------------------------------------- start */

typedef struct detach_ctx {
	pw_catalog *cat;
	int64_t id;
} detach_ctx;

static pw_err *job_started(void *ud, pid_t pid, int64_t proc_start)
{
	detach_ctx *d = ud;
	return pw_jobs_attach(d->cat, d->id, pid, proc_start);
}

/* pyward's own options, resolved, then the command. */
static char **child_argv(const pw_ops_ctx *ctx, const char *exe, const pw_op_job_start_request *rq)
{
	char **out = xcalloc(rq->command_count + 2 * ctx->root_count + 12, sizeof *out);
	size_t k = 0;
	out[k++] = xstrdup(exe);
	out[k++] = xstrdup("--box-root");
	out[k++] = xstrdup(ctx->box_root);
	out[k++] = xstrdup("-C");
	out[k++] = xstrdup(ctx->workspace);
	out[k++] = xstrdup("--mode");
	out[k++] = xstrdup(pw_mode_name(ctx->mode));
	for (size_t i = 0; i < ctx->root_count; i++) {
		out[k++] = xstrdup("--root");
		out[k++] = xstrdup(ctx->roots[i]);
	}
	if (ctx->timeout > 0) {
		out[k++] = xstrdup("--timeout");
		out[k++] = xasprintf("%.3f", ctx->timeout);
	}
	for (size_t i = 0; i < rq->command_count; i++)
		out[k++] = xstrdup(rq->command[i]);
	return out;
}

static void free_argv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static pw_err *log_dir(const pw_ops_ctx *ctx, char **out)
{
	char *cache = NULL, *tmp = NULL;
	pw_err *e = pw_venv_workspace_state(ctx->workspace, &cache, &tmp); /* .pyward/ and its .gitignore */
	free(cache);
	free(tmp);
	*out = xasprintf("%s/.pyward/jobs", ctx->workspace);
	if (!e)
		e = pw_paths_mkdirs(*out, 0700);
	return e;
}

static pw_err *spawn(const pw_ops_ctx *ctx, detach_ctx *d, const char *log, const pw_op_job_start_request *rq)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return pw_err_errno(PW_ERR_FAILED, errno, _("run the command without --background"),
				    _("cannot find pyward's own program to start it in the background"));
	exe[n] = '\0';
	char **args = child_argv(ctx, exe, rq);
	char *env = xasprintf("%s=%lld", PW_JOB_ENV, (long long)d->id);
	const char *env_add[] = { env, NULL };
	pw_job_spawn sp = { .exe = exe, .argv = args, .env_add = env_add, .log_path = log,
			    .head_cap = LOG_HEAD_CAP, .tail_cap = LOG_TAIL_CAP, .started = job_started, .ud = d };
	pw_err *e = pw_jobs_detach(&sp);
	free(env);
	free_argv(args);
	return e;
}

pw_err *pw_op_jobs_list(const pw_ops_ctx *ctx, pw_job_list *out)
{
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_jobs_list(cat, 0, out);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_jobs_list_json(const pw_job_list *l)
{
	json_t *a = json_array();
	for (size_t i = 0; i < l->count; i++)
		json_array_append_new(a, pw_json_job(&l->items[i]));
	return pw_json_result("jobs", a);
}

pw_err *pw_op_job_start(const pw_ops_ctx *ctx, const pw_op_job_start_request *rq, pw_job_rec *job)
{
	memset(job, 0, sizeof *job);
	detach_ctx d = { 0 };
	char *dir = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("starting a background job"));
	if (!e)
		e = log_dir(ctx, &dir);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &d.cat);
	/* the job's record says who asked, as its operations will */
	char *args = pw_ops_who_text(&ctx->who);
	pw_job_start s = { .kind = rq->kind, .target = rq->target, .args = args, .workspace = ctx->workspace,
			   .log_dir = dir, .budget_s = rq->budget_s, .actor = ctx->who.actor };
	if (!e)
		e = pw_jobs_begin(d.cat, &s, &d.id);
	if (!e)
		e = pw_jobs_get(d.cat, d.id, job);
	if (!e)
		e = spawn(ctx, &d, job->log_path, rq);
	if (e && d.id)
		pw_err_free(pw_jobs_close_dead(d.cat, d.id, PW_OUTCOME_FAILED, 1, pw_err_message(e)));
	pw_job_rec_clear(job);
	if (!e)
		e = pw_jobs_get(d.cat, d.id, job); /* with its process */
	pw_catalog_close(&d.cat);
	free(args);
	free(dir);
	return e;
}

json_t *pw_op_job_started_json(const pw_job_rec *job)
{
	return json_pack("{s:i,s:I,s:o}", "schema", 1, "job_id", (json_int_t)job->id, "job", pw_json_job(job));
}

/* ---------------------------------------------------------------- in the job */

bool pw_op_job_running_here(void)
{
	const char *v = getenv(PW_JOB_ENV);
	return v && *v;
}

pw_err *pw_op_job_enter(pw_ops_ctx *ctx, pw_op_job_here *here)
{
	memset(here, 0, sizeof *here);
	const char *text = getenv(PW_JOB_ENV);
	char *end = NULL;
	errno = 0;
	long long id = text ? strtoll(text, &end, 10) : 0;
	if (!text || !*text || *end || errno || id <= 0)
		return pw_err_new(PW_ERR_USAGE, _("$PYWARD_JOB is set by 'pyward ... --background'; unset it"),
				  _("'%s' is not a job id"), text ? text : "");
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_jobs_claim(cat, id);
	if (!e)
		e = pw_jobs_get(cat, id, &here->job);
	pw_catalog_close(&cat);
	if (e)
		return e;
	/* Who started it, as the record says (claimed: it names this very
	 * process); the host and pid are this process's. */
	pw_catalog_actor_current(&here->actor);
	snprintf(here->actor.user, sizeof here->actor.user, "%s", here->job.user);
	here->actor.uid = (uid_t)here->job.uid;
	ctx->who = (pw_ops_who){ .front_end = "job", .args = here->job.args, .job_id = id, .actor = &here->actor };
	return NULL;
}

pw_err *pw_op_job_leave(const pw_ops_ctx *ctx, pw_op_job_here *here, int rc, pw_job_rec *out)
{
	memset(out, 0, sizeof *out);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_jobs_finish(cat, here->job.id, rc);
	if (!e)
		e = pw_jobs_get(cat, here->job.id, out);
	pw_catalog_close(&cat);
	return e;
}

/* ---------------------------------------------------------------- show */

static pw_err *operations(pw_catalog *cat, int64_t job, pw_op_job_show_result *r)
{
	int64_t *ids = NULL;
	size_t n = 0;
	pw_err *e = pw_jobs_operations(cat, job, &ids, &n);
	if (!e && n)
		r->operations = xcalloc(n, sizeof *r->operations);
	for (size_t i = 0; !e && i < n; i++) {
		pw_op_job_operation *o = &r->operations[r->operation_count++];
		e = pw_catalog_op_get(cat, ids[i], &o->op, &o->attempts);
	}
	free(ids);
	return e;
}

pw_err *pw_op_job_show(const pw_ops_ctx *ctx, int64_t id, int log_lines, pw_op_job_show_result *r)
{
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_jobs_get(cat, id, &r->job);
	if (!e)
		pw_err_free(pw_jobs_log_tail(r->job.log_path, log_lines, &r->log_tail)); /* a log may be gone */
	if (!e)
		e = operations(cat, id, r);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_job_show_json(const pw_op_job_show_result *r)
{
	json_t *j = pw_json_job(&r->job), *ops = json_array();
	for (size_t i = 0; i < r->operation_count; i++)
		json_array_append_new(ops, pw_json_job_operation(&r->operations[i].op, &r->operations[i].attempts));
	json_object_set_new(j, "operations", ops);
	json_object_set_new(j, "log_tail", pw_json_str(r->log_tail));
	return pw_json_result("job", j);
}

void pw_op_job_show_clear(pw_op_job_show_result *r)
{
	pw_job_rec_clear(&r->job);
	for (size_t i = 0; i < r->operation_count; i++) {
		pw_op_rec_clear(&r->operations[i].op);
		pw_attempt_list_clear(&r->operations[i].attempts);
	}
	free(r->operations);
	r->operations = NULL;
	r->operation_count = 0;
	free(r->log_tail);
	r->log_tail = NULL;
}

/* ---------------------------------------------------------------- cancel */

#define CANCEL_GRACE_MS 15000
#define KILL_WAIT_MS 5000

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static bool is_running(const pw_job_rec *r)
{
	return strcmp(r->state, PW_OUTCOME_RUNNING) == 0;
}

/* Poll until the job's process is gone or ms have passed; true when gone. */
static bool wait_gone(const pw_job_rec *r, long ms)
{
	for (long waited = 0; waited < ms; waited += 50) {
		if (!pw_proc_alive(r->pid, r->proc_start))
			return true;
		sleep_ms(50);
	}
	return !pw_proc_alive(r->pid, r->proc_start);
}

/* SIGTERM to the job's process group (it records "cancelled" itself),
 * SIGKILL when it does not stop within the grace time. */
static const char *stop_process(const pw_job_rec *r)
{
	if (pw_proc_alive(r->pid, r->proc_start))
		kill(-(pid_t)r->pid, SIGTERM);
	if (wait_gone(r, CANCEL_GRACE_MS))
		return NULL;
	kill(-(pid_t)r->pid, SIGKILL);
	wait_gone(r, KILL_WAIT_MS);
	return _("the job did not stop within 15 s of SIGTERM and was killed (SIGKILL)");
}

static pw_err *cancel(pw_catalog *cat, pw_job_rec *r)
{
	if (!is_running(r))
		return pw_err_new(PW_ERR_FAILED, _("'pyward jobs show ID' has its outcome"),
				  _("job %lld is not running (%s): nothing to cancel"), (long long)r->id, r->state);
	if (kill(-(pid_t)r->pid, 0) != 0 && errno == EPERM)
		return pw_err_new(PW_ERR_REFUSED, _("ask them, or run it as root"),
				  _("job %lld belongs to %s, and you may not signal it"), (long long)r->id, r->user);
	pw_actor me;
	pw_catalog_actor_current(&me);
	pw_err *e = pw_jobs_request_cancel(cat, r->id, me.user);
	if (e)
		return e;
	const char *why = stop_process(r);
	int64_t id = r->id;
	pw_job_rec_clear(r);
	e = pw_jobs_get(cat, id, r);
	if (!e && is_running(r))
		return pw_err_new(PW_ERR_FAILED, _("'pyward jobs show ID' says what it is doing"),
				  _("job %lld did not stop, even after SIGKILL"), (long long)id);
	if (!e && strcmp(r->state, PW_OUTCOME_INTERRUPTED) == 0) {
		e = pw_jobs_close_dead(cat, id, PW_OUTCOME_CANCELLED, 130,
				       why ? why : _("the job's process ended without recording its outcome"));
		pw_job_rec_clear(r);
		if (!e)
			e = pw_jobs_get(cat, id, r);
	}
	return e;
}

pw_err *pw_op_job_cancel(const pw_ops_ctx *ctx, int64_t id, pw_job_rec *r)
{
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("cancelling a job"));
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_jobs_get(cat, id, r);
	if (!e)
		e = cancel(cat, r);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_job_json(const pw_job_rec *r)
{
	return pw_json_result("job", pw_json_job(r));
}
