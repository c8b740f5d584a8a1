/* CLI plumbing: global options, command table, preparation, error reporting. */
#include "config.h"

#include "cli/cli.h"
#include "cli/render.h"
#include "ops/json.h"

#include "i18n.h"
#include "paths.h"
#include "visible.h"
#include "xalloc.h"

#include <errno.h>
#include <signal.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const pw_cmd *const commands[] = {
	&pw_cmd_runtime,
	&pw_cmd_exec,
	&pw_cmd_venv,
	&pw_cmd_python,
	&pw_cmd_jobs,
	&pw_cmd_history,
	&pw_cmd_paths,
	&pw_cmd_pins,
	&pw_cmd_mcp,
	&pw_cmd_serve,
	&pw_cmd_tui,
};

enum {
	OPT_BOX_ROOT = 0x100,
	OPT_ROOT,
	OPT_MODE,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_HELP,
	OPT_VERSION,
};

/* Global options, accepted before or after the command word. */
static const struct option global_longopts[] = {
	{ "box-root", required_argument, NULL, OPT_BOX_ROOT },
	{ "workspace", required_argument, NULL, 'C' },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "yes", no_argument, NULL, 'y' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
};
#define GLOBAL_SHORTOPTS "C:yqvh"
#define GLOBAL_COUNT (sizeof global_longopts / sizeof global_longopts[0])

const pw_cmd *pw_cli_find(const char *name)
{
	for (size_t i = 0; i < pw_cli_command_count(); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

size_t pw_cli_command_count(void)
{
	return sizeof commands / sizeof commands[0];
}

const pw_cmd *pw_cli_command(size_t i)
{
	return i < pw_cli_command_count() ? commands[i] : NULL;
}

static bool parse_seconds(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 7 * 86400.0)
		return false;
	*out = v;
	return true;
}

void pw_cli_usage_error(const pw_cli *cli, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* An error like every other (the same lines, and with --json the same object) */
	char *hint = cli->command ? xasprintf(_("'%s %s --help' shows its usage and options"), cli->prog, cli->command)
				  : xasprintf(_("'%s --help' lists the commands and global options"), cli->prog);
	pw_cli_fail(cli, pw_err_new(PW_ERR_USAGE, hint, "%s", msg));
	free(hint);
	free(msg);
}

static void print_version(void)
{
	printf("pyward %s\n", PACKAGE_VERSION);
}

/* Apply one global option; returns 0, -1 on a usage error, or 1 when the
 * program should stop successfully (help, version already printed). */
static int apply_global(pw_cli *cli, int code, const char *arg)
{
	switch (code) {
	case OPT_BOX_ROOT: cli->ctx.box_root_opt = arg; return 0;
	case 'C': cli->ctx.workspace_opt = arg; return 0;
	case OPT_ROOT:
		cli->ctx.roots = xrealloc(cli->ctx.roots, (cli->ctx.root_count + 1) * sizeof *cli->ctx.roots);
		cli->ctx.roots[cli->ctx.root_count++] = arg;
		return 0;
	case OPT_MODE:
		if (!pw_mode_parse(arg, &cli->ctx.mode)) {
			pw_cli_usage_error(cli, _("unknown mode '%s' (use read-only, workspace-write or full-access)"), arg);
			return -1;
		}
		cli->ctx.mode_given = true;
		return 0;
	case OPT_JSON: cli->json = true; return 0;
	case OPT_TIMEOUT:
		if (!parse_seconds(arg, &cli->ctx.timeout)) {
			pw_cli_usage_error(cli, _("--timeout needs a positive number of seconds, not '%s'"), arg);
			return -1;
		}
		return 0;
	case 'y': cli->yes = true; return 0;
	case 'q': cli->verbosity = -1; return 0;
	case 'v': cli->verbosity++; return 0;
	case 'h': pw_cli_print_help(cli, stdout); return 1;
	case OPT_VERSION: print_version(); return 1;
	}
	return -1;
}

static void report_getopt_error(pw_cli *cli, int argc, char **argv)
{
	const char *bad = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
	if (optopt && optopt < 0x100 && bad[0] == '-' && bad[1] != '-')
		pw_cli_usage_error(cli, _("unknown or incomplete option '-%c'"), optopt);
	else
		pw_cli_usage_error(cli, _("unknown or incomplete option '%s'"), bad);
}

int pw_cli_parse_globals(pw_cli *cli, int argc, char **argv)
{
	optind = 0;
	opterr = 0;
	struct option *opts = xcalloc(GLOBAL_COUNT + 1, sizeof *opts);
	memcpy(opts, global_longopts, sizeof global_longopts);
	int c, rc = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "+" GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			report_getopt_error(cli, argc, argv);
			rc = -1;
		} else {
			rc = apply_global(cli, c, optarg);
		}
	}
	free(opts);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return -2;
	return optind;
}

