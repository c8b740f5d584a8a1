/* The managed runtime's operations: status, install, verify, rollback, remove, baseline. */
#include "config.h"

#include "ops/op_runtime.h"

#include "ops/json.h"
#include "ops/pipsetup.h"

#include "clock.h"
#include "fetch.h"
#include "i18n.h"
#include "pkgdb.h"
#include "runner.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- status */

pw_err *pw_op_runtime_status(const pw_ops_ctx *ctx, const pw_runtime_request *rq, pw_op_runtime_status_result *r)
{
	memset(r, 0, sizeof *r);
	pw_err *e = pw_runtime_status(ctx->box_root, &r->info);
	if (e)
		return e;
	/* the pin only adds the size hint */
	pw_err_free(pw_runtime_plan_pin(ctx, rq, &r->pins, &r->pin));
	return NULL;
}

json_t *pw_op_runtime_status_json(const pw_op_runtime_status_result *r)
{
	const pw_runtime_info *i = &r->info;
	json_t *j = json_object();
	json_object_set_new(j, "schema", json_integer(1));
	json_object_set_new(j, "state", json_string(pw_runtime_state_name(i->state)));
	json_object_set_new(j, "why", pw_json_str(i->why));
	json_object_set_new(j, "version", pw_json_str(i->version));
	json_object_set_new(j, "release", pw_json_str(i->release));
	json_object_set_new(j, "platform", pw_json_str(i->platform));
	json_object_set_new(j, "path", pw_json_str(i->path));
	json_object_set_new(j, "python", pw_json_str(i->python));
	json_object_set_new(j, "sha256", pw_json_str(i->sha256));
	json_object_set_new(j, "source_url", pw_json_str(i->url));
	json_object_set_new(j, "installed_at", pw_json_str(i->installed_at));
	json_object_set_new(j, "pins_source", pw_json_str(i->pins_source));
	json_object_set_new(j, "size_on_disk", i->size_on_disk < 0 ? json_null() : json_integer(i->size_on_disk));
	json_object_set_new(j, "previous_version", pw_json_str(i->previous_version));
	if (r->pin) {
		json_object_set_new(j, "pinned_version", json_string(r->pin->version));
		json_object_set_new(j, "pinned_size", r->pin->size < 0 ? json_null() : json_integer(r->pin->size));
	}
	return j;
}

void pw_op_runtime_status_clear(pw_op_runtime_status_result *r)
{
	pw_runtime_info_clear(&r->info);
	pw_pins_free(&r->pins);
	r->pin = NULL;
}

/* ---------------------------------------------------------------- install */

void pw_op_runtime_install_consent(const pw_runtime_request *rq, const pw_runtime_plan *plan,
				   char *lines[PW_RUNTIME_PLAN_LINES], pw_consent *what)
{
	pw_runtime_plan_describe(rq, plan, lines);
	*what = (pw_consent){
		.kind = "runtime.install",
		.doing = _("installing the runtime"),
		.question = _("Download and install it?"),
		.heading = _("pyward will install the managed Python runtime:"),
		.lines = (const char *const *)lines,
		.line_count = PW_RUNTIME_PLAN_LINES,
	};
}

static pw_err *ask_install(const pw_runtime_request *rq, const pw_runtime_plan *plan, const pw_op_io *io)
{
	char *lines[PW_RUNTIME_PLAN_LINES];
	pw_consent what;
	pw_op_runtime_install_consent(rq, plan, lines, &what);
	pw_err *e = pw_op_ask(io, &what, _("not installed: consent was not given"));
	for (size_t i = 0; i < PW_RUNTIME_PLAN_LINES; i++)
		free(lines[i]);
	return e;
}

/* The plan the request brings (a plan_only result), or a new one. */
static pw_err *plan_for(const pw_ops_ctx *ctx, const pw_runtime_request *rq, pw_op_runtime_install_result *r,
			const pw_runtime_plan **plan)
{
	*plan = rq->plan;
	if (rq->plan)
		return NULL;
	*plan = &r->plan;
	return pw_runtime_plan_make(ctx, rq, !rq->dry_run, &r->plan);
}

