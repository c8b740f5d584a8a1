/* pyward runtime status|install|verify|rollback|remove: the managed CPython. */
#include "config.h"

#include "cli/cli.h"

#include "ops/json.h"
#include "ops/pipsetup.h"
#include "cli/progress.h"
#include "cli/render.h"
#include "ops/runtime_plan.h"

#include "clock.h"
#include "fetch.h"
#include "i18n.h"
#include "pins.h"
#include "pip.h"
#include "pkgdb.h"
#include "runner.h"
#include "runtime.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct runtime_args {
	pw_cli *cli;
	const char *version;
	const char *pins_file;
	const char *mirror;
	const char *archive;
	const char *cacert;
	const char *requirements;
	const char *index;
	bool dry_run;
	pw_progress_style progress;
} runtime_args;

enum { OPT_VERSION_PIN = 0x300, OPT_PINS, OPT_MIRROR, OPT_ARCHIVE, OPT_CACERT, OPT_DRY_RUN, OPT_PROGRESS,
       OPT_NO_PROGRESS, OPT_REQUIREMENTS, OPT_INDEX };

static const struct option runtime_longopts[] = {
	{ "version", required_argument, NULL, OPT_VERSION_PIN },
	{ "python-version", required_argument, NULL, OPT_VERSION_PIN },
	{ "pins", required_argument, NULL, OPT_PINS },
	{ "mirror", required_argument, NULL, OPT_MIRROR },
	{ "archive", required_argument, NULL, OPT_ARCHIVE },
	{ "cacert", required_argument, NULL, OPT_CACERT },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "progress", required_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "requirements", required_argument, NULL, OPT_REQUIREMENTS },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ NULL, 0, NULL, 0 },
};

static int handle_option(int code, const char *arg, void *ud)
{
	runtime_args *a = ud;
	switch (code) {
	case OPT_VERSION_PIN: a->version = arg; return 0;
	case OPT_PINS: a->pins_file = arg; return 0;
	case OPT_MIRROR: a->mirror = arg; return 0;
	case OPT_ARCHIVE: a->archive = arg; return 0;
	case OPT_CACERT: a->cacert = arg; return 0;
	case OPT_DRY_RUN: a->dry_run = true; return 0;
	case OPT_NO_PROGRESS: a->progress = PW_PROGRESS_NONE; return 0;
	case OPT_REQUIREMENTS: a->requirements = arg; return 0;
	case OPT_INDEX: a->index = arg; return 0;
	case OPT_PROGRESS:
		if (pw_cli_progress_parse(arg, &a->progress))
			return 0;
		pw_cli_usage_error(a->cli, _("--progress takes auto, bar, none or json, not '%s'"), arg);
		return 2;
	}
	return 2;
}

static void mb(int64_t bytes, char *buf, size_t size)
{
	pw_runtime_plan_mb(bytes, buf, size);
}

static pw_runtime_request request_of(const runtime_args *a)
{
	return (pw_runtime_request){ .version = a->version, .pins_file = a->pins_file, .mirror = a->mirror,
				     .archive = a->archive, .cacert = a->cacert };
}

/* ---------------------------------------------------------------- status */

static json_t *status_json(const pw_runtime_info *i, const pw_pin *pin)
{
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
	if (pin) {
		json_object_set_new(j, "pinned_version", json_string(pin->version));
		json_object_set_new(j, "pinned_size", pin->size < 0 ? json_null() : json_integer(pin->size));
	}
	return j;
}

