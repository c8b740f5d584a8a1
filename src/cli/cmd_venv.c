/* pyward venv discover|create|install|uninstall|remove: a workspace's environments. */
#include "config.h"

#include "cli/cli.h"

#include "ops/json.h"
#include "cli/cmd_jobs.h"
#include "ops/pipsetup.h"
#include "cli/progress.h"
#include "cli/render.h"
#include "ops/venvops.h"

#include "clock.h"
#include "i18n.h"
#include "pip.h"
#include "runtime.h"
#include "venv.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_BUDGET_S PW_VENV_BUDGET_S
#define DISCOVER_BUDGET_S PW_VENV_DISCOVER_BUDGET_S

typedef struct venv_args {
	pw_cli *cli;
	const char *venv;
	const char *python;
	const char *index;
	const char *proxy;
	const char *seed;
	bool upgrade;
	bool background;
	int depth;
	const char *requirements[16];
	size_t req_count;
	const char *editables[16];
	size_t editable_count;
	int argc;          /* the command's words, for --background to start it again */
	char **argv;
} venv_args;

enum { OPT_VENV = 0x400, OPT_PYTHON, OPT_INDEX, OPT_PROXY, OPT_UPGRADE, OPT_DEPTH, OPT_SEED, OPT_EDITABLE, OPT_BACKGROUND };

static const struct option venv_longopts[] = {
	{ "venv", required_argument, NULL, OPT_VENV },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "proxy", required_argument, NULL, OPT_PROXY },
	{ "upgrade", no_argument, NULL, OPT_UPGRADE },
	{ "background", no_argument, NULL, OPT_BACKGROUND },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "requirement", required_argument, NULL, 'r' },
	{ "editable", required_argument, NULL, 'e' },
	{ NULL, 0, NULL, 0 },
};

static int add_path(venv_args *a, const char **list, size_t *count, const char *arg)
{
	if (*count >= 16) {
		pw_cli_usage_error(a->cli, _("at most 16 -r/-e options"));
		return 2;
	}
	list[(*count)++] = arg;
	return 0;
}

static int handle_option(int code, const char *arg, void *ud)
{
	venv_args *a = ud;
	switch (code) {
	case OPT_VENV: a->venv = arg; return 0;
	case OPT_PYTHON: a->python = arg; return 0;
	case OPT_INDEX: a->index = arg; return 0;
	case OPT_PROXY: a->proxy = arg; return 0;
	case OPT_UPGRADE: a->upgrade = true; return 0;
	case OPT_BACKGROUND: a->background = true; return 0;
	case OPT_SEED: a->seed = arg; return 0;
	case 'r': return add_path(a, a->requirements, &a->req_count, arg);
	case 'e': return add_path(a, a->editables, &a->editable_count, arg);
	case OPT_DEPTH: {
		char *end = NULL;
		long d = strtol(arg, &end, 10);
		if (!*arg || *end || d < 0 || d > 8) {
			pw_cli_usage_error(a->cli, _("--depth needs a number from 0 to 8, not '%s'"), arg);
			return 2;
		}
		a->depth = (int)d;
		return 0;
	}
	}
	return 2;
}

/* ---------------------------------------------------------------- helpers */

/* ---------------------------------------------------------------- discover */

static json_t *info_json(const pw_venv_info *v)
{
	return json_pack("{s:o,s:o,s:o,s:b,s:o,s:o,s:b}", "path", pw_json_str(v->path), "kind",
			 pw_json_str(v->kind), "python", pw_json_str(v->python), "python_exists",
			 v->python_exists, "version", pw_json_str(v->version), "base",
			 pw_json_str(v->base), "has_pip", v->has_pip);
}

static void print_list(const pw_cli *cli, const pw_venv_list *l)
{
	for (size_t i = 0; i < l->root_count; i++)
		printf(_("scanned %s\n"), l->roots[i]);
	if (l->count == 0)
		printf(_("no environments found (%zu folders looked at)\n"), l->dirs_visited);
	for (size_t i = 0; i < l->count; i++) {
		const pw_venv_info *v = &l->items[i];
		printf("%-40s %-10s %-8s %s%s\n", v->path, v->kind, v->version ? v->version : "?",
		       v->has_pip ? _("pip") : _("no pip"), v->python_exists ? "" : _(" (interpreter missing)"));
	}
	if (l->truncated && cli->verbosity >= 0)
		printf(_("(the scan stopped early: pass --depth or a narrower DIR)\n"));
}