pw_err *pw_op_runtime_install(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			      pw_op_runtime_install_result *r)
{
	memset(r, 0, sizeof *r);
	const pw_runtime_plan *plan = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("installing the runtime"));
	if (!e)
		e = plan_for(ctx, rq, r, &plan);
	if (!e && rq->dry_run) {
		r->dry_run = true;
		return NULL;
	}
	if (!e)
		e = pw_runtime_preflight(ctx->box_root, plan->url, rq->archive, plan->size);
	if (e || rq->plan_only)
		return e;
	pw_catalog *cat = NULL;
	e = pw_ops_catalog_rw(ctx, &cat);
	char *target = pw_runtime_plan_target(plan);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "runtime.install", target, &r->operation);
	if (!e)
		e = ask_install(rq, plan, io);
	if (!e)
		e = pw_runtime_plan_install(ctx, rq, plan, cat, r->operation, io->cancel, io->events, &r->install);
	pw_ops_op_end(cat, r->operation, e);
	pw_catalog_close(&cat);
	free(target);
	return e;
}

static json_t *plan_json(const pw_runtime_request *rq, const pw_runtime_plan *p)
{
	char *from = rq->archive ? xstrdup(rq->archive) : pw_fetch_url_shown(p->url);
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:b}", "version", p->pin->version, "release",
			      p->pin->release, "platform", p->pin->platform, "url", from, "size",
			      p->size < 0 ? json_null() : json_integer(p->size), "sha256", p->pin->sha256,
			      "destination", p->dest, "operator_pins", rq->pins_file != NULL);
	free(from);
	return j;
}

json_t *pw_op_runtime_install_json(const pw_runtime_request *rq, const pw_op_runtime_install_result *r)
{
	const pw_runtime_plan *p = rq->plan ? rq->plan : &r->plan;
	if (r->dry_run)
		return json_pack("{s:i,s:b,s:o}", "schema", 1, "dry_run", 1, "plan", plan_json(rq, p));
	const pw_runtime_install_result *i = &r->install;
	return json_pack("{s:i,s:s,s:s,s:s,s:b,s:b,s:b,s:I,s:I,s:I,s:I}", "schema", 1, "result",
			 i->already_current ? "already-installed" : "installed", "version", p->pin->version, "path",
			 i->path ? i->path : "", "waited_for_lock", i->waited_for_lock, "reused_cache", i->reused_cache,
			 "resumed", i->resumed_from > 0, "resumed_from", (json_int_t)i->resumed_from, "files",
			 (json_int_t)i->files, "bytes_on_disk", (json_int_t)i->bytes_on_disk, "operation",
			 (json_int_t)r->operation);
}

void pw_op_runtime_install_clear(pw_op_runtime_install_result *r)
{
	pw_runtime_plan_clear(&r->plan);
	pw_runtime_install_result_clear(&r->install);
}

/* ---------------------------------------------------------------- verify, rollback, remove */

