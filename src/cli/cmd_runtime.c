/* pyward runtime status|install|verify|rollback|remove: the managed CPython. */
#include "config.h"

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/render.h"

#include "ops/op_runtime.h"

#include "clock.h"
#include "fetch.h"
#include "i18n.h"
#include "pins.h"
#include "pip.h"
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
	bool rpm_format;
	bool no_baseline;
	pw_progress_style progress;
	unsigned given;  /* the options given, one bit each (OPT_* - OPT_FIRST) */
} runtime_args;

enum { OPT_VERSION_PIN = 0x300, OPT_PINS, OPT_MIRROR, OPT_ARCHIVE, OPT_CACERT, OPT_DRY_RUN, OPT_PROGRESS,
       OPT_NO_PROGRESS, OPT_REQUIREMENTS, OPT_INDEX, OPT_FORMAT, OPT_NO_BASELINE };
#define OPT_FIRST OPT_VERSION_PIN

/* The subcommands, one bit each. */
enum { S_STATUS = 1, S_INSTALL = 2, S_VERIFY = 4, S_ROLLBACK = 8, S_REMOVE = 16, S_BASELINE = 32 };

static const struct {
	const char *name;
	unsigned bit;
} subcommands[] = {
	{ "status", S_STATUS }, { "install", S_INSTALL }, { "verify", S_VERIFY },
	{ "rollback", S_ROLLBACK }, { "remove", S_REMOVE }, { "baseline", S_BASELINE },
};

/* Which subcommand takes which option; any other is refused with exit 2
 * (an option silently ignored would let a user believe it applied). */
static const struct {
	int code;
	unsigned subs;
} takes[] = {
	{ OPT_VERSION_PIN, S_STATUS | S_INSTALL },
	{ OPT_PINS, S_STATUS | S_INSTALL },
	{ OPT_MIRROR, S_INSTALL },
	{ OPT_ARCHIVE, S_INSTALL },
	{ OPT_CACERT, S_INSTALL },
	{ OPT_DRY_RUN, S_INSTALL },
	{ OPT_PROGRESS, S_INSTALL },
	{ OPT_NO_PROGRESS, S_INSTALL },
	{ OPT_REQUIREMENTS, S_INSTALL | S_BASELINE },
	{ OPT_INDEX, S_INSTALL | S_BASELINE },
	{ OPT_FORMAT, S_VERIFY },
	{ OPT_NO_BASELINE, S_INSTALL },
};

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
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "no-baseline", no_argument, NULL, OPT_NO_BASELINE },
	{ NULL, 0, NULL, 0 },
};

static int handle_option(int code, const char *arg, void *ud)
{
	runtime_args *a = ud;
	if (code >= OPT_FIRST && code <= OPT_NO_BASELINE)
		a->given |= 1u << (code - OPT_FIRST);
	switch (code) {
	case OPT_NO_BASELINE: a->no_baseline = true; return 0;
	case OPT_VERSION_PIN: a->version = arg; return 0;
	case OPT_PINS: a->pins_file = arg; return 0;
	case OPT_MIRROR: a->mirror = arg; return 0;
	case OPT_ARCHIVE: a->archive = arg; return 0;
	case OPT_CACERT: a->cacert = arg; return 0;
	case OPT_DRY_RUN: a->dry_run = true; return 0;
	case OPT_NO_PROGRESS: a->progress = PW_PROGRESS_NONE; return 0;
	case OPT_REQUIREMENTS: a->requirements = arg; return 0;
	case OPT_INDEX: a->index = arg; return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "rpm") != 0) {
			pw_cli_usage_error(a->cli, _("--format takes rpm, not '%s'"), arg);
			return 2;
		}
		a->rpm_format = true;
		return 0;
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
				     .archive = a->archive, .cacert = a->cacert, .dry_run = a->dry_run,
				     .no_baseline = a->no_baseline, .requirements = a->requirements, .index = a->index };
}

static pw_op_io terminal_io(pw_cli *cli, const pw_events *events)
{
	return (pw_op_io){ .events = events, .consent = pw_cli_ask_consent, .consent_ud = cli,
			   .cancel = pw_cli_interrupt_token() };
}

/* ---------------------------------------------------------------- status */

static void baseline_text(const pw_op_runtime_status_result *r)
{
	if (!r->baseline || r->info.state != PW_RUNTIME_INSTALLED)
		return;
	if (!r->missing_count) {
		printf(_("  baseline:   installed (%s)\n"), r->baseline_names ? r->baseline_names : r->baseline);
		return;
	}
	char *names = NULL;
	for (size_t i = 0; i < r->missing_count; i++) {
		char *old = names;
		names = old ? xasprintf("%s, %s", old, r->baseline_missing[i]) : xstrdup(r->baseline_missing[i]);
		free(old);
	}
	printf(_("  baseline:   missing %s: 'pyward runtime baseline' finishes it\n"), names);
	free(names);
}

