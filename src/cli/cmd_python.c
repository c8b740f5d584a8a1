/* pyward python: run code in the session's persistent scratchpad. */
#include "config.h"

#include "cli/cli.h"
#include "cli/render.h"

#include "clock.h"
#include "i18n.h"
#include "paths.h"
#include "runtime.h"
#include "scratch_client.h"
#include "scratch_host.h"
#include "venv.h"
#include "xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

enum { OPT_RESET = 0x200, OPT_INTERRUPT, OPT_DISCARD, OPT_LIST, OPT_VENV, OPT_PYTHON, OPT_MAX_OUTPUT, OPT_HOST };

typedef struct py_args {
	const char *session;
	const char *code;
	const char *venv;
	const char *python;
	size_t max_output;
	bool reset, interrupt, discard, list, host;
	bool bad;
} py_args;

static const struct option longopts[] = {
	{ "session", required_argument, NULL, 's' },
	{ "code", required_argument, NULL, 'c' },
	{ "reset", no_argument, NULL, OPT_RESET },
	{ "interrupt", no_argument, NULL, OPT_INTERRUPT },
	{ "discard", no_argument, NULL, OPT_DISCARD },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "venv", required_argument, NULL, OPT_VENV },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "host", no_argument, NULL, OPT_HOST },
	{ NULL, 0, NULL, 0 },
};

static int handle_opt(int code, const char *arg, void *ud)
{
	py_args *a = ud;
	char *end = NULL;
	switch (code) {
	case 's': a->session = arg; return 0;
	case 'c': a->code = arg; return 0;
	case OPT_RESET: a->reset = true; return 0;
	case OPT_INTERRUPT: a->interrupt = true; return 0;
	case OPT_DISCARD: a->discard = true; return 0;
	case OPT_LIST: a->list = true; return 0;
	case OPT_VENV: a->venv = arg; return 0;
	case OPT_PYTHON: a->python = arg; return 0;
	case OPT_HOST: a->host = true; return 0;
	case OPT_MAX_OUTPUT:
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 10);
		if (errno || !*arg || *end || v < 64 || v > 64ull * 1024 * 1024) {
			fprintf(stderr, _("pyward: --max-output needs a byte count from 64 to 67108864, not '%s'\n"), arg);
			return 2;
		}
		a->max_output = (size_t)v;
		return 0;
	}
	return 2;
}

/* ---------------------------------------------------------------- the host */

static int setting_int(const pw_cli *cli, const char *key, int fallback)
{
	const char *v = pw_settings_get(cli->ctx.settings, key);
	return v ? (int)strtod(v, NULL) : fallback;
}

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : fallback;
}

/* The hidden half of the command: a client re-executes pyward as
 * `pyward python --host` to start the shared host. */
static int serve_host(pw_cli *cli)
{
	pw_err *e = pw_cli_prepare(cli);
	char *dir = NULL;
	const char *env_dir = getenv("PYWARD_SCRATCH_DIR"); /* set by the client that starts us */
	if (env_dir && *env_dir)
		dir = xstrdup(env_dir);
	else if (!e)
		e = pw_scratch_dir(&dir);
	const char *wenv = getenv("PYWARD_WORKER");
	char *worker = wenv && *wenv ? xstrdup(wenv) : pw_ops_data_file("pyward_worker.py");
	pw_scratch_host_opts o = {
		.dir = dir,
		.worker_script = worker,
		.idle_timeout_s = cli->ctx.settings ? setting_int(cli, "python_idle_timeout", 900) : 900,
		.max_workers = cli->ctx.settings ? setting_int(cli, "python_max_workers", 4) : 4,
		.grace_ms = env_int("PYWARD_SCRATCH_GRACE_MS", 2000),
		.ready_fd = env_int("PYWARD_SCRATCH_READY_FD", -1),
		/* the tests' stand-in for a second user: the host believes it belongs to another uid */
		.owner_uid = (uid_t)env_int("PYWARD_SCRATCH_TEST_OWNER_UID", (int)getuid()),
	};
	unsetenv("PYWARD_SCRATCH_READY_FD");
	if (!e && access(worker, R_OK) != 0)
		e = pw_err_errno(PW_ERR_NOTFOUND, errno, _("reinstall pyward, or point PYWARD_WORKER at pyward_worker.py"),
				 _("the scratchpad worker script %s"), worker);
	if (!e)
		e = pw_scratch_host_run(&o);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (rc && o.ready_fd >= 0) /* after the log has the reason: the starter reads it */
		close(o.ready_fd);
	free(dir);
	free(worker);
	return rc;
}