pw_err *pw_op_runtime_verify(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_verify_result *r)
{
	(void)io;
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	/* verify writes only its own record; in read-only mode it reads the catalog. */
	bool ro = ctx->mode == PW_MODE_READ_ONLY;
	pw_err *e = ro ? pw_ops_catalog_ro(ctx, &cat) : pw_ops_catalog_rw(ctx, &cat);
	if (!e && !ro)
		e = pw_ops_op_begin(ctx, cat, "runtime.verify", "current", &op);
	if (!e)
		e = pw_runtime_verify(ctx->box_root, cat, &r->verify);
	if (!e)
		r->diffs = r->verify.modified + r->verify.mode + r->verify.missing + r->verify.unexpected;
	pw_err *verdict = !e && r->diffs ? pw_err_new(PW_ERR_FAILED, NULL, _("%zu files differ from the manifest"),
						      r->diffs)
					 : NULL;
	pw_ops_op_end(cat, op, e ? e : verdict);
	pw_err_free(verdict);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_runtime_verify_json(const pw_op_runtime_verify_result *r)
{
	const pw_runtime_verify_result *v = &r->verify;
	json_t *lines = json_array();
	for (size_t i = 0; i < v->line_count; i++)
		json_array_append_new(lines, pw_json_str(v->lines[i]));
	return json_pack("{s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "schema", 1, "ok", r->diffs == 0, "files_checked",
			 (json_int_t)v->files_checked, "modified", (json_int_t)v->modified, "mode",
			 (json_int_t)v->mode, "missing", (json_int_t)v->missing, "unexpected",
			 (json_int_t)v->unexpected, "caches_ignored", (json_int_t)v->caches_ignored, "differences",
			 lines);
}

void pw_op_runtime_verify_clear(pw_op_runtime_verify_result *r)
{
	pw_runtime_verify_result_clear(&r->verify);
}

pw_err *pw_op_runtime_rollback(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_rollback_result *r)
{
	(void)io;
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	pw_err *e = pw_ops_require_write(ctx, _("a rollback"));
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "runtime.rollback", "previous", &op);
	if (!e)
		e = pw_runtime_rollback(ctx->box_root, cat, &r->version);
	pw_ops_op_end(cat, op, e);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_runtime_rollback_json(const pw_op_runtime_rollback_result *r)
{
	return json_pack("{s:i,s:o}", "schema", 1, "current_version", pw_json_str(r->version));
}

void pw_op_runtime_rollback_clear(pw_op_runtime_rollback_result *r)
{
	free(r->version);
	r->version = NULL;
}

static pw_err *ask_remove(const pw_op_io *io)
{
	pw_consent what = {
		.kind = "runtime.remove",
		.doing = _("removing the runtime"),
		.question = _("Remove the managed Python runtime for every user of this machine?"),
	};
	pw_consent_answer a = io && io->consent ? io->consent(&what, io->consent_ud) : PW_CONSENT_CANNOT_ASK;
	if (a == PW_CONSENT_YES)
		return NULL;
	return pw_err_new(PW_ERR_REFUSED, _("pass --yes to confirm"), _("not removed: no confirmation"));
}

pw_err *pw_op_runtime_remove(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_remove_result *r)
{
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	pw_err *e = pw_ops_require_write(ctx, _("removing the runtime"));
	if (!e)
		e = ask_remove(io);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "runtime.remove", "current", &op);
	if (!e)
		e = pw_runtime_remove(ctx->box_root, cat, &r->removed);
	pw_ops_op_end(cat, op, e);
	pw_catalog_close(&cat);
	return e;
}

json_t *pw_op_runtime_remove_json(const pw_op_runtime_remove_result *r)
{
	return json_pack("{s:i,s:b}", "schema", 1, "removed", r->removed > 0);
}

/* ---------------------------------------------------------------- baseline */

static bool run_quiet(const char *const *argv, const pw_child_env *ce, int64_t deadline, const pw_cancel *cancel,
		      char **err_text)
{
	pw_run_opts ro = { .argv = argv, .env_add = (const char *const *)ce->vars, .deadline_ms = deadline,
			   .cancel = cancel };
	pw_run_result *res = NULL;
	pw_err *e = pw_run(&ro, &res);
	bool ok = !e && pw_run_result_status(res) == PW_RUN_EXITED && pw_run_result_exit_code(res) == 0;
	if (err_text)
		*err_text = xstrdup(e ? pw_err_message(e) : pw_run_result_output(res, PW_STREAM_STDERR));
	pw_err_free(e);
	pw_run_result_free(&res);
	return ok;
}

/* The runtime has pip, or gets it offline from its own ensurepip. */
static pw_err *runtime_pip(const char *python, const pw_child_env *ce, int64_t deadline, const pw_cancel *cancel)
{
	const char *check[] = { python, "-I", "-m", "pip", "--version", NULL };
	const char *repair[] = { python, "-I", "-m", "ensurepip", "--upgrade", NULL };
	if (run_quiet(check, ce, deadline, cancel, NULL))
		return NULL;
	char *why = NULL;
	pw_err *e = NULL;
	if (!run_quiet(repair, ce, deadline, cancel, &why) || !run_quiet(check, ce, deadline, cancel, NULL))
		e = pw_err_new(PW_ERR_FAILED, _("reinstall the runtime with 'pyward runtime install'"),
			       _("the managed runtime has no working pip, and ensurepip did not give it one: %s"),
			       why ? why : "");
	free(why);
	return e;
}

