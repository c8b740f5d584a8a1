/* pyward venv discover|create|install|uninstall|remove: a workspace's environments. */
#include "config.h"

#include "cli/cli.h"

#include "ops/op_history.h"
#include "ops/json.h"
#include "cli/cmd_jobs.h"
#include "ops/pipsetup.h"
#include "cli/progress.h"
#include "cli/render.h"
#include "ops/op_jobs.h"
#include "ops/op_venv.h"
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
	const char *format;
	bool upgrade;
	bool background;
	int depth;
	const char *requirements[16];
	size_t req_count;
	const char *editables[16];
	size_t editable_count;
	unsigned given; /* the options given, one bit per venv_takes entry */
} venv_args;

enum { OPT_VENV = 0x400, OPT_PYTHON, OPT_INDEX, OPT_PROXY, OPT_UPGRADE, OPT_DEPTH, OPT_SEED, OPT_EDITABLE, OPT_BACKGROUND,
       OPT_FORMAT };

static const struct option venv_longopts[] = {
	{ "venv", required_argument, NULL, OPT_VENV },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "proxy", required_argument, NULL, OPT_PROXY },
	{ "upgrade", no_argument, NULL, OPT_UPGRADE },
	{ "background", no_argument, NULL, OPT_BACKGROUND },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "format", required_argument, NULL, OPT_FORMAT },
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

/* Which verb takes which option; any other is refused with exit 2 (an
 * option silently ignored would let a user believe it applied). */
static const struct {
	int code;
	const char *verbs; /* " verb verb " */
} venv_takes[] = {
	{ OPT_VENV, " install uninstall verify " }, { OPT_PYTHON, " create " },
	{ OPT_INDEX, " install " },                   { OPT_PROXY, " install " },
	{ OPT_UPGRADE, " install " },                 { OPT_BACKGROUND, " install uninstall " },
	{ OPT_DEPTH, " discover " },                  { OPT_SEED, " create " },
	{ OPT_FORMAT, " verify " },                   { 'r', " install uninstall " },
	{ 'e', " install " }, /* an editable project names nothing to uninstall */
};
#define VENV_TAKES (sizeof venv_takes / sizeof venv_takes[0])

static void note_given(venv_args *a, int code)
{
	for (size_t i = 0; i < VENV_TAKES; i++)
		if (venv_takes[i].code == code)
			a->given |= 1u << i;
}

/* The first option given that verb does not take ("--depth", "-r"), or NULL. */
static const char *venv_option_not_taken(const venv_args *a, const char *verb)
{
	char *key = xasprintf(" %s ", verb);
	const char *bad = NULL;
	for (size_t i = 0; i < VENV_TAKES && !bad; i++) {
		if (!(a->given & (1u << i)) || strstr(venv_takes[i].verbs, key))
			continue;
		if (venv_takes[i].code == 'r')
			bad = "-r";
		else if (venv_takes[i].code == 'e')
			bad = "-e";
		for (const struct option *o = venv_longopts; !bad && o->name; o++)
			if (o->val == venv_takes[i].code)
				bad = o->name;
	}
	free(key);
	return bad;
}

static int handle_option(int code, const char *arg, void *ud)
{
	venv_args *a = ud;
	note_given(a, code);
	switch (code) {
	case OPT_VENV: a->venv = arg; return 0;
	case OPT_PYTHON: a->python = arg; return 0;
	case OPT_INDEX: a->index = arg; return 0;
	case OPT_PROXY: a->proxy = arg; return 0;
	case OPT_UPGRADE: a->upgrade = true; return 0;
	case OPT_BACKGROUND: a->background = true; return 0;
	case OPT_SEED: a->seed = arg; return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "rpm") != 0) {
			pw_cli_usage_error(a->cli, _("--format takes rpm, not '%s'"), arg);
			return 2;
		}
		a->format = arg;
		return 0;
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