/* ---------------------------------------------------------------- input */

static char *read_stream(FILE *f, const char *name, pw_err **e)
{
	size_t len = 0, cap = 65536;
	char *buf = xmalloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0)
			buf = xrealloc(buf, cap *= 2);
	}
	if (ferror(f)) {
		*e = pw_err_errno(PW_ERR_IO, errno, NULL, _("reading %s"), name);
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static pw_err *read_code(const py_args *a, const char *operand, char **code)
{
	*code = NULL;
	if (a->code) {
		*code = xstrdup(a->code);
		return NULL;
	}
	pw_err *e = NULL;
	if (!operand || strcmp(operand, "-") == 0) {
		if (!operand && (a->reset || isatty(STDIN_FILENO)))
			return NULL;
		*code = read_stream(stdin, _("standard input"), &e);
		return e;
	}
	FILE *f = fopen(operand, "r");
	if (!f)
		return pw_err_errno(PW_ERR_USAGE, errno, NULL, _("cannot read %s"), operand);
	*code = read_stream(f, operand, &e);
	fclose(f);
	return e;
}

/* ---------------------------------------------------------------- interpreter */

static pw_err *venv_python(const pw_cli *cli, const char *venv, char **dir, char **python)
{
	char *abs = NULL, *py = NULL, *managed = xasprintf("%s/runtime", cli->ctx.box_root);
	/* Inside the allowed roots, and its interpreter where the environment says. */
	pw_err *bad = pw_guard_resolve(cli->ctx.guard, venv, &abs);
	if (!bad && access(abs, F_OK) == 0)
		bad = pw_venv_interpreter(abs, managed, &py);
	free(managed);
	if (bad && (!abs || pw_err_code(bad) == PW_ERR_REFUSED)) {
		free(abs);
		return bad;
	}
	pw_err_free(bad);
	if (!py || access(py, X_OK) != 0) {
		pw_err *e = pw_err_new(PW_ERR_USAGE, _("create one with 'pyward venv create', or pass --python PATH"),
				       _("%s is not a virtual environment (no bin/python)"), abs);
		free(abs);
		free(py);
		return e;
	}
	*dir = abs;
	*python = py;
	return NULL;
}

static char *find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = xstrdup(path ? path : "/usr/bin:/bin");
	char *found = NULL, *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", name);
		if (access(p, X_OK) == 0)
			found = pw_paths_absolute(p);
		free(p);
	}
	free(copy);
	return found;
}

/* The workspace's environment when it has exactly one (relative to the
 * workspace, as a user would type it), else NULL. */
static char *only_environment(const pw_cli *cli)
{
	pw_venv_list l = { 0 };
	if (!cli->ctx.guard || !cli->ctx.workspace)
		return NULL;
	pw_err *e = pw_venv_discover(cli->ctx.guard, cli->ctx.workspace, 2, 2000, pw_clock_mono_ms() + 500, &l);
	char *only = NULL;
	if (!e && l.count == 1) {
		const char *p = l.items[0].path;
		size_t n = strlen(cli->ctx.workspace);
		only = xstrdup(strncmp(p, cli->ctx.workspace, n) == 0 && p[n] == '/' ? p + n + 1 : p);
	}
	pw_err_free(e);
	pw_venv_list_clear(&l);
	return only;
}

/* --venv, else --python, else the managed runtime, else a refusal. */
static pw_err *choose_python(const pw_cli *cli, const py_args *a, pw_scratch_request *req)
{
	if (a->venv) {
		req->python_explicit = true;
		return venv_python(cli, a->venv, &req->venv, &req->python);
	}
	if (a->python) {
		req->python_explicit = true;
		req->python = strchr(a->python, '/') ? pw_paths_absolute(a->python) : find_on_path(a->python);
		if (!req->python || access(req->python, X_OK) != 0)
			return pw_err_new(PW_ERR_USAGE, _("pass the path of a Python interpreter"),
					  _("--python %s: no such executable"), a->python);
		return NULL;
	}
	pw_err *e = pw_runtime_python(cli->ctx.box_root, &req->python);
	if (!e)
		return NULL;
	char *only = only_environment(cli);
	/* The one environment is named, not taken: a session outlives this call
	 * and is shared with the full-screen interface, so its interpreter is
	 * chosen on purpose (see the man page). */
	char *hint = only ? xasprintf(_("pass --venv %s (the workspace's one environment), or install the managed "
					"runtime with 'pyward runtime install'"),
				      only)
			  : xstrdup(_("install the managed runtime with 'pyward runtime install', or pass --venv DIR or "
				      "--python PATH"));
	pw_err *r = pw_err_new(PW_ERR_REFUSED, hint, _("no interpreter for the scratchpad: %s"), pw_err_message(e));
	free(hint);
	free(only);
	pw_err_free(e);
	return r;
}

