/* A workspace's environments as operations: see op_venv.h. */
#include "config.h"

#include "ops/op_venv.h"

#include "ops/json.h"
#include "ops/op_jobs.h"
#include "ops/pipsetup.h"

#include "clock.h"
#include "i18n.h"
#include "stagetime.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET_S PW_VENV_BUDGET_S
#define DISCOVER_BUDGET_S PW_VENV_DISCOVER_BUDGET_S

/* ---------------------------------------------------------------- discover */

pw_err *pw_op_venv_discover(const pw_ops_ctx *ctx, const char *dir, int depth, pw_op_venv_discover_result *r)
{
	memset(r, 0, sizeof *r);
	char *start = NULL;
	pw_err *e = dir ? pw_guard_resolve(ctx->guard, dir, &start) : NULL;
	if (!e)
		e = pw_venv_discover(ctx->guard, start, depth ? depth : 2, 256,
				     pw_clock_deadline_after(pw_ops_budget(ctx, DISCOVER_BUDGET_S)), &r->list);
	free(start);
	return e;
}

static json_t *info_json(const pw_venv_info *v)
{
	return json_pack("{s:o,s:o,s:o,s:b,s:o,s:o,s:b}", "path", pw_json_str(v->path), "kind",
			 pw_json_str(v->kind), "python", pw_json_str(v->python), "python_exists",
			 v->python_exists, "version", pw_json_str(v->version), "base",
			 pw_json_str(v->base), "has_pip", v->has_pip);
}

json_t *pw_op_venv_discover_json(const pw_op_venv_discover_result *r)
{
	const pw_venv_list *l = &r->list;
	json_t *envs = json_array(), *roots = json_array();
	for (size_t i = 0; i < l->count; i++)
		json_array_append_new(envs, info_json(&l->items[i]));
	for (size_t i = 0; i < l->root_count; i++)
		json_array_append_new(roots, pw_json_str(l->roots[i]));
	return json_pack("{s:i,s:o,s:o,s:I,s:b}", "schema", 1, "environments", envs, "roots", roots, "dirs_visited",
			 (json_int_t)l->dirs_visited, "truncated", l->truncated);
}

void pw_op_venv_discover_clear(pw_op_venv_discover_result *r)
{
	pw_venv_list_clear(&r->list);
}

/* ---------------------------------------------------------------- create */

static pw_err *parse_seed(const char *s, pw_venv_seed *out)
{
	if (!s || strcmp(s, "fast") == 0)
		*out = PW_SEED_FAST;
	else if (strcmp(s, "pip") == 0)
		*out = PW_SEED_PIP;
	else if (strcmp(s, "none") == 0)
		*out = PW_SEED_NONE;
	else
		return pw_err_new(PW_ERR_USAGE, NULL, _("--seed takes fast, pip or none, not '%s'"), s);
	return NULL;
}

static pw_err *create_in(const pw_ops_ctx *ctx, const pw_op_venv_create_request *rq, const char *target,
			 const pw_child_env *ce, pw_catalog *cat, const pw_op_io *io, pw_created *c)
{
	pw_venv_seed seed = PW_SEED_FAST;
	pw_err *e = parse_seed(rq ? rq->seed : NULL, &seed);
	if (e)
		return e;
	pw_create_request cr = { .target = target, .python = rq ? rq->python : NULL, .seed = seed, .ce = ce,
				 .cancel = io ? io->cancel : NULL, .events = io ? io->events : NULL };
	return pw_ops_venv_create(ctx, &cr, cat, c);
}

pw_err *pw_op_venv_create(const pw_ops_ctx *ctx, const pw_op_venv_create_request *rq, const pw_op_io *io,
			  pw_created *r)
{
	memset(r, 0, sizeof *r);
	char *target = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("creating an environment"));
	if (!e)
		e = pw_ops_resolve_venv(ctx, rq && rq->name ? rq->name : ".venv", &target);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	pw_stage_mark("op: checks made");
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	pw_stage_mark("op: catalog open");
	if (!e)
		e = create_in(ctx, rq, target, &ce, cat, io, r);
	pw_catalog_close(&cat);
	pw_stage_mark("op: catalog closed");
	pw_child_env_clear(&ce);
	free(target);
	return e;
}

json_t *pw_op_venv_create_json(const pw_created *c)
{
	return json_pack("{s:i,s:s,s:b,s:o,s:o,s:o,s:b,s:b,s:b,s:b}", "schema", 1, "path", c->path, "existed",
			 c->r.existed, "python", pw_json_str(c->r.python), "version", pw_json_str(c->r.version),
			 "base", pw_json_str(c->why), "seeded_fast", c->r.seeded_fast, "written", c->r.written,
			 "repaired", c->r.repaired, "remade", c->r.remade);
}

/* ---------------------------------------------------------------- install, uninstall */

