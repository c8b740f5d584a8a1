/* The history's operations (show, undo, export, prune) and venv verify. */
#include "config.h"

#include "ops/op_history.h"

#include "ops/json.h"
#include "ops/pipsetup.h"
#include "ops/venvops.h"

#include "clock.h"
#include "distinfo.h"
#include "i18n.h"
#include "pkgdb.h"
#include "venv.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- JSON */

json_t *pw_json_pkg_changes(const pw_pkg_changes *ch)
{
	json_t *arr = json_array();
	for (size_t i = 0; ch && i < ch->count; i++) {
		const pw_pkg_change *c = &ch->items[i];
		json_array_append_new(arr, json_pack("{s:o,s:s,s:o,s:o,s:o,s:o}", "name", pw_json_str(c->name), "action",
						     pw_pkg_action_name(c->action), "old_version", pw_json_str(c->old_version),
						     "new_version", pw_json_str(c->new_version), "installer",
						     pw_json_str(c->installer), "source", pw_json_str(c->source)));
	}
	return arr;
}

json_t *pw_json_op_summary(const pw_op_rec *op)
{
	json_t *j = json_object();
	json_object_set_new(j, "id", json_integer(op->id));
	json_object_set_new(j, "kind", pw_json_str(op->kind));
	json_object_set_new(j, "target", pw_json_str(op->target));
	json_object_set_new(j, "outcome", pw_json_str(op->outcome));
	json_object_set_new(j, "stop_reason", pw_json_str(op->stop_reason));
	json_object_set_new(j, "started_at", pw_json_str(op->started_at));
	json_object_set_new(j, "finished_at", pw_json_str(op->finished_at));
	json_object_set_new(j, "duration_ms", op->duration_ms < 0 ? json_null() : json_integer(op->duration_ms));
	json_object_set_new(j, "user", pw_json_str(op->user));
	json_object_set_new(j, "uid", json_integer(op->uid));
	json_object_set_new(j, "host", pw_json_str(op->host));
	json_object_set_new(j, "pid", json_integer(op->pid));
	json_object_set_new(j, "command", pw_json_str(op->args));
	json_object_set_new(j, "pyward_version", pw_json_str(op->pyward_version));
	json_object_set_new(j, "attempt_count", json_integer(op->attempt_count));
	return j;
}

json_t *pw_json_op_full(const pw_op_rec *op, const pw_attempt_list *att, const char *env, const pw_pkg_changes *ch)
{
	json_t *j = pw_json_op_summary(op);
	json_t *arr = json_array();
	for (size_t i = 0; att && i < att->count; i++)
		json_array_append_new(arr, pw_json_attempt_rec(&att->items[i], false));
	json_object_set_new(j, "attempts", arr);
	json_object_set_new(j, "undo_of", op->undo_of ? json_integer(op->undo_of) : json_null());
	json_object_set_new(j, "note", pw_json_str(op->note));
	json_object_set_new(j, "environment", pw_json_str(env));
	json_object_set_new(j, "packages", pw_json_pkg_changes(ch));
	return j;
}

/* ---------------------------------------------------------------- show */

pw_err *pw_op_history_list(const pw_ops_ctx *ctx, const pw_op_filter *f, pw_op_list *out)
{
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_catalog_ops_query(cat, f, out);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_history_list_json(const pw_op_list *ops)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ops->count; i++)
		json_array_append_new(a, pw_json_op_summary(&ops->items[i]));
	return pw_json_result("operations", a);
}