static void status_text(const pw_runtime_info *i, const pw_pin *pin)
{
	char size[32];
	if (i->state == PW_RUNTIME_NOT_PROVISIONED) {
		if (pin && pin->size >= 0) {
			mb(pin->size, size, sizeof size);
			printf(_("managed Python runtime not provisioned \xe2\x80\x94 install it with 'pyward runtime install' or from the TUI (~%s, one time)\n"), size);
		} else {
			printf(_("managed Python runtime not provisioned \xe2\x80\x94 install it with 'pyward runtime install' or from the TUI (one time; the size is asked of the server before you consent)\n"));
		}
		if (i->has_previous)
			printf(_("  an earlier install (%s) is kept: 'pyward runtime rollback' brings it back\n"), i->previous_version);
		return;
	}
	printf(_("managed Python runtime: %s\n"), pw_runtime_state_name(i->state));
	if (i->why)
		printf(_("  problem:    %s\n"), i->why);
	printf(_("  version:    %s (release %s)\n"), i->version ? i->version : "?", i->release ? i->release : "?");
	printf(_("  platform:   %s\n"), i->platform ? i->platform : "?");
	printf(_("  path:       %s\n"), i->path ? i->path : "?");
	printf(_("  sha256:     %s\n"), i->sha256 ? i->sha256 : "?");
	printf(_("  source:     %s\n"), i->url ? i->url : "?");
	printf(_("  pins:       %s%s\n"), i->pins_source ? i->pins_source : "?",
	       i->pins_from_operator ? _(" (operator-supplied --pins)") : "");
	printf(_("  installed:  %s\n"), i->installed_at ? i->installed_at : "?");
	mb(i->size_on_disk, size, sizeof size);
	printf(_("  size:       %s on disk\n"), size);
	if (i->has_previous)
		printf(_("  previous:   %s (pyward runtime rollback)\n"), i->previous_version);
}

static int run_status(pw_cli *cli, const runtime_args *a)
{
	pw_runtime_info info;
	pw_err *e = pw_runtime_status(cli->ctx.box_root, &info);
	if (e)
		return pw_cli_fail(cli, e);
	pw_pins *pins = NULL;
	const pw_pin *pin = NULL;
	pw_runtime_request rq = request_of(a);
	pw_err_free(pw_runtime_plan_pin(&cli->ctx, &rq, &pins, &pin)); /* the pin only adds the size hint */
	int rc = info.state == PW_RUNTIME_BROKEN ? PW_EXIT_FAILED : 0;
	if (cli->json)
		pw_render_json(stdout, status_json(&info, pin));
	else
		status_text(&info, pin);
	pw_pins_free(&pins);
	pw_runtime_info_clear(&info);
	return rc;
}

/* ---------------------------------------------------------------- install */

static void print_plan(const runtime_args *a, const pw_runtime_plan *p, FILE *out)
{
	pw_runtime_request rq = request_of(a);
	char *lines[PW_RUNTIME_PLAN_LINES];
	pw_runtime_plan_describe(&rq, p, lines);
	fprintf(out, _("pyward will install the managed Python runtime:\n"));
	for (size_t i = 0; i < PW_RUNTIME_PLAN_LINES; i++) {
		fprintf(out, "  %s\n", lines[i]);
		free(lines[i]);
	}
}

static json_t *plan_json(const runtime_args *a, const pw_runtime_plan *p)
{
	char *from = a->archive ? xstrdup(a->archive) : pw_fetch_url_shown(p->url);
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:b}", "version", p->pin->version, "release",
			      p->pin->release, "platform", p->pin->platform, "url", from, "size",
			      p->size < 0 ? json_null() : json_integer(p->size), "sha256", p->pin->sha256,
			      "destination", p->dest, "operator_pins", a->pins_file != NULL);
	free(from);
	return j;
}

static pw_err *consent(pw_cli *cli, const runtime_args *a, const pw_runtime_plan *p)
{
	if (cli->yes)
		return NULL;
	if (!isatty(STDIN_FILENO))
		return pw_err_new(PW_ERR_REFUSED, _("pass --yes to consent, or run it on a terminal"),
				  _("installing the runtime needs consent and there is no terminal to ask"));
	print_plan(a, p, stderr);
	if (pw_cli_confirm(_("Download and install it?")))
		return NULL;
	return pw_err_new(PW_ERR_REFUSED, NULL, _("not installed: consent was not given"));
}

static void print_install_result(const pw_cli *cli, const pw_runtime_plan *p, const pw_runtime_install_result *r)
{
	if (cli->json) {
		pw_render_json(stdout, json_pack("{s:i,s:s,s:s,s:s,s:b,s:b,s:b,s:I,s:I,s:I}", "schema", 1, "result",
						 r->already_current ? "already-installed" : "installed", "version",
						 p->pin->version, "path", r->path ? r->path : "", "waited_for_lock",
						 r->waited_for_lock, "reused_cache", r->reused_cache, "resumed",
						 r->resumed_from > 0, "resumed_from", (json_int_t)r->resumed_from,
						 "files", (json_int_t)r->files, "bytes_on_disk", (json_int_t)r->bytes_on_disk));
		return;
	}
	if (cli->verbosity < 0)
		return;
	if (r->already_current) {
		printf(_("CPython %s is already installed and current%s: %s\n"), p->pin->version,
		       r->waited_for_lock ? _(" (another install finished it meanwhile)") : "", r->path);
		return;
	}
	char size[32];
	mb(r->bytes_on_disk, size, sizeof size);
	printf(_("installed CPython %s: %lld files, %s, in %s\n"), p->pin->version, (long long)r->files, size, r->path);
	if (r->resumed_from > 0)
		printf(_("  the download resumed from byte %lld\n"), (long long)r->resumed_from);
	if (r->reused_cache)
		printf(_("  the archive came from the download cache (hash checked)\n"));
}