/* ---------------------------------------------------------------- discover */

static void print_list(const pw_cli *cli, const pw_venv_list *l)
{
	for (size_t i = 0; i < l->root_count; i++)
		printf(_("scanned %s\n"), pw_render_safe(l->roots[i]));
	if (l->count == 0)
		printf(P_("no environments found (%zu folder looked at)\n",
			  "no environments found (%zu folders looked at)\n", l->dirs_visited),
		       l->dirs_visited);
	else
		/* L10N: column headers of 'venv discover', as in the full-screen interface */
		printf("%-40s %-10s %-8s %s\n", _("PATH"), _("KIND"), _("PYTHON"), _("PIP"));
	for (size_t i = 0; i < l->count; i++) {
		const pw_venv_info *v = &l->items[i];
		printf("%-40s %-10s %-8s %s%s\n", pw_render_safe(v->path), pw_render_safe(v->kind),
		       v->version ? pw_render_safe(v->version) : "?",
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
	pw_op_venv_discover_result r = { 0 };
	pw_err *e = pw_op_venv_discover(&cli->ctx, nops ? ops[0] : NULL, a->depth, &r);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json)
		pw_render_json(stdout, pw_op_venv_discover_json(&r));
	else
		print_list(cli, &r.list);
	pw_op_venv_discover_clear(&r);
	return 0;
}

/* ---------------------------------------------------------------- create */

static void print_created(const pw_cli *cli, const pw_created *c)
{
	if (cli->json) {
		pw_render_json(stdout, pw_op_venv_create_json(c));
	} else if (c->r.existed && c->r.repaired) {
		printf(_("%s is already an environment (Python %s), but its pip did not work: pip repaired\n"),
		       c->path, c->r.version ? c->r.version : "?");
	} else if (c->r.existed) {
		printf(_("%s is already an environment (Python %s): nothing to do\n"), pw_render_safe(c->path),
		       c->r.version ? pw_render_safe(c->r.version) : "?");
	} else {
		printf(_("created %s with Python %s\n  base: %s\n"), pw_render_safe(c->path),
		       c->r.version ? pw_render_safe(c->r.version) : "?", c->why ? pw_render_safe(c->why) : "?");
		if (c->r.remade)
			printf("%s", _("  (an interrupted create had left it half-made: made again)\n"));
		if (c->r.seeded_fast && c->r.written)
			printf(_("  pip: linked from the box's image of %s\n"), c->r.pip_wheel ? pw_render_safe(c->r.pip_wheel) : "?");
		else if (c->r.seeded_fast)
			printf(_("  pip: unpacked from %s\n"), c->r.pip_wheel ? pw_render_safe(c->r.pip_wheel) : "?");
	}
}

static int run_create(pw_cli *cli, venv_args *a, int nops, char **ops)
{
	if (nops > 1) {
		pw_cli_usage_error(cli, _("'venv create' takes at most one NAME or PATH"));
		return PW_EXIT_USAGE;
	}
	pw_cli_progress *prog = pw_cli_progress_new(PW_PROGRESS_NONE, cli->verbosity);
	pw_op_io io = { .events = pw_cli_progress_events(prog), .cancel = pw_cli_interrupt_token() };
	pw_op_venv_create_request rq = { .name = nops ? ops[0] : NULL, .python = a->python, .seed = a->seed };
	pw_created c = { 0 };
	pw_err *e = pw_op_venv_create(&cli->ctx, &rq, &io, &c);
	pw_cli_progress_free(&prog);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!rc)
		print_created(cli, &c);
	pw_created_clear(&c);
	return rc;
}

/* ---------------------------------------------------------------- install, uninstall */

static void print_line(void *ud, pw_stream s, const char *line, size_t len)
{
	const pw_cli *cli = ud;
	if (cli->json || cli->verbosity < 1)
		return;
	(void)s;
	char *text = xstrndup(line, len);
	fprintf(stderr, "  | %s\n", pw_render_safe(text)); /* pip's words: shown safe */
	free(text);
}