static void status_text(const pw_op_runtime_status_result *r)
{
	const pw_runtime_info *i = &r->info;
	const pw_pin *pin = r->pin;
	char size[32];
	if (i->state == PW_RUNTIME_NOT_PROVISIONED) {
		if (pin && pin->size >= 0) {
			mb(pin->size, size, sizeof size);
			printf(_("managed Python runtime not provisioned \xe2\x80\x94 install it with 'pyward runtime install' or from the TUI (~%s, one time)\n"), size);
		} else {
			printf(_("managed Python runtime not provisioned \xe2\x80\x94 install it with 'pyward runtime install' or from the TUI (one time; the size is asked of the server before you consent)\n"));
		}
		if (i->has_previous)
			printf(_("  an earlier install (%s) is kept: 'pyward runtime rollback' brings it back\n"),
		       pw_render_safe(i->previous_version));
		return;
	}
	printf(_("managed Python runtime: %s\n"), pw_op_runtime_status_state(r));
	if (i->why)
		printf(_("  problem:    %s\n"), pw_render_safe(i->why));
	printf(_("  version:    %s (release %s)\n"), i->version ? pw_render_safe(i->version) : "?",
	       i->release ? pw_render_safe(i->release) : "?");
	printf(_("  platform:   %s\n"), i->platform ? pw_render_safe(i->platform) : "?");
	printf(_("  path:       %s\n"), i->path ? pw_render_safe(i->path) : "?");
	printf(_("  sha256:     %s\n"), i->sha256 ? pw_render_safe(i->sha256) : "?");
	printf(_("  source:     %s\n"), i->url ? pw_render_safe(i->url) : "?");
	printf(_("  pins:       %s%s\n"), i->pins_source ? pw_render_safe(i->pins_source) : "?",
	       i->pins_from_operator ? _(" (operator-supplied --pins)") : "");
	printf(_("  installed:  %s\n"), i->installed_at ? pw_render_safe(i->installed_at) : "?");
	mb(i->size_on_disk, size, sizeof size);
	printf(_("  size:       %s on disk\n"), size);
	if (i->has_previous)
		printf(_("  previous:   %s (pyward runtime rollback)\n"), pw_render_safe(i->previous_version));
	baseline_text(r);
}

