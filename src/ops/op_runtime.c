/* The managed runtime's operations: status, install, verify, rollback, remove, baseline. */
#include "config.h"

#include "ops/op_runtime.h"

#include "ops/baseline.h"
#include "ops/json.h"
#include "ops/pipsetup.h"

#include "catalog_file.h"
#include "clock.h"
#include "fetch.h"
#include "i18n.h"
#include "pkgdb.h"
#include "runner.h"
#include "stagetime.h"
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
	r->baseline = pw_baseline_file(ctx, rq->requirements, rq->no_baseline);
	if (r->baseline)
		pw_err_free(pw_baseline_names(r->baseline, &r->baseline_names));
	/* what the baseline lists and the runtime lacks: said, never an error */
	if (r->baseline && r->baseline_names && r->info.state == PW_RUNTIME_INSTALLED)
		pw_err_free(pw_baseline_missing(ctx->box_root, r->baseline, &r->baseline_missing, &r->missing_count));
	return NULL;
}

const char *pw_op_runtime_status_state(const pw_op_runtime_status_result *r)
{
	if (r->info.state == PW_RUNTIME_INSTALLED && r->missing_count)
		return _("installed, baseline missing");
	return pw_runtime_state_name(r->info.state);
}

static json_t *status_baseline_json(const pw_op_runtime_status_result *r)
{
	if (!r->baseline)
		return json_null();
	json_t *missing = json_array();
	for (size_t i = 0; i < r->missing_count; i++)
		json_array_append_new(missing, pw_json_str(r->baseline_missing[i]));
	bool checked = r->info.state == PW_RUNTIME_INSTALLED && r->baseline_names;
	return json_pack("{s:o,s:o,s:s,s:o,s:o}", "requirements", pw_json_str(r->baseline), "names",
			 pw_json_str(r->baseline_names), "state",
			 !checked ? "unknown" : r->missing_count ? "missing" : "installed", "missing", missing,
			 "finish_command", r->missing_count ? json_string("pyward runtime baseline") : json_null());
}

json_t *pw_op_runtime_status_json(const pw_op_runtime_status_result *r)
{
	const pw_runtime_info *i = &r->info;
	json_t *j = json_object();
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
	json_object_set_new(j, "baseline", status_baseline_json(r));
	return pw_json_result_of(j);
}

void pw_op_runtime_status_clear(pw_op_runtime_status_result *r)
{
	pw_runtime_info_clear(&r->info);
	pw_pins_free(&r->pins);
	r->pin = NULL;
	free(r->baseline);
	free(r->baseline_names);
	pw_ops_list_free(r->baseline_missing);
	r->baseline = r->baseline_names = NULL;
	r->baseline_missing = NULL;
	r->missing_count = 0;
}

/* ---------------------------------------------------------------- install */

void pw_op_runtime_install_consent(const pw_runtime_request *rq, const pw_runtime_plan *plan,
				   char *lines[PW_OP_INSTALL_CONSENT_LINES], pw_consent *what)
{
	pw_runtime_plan_describe(rq, plan, lines);
	size_t n = PW_RUNTIME_PLAN_LINES;
	char *now = pw_runtime_plan_now(plan);
	if (now)
		lines[n++] = now;
	if (plan->baseline) {
		lines[n++] = xasprintf(_("then:   the baseline %s"), plan->baseline_names);
		lines[n++] = xasprintf(_("        binary wheels from the package index, through the attempt chain (%s)"),
				       plan->baseline);
	}
	*what = (pw_consent){
		.kind = "runtime.install",
		.doing = _("installing the runtime"),
		.question = rq->archive ? _("Install it?") : _("Download and install it?"),
		.heading = plan->baseline ? _("pyward will install the managed Python runtime and its baseline:")
					  : _("pyward will install the managed Python runtime:"),
		.lines = (const char *const *)lines,
		.line_count = n,
	};
}

