/* The Environments pane's jobs: the CLI's venv calls, run on worker threads. */
#include "config.h"

#include "tui/pane_envs_jobs.h"

#include "clock.h"
#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

pw_envs_job *pw_envs_job_new(pw_envs_job_kind kind, const pw_ops_ctx *ctx)
{
	pw_envs_job *j = xcalloc(1, sizeof *j);
	j->kind = kind;
	j->ctx = ctx;
	return j;
}

static void candidate_clear(pw_envs_candidate *c)
{
	free(c->label);
	free(c->python);
	free(c->path);
	free(c->version);
	free(c->why);
}

void pw_envs_job_free(void *p)
{
	pw_envs_job *j = p;
	if (!j)
		return;
	free(j->target);
	free(j->python);
	free(j->index);
	free(j->proxy);
	pw_spec_list_clear(&j->specs);
	pw_venv_list_clear(&j->list);
	for (int i = 0; i < j->cand_count; i++)
		candidate_clear(&j->cand[i]);
	pw_created_clear(&j->created);
	pw_pip_result_clear(&j->pip);
	free(j);
}

static void op_msg_free(void *p)
{
	pw_envs_op_msg *m = p;
	free(m->kind);
	free(m->target);
	free(m);
}

static void post_op(pw_job *job, int64_t id, const char *kind, const char *target)
{
	pw_envs_op_msg *m = xcalloc(1, sizeof *m);
	m->id = id;
	m->kind = xstrdup(kind);
	m->target = xstrdup(target);
	pw_job_post(job, PW_ENVS_MSG_OP, m, op_msg_free);
}

/* pip's output, one line at a time, to the main thread. */
static void forward_line(void *ud, pw_stream s, const char *line, size_t len)
{
	(void)s;
	pw_job_post(ud, PW_ENVS_MSG_LINE, xstrndup(line, len), free);
}

/* ---------------------------------------------------------------- discover, probe */

static pw_err *discover(pw_envs_job *j)
{
	return pw_venv_discover(j->ctx->guard, NULL, 2, 256,
				pw_clock_deadline_after(pw_ops_budget(j->ctx, PW_VENV_DISCOVER_BUDGET_S)), &j->list);
}

static void probe_one(pw_envs_job *j, const char *label, const char *explicit_python, const char *managed)
{
	pw_envs_candidate *c = &j->cand[j->cand_count++];
	c->label = xstrdup(label);
	c->python = explicit_python ? xstrdup(explicit_python) : NULL;
	pw_err *e = pw_venv_choose_base(explicit_python, managed, &c->path, &c->version, &c->why);
	c->usable = !e;
	if (e)
		c->why = xstrdup(pw_err_message(e));
	pw_err_free(e);
}

/* What create would pick on its own, then each source on its own. */
static pw_err *probe(pw_envs_job *j)
{
	char *managed = pw_ops_managed_python(j->ctx);
	probe_one(j, _("automatic"), NULL, managed);
	if (managed)
		probe_one(j, _("managed runtime"), NULL, managed);
	probe_one(j, _("python3 on PATH"), "python3", NULL);
	probe_one(j, _("python on PATH"), "python", NULL);
	free(managed);
	return NULL;
}

/* ---------------------------------------------------------------- create, remove */