static pw_err *do_install(pw_cli *cli, const runtime_args *a, const pw_runtime_plan *p, pw_catalog *cat, int64_t op,
			  pw_runtime_install_result *r)
{
	pw_cli_progress *prog = pw_cli_progress_new(a->progress, cli->verbosity);
	pw_runtime_request rq = request_of(a);
	pw_err *e = pw_runtime_plan_install(&cli->ctx, &rq, p, cat, op, pw_cli_interrupt_token(),
					    pw_cli_progress_events(prog), r);
	pw_cli_progress_free(&prog);
	return e;
}

static int run_install(pw_cli *cli, const runtime_args *a)
{
	pw_runtime_plan p = { 0 };
	pw_runtime_request rq = request_of(a);
	pw_err *e = pw_ops_require_write(&cli->ctx, _("installing the runtime"));
	if (!e)
		e = pw_runtime_plan_make(&cli->ctx, &rq, !a->dry_run, &p);
	if (!e && a->dry_run) {
		if (cli->json)
			pw_render_json(stdout, json_pack("{s:i,s:b,s:o}", "schema", 1, "dry_run", 1, "plan", plan_json(a, &p)));
		else
			print_plan(a, &p, stdout);
		pw_runtime_plan_clear(&p);
		return 0;
	}
	if (!e)
		e = pw_runtime_preflight(cli->ctx.box_root, p.url, a->archive, p.size);
	pw_catalog *cat = NULL;
	int64_t op = 0;
	if (!e)
		e = pw_ops_catalog_rw(&cli->ctx, &cat);
	char *target = pw_runtime_plan_target(&p);
	if (!e)
		e = pw_ops_op_begin(&cli->ctx, cat, "runtime.install", target, &op);
	if (!e)
		e = consent(cli, a, &p);
	pw_runtime_install_result r = { 0 };
	if (!e)
		e = do_install(cli, a, &p, cat, op, &r);
	pw_ops_op_end(cat, op, e);
	if (!e)
		print_install_result(cli, &p, &r);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	pw_runtime_install_result_clear(&r);
	pw_catalog_close(&cat);
	free(target);
	pw_runtime_plan_clear(&p);
	return rc;
}

/* ---------------------------------------------------------------- verify, rollback, remove */

static int run_verify(pw_cli *cli)
{
	pw_runtime_verify_result r = { 0 };
	size_t diffs = 0;
	pw_err *e = pw_runtime_run_verify(&cli->ctx, &r, &diffs);
	int rc = 0;
	if (e) {
		rc = pw_cli_fail(cli, e);
	} else if (cli->json) {
		json_t *lines = json_array();
		for (size_t i = 0; i < r.line_count; i++)
			json_array_append_new(lines, pw_json_str(r.lines[i]));
		pw_render_json(stdout, json_pack("{s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "schema", 1, "ok", diffs == 0,
						 "files_checked", (json_int_t)r.files_checked, "modified", (json_int_t)r.modified,
						 "mode", (json_int_t)r.mode, "missing", (json_int_t)r.missing,
						 "unexpected", (json_int_t)r.unexpected, "caches_ignored",
						 (json_int_t)r.caches_ignored, "differences", lines));
		rc = diffs ? PW_EXIT_FAILED : 0;
	} else {
		for (size_t i = 0; i < r.line_count; i++)
			printf("%s\n", r.lines[i]);
		printf(_("%lld files checked: %zu modified, %zu mode changed, %zu missing, %zu unexpected\n"),
		       (long long)r.files_checked, r.modified, r.mode, r.missing, r.unexpected);
		if (r.caches_ignored && cli->verbosity >= 0)
			printf(_("(%zu new bytecode cache files under __pycache__ were not counted)\n"), r.caches_ignored);
		rc = diffs ? PW_EXIT_FAILED : 0;
	}
	pw_runtime_verify_result_clear(&r);
	return rc;
}

