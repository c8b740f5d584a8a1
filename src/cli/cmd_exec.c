/* pyward exec: run code in the managed runtime's interpreter, as a child. */
#include "config.h"

#include "cli/cli.h"

#include "ops/op_exec.h"

#include "clock.h"
#include "i18n.h"
#include "runner.h"
#include "runtime.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int no_options(int code, const char *arg, void *ud)
{
	(void)code, (void)arg, (void)ud;
	return 2;
}

/* Pass the child's output through as it arrives, line by line. */
static void pass_line(void *ud, pw_stream s, const char *line, size_t len)
{
	(void)ud;
	FILE *out = s == PW_STREAM_STDOUT ? stdout : stderr;
	fwrite(line, 1, len, out);
	fputc('\n', out);
	fflush(out);
}

/* Where the interpreter's own arguments begin: after "--", or at "-c", "-"
 * or the first word that is not an option. Options before it are pyward's. */
static int python_args_start(int argc, char **argv, bool *dashdash)
{
	*dashdash = false;
	for (int i = 1; i < argc; i++) {
		if (pw_cli_global_takes_value(argv[i])) {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--") == 0) {
			*dashdash = true;
			return i;
		}
		if (argv[i][0] != '-' || strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-") == 0)
			return i;
	}
	return argc;
}

static int run_exec(pw_cli *cli, int argc, char **argv)
{
	bool dashdash;
	int split = python_args_start(argc, argv, &dashdash);
	int parsed = pw_cli_parse_command(cli, &pw_cmd_exec, split, argv, "", NULL, no_options, NULL);
	if (parsed == -2)
		return 0;
	if (parsed < 0)
		return PW_EXIT_USAGE;
	if (parsed < split) {
		pw_cli_usage_error(cli, _("unexpected '%s' before the script"), argv[parsed]);
		return PW_EXIT_USAGE;
	}
	int first = dashdash ? split + 1 : split;
	if (first >= argc) {
		pw_cli_usage_error(cli, _("'exec' needs a script, '-c CODE' or '-' (standard input)"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	pw_op_exec_request rq = { .args = (const char *const *)argv + first, .stdin_path = "/dev/stdin",
				  .on_line = pass_line };
	pw_op_io io = { .cancel = pw_cli_interrupt_token() };
	pw_op_exec_result r = { 0 };
	e = pw_op_exec(&cli->ctx, &rq, &io, &r);
	int rc = e ? pw_cli_report(cli, e) : pw_op_exec_exit_status(&r);
	if (!e && pw_run_result_status(r.run) == PW_RUN_TIMED_OUT)
		fprintf(stderr, _("pyward: stopped after its %g s budget (the whole process group was killed)\n"), cli->ctx.timeout);
	pw_err_free(e);
	pw_op_exec_clear(&r);
	return rc;
}

const pw_cmd pw_cmd_exec = {
	.name = "exec",
	.summary = N_("run code in the managed runtime (scrubbed environment, time budget)"),
	.help = N_("Usage:\n"
		   "  pyward exec [--timeout SECONDS] [--] FILE|-c CODE|- [ARGS...]\n"
		   "\n"
		   "Runs FILE (inside the workspace or a --root), CODE or standard input with the\n"
		   "managed runtime's python3, in the workspace, with a scrubbed environment. The\n"
		   "exit status is the child's (128 plus the signal when one killed it).\n"
		   "\n"
		   "Options:\n"
		   "  -c CODE               the code to run\n"
		   "  --timeout SECONDS     stop the child's whole process group at this budget\n"
		   "                        (exit status 4)"),
	.run = run_exec,
};