static void say_note(void *ud, const char *text)
{
	const pw_cli *cli = ud;
	if (cli->verbosity >= 0 && !cli->json)
		fprintf(stderr, "%s: %s\n", cli->prog, pw_render_safe(text));
}

typedef struct pip_job {
	const char *kind;   /* "venv.install" / "venv.uninstall" */
	bool install;
} pip_job;

static pw_op_venv_pip_request pip_request(pw_cli *cli, const venv_args *a, int nops, char **ops, const pip_job *job)
{
	pw_op_venv_pip_request rq = {
		.install = job->install, .venv = a->venv,
		.specs = (const char *const *)ops, .spec_count = (size_t)nops,
		.requirements = a->requirements, .req_count = a->req_count,
		.editables = a->editables, .editable_count = a->editable_count,
		.index = a->index, .proxy = a->proxy, .upgrade = a->upgrade, .lock_note = cli->cmdline,
		.on_line = print_line, .line_ud = cli, .say = say_note, .say_ud = cli,
	};
	return rq;
}

static int report_pip(pw_cli *cli, const pw_op_venv_pip_result *r, pw_err *e)
{
	if (cli->json)
		pw_render_json(stdout, pw_op_venv_pip_json(r, e));
	else if (cli->verbosity >= 0)
		pw_cli_print_attempts(&r->pip);
	if (!e) {
		if (!cli->json && cli->verbosity >= 0)
			printf(_("done in %s (operation %lld; 'pyward history show %lld' has the details)\n"),
			       pw_render_safe(r->venv), (long long)r->operation, (long long)r->operation);
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
	pw_op_venv_pip_request rq = pip_request(cli, a, nops, ops, job);
	pw_cli_progress *prog = pw_cli_progress_new(PW_PROGRESS_NONE, cli->json ? -1 : cli->verbosity);
	pw_op_io io = { .events = pw_cli_progress_events(prog), .cancel = pw_cli_interrupt_token() };
	pw_op_venv_pip_result r = { 0 };
	pw_err *e = pw_op_venv_pip(&cli->ctx, &rq, &io, &r);
	pw_cli_progress_free(&prog);
	int rc = e && !r.operation ? pw_cli_fail(cli, e) : report_pip(cli, &r, e);
	pw_op_venv_pip_clear(&r);
	return rc;
}

/* --background: ops checks what can be refused now and starts the job;
 * in the detached process that runs it, the job. */
static int run_pip_command(pw_cli *cli, venv_args *a, int nops, char **ops, const pip_job *job)
{
	if (!a->background)
		return run_pip_here(cli, a, nops, ops, job);
	if (pw_op_job_running_here()) {
		pw_op_job_here here;
		pw_err *e = pw_cli_job_enter(cli, &here);
		int rc = e ? pw_cli_fail(cli, e) : pw_cli_job_leave(cli, &here, run_pip_here(cli, a, nops, ops, job));
		pw_job_rec_clear(&here.job);
		return rc;
	}
	pw_op_venv_pip_request rq = pip_request(cli, a, nops, ops, job);
	pw_job_rec started = { 0 };
	pw_err *e = pw_op_venv_pip_start(&cli->ctx, &rq, &started);
	int rc = e ? pw_cli_fail(cli, e) : pw_cli_job_started(cli, &started);
	pw_job_rec_clear(&started);
	return rc;
}

/* ---------------------------------------------------------------- remove */

static int run_remove(pw_cli *cli, int nops, char **ops)
{
	if (nops != 1) {
		pw_cli_usage_error(cli, _("'venv remove' takes one NAME or PATH"));
		return PW_EXIT_USAGE;
	}
	char *removed = NULL;
	pw_err *e = pw_op_venv_remove(&cli->ctx, ops[0], &removed);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json)
		pw_render_json(stdout, pw_op_venv_remove_json(removed));
	else
		printf(_("removed %s\n"), pw_render_safe(removed));
	free(removed);
	return 0;
}