static int run_discover(pw_cli *cli, venv_args *a, int nops, char **ops)
{
	if (nops > 1) {
		pw_cli_usage_error(cli, _("'venv discover' takes at most one DIR"));
		return PW_EXIT_USAGE;
	}
	pw_venv_list l = { 0 };
	char *start = NULL;
	pw_err *e = nops ? pw_guard_resolve(cli->ctx.guard, ops[0], &start) : NULL;
	if (!e)
		e = pw_venv_discover(cli->ctx.guard, start, a->depth ? a->depth : 2, 256,
				     pw_clock_deadline_after(pw_ops_budget(&cli->ctx, DISCOVER_BUDGET_S)), &l);
	free(start);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json) {
		json_t *envs = json_array(), *roots = json_array();
		for (size_t i = 0; i < l.count; i++)
			json_array_append_new(envs, info_json(&l.items[i]));
		for (size_t i = 0; i < l.root_count; i++)
			json_array_append_new(roots, pw_json_str(l.roots[i]));
		pw_render_json(stdout, json_pack("{s:i,s:o,s:o,s:I,s:b}", "schema", 1, "environments", envs, "roots",
						 roots, "dirs_visited", (json_int_t)l.dirs_visited, "truncated",
						 l.truncated));
	} else {
		print_list(cli, &l);
	}
	pw_venv_list_clear(&l);
	return 0;
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

/* Shared with the full-screen interface (venvops.c); the CLI adds its
 * progress sink and the SIGINT token. */
static pw_err *create_env(pw_cli *cli, const venv_args *a, const char *target, const pw_child_env *ce,
			  pw_catalog *cat, pw_created *c)
{
	pw_venv_seed seed = PW_SEED_FAST;
	pw_err *e = parse_seed(a->seed, &seed);
	if (e)
		return e;
	pw_cli_progress *prog = pw_cli_progress_new(PW_PROGRESS_NONE, cli->verbosity);
	pw_create_request rq = { .target = target, .python = a->python, .seed = seed, .ce = ce,
				 .cancel = pw_cli_interrupt_token(), .events = pw_cli_progress_events(prog) };
	e = pw_ops_venv_create(&cli->ctx, &rq, cat, c);
	pw_cli_progress_free(&prog);
	return e;
}

static void print_created(const pw_cli *cli, const pw_created *c)
{
	if (cli->json) {
		pw_render_json(stdout, json_pack("{s:i,s:s,s:b,s:o,s:o,s:o,s:b}", "schema", 1, "path", c->path, "existed",
						 c->r.existed, "python", pw_json_str(c->r.python), "version",
						 pw_json_str(c->r.version), "base", pw_json_str(c->why),
						 "seeded_fast", c->r.seeded_fast));
	} else if (c->r.existed) {
		printf(_("%s is already an environment (Python %s): nothing to do\n"), c->path,
		       c->r.version ? c->r.version : "?");
	} else {
		printf(_("created %s with Python %s\n  base: %s\n"), c->path, c->r.version ? c->r.version : "?",
		       c->why ? c->why : "?");
		if (c->r.seeded_fast)
			printf(_("  pip: unpacked from %s\n"), c->r.pip_wheel ? c->r.pip_wheel : "?");
	}
}

static int run_create(pw_cli *cli, venv_args *a, int nops, char **ops)
{
	if (nops > 1) {
		pw_cli_usage_error(cli, _("'venv create' takes at most one NAME or PATH"));
		return PW_EXIT_USAGE;
	}
	char *target = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_created c = { 0 };
	pw_err *e = pw_ops_require_write(&cli->ctx, _("creating an environment"));
	if (!e)
		e = pw_ops_resolve_venv(&cli->ctx, nops ? ops[0] : ".venv", &target);
	if (!e)
		e = pw_child_env_make(&cli->ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(&cli->ctx, &cat);
	if (!e)
		e = create_env(cli, a, target, &ce, cat, &c);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!rc)
		print_created(cli, &c);
	pw_created_clear(&c);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(target);
	return rc;
}