static pw_err *baseline_pip(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			    const char *python, const char *reqs, const pw_child_env *ce, pw_catalog *cat, int64_t op,
			    pw_pip_result *res)
{
	const char *args[] = { "install", "--only-binary=:all:", "-r", reqs, NULL };
	char **mirrors = pw_ops_mirrors(ctx);
	int ports[32];
	size_t nports = pw_ops_proxy_ports(ctx, ports, 32);
	pw_pip_request pr = {
		.python = python, .pip_args = args, .chain = true,
		.index = rq->index ? rq->index : pw_settings_get(ctx->settings, "index_url"),
		.proxy = pw_settings_get(ctx->settings, "proxy"), .mirrors = (const char *const *)mirrors,
		.proxy_ports = ports, .proxy_port_count = nports, .project = "python-docx",
		.ca_file = getenv("PIP_CERT"), .cwd = ctx->workspace, .env_add = (const char *const *)ce->vars,
		.deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, 600)),
		.cancel = io->cancel, .events = io->events, .catalog = cat, .operation_id = op,
	};
	pw_err *e = pw_pip_run(&pr, res);
	pw_ops_list_free(mirrors);
	return e;
}

pw_err *pw_op_runtime_baseline(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			       pw_op_runtime_baseline_result *r)
{
	memset(r, 0, sizeof *r);
	r->requirements = rq->requirements ? xstrdup(rq->requirements) : pw_ops_data_file("requirements-baseline.txt");
	char *python = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_manifest before = { 0 };
	pw_err *e = pw_ops_require_write(ctx, _("installing the baseline"));
	if (!e)
		e = pw_runtime_python(ctx->box_root, &python);
	if (!e && access(r->requirements, R_OK) != 0)
		e = pw_err_errno(PW_ERR_USAGE, errno, NULL, _("requirements file %s"), r->requirements);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "runtime.baseline", r->requirements, &r->operation);
	/* What the baseline adds goes into the runtime's manifest, so verify checks it. */
	if (!e)
		e = pw_runtime_snapshot(ctx->box_root, &before);
	pw_pkgwatch w = { 0 };
	char *tree = e ? NULL : xasprintf("%s/runtime/python/current", ctx->box_root);
	if (tree)
		pw_err_free(pw_pkgwatch_begin(&w, tree));
	if (!e)
		e = runtime_pip(python, &ce, pw_clock_deadline_after(120), io->cancel);
	if (!e)
		e = baseline_pip(ctx, rq, io, python, r->requirements, &ce, cat, r->operation, &r->pip);
	if (tree)
		pw_err_free(pw_pkgwatch_end(&w, cat, r->operation, NULL));
	free(tree);
	if (!e)
		e = pw_runtime_record_changes(ctx->box_root, cat, &before, &r->changes);
	pw_manifest_clear(&before);
	pw_ops_op_end(cat, r->operation, e);
	r->failed = e != NULL;
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(python);
	return e;
}

json_t *pw_op_runtime_baseline_json(const pw_op_runtime_baseline_result *r)
{
	return json_pack("{s:i,s:I,s:s,s:o,s:{s:I,s:I,s:I},s:o}", "schema", 1, "operation", (json_int_t)r->operation,
			 "outcome", r->failed ? "failed" : "ok", "attempts", pw_json_attempts(&r->pip), "manifest",
			 "added", (json_int_t)r->changes.added, "changed", (json_int_t)r->changes.changed, "removed",
			 (json_int_t)r->changes.removed, "requirements", pw_json_str(r->requirements));
}

void pw_op_runtime_baseline_clear(pw_op_runtime_baseline_result *r)
{
	free(r->requirements);
	pw_pip_result_clear(&r->pip);
	memset(r, 0, sizeof *r);
}