bool pw_cli_global_takes_value(const char *arg)
{
	if (arg[0] != '-')
		return false;
	if (arg[1] != '-') { /* a short option, given alone */
		const char *spec = arg[1] && !arg[2] ? strchr(GLOBAL_SHORTOPTS, arg[1]) : NULL;
		return spec && spec[1] == ':';
	}
	for (size_t i = 0; i < GLOBAL_COUNT; i++)
		if (strcmp(arg + 2, global_longopts[i].name) == 0)
			return global_longopts[i].has_arg == required_argument;
	return false;
}

static struct option *merge_options(const struct option *cmd, size_t *count)
{
	size_t n = 0;
	while (cmd && cmd[n].name)
		n++;
	/* The command's options come first: getopt takes the first exact match,
	 * so "runtime install --version V" is the command's --version. */
	struct option *all = xcalloc(GLOBAL_COUNT + n + 1, sizeof *all);
	if (n)
		memcpy(all, cmd, n * sizeof *cmd);
	memcpy(all + n, global_longopts, sizeof global_longopts);
	*count = GLOBAL_COUNT + n;
	return all;
}

static bool is_global_code(int c)
{
	return (c >= OPT_BOX_ROOT && c <= OPT_VERSION) || (c > 0 && c < 0x100 && strchr(GLOBAL_SHORTOPTS, c) != NULL);
}

int pw_cli_parse_command(pw_cli *cli, const pw_cmd *cmd, int argc, char **argv,
			 const char *shortopts, const struct option *longopts,
			 int (*handle)(int code, const char *arg, void *ud), void *ud)
{
	size_t n;
	struct option *all = merge_options(longopts, &n);
	char *shorts = xasprintf("%s%s", GLOBAL_SHORTOPTS, shortopts ? shortopts : "");
	optind = 0;
	opterr = 0;
	int c, rc = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, all, NULL)) != -1) {
		if (c == '?' || c == ':') {
			report_getopt_error(cli, argc, argv);
			rc = -1;
		} else if (c == 'h') {
			pw_cli_print_command_help(cli, cmd, stdout);
			rc = -2;
		} else if (is_global_code(c)) {
			rc = apply_global(cli, c, optarg);
			if (rc > 0)
				rc = -2;
		} else if (handle(c, optarg, ud) != 0) {
			rc = -1;
		}
	}
	free(all);
	free(shorts);
	return rc < 0 ? rc : optind;
}

pw_err *pw_cli_prepare(pw_cli *cli)
{
	cli->ctx.who.args = cli->cmdline;
	if (!cli->ctx.who.front_end)
		cli->ctx.who.front_end = "cli";
	return pw_ops_ctx_prepare(&cli->ctx);
}

/* An error's message or hint: its first line after the label, further lines (pip's last output in a failure) indented below
 * it, blank ones left out. Shown safe: messages name paths and carry
 * children's words, so every control but the newline is escaped. */
static void print_message(const char *prog, bool hint, const char *text)
{
	char *safe = pw_visible_lines(text), *save = NULL;
	const char *line = strtok_r(safe, "\n", &save);
	if (!line)
		line = "";
	if (hint)
		fprintf(stderr, _("%s: hint: %s\n"), prog, line);
	else
		fprintf(stderr, _("%s: error: %s\n"), prog, line);
	while ((line = strtok_r(NULL, "\n", &save)))
		fprintf(stderr, "  %s\n", line);
	free(safe);
}

void pw_cli_print_error(const pw_cli *cli, const pw_err *e)
{
	print_message(cli->prog, false, pw_err_message(e));
	if (pw_err_hint(e))
		print_message(cli->prog, true, pw_err_hint(e));
}