pw_err *pw_op_history_show(const pw_ops_ctx *ctx, int64_t id, pw_op_history_show_result *r)
{
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_catalog_op_get(cat, id, &r->op, &r->attempts);
	if (!e)
		e = pw_pkgdb_changes(cat, id, &r->env, &r->changes);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_history_show_json(const pw_op_history_show_result *r)
{
	return pw_json_result("operation", pw_json_op_full(&r->op, &r->attempts, r->env, &r->changes));
}

void pw_op_history_show_clear(pw_op_history_show_result *r)
{
	pw_op_rec_clear(&r->op);
	pw_attempt_list_clear(&r->attempts);
	pw_pkg_changes_clear(&r->changes);
	free(r->env);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- undo */

static char *id_list(const int64_t *ids, size_t n)
{
	char *s = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *next = xasprintf("%s%s%lld", s, i ? ", " : "", (long long)ids[i]);
		free(s);
		s = next;
	}
	return s;
}

/* What the undone operation was, and whether undo is the tool for it. */
static pw_err *read_target(pw_catalog *cat, int64_t id, pw_op_history_undo_result *r)
{
	pw_op_rec op;
	pw_err *e = pw_catalog_op_get(cat, id, &op, NULL);
	if (e)
		return e;
	r->kind = xstrdup(op.kind);
	pw_op_rec_clear(&op);
	if (strcmp(r->kind, "runtime.install") == 0)
		return pw_err_new(PW_ERR_REFUSED, _("run 'pyward runtime rollback' to go back to the previous runtime"),
				  _("operation %lld installed the managed runtime: a runtime install is undone by "
				    "'pyward runtime rollback', not by 'history undo'"), (long long)id);
	if (strncmp(r->kind, "runtime.", 8) == 0)
		return pw_err_new(PW_ERR_REFUSED, NULL,
				  _("operation %lld (%s) changed the managed runtime: 'history undo' reverses "
				    "operations on environments"), (long long)id, r->kind);
	e = pw_pkgdb_changes(cat, id, &r->env, &r->recorded);
	if (!e && r->recorded.count == 0)
		e = pw_err_new(PW_ERR_NOTFOUND, _("'pyward history show ID' lists what an operation changed"),
			       _("operation %lld (%s) recorded no package changes: nothing to undo"), (long long)id, r->kind);
	return e;
}

static bool env_exists(const char *env)
{
	struct stat st;
	char *cfg = xasprintf("%s/pyvenv.cfg", env);
	bool ok = stat(cfg, &st) == 0 && S_ISREG(st.st_mode);
	free(cfg);
	return ok;
}

/* Refusals that --force does not lift: the environment is gone or outside the roots. */
static pw_err *check_env(const pw_ops_ctx *ctx, int64_t id, const pw_op_history_undo_result *r)
{
	if (!env_exists(r->env))
		return pw_err_new(PW_ERR_REFUSED, _("nothing is left to undo; 'pyward venv create' makes a new one"),
				  _("the environment %s of operation %lld is gone"), r->env, (long long)id);
	char *resolved = NULL;
	pw_err *e = pw_guard_resolve(ctx->guard, r->env, &resolved);
	free(resolved);
	return e ? pw_err_prefix(e, _("undoing operation %lld"), (long long)id) : NULL;
}

static pw_err *make_plan(pw_catalog *cat, const pw_op_history_undo_request *rq, pw_op_history_undo_result *r)
{
	pw_distset now = { 0 };
	pw_err *e = pw_distinfo_read(r->env, &now);
	if (!e)
		pw_undo_plan_make(&r->recorded, &now, &r->plan);
	pw_distset_clear(&now);
	if (!e)
		e = pw_pkgdb_later(cat, rq->id, r->env, &r->recorded, &r->later, &r->later_count);
	if (e || rq->force)
		return e;
	if (r->later_count) {
		char *ids = id_list(r->later, r->later_count);
		e = pw_err_new(PW_ERR_REFUSED, _("undo those first (newest first), or pass --force to undo this one anyway"),
			       P_("operation %s changed the same packages later: undoing %lld now would undo part of it too",
				  "operations %s changed the same packages later: undoing %lld now would undo part of them too",
				  r->later_count), ids, (long long)rq->id);
		free(ids);
	} else if (r->plan.drift_count) {
		e = pw_err_new(PW_ERR_REFUSED, _("pass --force to undo it anyway"),
			       _("the environment changed outside pyward since operation %lld: %s"), (long long)rq->id,
			       r->plan.drift[0]);
	}
	return e;
}

size_t pw_op_history_undo_lines(const pw_op_history_undo_result *r, char ***lines)
{
	size_t cap = r->plan.count + r->later_count + r->plan.drift_count + 2, n = 0;
	*lines = xcalloc(cap, sizeof **lines);
	for (size_t i = 0; i < r->plan.count; i++) {
		const pw_undo_step *s = &r->plan.items[i];
		if (s->kind == PW_UNDO_UNINSTALL)
			(*lines)[n++] = xasprintf(_("uninstall %s %s"), s->name, s->version ? s->version : "");
		else if (s->now)
			(*lines)[n++] = xasprintf(_("install   %s==%s (now %s)"), s->name, s->version, s->now);
		else
			(*lines)[n++] = xasprintf(_("install   %s==%s (not installed now)"), s->name, s->version);
	}
	if (r->plan.count == 0)
		(*lines)[n++] = xstrdup(_("nothing to do: the environment already is as before the operation"));
	if (r->plan.reinstalled)
		(*lines)[n++] = xasprintf(P_("(%zu reinstall of the same version: nothing to undo)",
					     "(%zu reinstalls of the same version: nothing to undo)", r->plan.reinstalled),
					  r->plan.reinstalled);
	for (size_t i = 0; i < r->later_count; i++)
		(*lines)[n++] = xasprintf(_("in the way: operation %lld changed the same packages later"),
					  (long long)r->later[i]);
	for (size_t i = 0; i < r->plan.drift_count; i++)
		(*lines)[n++] = xasprintf(_("changed since: %s"), r->plan.drift[i]);
	return n;
}

static void free_lines(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static pw_err *ask(const pw_op_io *io, const pw_op_history_undo_result *r, int64_t id)
{
	char **lines = NULL;
	size_t n = pw_op_history_undo_lines(r, &lines);
	char *heading = xasprintf(_("Undo operation %lld (%s) in %s:"), (long long)id, r->kind, r->env);
	pw_consent what = { .kind = "history.undo", .doing = _("undoing an operation"),
			    .question = _("Undo these package changes?"), .heading = heading,
			    .lines = (const char *const *)lines, .line_count = n };
	pw_err *e = pw_op_ask(io, &what, _("not undone: no confirmation"));
	free(heading);
	free_lines(lines, n);
	return e;
}

/* pip uninstall -y, then pip install name==old through the chain; each run
 * records its package changes under the undo (pw_ops_pip_run). */
static pw_err *run_steps(const pw_ops_ctx *ctx, const pw_op_history_undo_request *rq, const pw_op_io *io,
			 const pw_child_env *ce, pw_catalog *cat, pw_op_history_undo_result *r)
{
	static const struct { pw_undo_kind kind; const char *verb; bool chain; } passes[] = {
		{ PW_UNDO_UNINSTALL, "uninstall", false }, { PW_UNDO_INSTALL, "install", true },
	};
	pw_err *e = NULL;
	for (size_t p = 0; !e && p < 2; p++) {
		size_t n = 0;
		char **specs = pw_undo_specs(&r->plan, passes[p].kind, &n);
		pw_spec_list l = { 0 };
		for (size_t i = 0; !e && i < n; i++)
			e = pw_spec_add(ctx, &l, specs[i]);
		pw_pip_job job = { .verb = passes[p].verb, .chain = passes[p].chain, .index = rq->index,
				   .proxy = rq->proxy, .cancel = io ? io->cancel : NULL, .events = io ? io->events : NULL };
		if (!e && n)
			e = pw_ops_pip_run(ctx, &job, r->env, &l, ce, cat, r->operation, p == 0 ? &r->uninstall : &r->install);
		pw_spec_list_clear(&l);
		free_lines(specs, n);
	}
	return e;
}

static pw_err *perform(const pw_ops_ctx *ctx, const pw_op_history_undo_request *rq, const pw_op_io *io,
		       pw_catalog *cat, pw_op_history_undo_result *r)
{
	pw_child_env ce = { 0 };
	int lock = -1;
	pw_err *e = pw_ops_op_begin(ctx, cat, "history.undo", r->env, &r->operation);
	if (e)
		return e;
	e = pw_pkgdb_link_undo(cat, r->operation, rq->id);
	if (!e)
		e = ask(io, r, rq->id);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	if (!e)
		e = pw_venv_lock(ctx->workspace, r->env, ctx->who.args ? ctx->who.args : "pyward history undo",
				 pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S)), io ? io->cancel : NULL,
				 io ? io->events : NULL, &lock);
	if (!e)
		e = run_steps(ctx, rq, io, &ce, cat, r);
	pw_venv_unlock(&lock);
	pw_ops_op_end(cat, r->operation, e);
	pw_err_free(pw_pkgdb_changes(cat, r->operation, NULL, &r->changed));
	pw_child_env_clear(&ce);
	return e;
}