/* ---------------------------------------------------------------- specs */

static pw_err *build_specs(const pw_cli *cli, const venv_args *a, int nops, char **ops, pw_spec_list *l)
{
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < a->req_count; i++)
		e = pw_spec_add_requirement(&cli->ctx, l, a->requirements[i]);
	for (size_t i = 0; !e && i < a->editable_count; i++)
		e = pw_spec_add_editable(&cli->ctx, l, a->editables[i]);
	for (int i = 0; !e && i < nops; i++)
		e = pw_spec_add(l, ops[i]);
	return e;
}

/* ---------------------------------------------------------------- install, uninstall */

static void print_line(void *ud, pw_stream s, const char *line, size_t len)
{
	const pw_cli *cli = ud;
	if (cli->json || cli->verbosity < 1)
		return;
	(void)s;
	fprintf(stderr, "  | %.*s\n", (int)len, line);
}

typedef struct pip_job {
	const char *kind;   /* "venv.install" / "venv.uninstall" */
	const char *verb;   /* "install" / "uninstall" */
	bool chain;
} pip_job;

static pw_err *run_pip(pw_cli *cli, const venv_args *a, const pip_job *job, const char *venv,
		       const pw_spec_list *specs, const pw_child_env *ce, pw_catalog *cat, int64_t op, pw_pip_result *res)
{
	pw_cli_progress *prog = pw_cli_progress_new(PW_PROGRESS_NONE, cli->json ? -1 : cli->verbosity);
	pw_pip_job pj = { .verb = job->verb, .chain = job->chain, .upgrade = a->upgrade, .index = a->index,
			  .proxy = a->proxy, .cancel = pw_cli_interrupt_token(), .events = pw_cli_progress_events(prog),
			  .on_line = print_line, .line_ud = cli };
	pw_err *e = pw_ops_pip_run(&cli->ctx, &pj, venv, specs, ce, cat, op, res);
	pw_cli_progress_free(&prog);
	return e;
}