static pw_err *create(pw_envs_job *j, pw_job *job)
{
	char *target = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_require_write(j->ctx, _("creating an environment"));
	if (!e)
		e = pw_ops_resolve_venv(j->ctx, j->target, &target);
	if (!e)
		e = pw_child_env_make(j->ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(j->ctx, &cat);
	pw_create_request rq = { .target = target, .python = j->python, .seed = PW_SEED_FAST, .ce = &ce,
				 .cancel = pw_job_cancel_token(job), .events = pw_job_events(job) };
	if (!e)
		e = pw_ops_venv_create(j->ctx, &rq, cat, &j->created);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(target);
	return e;
}

static pw_err *remove_env(pw_envs_job *j)
{
	pw_catalog *cat = NULL;
	int64_t op = 0;
	pw_err *e = pw_ops_require_write(j->ctx, _("removing an environment"));
	if (!e)
		e = pw_ops_catalog_rw(j->ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(j->ctx, cat, "venv.remove", j->target, &op);
	if (!e)
		e = pw_venv_remove(j->ctx->guard, j->target);
	pw_ops_op_end(cat, op, e);
	j->op = op;
	pw_catalog_close(&cat);
	return e;
}

/* ---------------------------------------------------------------- install, uninstall */

/* As `pyward venv install|uninstall --venv PATH`: operation, lock, pip repair, chain. */
static pw_err *pip_work(pw_envs_job *j, pw_job *job)
{
	bool install = j->kind == PW_ENVS_INSTALL;
	const char *kind = install ? "venv.install" : "venv.uninstall";
	const pw_ops_ctx *ctx = j->ctx;
	char *venv = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	int lock = -1;
	int64_t deadline = pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S));
	const pw_cancel *cancel = pw_job_cancel_token(job);
	const pw_events *events = pw_job_events(job);
	pw_err *e = pw_ops_require_write(ctx, install ? _("installing packages") : _("uninstalling packages"));
	if (!e && j->specs.count == 0)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("name at least one package"));
	if (!e)
		e = pw_ops_resolve_venv(ctx, j->target, &venv);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, kind, venv, &j->op);
	if (!e)
		post_op(job, j->op, kind, venv);
	if (!e)
		e = pw_venv_lock(ctx->workspace, venv, ctx->who.args, deadline, cancel, events, &lock);
	if (!e && install && !pw_ops_venv_has_pip(venv)) {
		pw_events_log(events, PW_LOG_INFO, _("%s has no pip: repairing it offline (ensurepip)"), venv);
		j->repaired_pip = true;
		e = pw_venv_repair_pip(venv, (const char *const *)ce.vars, deadline, cancel);
	}
	pw_pip_job pj = { .verb = install ? "install" : "uninstall", .chain = install, .upgrade = j->upgrade,
			  .index = j->index, .proxy = j->proxy, .cancel = cancel, .events = events,
			  .on_line = forward_line, .line_ud = job };
	if (!e)
		e = pw_ops_pip_run(ctx, &pj, venv, &j->specs, &ce, cat, j->op, &j->pip);
	pw_ops_op_end(cat, j->op, e);
	pw_venv_unlock(&lock);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(venv);
	return e;
}

pw_err *pw_envs_job_run(pw_job *job, void *ud)
{
	pw_envs_job *j = ud;
	switch (j->kind) {
	case PW_ENVS_DISCOVER: return discover(j);
	case PW_ENVS_PROBE: return probe(j);
	case PW_ENVS_CREATE: return create(j, job);
	case PW_ENVS_INSTALL:
	case PW_ENVS_UNINSTALL: return pip_work(j, job);
	case PW_ENVS_REMOVE: return remove_env(j);
	}
	return NULL;
}

/* ---------------------------------------------------------------- what the user typed */

static pw_err *spec_word(const pw_ops_ctx *ctx, pw_spec_list *l, bool install, bool *upgrade, char **save, char *w)
{
	bool req = strcmp(w, "-r") == 0, edit = strcmp(w, "-e") == 0;
	if (install && (strcmp(w, "-U") == 0 || strcmp(w, "--upgrade") == 0)) {
		*upgrade = true;
		return NULL;
	}
	if (!install || (!req && !edit))
		return pw_spec_add(ctx, l, w);
	char *arg = strtok_r(NULL, " \t", save);
	if (!arg)
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s needs a path after it"), w);
	return req ? pw_spec_add_requirement(ctx, l, arg) : pw_spec_add_editable(ctx, l, arg);
}

pw_err *pw_envs_parse_specs(const pw_ops_ctx *ctx, const char *text, bool install, pw_spec_list *l, bool *upgrade)
{
	char *copy = xstrdup(text), *save = NULL;
	pw_err *e = NULL;
	*upgrade = false;
	for (char *w = strtok_r(copy, " \t", &save); w && !e; w = strtok_r(NULL, " \t", &save))
		e = spec_word(ctx, l, install, upgrade, &save, w);
	if (!e && l->count == 0)
		e = pw_err_new(PW_ERR_USAGE, _("type one or more package specs, e.g. requests==2.31"),
			       _("name at least one package"));
	free(copy);
	if (e)
		pw_spec_list_clear(l);
	return e;
}