pw_err *pw_op_history_undo(const pw_ops_ctx *ctx, const pw_op_history_undo_request *rq, const pw_op_io *io,
			   pw_op_history_undo_result *r)
{
	memset(r, 0, sizeof *r);
	r->dry_run = rq->dry_run;
	pw_catalog *cat = NULL;
	pw_err *e = rq->dry_run ? NULL : pw_ops_require_write(ctx, _("undoing an operation"));
	if (!e)
		e = rq->dry_run ? pw_ops_catalog_ro(ctx, &cat) : pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = read_target(cat, rq->id, r);
	if (!e)
		e = check_env(ctx, rq->id, r);
	if (!e)
		e = make_plan(cat, rq, r);
	if (!e && !rq->dry_run && r->plan.count > 0)
		e = perform(ctx, rq, io, cat, r);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_history_undo_json(const pw_op_history_undo_result *r, int64_t id, const pw_err *e)
{
	json_t *steps = json_array(), *later = json_array(), *drift = json_array();
	for (size_t i = 0; i < r->plan.count; i++) {
		const pw_undo_step *s = &r->plan.items[i];
		json_array_append_new(steps, json_pack("{s:s,s:o,s:o,s:o}", "action",
						       s->kind == PW_UNDO_UNINSTALL ? "uninstall" : "install", "name",
						       pw_json_str(s->name), "version", pw_json_str(s->version),
						       "installed_now", pw_json_str(s->now)));
	}
	for (size_t i = 0; i < r->later_count; i++)
		json_array_append_new(later, json_integer(r->later[i]));
	for (size_t i = 0; i < r->plan.drift_count; i++)
		json_array_append_new(drift, pw_json_str(r->plan.drift[i]));
	json_t *plan = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "kind", pw_json_str(r->kind), "environment",
				 pw_json_str(r->env), "steps", steps, "later_operations", later, "changed_since", drift,
				 "undone_changes", pw_json_pkg_changes(&r->recorded));
	json_t *j = json_pack("{s:i,s:I,s:b,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "schema", 1, "undo_of", (json_int_t)id,
			      "dry_run", r->dry_run, "outcome", pw_ops_outcome_of(e), "plan", plan, "operation",
			      r->operation ? json_integer(r->operation) : json_null(), "attempts",
			      json_array(), "changes", pw_json_pkg_changes(&r->changed), "stop_reason",
			      e ? pw_json_str(pw_err_message(e)) : json_null(), "error_code",
			      e ? json_string(pw_err_code_name(pw_err_code(e))) : json_null());
	json_t *att = json_object_get(j, "attempts");
	for (int k = 0; k < 2; k++) {
		json_t *more = pw_json_attempts(k == 0 ? &r->uninstall : &r->install);
		json_array_extend(att, more);
		json_decref(more);
	}
	return j;
}