static int run_status(pw_cli *cli, const runtime_args *a)
{
	pw_op_runtime_status_result r;
	pw_runtime_request rq = request_of(a);
	pw_err *e = pw_op_runtime_status(&cli->ctx, &rq, &r);
	if (e)
		return pw_cli_fail(cli, e);
	int rc = r.info.state == PW_RUNTIME_BROKEN ? PW_EXIT_FAILED : 0;
	if (cli->json)
		pw_render_json(stdout, pw_op_runtime_status_json(&r));
	else
		status_text(&r);
	pw_op_runtime_status_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- install */

static void print_plan(const pw_runtime_request *rq, const pw_runtime_plan *p, FILE *out)
{
	char *lines[PW_OP_INSTALL_CONSENT_LINES];
	pw_consent what;
	pw_op_runtime_install_consent(rq, p, lines, &what);
	fprintf(out, "%s\n", pw_render_safe(what.heading));
	for (size_t i = 0; i < what.line_count; i++) {
		fprintf(out, "  %s\n", pw_render_safe(lines[i]));
		free(lines[i]);
	}
}

static void print_install_result(const pw_cli *cli, const pw_runtime_plan *p, const pw_runtime_install_result *r)
{
	if (cli->verbosity < 0)
		return;
	if (r->already_current) {
		printf(_("CPython %s is already installed and current%s: %s\n"), p->pin->version,
		       r->waited_for_lock ? _(" (another install finished it meanwhile)") : "", r->path);
		return;
	}
	char size[32];
	mb(r->bytes_on_disk, size, sizeof size);
	printf(_("installed CPython %s: %lld files, %s, in %s\n"), p->pin->version, (long long)r->files, size,
	       pw_render_safe(r->path));
	if (r->resumed_from > 0)
		printf(_("  the download resumed from byte %lld\n"), (long long)r->resumed_from);
	if (r->reused_cache)
		printf(_("  the archive came from the download cache (hash checked)\n"));
}

static void print_baseline_result(const pw_cli *cli, const pw_op_runtime_install_result *r)
{
	if (!r->baseline_ran || cli->verbosity < 0)
		return;
	if (r->pip.count)
		pw_cli_print_attempts(&r->pip);
	if (!r->baseline_failed)
		printf(_("the baseline from %s is installed: %zu files added to the runtime's manifest\n"),
		       r->plan.baseline ? r->plan.baseline : "?", r->changes.added);
}

static int run_install(pw_cli *cli, const runtime_args *a)
{
	pw_runtime_request rq = request_of(a);
	pw_cli_progress *prog = pw_cli_progress_new(a->progress, cli->verbosity);
	pw_op_io io = terminal_io(cli, pw_cli_progress_events(prog));
	pw_op_runtime_install_result r;
	pw_err *e = pw_op_runtime_install(&cli->ctx, &rq, &io, &r);
	pw_cli_progress_free(&prog);
	int rc = 0;
	if (e && (!r.runtime_installed || !r.operation)) { /* nothing done, or not recorded */
		rc = pw_cli_fail(cli, e);
	} else if (cli->json) {
		/* a partial outcome is a result: its JSON says what was done */
		pw_render_json(stdout, pw_op_runtime_install_json(&rq, &r));
	} else if (r.dry_run) {
		print_plan(&rq, &r.plan, stdout);
	} else {
		print_install_result(cli, &r.plan, &r.install);
		print_baseline_result(cli, &r);
	}
	if (e && r.runtime_installed && r.operation) {
		pw_cli_print_error(cli, e);
		rc = pw_err_exit_status(e);
		pw_err_free(e);
	}
	pw_op_runtime_install_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- verify, rollback, remove */

static int run_verify(pw_cli *cli, const runtime_args *a)
{
	pw_op_runtime_verify_result r;
	pw_op_io io = terminal_io(cli, NULL);
	pw_err *e = pw_op_runtime_verify(&cli->ctx, &io, &r);
	const pw_runtime_verify_result *v = &r.verify;
	int rc = 0;
	if (e) {
		rc = pw_cli_fail(cli, e);
	} else if (cli->json) {
		pw_render_json(stdout, pw_op_runtime_verify_json(&r));
		rc = r.diffs ? PW_EXIT_FAILED : 0;
	} else if (a->rpm_format) {
		/* rpm -V prints nothing when everything matches */
		for (size_t i = 0; i < v->line_count; i++)
			printf("%s\n", pw_render_safe(v->rpm_lines[i]));
		rc = r.diffs ? PW_EXIT_FAILED : 0;
	} else {
		for (size_t i = 0; i < v->line_count; i++)
			printf("%s\n", pw_render_safe(v->lines[i])); /* file names from the tree */
		printf(_("%lld files checked: %zu modified, %zu mode changed, %zu missing, %zu unexpected\n"),
		       (long long)v->files_checked, v->modified, v->mode, v->missing, v->unexpected);
		if (v->caches_ignored && cli->verbosity >= 0)
			printf(_("(%zu new bytecode cache files under __pycache__ were not counted)\n"), v->caches_ignored);
		rc = r.diffs ? PW_EXIT_FAILED : 0;
	}
	pw_op_runtime_verify_clear(&r);
	return rc;
}

static int run_rollback(pw_cli *cli)
{
	pw_op_runtime_rollback_result r;
	pw_op_io io = terminal_io(cli, NULL);
	pw_err *e = pw_op_runtime_rollback(&cli->ctx, &io, &r);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json)
		pw_render_json(stdout, pw_op_runtime_rollback_json(&r));
	else if (!e)
		printf(_("rolled back: CPython %s is current again\n"), r.version);
	pw_op_runtime_rollback_clear(&r);
	return rc;
}

static int run_remove(pw_cli *cli)
{
	pw_op_runtime_remove_result r;
	pw_op_io io = terminal_io(cli, NULL);
	pw_err *e = pw_op_runtime_remove(&cli->ctx, &io, &r);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json)
		pw_render_json(stdout, pw_op_runtime_remove_json(&r));
	else if (!e)
		printf(r.removed ? _("the managed Python runtime was removed\n") : _("there was no managed runtime to remove\n"));
	return rc;
}

/* ---------------------------------------------------------------- baseline */