int pw_cli_report(const pw_cli *cli, const pw_err *e)
{
	if (!e)
		return 0;
	pw_cli_print_error(cli, e);
	if (cli->json) {
		json_t *j = pw_json_error(e);
		if (j) {
			json_dumpf(j, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
			json_decref(j);
		}
	}
	return pw_err_exit_status(e);
}

int pw_cli_fail(const pw_cli *cli, pw_err *e)
{
	int rc = pw_cli_report(cli, e);
	pw_err_free(e);
	return rc;
}

void pw_cli_print_help(const pw_cli *cli, FILE *out)
{
	fprintf(out, _("Usage: %s [GLOBAL OPTIONS] COMMAND [ARGS]\n"), cli->prog);
	fputs(_("A safe, auditable installer and environment manager for Python.\n\n"), out);
	fputs(_("Commands:\n"), out);
	for (size_t i = 0; i < pw_cli_command_count(); i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, _(commands[i]->summary));
	fprintf(out, "  %-10s %s\n", "help", _("show help for a command"));
	fputs(_("\nGlobal options:\n"
		"  --box-root DIR        where the shared runtime and catalog live\n"
		"  -C, --workspace DIR   the workspace (default: the current directory)\n"
		"  --root DIR            allow another directory besides the workspace\n"
		"                        (repeatable)\n"
		"  --mode MODE           read-only, workspace-write (default) or full-access\n"
		"  --json                machine-readable output\n"
		"  --timeout SECONDS     time budget for the operation\n"
		"  -y, --yes             consent to what the command would ask\n"
		"  -q, --quiet           say less\n"
		"  -v, --verbose         say more\n"
		"  -h, --help            show this help\n"
		"  --version             show the version\n"), out);
	fputs(_("\nWith no command on a terminal, the full-screen interface starts.\n"
		"Exit status: 0 ok, 1 failed, 2 usage, 3 refused, 4 time budget, 130 interrupted.\n"
		"See pyward(1) for details.\n"), out);
}

void pw_cli_print_command_help(const pw_cli *cli, const pw_cmd *cmd, FILE *out)
{
	if (cmd->help) {
		fprintf(out, "%s\n\n", _(cmd->summary));
		fputs(_(cmd->help), out);
		fputs("\n\n", out);
	} else {
		fprintf(out, _("Usage: %s %s %s\n"), cli->prog, cmd->name, _(cmd->usage));
		fprintf(out, "%s\n\n", _(cmd->summary));
	}
	fputs(_("Global options are accepted too; see 'pyward --help'.\n"), out);
}

void pw_cli_free(pw_cli *cli)
{
	free(cli->ctx.roots);
	pw_ops_ctx_clear(&cli->ctx);
	free(cli->cmdline);
}

/* The one process-wide object: signal handlers can reach nothing else. */
static pw_cancel *interrupt_token;

static void on_interrupt(int sig)
{
	(void)sig;
	pw_cancel_raise(interrupt_token);
}

pw_cancel *pw_cli_interrupt_token(void)
{
	if (interrupt_token)
		return interrupt_token;
	interrupt_token = pw_cancel_new();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return interrupt_token;
}

bool pw_cli_confirm(const char *question)
{
	FILE *tty = fopen("/dev/tty", "r+");
	if (!tty)
		return false;
	fprintf(tty, "%s [y/N] ", question);
	fflush(tty);
	char line[32] = "";
	bool yes = fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y');
	fclose(tty);
	return yes;
}

pw_consent_answer pw_cli_ask_consent(const pw_consent *what, void *ud)
{
	const pw_cli *cli = ud;
	if (cli->yes)
		return PW_CONSENT_YES;
	if (!isatty(STDIN_FILENO))
		return PW_CONSENT_CANNOT_ASK;
	if (what->heading)
		fprintf(stderr, "%s\n", pw_render_safe(what->heading));
	for (size_t i = 0; i < what->line_count; i++)
		fprintf(stderr, "  %s\n", pw_render_safe(what->lines[i]));
	return pw_cli_confirm(what->question) ? PW_CONSENT_YES : PW_CONSENT_NO;
}