void pw_op_history_undo_clear(pw_op_history_undo_result *r)
{
	free(r->kind);
	free(r->env);
	pw_pkg_changes_clear(&r->recorded);
	pw_undo_plan_clear(&r->plan);
	free(r->later);
	pw_pip_result_clear(&r->uninstall);
	pw_pip_result_clear(&r->install);
	pw_pkg_changes_clear(&r->changed);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- export */

typedef struct export_ctx {
	pw_op_export_fn fn;
	void *ud;
} export_ctx;

static json_t *parsed_or_null(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	return v ? v : json_null();
}

json_t *pw_json_apijob(const pw_apijob_rec *r)
{
	json_t *o = json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:o,s:I}", "id", (json_int_t)r->id, "kind",
			      pw_json_str(r->kind), "target", pw_json_str(r->target), "state", pw_json_str(r->state),
			      "user", pw_json_str(r->user), "command", pw_json_str(r->args), "host",
			      pw_json_str(r->host), "pid", (json_int_t)r->pid, "created_at", pw_json_str(r->created_at),
			      "finished_at", pw_json_str(r->finished_at), "events", (json_int_t)r->events);
	json_object_set_new(o, "error", parsed_or_null(r->error));
	json_object_set_new(o, "cancel_requested_by", pw_json_str(r->cancelled_by));
	return o;
}