static int run_rollback(pw_cli *cli)
{
	char *version = NULL;
	pw_err *e = pw_runtime_run_rollback(&cli->ctx, &version);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json)
		pw_render_json(stdout, json_pack("{s:i,s:s}", "schema", 1, "current_version", version));
	else if (!e)
		printf(_("rolled back: CPython %s is current again\n"), version);
	free(version);
	return rc;
}

static int run_remove(pw_cli *cli)
{
	int64_t removed = 0;
	pw_err *e = pw_ops_require_write(&cli->ctx, _("removing the runtime"));
	if (!e && !cli->yes && !(isatty(STDIN_FILENO) && pw_cli_confirm(_("Remove the managed Python runtime for every user of this machine?"))))
		e = pw_err_new(PW_ERR_REFUSED, _("pass --yes to confirm"), _("not removed: no confirmation"));
	if (!e)
		e = pw_runtime_run_remove(&cli->ctx, &removed);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json)
		pw_render_json(stdout, json_pack("{s:i,s:b}", "schema", 1, "removed", removed > 0));
	else if (!e)
		printf(removed ? _("the managed Python runtime was removed\n") : _("there was no managed runtime to remove\n"));
	return rc;
}

/* ---------------------------------------------------------------- baseline */

static bool run_quiet(const char *const *argv, const pw_child_env *ce, int64_t deadline, char **err_text)
{
	pw_run_opts ro = { .argv = argv, .env_add = (const char *const *)ce->vars, .deadline_ms = deadline,
			   .cancel = pw_cli_interrupt_token() };
	pw_run_result *r = NULL;
	pw_err *e = pw_run(&ro, &r);
	bool ok = !e && pw_run_result_status(r) == PW_RUN_EXITED && pw_run_result_exit_code(r) == 0;
	if (err_text)
		*err_text = xstrdup(e ? pw_err_message(e) : pw_run_result_output(r, PW_STREAM_STDERR));
	pw_err_free(e);
	pw_run_result_free(&r);
	return ok;
}

/* The runtime has pip, or gets it offline from its own ensurepip. */
static pw_err *runtime_pip(const char *python, const pw_child_env *ce, int64_t deadline)
{
	const char *check[] = { python, "-I", "-m", "pip", "--version", NULL };
	const char *repair[] = { python, "-I", "-m", "ensurepip", "--upgrade", NULL };
	if (run_quiet(check, ce, deadline, NULL))
		return NULL;
	char *why = NULL;
	pw_err *e = NULL;
	if (!run_quiet(repair, ce, deadline, &why) || !run_quiet(check, ce, deadline, NULL))
		e = pw_err_new(PW_ERR_FAILED, _("reinstall the runtime with 'pyward runtime install'"),
			       _("the managed runtime has no working pip, and ensurepip did not give it one: %s"),
			       why ? why : "");
	free(why);
	return e;
}

static pw_err *baseline_pip(pw_cli *cli, const runtime_args *a, const char *python, const char *reqs,
			    const pw_child_env *ce, pw_catalog *cat, int64_t op, pw_pip_result *res)
{
	const char *args[] = { "install", "--only-binary=:all:", "-r", reqs, NULL };
	char **mirrors = pw_ops_mirrors(&cli->ctx);
	int ports[32];
	size_t nports = pw_ops_proxy_ports(&cli->ctx, ports, 32);
	pw_pip_request rq = {
		.python = python, .pip_args = args, .chain = true,
		.index = a->index ? a->index : pw_settings_get(cli->ctx.settings, "index_url"),
		.proxy = pw_settings_get(cli->ctx.settings, "proxy"), .mirrors = (const char *const *)mirrors,
		.proxy_ports = ports, .proxy_port_count = nports, .project = "python-docx",
		.ca_file = getenv("PIP_CERT"), .cwd = cli->ctx.workspace, .env_add = (const char *const *)ce->vars,
		.deadline_ms = pw_clock_deadline_after(cli->ctx.timeout > 0 ? cli->ctx.timeout : 600),
		.cancel = pw_cli_interrupt_token(), .catalog = cat, .operation_id = op,
	};
	pw_err *e = pw_pip_run(&rq, res);
	pw_ops_list_free(mirrors);
	return e;
}