/* --venv, else the one environment found (*out stays NULL when there is none). */
static pw_err *find_target(pw_cli *cli, const venv_args *a, char **out, bool create_ok)
{
	*out = NULL;
	if (a->venv)
		return pw_ops_resolve_venv(&cli->ctx, a->venv, out);
	pw_venv_list l = { 0 };
	pw_err *e = pw_venv_discover(cli->ctx.guard, cli->ctx.workspace, 2, 256, pw_clock_deadline_after(DISCOVER_BUDGET_S), &l);
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

/* The install target: --venv, else the one environment found, else a new .venv. */
static pw_err *choose_target(pw_cli *cli, const venv_args *a, const pw_child_env *ce, pw_catalog *cat, char **out,
			     bool create_ok)
{
	pw_err *e = find_target(cli, a, out, create_ok);
	if (e || *out)
		return e;
	pw_created c = { 0 };
	char *target = xasprintf("%s/.venv", cli->ctx.workspace);
	if (cli->verbosity >= 0 && !cli->json)
		fprintf(stderr, _("pyward: no environment in the workspace: creating %s\n"), target);
	e = create_env(cli, a, target, ce, cat, &c);
	pw_created_clear(&c);
	if (e)
		free(target);
	else
		*out = target;
	return e;
}

static int report_pip(pw_cli *cli, int64_t op, const char *venv, const pw_pip_result *res, pw_err *e)
{
	if (cli->json) {
		pw_render_json(stdout, json_pack("{s:i,s:I,s:s,s:s,s:o,s:o}", "schema", 1, "operation", (json_int_t)op,
						 "outcome", e ? (pw_err_code(e) == PW_ERR_TIMEOUT ? "timed-out" : "failed") : "ok",
						 "venv", venv, "attempts", pw_json_attempts(res), "stop_reason",
						 e ? pw_json_str(pw_err_message(e)) : json_null()));
	} else if (cli->verbosity >= 0) {
		pw_cli_print_attempts(res);
	}
	if (!e) {
		if (!cli->json && cli->verbosity >= 0)
			printf(_("done in %s (operation %lld; 'pyward history show %lld' has the details)\n"), venv,
			       (long long)op, (long long)op);
		return 0;
	}
	/* With --json the result object above carries the error already. */
	int rc = pw_err_exit_status(e);
	pw_cli_print_error(cli, e);
	pw_err_free(e);
	return rc;
}

static int run_pip_here(pw_cli *cli, venv_args *a, int nops, char **ops, const pip_job *job)
{
	char *venv = NULL;
	pw_child_env ce = { 0 };
	pw_catalog *cat = NULL;
	pw_spec_list specs = { 0 };
	pw_pip_result res = { 0 };
	int64_t op = 0;
	int lock = -1;
	pw_err *e = pw_ops_require_write(&cli->ctx, job->chain ? _("installing packages") : _("uninstalling packages"));
	if (!e && nops == 0 && a->req_count == 0 && a->editable_count == 0)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("name at least one package"));
	if (!e)
		e = build_specs(cli, a, nops, ops, &specs);
	if (!e)
		e = pw_child_env_make(&cli->ctx, &ce);
	if (!e)
		e = pw_ops_catalog_rw(&cli->ctx, &cat);
	if (!e)
		e = choose_target(cli, a, &ce, cat, &venv, job->chain);
	if (!e)
		e = pw_ops_op_begin(&cli->ctx, cat, job->kind, venv, &op);
	if (!e)
		e = pw_venv_lock(cli->ctx.workspace, venv, cli->cmdline, pw_clock_deadline_after(pw_ops_budget(&cli->ctx, DEFAULT_BUDGET_S)),
				 pw_cli_interrupt_token(), NULL, &lock);
	if (!e && job->chain && !pw_ops_venv_has_pip(venv)) {
		if (!cli->json && cli->verbosity >= 0)
			fprintf(stderr, _("pyward: %s has no pip: repairing it offline (ensurepip)\n"), venv);
		e = pw_venv_repair_pip(venv, (const char *const *)ce.vars,
				       pw_clock_deadline_after(pw_ops_budget(&cli->ctx, DEFAULT_BUDGET_S)), pw_cli_interrupt_token());
	}
	int rc;
	if (e && !op) {
		rc = pw_cli_fail(cli, e);
	} else {
		if (!e)
			e = run_pip(cli, a, job, venv, &specs, &ce, cat, op, &res);
		pw_ops_op_end(cat, op, e);
		rc = report_pip(cli, op, venv, &res, e);
	}
	pw_venv_unlock(&lock);
	pw_pip_result_clear(&res);
	pw_spec_list_clear(&specs);
	pw_catalog_close(&cat);
	pw_child_env_clear(&ce);
	free(venv);
	return rc;
}

/* --background: what can be refused is refused now, then the same command
 * runs again detached (cmd_jobs.c); in that detached process, the job. */
static int run_pip_command(pw_cli *cli, venv_args *a, int nops, char **ops, const pip_job *job)
{
	if (!a->background)
		return run_pip_here(cli, a, nops, ops, job);
	if (pw_cli_job_running_here()) {
		pw_err *e = pw_cli_job_enter(cli);
		return e ? pw_cli_fail(cli, e) : pw_cli_job_leave(cli, run_pip_here(cli, a, nops, ops, job));
	}
	pw_spec_list specs = { 0 };
	char *venv = NULL;
	pw_err *e = pw_ops_require_write(&cli->ctx, job->chain ? _("installing packages") : _("uninstalling packages"));
	if (!e && nops == 0 && a->req_count == 0 && a->editable_count == 0)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("name at least one package"));
	if (!e)
		e = build_specs(cli, a, nops, ops, &specs);
	if (!e)
		e = find_target(cli, a, &venv, job->chain);
	if (!e && !venv)
		venv = xasprintf("%s/.venv", cli->ctx.workspace); /* the job creates it */
	int rc = e ? pw_cli_fail(cli, e)
		   : pw_cli_job_detach(cli, job->kind, venv, pw_ops_budget(&cli->ctx, DEFAULT_BUDGET_S), a->argc, a->argv);
	pw_spec_list_clear(&specs);
	free(venv);
	return rc;
}