/* ---------------------------------------------------------------- verify */

/* rpm -V's lines: nine flags, the marker column (blank), the path; "missing"
 * in place of the flags; unexpected files, which rpm -V does not look for,
 * get a word of their own. Nothing when everything matches. */
static void print_rpm(const pw_rc_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		for (size_t k = 0; k < r->dists[i].count; k++) {
			const pw_rc_file *f = &r->dists[i].files[k];
			if (f->kind == PW_RC_MODIFIED)
				printf("%s    %s\n", f->rpm_flags, pw_render_safe(f->path));
			else if (f->kind == PW_RC_MISSING)
				printf("missing     %s\n", pw_render_safe(f->path));
			else if (f->kind == PW_RC_UNEXPECTED)
				printf("unexpected  %s\n", pw_render_safe(f->path));
		}
	}
}

static void print_verify(const pw_cli *cli, const pw_rc_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		const pw_rc_dist *d = &r->dists[i];
		bool head = false;
		for (size_t k = 0; k < d->count; k++) {
			const pw_rc_file *f = &d->files[k];
			if (f->kind == PW_RC_UNCHECKED && cli->verbosity < 1)
				continue;
			if (!head)
				printf("%s %s\n", pw_render_safe(d->name), pw_render_safe(d->version));
			head = true;
			if (f->kind == PW_RC_MODIFIED)
				printf("  %-10s %s (%s)\n", pw_rc_kind_name(f->kind), pw_render_safe(f->path), f->rpm_flags);
			else
				printf("  %-10s %s\n", pw_rc_kind_name(f->kind), pw_render_safe(f->path));
		}
	}
	printf(P_("%zu distribution, %zu files checked: %zu modified, %zu missing, %zu unexpected, "
		  "%zu unchecked (no hash in RECORD)\n",
		  "%zu distributions, %zu files checked: %zu modified, %zu missing, %zu unexpected, "
		  "%zu unchecked (no hash in RECORD)\n", r->count),
	       r->count, r->checked, r->modified, r->missing, r->unexpected, r->unchecked);
}

static int run_verify(pw_cli *cli, venv_args *a, int nops, char **ops)
{
	if (nops > 1) {
		pw_cli_usage_error(cli, _("'venv verify' takes at most one NAME or PATH"));
		return PW_EXIT_USAGE;
	}
	if (nops == 1)
		a->venv = ops[0];
	char *venv = NULL;
	pw_op_venv_verify_result r = { 0 };
	pw_op_io io = { .cancel = pw_cli_interrupt_token() };
	pw_err *e = pw_op_venv_find(&cli->ctx, a->venv, &venv, false);
	if (!e)
		e = pw_op_venv_verify(&cli->ctx, venv, &io, &r);
	int rc = e ? pw_cli_fail(cli, e) : r.differs ? PW_EXIT_FAILED : 0;
	if (!e && cli->json)
		pw_render_json(stdout, pw_op_venv_verify_json(&r));
	else if (!e && a->format)
		print_rpm(&r.report);
	else if (!e)
		print_verify(cli, &r.report);
	pw_op_venv_verify_clear(&r);
	free(venv);
	return rc;
}

/* ---------------------------------------------------------------- dispatch */