static int run_baseline(pw_cli *cli, const runtime_args *a)
{
	char *python = NULL, *reqs = a->requirements ? xstrdup(a->requirements) : pw_ops_data_file("requirements-baseline.txt");
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_pip_result res = { 0 };
	pw_manifest before = { 0 };
	pw_runtime_changes changes = { 0 };
	int64_t op = 0;
	pw_err *e = pw_ops_require_write(&cli->ctx, _("installing the baseline"));
	if (!e)
		e = pw_runtime_python(cli->ctx.box_root, &python);
	if (!e && access(reqs, R_OK) != 0)
		e = pw_err_errno(PW_ERR_USAGE, errno, NULL, _("requirements file %s"), reqs);
	if (!e)
		e = pw_child_env_make(&cli->ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(&cli->ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(&cli->ctx, cat, "runtime.baseline", reqs, &op);
	/* What the baseline adds goes into the runtime's manifest, so verify checks it. */
	if (!e)
		e = pw_runtime_snapshot(cli->ctx.box_root, &before);
	pw_pkgwatch w = { 0 };
	char *tree = e ? NULL : xasprintf("%s/runtime/python/current", cli->ctx.box_root);
	if (tree)
		pw_err_free(pw_pkgwatch_begin(&w, tree));
	if (!e)
		e = runtime_pip(python, &ce, pw_clock_deadline_after(120));
	if (!e)
		e = baseline_pip(cli, a, python, reqs, &ce, cat, op, &res);
	if (tree)
		pw_err_free(pw_pkgwatch_end(&w, cat, op, NULL));
	free(tree);
	if (!e)
		e = pw_runtime_record_changes(cli->ctx.box_root, cat, &before, &changes);
	pw_manifest_clear(&before);
	pw_ops_op_end(cat, op, e);
	if (cli->json)
		pw_render_json(stdout, json_pack("{s:i,s:I,s:s,s:o,s:{s:I,s:I,s:I}}", "schema", 1, "operation",
						 (json_int_t)op, "outcome", e ? "failed" : "ok", "attempts",
						 pw_json_attempts(&res), "manifest", "added",
						 (json_int_t)changes.added, "changed", (json_int_t)changes.changed,
						 "removed", (json_int_t)changes.removed));
	else if (res.count && cli->verbosity >= 0)
		pw_cli_print_attempts(&res);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && !cli->json) {
		printf(_("the baseline from %s is installed in the managed runtime\n"), reqs);
		printf(_("recorded in the runtime's manifest for 'pyward runtime verify': %zu files added, "
			 "%zu changed, %zu removed\n"), changes.added, changes.changed, changes.removed);
	}
	pw_pip_result_clear(&res);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(python);
	free(reqs);
	return rc;
}

static int run_runtime(pw_cli *cli, int argc, char **argv)
{
	runtime_args a = { .cli = cli };
	int first = pw_cli_parse_command(cli, &pw_cmd_runtime, argc, argv, "", runtime_longopts, handle_option, &a);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first + 1 != argc) {
		pw_cli_usage_error(cli, first == argc ? _("'runtime' needs a subcommand: status, install, verify, rollback, remove or baseline")
						      : _("'runtime' takes one subcommand"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	const char *sub = argv[first];
	if (strcmp(sub, "status") == 0)
		return run_status(cli, &a);
	if (strcmp(sub, "install") == 0)
		return run_install(cli, &a);
	if (strcmp(sub, "verify") == 0)
		return run_verify(cli);
	if (strcmp(sub, "rollback") == 0)
		return run_rollback(cli);
	if (strcmp(sub, "remove") == 0)
		return run_remove(cli);
	if (strcmp(sub, "baseline") == 0)
		return run_baseline(cli, &a);
	pw_cli_usage_error(cli, _("unknown runtime subcommand '%s'"), sub);
	return PW_EXIT_USAGE;
}

const pw_cmd pw_cmd_runtime = {
	.name = "runtime",
	.summary = N_("status, install, verify, roll back, remove or add the baseline to the managed CPython"),
	.usage = N_("status|install|verify|rollback|remove|baseline [--version V] [--pins FILE]\n"
		    "       [--mirror URL] [--archive FILE] [--cacert FILE] [--dry-run] [--progress auto|bar|none|json]\n"
		    "       [--requirements FILE] [--index URL] (baseline)"),
	.run = run_runtime,
};
