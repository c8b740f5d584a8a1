/* pyward python: run code in the session's persistent scratchpad. */
#include "config.h"

#include "cli/cli.h"
#include "cli/render.h"

#include "ops/op_scratch.h"

#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_RESET = 0x200, OPT_INTERRUPT, OPT_DISCARD, OPT_LIST, OPT_VENV, OPT_PYTHON, OPT_MAX_OUTPUT, OPT_HOST };

typedef struct py_args {
	const pw_cli *cli;
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
			pw_cli_usage_error(a->cli, _("--max-output needs a byte count from 64 to 67108864, not '%s'"), arg);
			return 2;
		}
		a->max_output = (size_t)v;
		return 0;
	}
	return 2;
}

/* ---------------------------------------------------------------- the host */

/* The hidden half of the command: a client re-executes pyward as
 * `pyward python --host` to start the shared host. */
static int serve_host(pw_cli *cli)
{
	int ready_fd = -1;
	pw_err *e = pw_op_scratch_serve(&cli->ctx, pw_cli_prepare(cli), &ready_fd);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (rc && ready_fd >= 0) /* after the log has the reason: the starter reads it */
		close(ready_fd);
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

/* ---------------------------------------------------------------- output */

static void print_notice(const pw_cli *cli, const pw_scratch_notice *n)
{
	fprintf(stderr, _("%s: notice: %s\n"), cli->prog, pw_render_safe(n->message));
}

static void print_human(const pw_cli *cli, const pw_op_scratch_result *res)
{
	const pw_scratch_result *r = res->cell;
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
		fprintf(stderr, _("%s: the cell was stopped after its %g s budget\n"), cli->prog, res->budget);
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
		print_json(pw_op_scratch_list_json(l));
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

static int do_admin(pw_cli *cli, const py_args *a, const char *session)
{
	pw_scratch_list *l = NULL;
	pw_err *e = a->list ? pw_op_scratch_list(&cli->ctx, &l)
		    : a->discard ? pw_op_scratch_discard(&cli->ctx, session)
				 : pw_op_scratch_interrupt(&cli->ctx, session);
	if (e && a->list && pw_err_code(e) == PW_ERR_NOTFOUND) {
		pw_err_free(e);
		if (cli->json)
			print_json(pw_op_scratch_list_json(NULL));
		else
			printf(_("no scratchpad host is running\n"));
		return 0;
	}
	if (e)
		return pw_cli_fail(cli, e);
	int rc = 0;
	if (l)
		rc = show_list(cli, l);
	else if (cli->json)
		print_json(pw_op_scratch_done_json(session, a->discard));
	else if (cli->verbosity >= 0)
		printf(a->discard ? _("session %s discarded\n") : _("session %s interrupted\n"), session);
	pw_scratch_list_free(&l);
	return rc;
}

static int do_run(pw_cli *cli, const py_args *a, const char *session, const char *operand)
{
	char *code = NULL;
	pw_err *e = read_code(a, operand, &code);
	if (!e && !code && !a->reset)
		e = pw_err_new(PW_ERR_USAGE, _("give -c CODE, a FILE, '-' (standard input) or --reset"),
			       _("no code to run"));
	pw_op_scratch_request rq = {
		.session = session, .code = code, .reset = a->reset, .venv = a->venv, .python = a->python,
		.max_output = a->max_output,
	};
	pw_op_io io = { .cancel = pw_cli_interrupt_token() };
	pw_op_scratch_result r = { 0 };
	if (!e)
		e = pw_op_scratch_run(&cli->ctx, &rq, &io, NULL, &r);
	free(code);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json)
		print_json(pw_op_scratch_json(&r));
	else
		print_human(cli, &r);
	int rc = pw_op_scratch_exit_status(&r);
	pw_op_scratch_clear(&r);
	return rc;
}

static int run_python(pw_cli *cli, int argc, char **argv)
{
	py_args a = { .cli = cli };
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
	/* --list, --interrupt and --discard run no code: what only a cell uses
	 * is refused, not ignored (as every verb refuses what it does not take) */
	const char *mode = a.list ? "--list" : a.interrupt ? "--interrupt" : a.discard ? "--discard" : NULL;
	const char *unused = !mode		   ? NULL
			     : a.code		   ? "-c"
			     : first < argc	   ? argv[first]
			     : a.reset		   ? "--reset"
			     : a.venv		   ? "--venv"
			     : a.python		   ? "--python"
			     : a.max_output	   ? "--max-output"
			     : a.list && a.session ? "--session"
						   : NULL;
	if (unused) {
		pw_cli_usage_error(cli, _("'python %s' does not take %s"), mode, unused);
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	if (a.session && !pw_op_scratch_session_ok(a.session)) {
		pw_cli_usage_error(cli, _("session name '%s': use 1 to 64 of A-Z a-z 0-9 . _ -"), a.session);
		return PW_EXIT_USAGE;
	}
	char *session = a.session ? xstrdup(a.session) : pw_op_scratch_default_session(cli->ctx.workspace);
	int rc = a.list || a.interrupt || a.discard ? do_admin(cli, &a, session)
						     : do_run(cli, &a, session, first < argc ? argv[first] : NULL);
	free(session);
	return rc;
}

const pw_cmd pw_cmd_python = {
	.name = "python",
	.summary = N_("run code in a persistent Python scratchpad (one worker per session)"),
	.help = N_("Usage:\n"
		   "  pyward python [-s NAME] [--venv DIR|--python PATH] [--reset]\n"
		   "                [--max-output BYTES] [-c CODE|FILE|-]\n"
		   "  pyward python [-s NAME] --interrupt|--discard\n"
		   "  pyward python --list\n"
		   "\n"
		   "Options:\n"
		   "  -s, --session NAME    the session (default: the workspace's name and a hash)\n"
		   "  -c, --code CODE       the code to run (else FILE, or standard input)\n"
		   "  --venv DIR            a new worker runs this environment's interpreter\n"
		   "  --python PATH         a new worker runs this interpreter (default: the managed\n"
		   "                        runtime's)\n"
		   "  --reset               start the session afresh (alone: discard its state)\n"
		   "  --max-output BYTES    keep at most this much of stdout and of stderr\n"
		   "                        (default 65536)\n"
		   "  --interrupt           interrupt the session's running cell\n"
		   "  --discard             end the session and stop its worker\n"
		   "  --list                the sessions, their state and the host\n"
		   "\n"
		   "Exit status: 0, 1 when the cell raised or its worker died, 4 over --timeout,\n"
		   "130 interrupted, 3 refused."),
	.run = run_python,
};