static pw_err *build_specs(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, pw_spec_list *l)
{
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < rq->req_count; i++)
		e = pw_spec_add_requirement(ctx, l, rq->requirements[i]);
	for (size_t i = 0; !e && i < rq->editable_count; i++)
		e = pw_spec_add_editable(ctx, l, rq->editables[i]);
	for (size_t i = 0; !e && i < rq->spec_count; i++)
		e = pw_spec_add(ctx, l, rq->specs[i]);
	return e;
}

static void say(const pw_op_venv_pip_request *rq, char *text)
{
	if (rq->say)
		rq->say(rq->say_ud, text);
	free(text);
}

pw_err *pw_op_venv_find(const pw_ops_ctx *ctx, const char *venv, char **out, bool create_ok)
{
	*out = NULL;
	if (venv)
		return pw_ops_resolve_venv(ctx, venv, out);
	pw_venv_list l = { 0 };
	pw_err *e = pw_venv_discover(ctx->guard, ctx->workspace, 2, 256, pw_clock_deadline_after(DISCOVER_BUDGET_S), &l);
	size_t n = e ? 0 : l.count;
	if (!e && n == 1)
		*out = xstrdup(l.items[0].path);
	else if (!e && n > 1)
		e = pw_err_new(PW_ERR_USAGE, _("pick one with --venv NAME|PATH ('pyward venv discover' lists them)"),
			       _("%zu environments found in the workspace"), n);
	else if (!e && !create_ok)
		e = pw_err_new(PW_ERR_NOTFOUND, _("pass --venv NAME|PATH"), _("no environment found in the workspace"));
	pw_venv_list_clear(&l);
	return e;
}

/* The install target: the named one, else the one found, else a new .venv. */
static pw_err *choose_target(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, const pw_child_env *ce,
			     pw_catalog *cat, const pw_op_io *io, char **out)
{
	pw_err *e = pw_op_venv_find(ctx, rq->venv, out, rq->install);
	if (e || *out)
		return e;
	pw_created c = { 0 };
	char *target = xasprintf("%s/.venv", ctx->workspace);
	say(rq, xasprintf(_("no environment in the workspace: creating %s"), target));
	e = create_in(ctx, NULL, target, ce, cat, io, &c);
	pw_created_clear(&c);
	if (e)
		free(target);
	else
		*out = target;
	return e;
}

static const char *what_of(const pw_op_venv_pip_request *rq)
{
	return rq->install ? _("installing packages") : _("uninstalling packages");
}

pw_err *pw_op_venv_pip_check(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, char **venv)
{
	*venv = NULL;
	pw_spec_list specs = { 0 };
	pw_err *e = pw_ops_require_write(ctx, what_of(rq));
	if (!e && rq->spec_count == 0 && rq->req_count == 0 && rq->editable_count == 0)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("name at least one package"));
	if (!e)
		e = build_specs(ctx, rq, &specs);
	if (!e)
		e = pw_op_venv_find(ctx, rq->venv, venv, rq->install);
	if (!e && !*venv)
		*venv = xasprintf("%s/.venv", ctx->workspace); /* the job creates it */
	pw_spec_list_clear(&specs);
	return e;
}

/* The command the detached pyward runs: `venv install|uninstall
 * --background` with the request's options (the job path of cmd_venv.c). */