static pw_err *ask_install(const pw_runtime_request *rq, const pw_runtime_plan *plan, const pw_op_io *io)
{
	char *lines[PW_OP_INSTALL_CONSENT_LINES];
	pw_consent what;
	pw_op_runtime_install_consent(rq, plan, lines, &what);
	pw_err *e = pw_op_ask(io, &what, _("not installed: consent was not given"));
	for (size_t i = 0; i < what.line_count; i++)
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
	pw_err *e = pw_runtime_plan_make(ctx, rq, !rq->dry_run, &r->plan);
	if (!e)
		r->plan.baseline = pw_baseline_file(ctx, rq->requirements, rq->no_baseline);
	/* an unreadable baseline file is found before anything is asked */
	if (!e && r->plan.baseline)
		e = pw_baseline_names(r->plan.baseline, &r->plan.baseline_names);
	return e;
}

/* The baseline part, inside the install's operation. Its failure keeps the
 * runtime and becomes the partial outcome. */
static pw_err *install_baseline(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_runtime_plan *plan,
				const pw_op_io *io, pw_catalog *cat, pw_op_runtime_install_result *r)
{
	r->baseline_ran = true;
	pw_err *e = pw_baseline_step(ctx, plan->baseline, rq->index, io, cat, r->operation, &r->pip, &r->changes);
	if (!e)
		return NULL;
	r->baseline_failed = true;
	r->baseline_error = xstrdup(pw_err_message(e));
	pw_err *partial = pw_err_new(PW_ERR_FAILED, _("finish it with 'pyward runtime baseline' once the package index can be reached"),
				     _("runtime installed, baseline failed: %s"), pw_err_message(e));
	pw_err_free(e);
	return partial;
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
	if (rq->plan_only || pw_err_code(e) == PW_ERR_REFUSED)
		return e;
	/* From here every outcome is recorded, whatever stage fails: a plan
	 * that cannot be made, a declined consent, the preflight, the download.
	 * The plan is shown (the consent) before any check that may fail on a
	 * network, so an offline user still sees what would be installed. */
	pw_stage_mark("op: plan made");
	pw_catalog *cat = NULL;
	pw_err *ce = pw_ops_catalog_rw(ctx, &cat);
	if (ce) {
		pw_err_free(e);
		return ce;
	}
	char *target = e ? xstrdup("?") : pw_runtime_plan_target(plan);
	pw_err *be = pw_ops_op_begin(ctx, cat, "runtime.install", target, &r->operation);
	if (be) {
		pw_err_free(e);
		e = be;
	}
	pw_stage_mark("op: catalog open, operation begun");
	if (!e)
		e = ask_install(rq, plan, io);
	if (!e)
		e = pw_runtime_preflight(ctx->box_root, plan->url, rq->archive, plan->size);
	if (!e)
		e = pw_runtime_plan_install(ctx, rq, plan, cat, r->operation, io->cancel, io->events, &r->install);
	pw_stage_mark("op: runtime install returned");
	r->runtime_installed = !e;
	if (!e && plan->baseline)
		e = install_baseline(ctx, rq, plan, io, cat, r);
	/* Done means recorded too (as for venv create): an unrecorded install
	 * is an error, the whole answer (no operation the history could show). */
	pw_err *f = pw_ops_op_end_with(cat, r->operation, e, NULL, NULL);
	if (f && !e) {
		e = pw_err_new(pw_err_code(f), pw_err_hint(f),
			       _("the runtime was installed in %s, but the catalog could not record it (%s)"),
			       r->install.path ? r->install.path : target, pw_err_message(f));
		r->operation = 0;
	}
	pw_err_free(f);
	pw_catalog_close(&cat);
	pw_stage_mark("op: operation recorded, catalog closed");
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

static json_t *install_baseline_json(const pw_runtime_plan *p, const pw_op_runtime_install_result *r)
{
	if (!p->baseline)
		return json_null();
	const char *outcome = !r->baseline_ran ? "not-run" : r->baseline_failed ? "failed" : "ok";
	return json_pack("{s:o,s:o,s:s,s:o,s:o,s:{s:I,s:I,s:I}}", "requirements", pw_json_str(p->baseline), "names",
			 pw_json_str(p->baseline_names), "outcome", outcome, "error", pw_json_str(r->baseline_error),
			 "attempts", pw_json_attempts(&r->pip), "manifest", "added", (json_int_t)r->changes.added,
			 "changed", (json_int_t)r->changes.changed, "removed", (json_int_t)r->changes.removed);
}

json_t *pw_op_runtime_install_json(const pw_runtime_request *rq, const pw_op_runtime_install_result *r)
{
	const pw_runtime_plan *p = rq->plan ? rq->plan : &r->plan;
	if (r->dry_run) {
		json_t *plan = plan_json(rq, p);
		json_object_set_new(plan, "baseline", p->baseline ? json_pack("{s:o,s:o}", "requirements",
									      pw_json_str(p->baseline), "names",
									      pw_json_str(p->baseline_names))
								  : json_null());
		return json_pack("{s:i,s:b,s:o}", "schema", 1, "dry_run", 1, "plan", plan);
	}
	const pw_runtime_install_result *i = &r->install;
	const char *result = r->baseline_failed ? "installed, baseline failed"
			     : i->already_current ? "already-installed" : "installed";
	return json_pack("{s:i,s:s,s:s,s:s,s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:o}", "schema", 1, "result", result, "version",
			 p->pin->version, "path", i->path ? i->path : "", "waited_for_lock", i->waited_for_lock,
			 "reused_cache", i->reused_cache, "resumed", i->resumed_from > 0, "resumed_from",
			 (json_int_t)i->resumed_from, "files", (json_int_t)i->files, "bytes_on_disk",
			 (json_int_t)i->bytes_on_disk, "operation", (json_int_t)r->operation, "baseline",
			 install_baseline_json(p, r));
}

void pw_op_runtime_install_clear(pw_op_runtime_install_result *r)
{
	pw_runtime_plan_clear(&r->plan);
	pw_runtime_install_result_clear(&r->install);
	pw_pip_result_clear(&r->pip);
	free(r->baseline_error);
	r->baseline_error = NULL;
}

/* ---------------------------------------------------------------- verify, rollback, remove */

pw_err *pw_op_runtime_verify(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_runtime_verify_result *r)
{
	(void)io;
	memset(r, 0, sizeof *r);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	/* verify writes only its own record; in read-only mode, or for a user
	 * who may not write the box (another user, a read-only mount), it only
	 * reads the catalog: checking must not need the right to change. */
	bool ro = ctx->mode == PW_MODE_READ_ONLY || !pw_catalog_file_writable(ctx->catalog_path);
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
	return pw_json_result("current_version", pw_json_str(r->version));
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
	return pw_json_result("removed", json_boolean(r->removed > 0));
}

/* ---------------------------------------------------------------- baseline */

pw_err *pw_op_runtime_baseline(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_op_io *io,
			       pw_op_runtime_baseline_result *r)
{
	memset(r, 0, sizeof *r);
	/* Asked for by name: the shipped file even when installs skip it. */
	r->requirements = rq->requirements ? xstrdup(rq->requirements) : pw_baseline_file(ctx, NULL, false);
	if (!r->requirements)
		r->requirements = pw_ops_data_file("requirements-baseline.txt");
	char *python = NULL;
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_require_write(ctx, _("installing the baseline"));
	if (!e)
		e = pw_runtime_python(ctx->box_root, &python);
	if (!e && access(r->requirements, R_OK) != 0)
		e = pw_err_errno(PW_ERR_USAGE, errno, NULL, _("requirements file %s"), r->requirements);
	if (!e)
		e = pw_ops_catalog_rw(ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(ctx, cat, "runtime.baseline", r->requirements, &r->operation);
	if (!e)
		e = pw_baseline_step(ctx, r->requirements, rq->index, io, cat, r->operation, &r->pip, &r->changes);
	pw_ops_op_end(cat, r->operation, e);
	r->failed = e != NULL;
	pw_catalog_close(&cat);
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