static int run_baseline(pw_cli *cli, const runtime_args *a)
{
	pw_runtime_request rq = request_of(a);
	pw_op_io io = terminal_io(cli, NULL);
	pw_op_runtime_baseline_result r;
	pw_err *e = pw_op_runtime_baseline(&cli->ctx, &rq, &io, &r);
	if (cli->json)
		pw_render_json(stdout, pw_op_runtime_baseline_json(&r));
	else if (r.pip.count && cli->verbosity >= 0)
		pw_cli_print_attempts(&r.pip);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && !cli->json) {
		printf(_("the baseline from %s is installed in the managed runtime\n"), pw_render_safe(r.requirements));
		printf(_("recorded in the runtime's manifest for 'pyward runtime verify': %zu files added, "
			 "%zu changed, %zu removed\n"), r.changes.added, r.changes.changed, r.changes.removed);
	}
	pw_op_runtime_baseline_clear(&r);
	return rc;
}

static unsigned subcommand_bit(const char *sub)
{
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		if (strcmp(subcommands[i].name, sub) == 0)
			return subcommands[i].bit;
	return 0;
}

static const char *option_name(int code)
{
	for (const struct option *o = runtime_longopts; o->name; o++)
		if (o->val == code)
			return o->name;
	return "?";
}

/* The first option given that sub does not take, or NULL. */
static const char *option_not_taken(const runtime_args *a, unsigned sub)
{
	for (size_t i = 0; i < sizeof takes / sizeof takes[0]; i++)
		if ((a->given & (1u << (takes[i].code - OPT_FIRST))) && !(takes[i].subs & sub))
			return option_name(takes[i].code);
	return NULL;
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
	const char *sub = argv[first];
	unsigned bit = subcommand_bit(sub);
	if (!bit) {
		pw_cli_usage_error(cli, _("unknown runtime subcommand '%s'"), sub);
		return PW_EXIT_USAGE;
	}
	const char *extra = option_not_taken(&a, bit);
	if (extra) {
		pw_cli_usage_error(cli, _("'runtime %s' does not take --%s"), sub, extra);
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	switch (bit) {
	case S_STATUS: return run_status(cli, &a);
	case S_INSTALL: return run_install(cli, &a);
	case S_VERIFY: return run_verify(cli, &a);
	case S_ROLLBACK: return run_rollback(cli);
	case S_REMOVE: return run_remove(cli);
	default: return run_baseline(cli, &a);
	}
}

const pw_cmd pw_cmd_runtime = {
	.name = "runtime",
	.summary = N_("the managed CPython and its baseline: install, verify, roll back"),
	.usage = N_("SUBCOMMAND [OPTIONS]\n"
		    "  status [--version V] [--pins FILE]\n"
		    "  install [--version V] [--pins FILE] [--mirror URL] [--archive FILE] [--cacert FILE]\n"
		    "          [--dry-run] [--progress auto|bar|none|json] [--no-progress]\n"
		    "          [--no-baseline | --requirements FILE] [--index URL]\n"
		    "  verify [--format rpm]\n"
		    "  rollback | remove\n"
		    "  baseline [--requirements FILE] [--index URL]\n"
		    "A subcommand refuses an option it does not take (exit status 2)."),
	.help = N_("Usage:\n"
		   "  pyward runtime status [--version V] [--pins FILE]\n"
		   "  pyward runtime install [--version V] [--pins FILE] [--mirror URL]\n"
		   "                 [--archive FILE] [--cacert FILE] [--dry-run]\n"
		   "                 [--progress auto|bar|none|json] [--no-progress]\n"
		   "                 [--no-baseline | --requirements FILE] [--index URL]\n"
		   "  pyward runtime verify [--format rpm]\n"
		   "  pyward runtime rollback\n"
		   "  pyward runtime remove\n"
		   "  pyward runtime baseline [--requirements FILE] [--index URL]\n"
		   "\n"
		   "Options:\n"
		   "  --version V           status, install: the pinned CPython version\n"
		   "                        (default: the newest pin)\n"
		   "  --pins FILE           status, install: an operator's pins table instead\n"
		   "                        of the shipped one\n"
		   "  --mirror URL          install: download from this mirror, not the pinned URL\n"
		   "  --archive FILE        install: a local archive instead of a download\n"
		   "                        (still checked against the pinned SHA256)\n"
		   "  --cacert FILE         install: trust this CA bundle for the download\n"
		   "  --dry-run             install: show the plan, change nothing\n"
		   "  --progress STYLE      install: auto, bar, none or json (a JSON object a line)\n"
		   "  --no-progress         install: the same as --progress none\n"
		   "  --no-baseline         install: the runtime without the document baseline\n"
		   "  --requirements FILE   install, baseline: the baseline's requirements file\n"
		   "  --index URL           install, baseline: this package index for the baseline\n"
		   "  --format rpm          verify: rpm -V's lines; nothing when every file matches\n"
		   "\n"
		   "A subcommand refuses an option it does not take (exit status 2)."),
	.run = run_runtime,
};