/* ---------------------------------------------------------------- remove */

static int run_remove(pw_cli *cli, int nops, char **ops)
{
	if (nops != 1) {
		pw_cli_usage_error(cli, _("'venv remove' takes one NAME or PATH"));
		return PW_EXIT_USAGE;
	}
	char *target = NULL;
	pw_catalog *cat = NULL;
	int64_t op = 0;
	pw_err *e = pw_ops_require_write(&cli->ctx, _("removing an environment"));
	if (!e)
		e = strchr(ops[0], '/') ? NULL : pw_guard_check_name(ops[0]);
	/* Not resolved here: remove checks the given path itself for a symlink. */
	if (!e)
		target = strchr(ops[0], '/') ? xstrdup(ops[0]) : xasprintf("%s/%s", cli->ctx.workspace, ops[0]);
	if (!e)
		e = pw_ops_catalog_rw(&cli->ctx, &cat);
	if (!e)
		e = pw_ops_op_begin(&cli->ctx, cat, "venv.remove", target, &op);
	if (!e)
		e = pw_venv_remove(cli->ctx.guard, target);
	pw_ops_op_end(cat, op, e);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json)
		pw_render_json(stdout, json_pack("{s:i,s:s}", "schema", 1, "removed", target));
	else if (!e)
		printf(_("removed %s\n"), target);
	pw_catalog_close(&cat);
	free(target);
	return rc;
}

/* ---------------------------------------------------------------- dispatch */

static int run_venv(pw_cli *cli, int argc, char **argv)
{
	venv_args a = { .cli = cli, .argc = argc, .argv = argv };
	int first = pw_cli_parse_command(cli, &pw_cmd_venv, argc, argv, "r:e:", venv_longopts, handle_option, &a);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first >= argc) {
		pw_cli_usage_error(cli, _("'venv' needs a subcommand: discover, create, install, uninstall or remove"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	const char *sub = argv[first];
	int nops = argc - first - 1;
	char **ops = argv + first + 1;
	static const pip_job install = { "venv.install", "install", true };
	static const pip_job uninstall = { "venv.uninstall", "uninstall", false };
	if (a.background && strcmp(sub, "install") != 0 && strcmp(sub, "uninstall") != 0) {
		pw_cli_usage_error(cli, _("--background is for 'venv install' and 'venv uninstall'"));
		return PW_EXIT_USAGE;
	}
	if (strcmp(sub, "discover") == 0)
		return run_discover(cli, &a, nops, ops);
	if (strcmp(sub, "create") == 0)
		return run_create(cli, &a, nops, ops);
	if (strcmp(sub, "install") == 0)
		return run_pip_command(cli, &a, nops, ops, &install);
	if (strcmp(sub, "uninstall") == 0)
		return run_pip_command(cli, &a, nops, ops, &uninstall);
	if (strcmp(sub, "remove") == 0)
		return run_remove(cli, nops, ops);
	pw_cli_usage_error(cli, _("unknown venv subcommand '%s'"), sub);
	return PW_EXIT_USAGE;
}

const pw_cmd pw_cmd_venv = {
	.name = "venv",
	.summary = N_("discover, create, install into, uninstall from and remove environments"),
	.usage = N_("discover [DIR] [--depth N]\n"
		    "       pyward venv create [NAME|PATH] [--python INTERPRETER] [--seed fast|pip|none]\n"
		    "       pyward venv install [--venv V] [--index URL] [--proxy URL] [--upgrade] [--background] [-r FILE] [-e PATH] SPEC...\n"
		    "       pyward venv uninstall [--venv V] [--background] NAME...\n"
		    "       pyward venv remove NAME|PATH"),
	.run = run_venv,
};