/* ---------------------------------------------------------------- output */

/* The per-cell budget: --timeout, else the settings' timeout, else none. */
static double cell_budget(const pw_cli *cli)
{
	const char *v = cli->ctx.settings ? pw_settings_get(cli->ctx.settings, "timeout") : NULL;
	return cli->ctx.timeout > 0 ? cli->ctx.timeout : v ? strtod(v, NULL) : 0;
}


static void print_notice(const pw_cli *cli, const pw_scratch_notice *n)
{
	fprintf(stderr, _("%s: notice: %s\n"), cli->prog, pw_render_safe(n->message));
}

static void print_human(const pw_cli *cli, const pw_scratch_result *r)
{
	if (r->value)
		printf("%s\n", r->value);
	fputs(r->out, stdout);
	fflush(stdout);
	fputs(r->err, stderr);
	if (r->traceback)
		fputs(r->traceback, stderr);
	if (r->out_dropped)
		fprintf(stderr, _("%s: stdout: %zu bytes cut from the middle (head and tail kept)\n"), cli->prog,
			r->out_dropped);
	if (r->err_dropped)
		fprintf(stderr, _("%s: stderr: %zu bytes cut from the middle (head and tail kept)\n"), cli->prog,
			r->err_dropped);
	for (size_t i = 0; i < r->notice_count; i++)
		print_notice(cli, &r->notices[i]);
	if (r->interp && cli->verbosity >= 0)
		fprintf(stderr, _("%s: session %s: %s %s %s, %s in %s\n"), cli->prog, r->session,
			r->interp->implementation ? pw_render_safe(r->interp->implementation) : "Python",
			r->interp->version ? pw_render_safe(r->interp->version) : "?",
			r->interp->build ? pw_render_safe(r->interp->build) : "?",
			r->interp->executable ? pw_render_safe(r->interp->executable) : "?",
			r->interp->project_dir ? pw_render_safe(r->interp->project_dir) : "?");
	if (strcmp(r->status, "timed_out") == 0)
		fprintf(stderr, _("%s: the cell was stopped after its %g s budget\n"), cli->prog, cell_budget(cli));
	if (strcmp(r->status, "lost") == 0)
		fprintf(stderr, _("%s: the cell did not finish: its worker is gone\n"), cli->prog);
}

static void print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(j);
}

static int show_list(const pw_cli *cli, const pw_scratch_list *l)
{
	if (cli->json) {
		print_json(pw_scratch_list_encode(l));
		return 0;
	}
	if (l->count == 0) {
		printf(_("no sessions (host pid %lld)\n"), (long long)l->host_pid);
		return 0;
	}
	printf("%-24s %-10s %-10s %-26s %s\n", _("SESSION"), _("STATE"), _("EXECUTIONS"), _("LAST USE"),
	       _("INTERPRETER"));
	for (size_t i = 0; i < l->count; i++) {
		const pw_scratch_session_info *s = &l->sessions[i];
		printf("%-24s %-10s %-10lld %-26s %s\n", pw_render_safe(s->name), pw_render_safe(s->state),
		       (long long)s->executions, s->last_use ? pw_render_safe(s->last_use) : "-",
		       s->python ? pw_render_safe(s->python) : "-");
	}
	printf(_("host pid %lld, %lld of %lld workers\n"), (long long)l->host_pid, (long long)l->workers,
	       (long long)l->max_workers);
	return 0;
}

/* ---------------------------------------------------------------- actions */

static pw_err *open_client(bool autostart, pw_scratch_client **c)
{
	pw_scratch_connect_opts o = { .autostart = autostart };
	return pw_scratch_connect(&o, c);
}