/* An operation, with "api_job" when an API job ran it; a job that ran none
 * is a line of its own, {"api_job": {...}}. */
static pw_err *export_one(const pw_op_rec *op, const pw_attempt_list *att, const char *env,
			  const pw_pkg_changes *ch, const pw_apijob_rec *job, void *ud)
{
	const export_ctx *x = ud;
	json_t *j = op ? pw_json_op_full(op, att, env, ch) : json_object();
	if (job)
		json_object_set_new(j, "api_job", pw_json_apijob(job));
	pw_err *e = x->fn(j, x->ud);
	json_decref(j);
	return e;
}

pw_err *pw_op_history_export(const pw_ops_ctx *ctx, const char *since, const pw_op_io *io, pw_op_export_fn fn,
			     void *ud)
{
	pw_catalog *cat = NULL;
	export_ctx x = { fn, ud };
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_history_export(cat, since, io ? io->cancel : NULL, export_one, &x);
	pw_catalog_close(&cat);
	return e;
}

/* ---------------------------------------------------------------- prune */

pw_err *pw_op_history_prune(const pw_ops_ctx *ctx, const char *before, const pw_op_io *io, pw_prune_result *r)
{
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("pruning the history"));
	if (!e) {
		char *line = xasprintf(_("delete every operation started before %s, with its attempts, package changes "
					 "and API job, and the API jobs that ran no operation created before it"),
				       before);
		const char *lines[] = { line };
		pw_consent what = { .kind = "history.prune", .doing = _("pruning the history"),
				    .question = _("Delete them from the catalog?"),
				    .heading = _("pyward will prune the catalog's history:"), .lines = lines, .line_count = 1 };
		e = pw_op_ask(io, &what, _("not pruned: no confirmation"));
		free(line);
	}
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_history_prune(cat, before, ctx->who.args, r);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_history_prune_json(const pw_prune_result *r, const char *before)
{
	return json_pack("{s:i,s:I,s:s,s:I,s:I,s:I,s:I}", "schema", 1, "operation", (json_int_t)r->operation_id,
			 "before", before, "operations", (json_int_t)r->operations, "attempts", (json_int_t)r->attempts,
			 "package_changes", (json_int_t)r->package_changes, "api_jobs", (json_int_t)r->api_jobs);
}

/* ---------------------------------------------------------------- check */

pw_err *pw_op_history_check(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_history_check_result *r)
{
	memset(r, 0, sizeof *r);
	r->catalog = xstrdup(ctx->catalog_path);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_ro(ctx, &cat);
	if (!e)
		e = pw_history_check(cat, io ? io->cancel : NULL, &r->check);
	pw_catalog_close(&cat);
	r->damaged = !e && r->check.count > 0;
	return e;
}