static void push(const char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static const char **job_command(const pw_op_venv_pip_request *rq, size_t *n)
{
	const char **v = NULL;
	*n = 0;
	push(&v, n, "venv");
	push(&v, n, rq->install ? "install" : "uninstall");
	push(&v, n, "--background");
	const char *const valued[][2] = { { "--venv", rq->venv }, { "--index", rq->index }, { "--proxy", rq->proxy } };
	for (size_t i = 0; i < 3; i++)
		if (valued[i][1]) {
			push(&v, n, valued[i][0]);
			push(&v, n, valued[i][1]);
		}
	if (rq->upgrade)
		push(&v, n, "--upgrade");
	for (size_t i = 0; i < rq->req_count; i++) {
		push(&v, n, "-r");
		push(&v, n, rq->requirements[i]);
	}
	for (size_t i = 0; i < rq->editable_count; i++) {
		push(&v, n, "-e");
		push(&v, n, rq->editables[i]);
	}
	push(&v, n, "--");
	for (size_t i = 0; i < rq->spec_count; i++)
		push(&v, n, rq->specs[i]);
	return v;
}

pw_err *pw_op_venv_pip_start(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, pw_job_rec *job)
{
	memset(job, 0, sizeof *job);
	char *venv = NULL;
	pw_err *e = pw_op_venv_pip_check(ctx, rq, &venv);
	if (!e) {
		size_t n = 0;
		const char **command = job_command(rq, &n);
		pw_op_job_start_request jr = { .kind = rq->install ? "venv.install" : "venv.uninstall", .target = venv,
					       .budget_s = pw_ops_budget(ctx, DEFAULT_BUDGET_S), .command = command,
					       .command_count = n };
		e = pw_op_job_start(ctx, &jr, job);
		free(command);
	}
	free(venv);
	return e;
}

static pw_err *run_pip(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, const pw_op_io *io,
		       const pw_spec_list *specs, const pw_child_env *ce, pw_catalog *cat, pw_op_venv_pip_result *r)
{
	pw_pip_job pj = { .verb = rq->install ? "install" : "uninstall", .chain = rq->install, .upgrade = rq->upgrade,
			  .index = rq->index, .proxy = rq->proxy, .cancel = io ? io->cancel : NULL,
			  .events = io ? io->events : NULL, .on_line = rq->on_line, .line_ud = rq->line_ud };
	return pw_ops_pip_run(ctx, &pj, r->venv, specs, ce, cat, r->operation, &r->pip);
}

pw_err *pw_op_venv_pip(const pw_ops_ctx *ctx, const pw_op_venv_pip_request *rq, const pw_op_io *io,
		       pw_op_venv_pip_result *r)
{
	memset(r, 0, sizeof *r);
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_spec_list specs = { 0 };
	int lock = -1;
	const pw_cancel *cancel = io ? io->cancel : NULL;
	pw_err *e = pw_ops_require_write(ctx, what_of(rq));
	if (!e && rq->spec_count == 0 && rq->req_count == 0 && rq->editable_count == 0)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("name at least one package"));
	if (!e)
		e = build_specs(ctx, rq, &specs);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = choose_target(ctx, rq, &ce, cat, io, &r->venv);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, rq->install ? "venv.install" : "venv.uninstall", r->venv, &r->operation);
	if (!e)
		e = pw_venv_lock(ctx->workspace, r->venv, rq->lock_note,
				 pw_clock_deadline_after(pw_ops_budget(ctx, DEFAULT_BUDGET_S)), cancel,
				 io ? io->events : NULL, &lock); /* "waiting for X: it is locked by ..." */
	if (!e && rq->install && !pw_ops_venv_has_pip(r->venv)) {
		say(rq, xasprintf(_("%s has no pip: repairing it offline (ensurepip)"), r->venv));
		e = pw_venv_repair_pip(r->venv, (const char *const *)ce.vars,
				       pw_clock_deadline_after(pw_ops_budget(ctx, DEFAULT_BUDGET_S)), cancel);
	}
	if (!e)
		e = run_pip(ctx, rq, io, &specs, &ce, cat, r);
	/* Done means recorded too (as for create): pip's work is on disk and
	 * flushed, but an outcome the catalog lacks is not reported done; the
	 * error is the whole answer (no operation the history could show). */
	pw_err *f = pw_ops_op_end_with(cat, r->operation, e, NULL, NULL);
	if (f && !e) {
		e = pw_err_new(pw_err_code(f), pw_err_hint(f),
			       rq->install ? _("pip installed the packages in %s, but the catalog could not record it (%s)")
					   : _("pip uninstalled the packages from %s, but the catalog could not record it (%s)"),
			       r->venv, pw_err_message(f));
		r->operation = 0;
	}
	pw_err_free(f);
	pw_venv_unlock(&lock);
	pw_spec_list_clear(&specs);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	return e;
}

json_t *pw_op_venv_pip_json(const pw_op_venv_pip_result *r, const pw_err *e)
{
	return json_pack("{s:i,s:I,s:s,s:s,s:o,s:o}", "schema", 1, "operation", (json_int_t)r->operation, "outcome",
			 e ? (pw_err_code(e) == PW_ERR_TIMEOUT ? "timed-out" : "failed") : "ok", "venv",
			 r->venv ? r->venv : "", "attempts", pw_json_attempts(&r->pip), "stop_reason",
			 e ? pw_json_str(pw_err_message(e)) : json_null());
}

void pw_op_venv_pip_clear(pw_op_venv_pip_result *r)
{
	pw_pip_result_clear(&r->pip);
	free(r->venv);
	r->venv = NULL;
}

/* ---------------------------------------------------------------- remove */

pw_err *pw_op_venv_remove(const pw_ops_ctx *ctx, const char *name, char **removed)
{
	*removed = NULL;
	pw_catalog *cat = NULL;
	int64_t op = 0;
	char *target = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("removing an environment"));
	if (!e)
		e = strchr(name, '/') ? NULL : pw_guard_check_name(name);
	/* Not resolved here: remove checks the given path itself for a symlink. */
	if (!e)
		target = strchr(name, '/') ? xstrdup(name) : xasprintf("%s/%s", ctx->workspace, name);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "venv.remove", target, &op);
	if (!e)
		e = pw_venv_remove(ctx->guard, target);
	pw_ops_op_end(cat, op, e);
	pw_catalog_close(&cat);
	if (e)
		free(target);
	else
		*removed = target;
	return e;
}

json_t *pw_op_venv_remove_json(const char *removed)
{
	return json_pack("{s:i,s:s}", "schema", 1, "removed", removed);
}