static int do_admin(pw_cli *cli, const py_args *a, const char *session)
{
	pw_scratch_client *c = NULL;
	pw_err *e = open_client(false, &c);
	if (e && a->list && pw_err_code(e) == PW_ERR_NOTFOUND) {
		pw_err_free(e);
		pw_scratch_list empty = { 0 };
		if (cli->json)
			print_json(pw_scratch_list_encode(&empty));
		else
			printf(_("no scratchpad host is running\n"));
		return 0;
	}
	pw_scratch_list *l = NULL;
	if (!e && a->list)
		e = pw_scratch_sessions(c, &l);
	else if (!e && a->discard)
		e = pw_scratch_discard(c, session);
	else if (!e)
		e = pw_scratch_interrupt(c, session);
	pw_scratch_close(&c);
	if (e)
		return pw_cli_fail(cli, e);
	int rc = 0;
	if (l)
		rc = show_list(cli, l);
	else if (cli->json)
		print_json(json_pack("{s:s, s:s}", "session", session, "done", a->discard ? "discarded" : "interrupted"));
	else if (cli->verbosity >= 0)
		printf(a->discard ? _("session %s discarded\n") : _("session %s interrupted\n"), session);
	pw_scratch_list_free(&l);
	return rc;
}

static int do_run(pw_cli *cli, const py_args *a, const char *session, const char *operand)
{
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .reset = a->reset, .max_output = a->max_output };
	pw_err *e = read_code(a, operand, &req.code);
	/* A cell can write anywhere the user can: no cells in read-only mode. */
	if (!e && req.code)
		e = pw_ops_require_write(&cli->ctx, _("running code in the scratchpad"));
	json_t *text = !e && req.code ? json_string(req.code) : NULL; /* NULL when not UTF-8 */
	if (!e && req.code && !text)
		e = pw_err_new(PW_ERR_USAGE, _("save the code as UTF-8"), _("the code is not UTF-8 text"));
	json_decref(text);
	if (!e && !req.code && !req.reset)
		e = pw_err_new(PW_ERR_USAGE, _("give -c CODE, a FILE, '-' (standard input) or --reset"),
			       _("no code to run"));
	if (!e)
		e = choose_python(cli, a, &req);
	pw_scratch_client *c = NULL;
	if (!e)
		e = open_client(true, &c);
	pw_scratch_result *r = NULL;
	if (!e) {
		req.session = xstrdup(session);
		req.project_dir = xstrdup(cli->ctx.workspace);
		req.env = environ;
		req.timeout_ms = (int64_t)(cell_budget(cli) * 1000);
		e = pw_scratch_run(c, &req, pw_cli_interrupt_token(), &r);
		req.env = NULL;
	}
	pw_scratch_close(&c);
	pw_scratch_request_clear(&req);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json)
		print_json(pw_scratch_result_encode(r));
	else
		print_human(cli, r);
	int rc = pw_scratch_result_exit_status(r);
	pw_scratch_result_free(&r);
	return rc;
}

static int run_python(pw_cli *cli, int argc, char **argv)
{
	py_args a = { 0 };
	int first = pw_cli_parse_command(cli, &pw_cmd_python, argc, argv, "s:c:", longopts, handle_opt, &a);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (a.host)
		return serve_host(cli);
	if (argc - first > 1 || (first < argc && a.code)) {
		pw_cli_usage_error(cli, _("give one of -c CODE, a FILE or '-', not several"));
		return PW_EXIT_USAGE;
	}
	if ((int)a.list + (int)a.interrupt + (int)a.discard > 1) {
		pw_cli_usage_error(cli, _("--list, --interrupt and --discard go alone"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	if (a.session && !pw_scratch_session_name_ok(a.session)) {
		pw_cli_usage_error(cli, _("session name '%s': use 1 to 64 of A-Z a-z 0-9 . _ -"), a.session);
		return PW_EXIT_USAGE;
	}
	char *session = a.session ? xstrdup(a.session) : pw_scratch_default_session(cli->ctx.workspace);
	int rc = a.list || a.interrupt || a.discard ? do_admin(cli, &a, session)
						     : do_run(cli, &a, session, first < argc ? argv[first] : NULL);
	free(session);
	return rc;
}

const pw_cmd pw_cmd_python = {
	.name = "python",
	.summary = N_("run code in a persistent Python scratchpad (one worker per session)"),
	.usage = N_("[-s NAME] [--venv DIR|--python PATH] [--reset] [--max-output BYTES] "
		    "[-c CODE|FILE|-]\n"
		    "       pyward python [-s NAME] --interrupt|--discard\n"
		    "       pyward python --list"),
	.run = run_python,
};