json_t *pw_op_history_check_json(const pw_op_history_check_result *r)
{
	json_t *problems = json_array();
	for (size_t i = 0; i < r->check.count; i++)
		json_array_append_new(problems, json_string(r->check.problems[i]));
	return json_pack("{s:i,s:s,s:b,s:I,s:o}", "schema", 1, "catalog", r->catalog, "damaged", r->damaged, "pages",
			 (json_int_t)r->check.pages, "problems", problems);
}

pw_err *pw_op_history_check_damage(const pw_op_history_check_result *r)
{
	if (!r->damaged)
		return NULL;
	return pw_err_new(PW_ERR_CORRUPT,
			  _("move it and its -wal and -shm files aside (pyward starts a new one) or restore "
			    "a backup; pyward history export may still read what is sound"),
			  _("catalog %s is damaged: %zu problems found"), r->catalog, r->check.count);
}

void pw_op_history_check_clear(pw_op_history_check_result *r)
{
	if (!r)
		return;
	free(r->catalog);
	pw_history_check_clear(&r->check);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- venv verify */

pw_err *pw_op_venv_verify(const pw_ops_ctx *ctx, const char *venv, const pw_op_io *io, pw_op_venv_verify_result *r)
{
	(void)io;
	memset(r, 0, sizeof *r);
	r->venv = xstrdup(venv);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	pw_err *e = NULL;
	/* verify writes only its own record; in read-only mode it records nothing. */
	if (ctx->mode != PW_MODE_READ_ONLY) {
		e = pw_ops_catalog_rw(ctx, &cat);
		if (!e)
			e = pw_ops_op_begin(ctx, cat, "venv.verify", venv, &op);
	}
	if (!e)
		e = pw_record_check(venv, &r->report);
	r->differs = !e && (r->report.modified || r->report.missing || r->report.unexpected);
	pw_err *verdict = r->differs ? pw_err_new(PW_ERR_FAILED, NULL, _("%zu files differ from their RECORD"),
						  r->report.modified + r->report.missing + r->report.unexpected)
				     : NULL;
	pw_ops_op_end(cat, op, e ? e : verdict);
	pw_err_free(verdict);
	pw_catalog_close(&cat);
	return e;
}

static json_t *paths_of(const pw_rc_dist *d, pw_rc_kind kind)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < d->count; i++) {
		const pw_rc_file *f = &d->files[i];
		if (f->kind != kind)
			continue;
		if (kind == PW_RC_MODIFIED)
			json_array_append_new(arr, json_pack("{s:o,s:s}", "path", pw_json_str(f->path), "rpm_flags", f->rpm_flags));
		else
			json_array_append_new(arr, pw_json_str(f->path));
	}
	return arr;
}

json_t *pw_op_venv_verify_json(const pw_op_venv_verify_result *r)
{
	const pw_rc_report *rep = &r->report;
	json_t *dists = json_array();
	for (size_t i = 0; i < rep->count; i++) {
		const pw_rc_dist *d = &rep->dists[i];
		json_array_append_new(dists, json_pack("{s:o,s:o,s:I,s:o,s:o,s:o,s:o}", "name", pw_json_str(d->name),
						       "version", pw_json_str(d->version), "files_checked",
						       (json_int_t)d->checked, "modified", paths_of(d, PW_RC_MODIFIED),
						       "missing", paths_of(d, PW_RC_MISSING), "unexpected",
						       paths_of(d, PW_RC_UNEXPECTED), "unchecked", paths_of(d, PW_RC_UNCHECKED)));
	}
	return json_pack("{s:i,s:o,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "schema", 1, "venv", pw_json_str(r->venv), "ok",
			 !r->differs, "distributions_checked", (json_int_t)rep->count, "files_checked",
			 (json_int_t)rep->checked, "modified", (json_int_t)rep->modified, "missing",
			 (json_int_t)rep->missing, "unexpected", (json_int_t)rep->unexpected, "unchecked",
			 (json_int_t)rep->unchecked, "distributions", dists);
}

void pw_op_venv_verify_clear(pw_op_venv_verify_result *r)
{
	pw_rc_report_clear(&r->report);
	free(r->venv);
	memset(r, 0, sizeof *r);
}