static int run_venv(pw_cli *cli, int argc, char **argv)
{
	venv_args a = { .cli = cli };
	int first = pw_cli_parse_command(cli, &pw_cmd_venv, argc, argv, "r:e:", venv_longopts, handle_option, &a);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first >= argc) {
		pw_cli_usage_error(cli, _("'venv' needs a subcommand: discover, create, install, uninstall, remove or verify"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	const char *sub = argv[first];
	static const char *const verbs[] = { "discover", "create", "install", "uninstall", "remove", "verify" };
	bool known = false;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		known = known || strcmp(sub, verbs[i]) == 0;
	const char *extra = known ? venv_option_not_taken(&a, sub) : NULL;
	if (extra) {
		pw_cli_usage_error(cli, _("'venv %s' does not take %s%s"), sub, extra[0] == '-' ? "" : "--", extra);
		return PW_EXIT_USAGE;
	}
	int nops = argc - first - 1;
	char **ops = argv + first + 1;
	static const pip_job install = { "venv.install", true };
	static const pip_job uninstall = { "venv.uninstall", false };
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
	if (strcmp(sub, "verify") == 0)
		return run_verify(cli, &a, nops, ops);
	pw_cli_usage_error(cli, _("unknown venv subcommand '%s'"), sub);
	return PW_EXIT_USAGE;
}

const pw_cmd pw_cmd_venv = {
	.name = "venv",
	.summary = N_("environments: discover, create, install, uninstall, remove, verify"),
	.usage = N_("discover [DIR] [--depth N]\n"
		    "       pyward venv create [NAME|PATH] [--python INTERPRETER] [--seed fast|pip|none]\n"
		    "       pyward venv install [--venv V] [--index URL] [--proxy URL] [--upgrade] [--background] [-r FILE] [-e PATH] SPEC...\n"
		    "       pyward venv uninstall [--venv V] [--background] [-r FILE] NAME...\n"
		    "       pyward venv remove NAME|PATH\n"
		    "       pyward venv verify [NAME|PATH] [--format rpm] [--json]"),
	.help = N_("Usage:\n"
		   "  pyward venv discover [DIR] [--depth N]\n"
		   "  pyward venv create [NAME|PATH] [--python INTERPRETER] [--seed fast|pip|none]\n"
		   "  pyward venv install [--venv V] [--index URL] [--proxy URL] [--upgrade]\n"
		   "              [--background] [-r FILE] [-e PATH] SPEC...\n"
		   "  pyward venv uninstall [--venv V] [--background] [-r FILE] NAME...\n"
		   "  pyward venv remove NAME|PATH\n"
		   "  pyward venv verify [NAME|PATH] [--format rpm]\n"
		   "\n"
		   "Options:\n"
		   "  --depth N             discover: how many folders deep to look (0-8, default 2)\n"
		   "  --python INTERPRETER  create: the base (default: the managed runtime,\n"
		   "                        else python3)\n"
		   "  --seed fast|pip|none  create: pip from the bundled wheel (fast, the default),\n"
		   "                        through ensurepip (pip), or no pip (none)\n"
		   "  --venv V              install, uninstall, verify: the environment, a name or\n"
		   "                        a path\n"
		   "                        (default: the workspace's one environment; install makes\n"
		   "                        .venv when there is none)\n"
		   "  -r, --requirement FILE\n"
		   "                        install, uninstall: a requirements file in the\n"
		   "                        workspace (repeatable)\n"
		   "  -e, --editable PATH   install: a local project in the workspace, editable\n"
		   "                        (repeatable)\n"
		   "  --index URL           install: this index only (no mirrors, no proxy probing)\n"
		   "  --proxy URL           install: through this proxy\n"
		   "  --upgrade             install: upgrade what is already installed\n"
		   "  --background          install, uninstall: run as a job, print its id, return\n"
		   "  --format rpm          verify: rpm -V's lines; nothing when every file matches\n"
		   "\n"
		   "Environment:\n"
		   "  PYWARD_MIRRORS        install: mirror indexes tried in order after a network\n"
		   "                        failure (URLs separated by spaces or commas; else the\n"
		   "                        'mirrors' setting, else data/mirrors.conf)\n"
		   "  PYWARD_PROXY_PORTS    install: 127.0.0.1 ports probed for a proxy after\n"
		   "                        a network failure (else the 'proxy_ports' setting)"),
	.run = run_venv,
};
