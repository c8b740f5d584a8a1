/*
 * pyward: the composition root, the one file that sees every front end.
 * Parse the global options, then hand the subcommand to the front end that
 * serves it (the command line's table, or the full-screen interface).
 */
#include "config.h"

#include "api/api.h"
#include "cli/cli.h"
#include "cli/render.h"
#include "mcp/mcp.h"
#include "tui/tui.h"

#include "i18n.h"
#include "stagetime.h"
#include "xalloc.h"

#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run_help(pw_cli *cli, int argc, char **argv)
{
	if (argc < 2) {
		pw_cli_print_help(cli, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf(_("Usage: %s help [COMMAND]\n"), cli->prog);
		puts(_("Show the commands and global options, or one command's usage and options\n"
		       "(the same as 'pyward COMMAND --help')."));
		return 0;
	}
	const pw_cmd *cmd = pw_cli_find(argv[1]);
	if (!cmd) {
		pw_cli_usage_error(cli, _("no such command '%s'"), argv[1]);
		return PW_EXIT_USAGE;
	}
	pw_cli_print_command_help(cli, cmd, stdout);
	return 0;
}

static int start_tui(pw_cli *cli, bool ascii, bool mouse)
{
	const char *why = NULL;
	if (!pw_tui_terminal_ok(&why)) {
		fprintf(stderr, _("%s: cannot start the full-screen interface: %s.\n"), cli->prog, why);
		fprintf(stderr, _("%s: use the command line instead: '%s --help' lists the commands.\n"),
			cli->prog, cli->prog);
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	cli->ctx.who.front_end = "tui";
	pw_tui_opts o = {
		.ctx = &cli->ctx,
		.ascii = ascii || getenv("PYWARD_ASCII") != NULL,
		.mouse = mouse,
	};
	return pw_tui_run(&o);
}

typedef struct tui_args {
	bool ascii, mouse;
} tui_args;

enum { OPT_TUI_ASCII = 0x700, OPT_TUI_MOUSE };

static const struct option tui_longopts[] = {
	{ "ascii", no_argument, NULL, OPT_TUI_ASCII },
	{ "mouse", no_argument, NULL, OPT_TUI_MOUSE },
	{ NULL, 0, NULL, 0 },
};

static int handle_tui_option(int code, const char *arg, void *ud)
{
	tui_args *t = ud;
	(void)arg;
	if (code == OPT_TUI_ASCII)
		t->ascii = true;
	else if (code == OPT_TUI_MOUSE)
		t->mouse = true;
	else
		return 2;
	return 0;
}

static int run_tui(pw_cli *cli, int argc, char **argv)
{
	tui_args t = { 0 };
	int first = pw_cli_parse_command(cli, &pw_cmd_tui, argc, argv, "", tui_longopts, handle_tui_option, &t);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first < argc) {
		pw_cli_usage_error(cli, _("'tui' takes no arguments"));
		return PW_EXIT_USAGE;
	}
	return start_tui(cli, t.ascii, t.mouse);
}

const pw_cmd pw_cmd_tui = {
	.name = "tui",
	.summary = N_("start the full-screen interface (the default on a terminal)"),
	.help = N_("Usage:\n"
		   "  pyward tui [--ascii] [--mouse]\n"
		   "\n"
		   "Options:\n"
		   "  --ascii               draw lines with ASCII characters (also PYWARD_ASCII)\n"
		   "  --mouse               a click on a tab changes the pane (else the mouse is\n"
		   "                        left to the terminal, for copy and paste)\n"
		   "\n"
		   "Environment:\n"
		   "  NO_COLOR              no colour"),
	.run = run_tui,
};

/* ---------------------------------------------------------------- pyward mcp */

typedef struct mcp_args {
	bool allow_runtime_install;
	size_t max_message;
} mcp_args;

enum { OPT_MCP_ALLOW_INSTALL = 0x720, OPT_MCP_MAX_MESSAGE };

static const struct option mcp_longopts[] = {
	{ "allow-runtime-install", no_argument, NULL, OPT_MCP_ALLOW_INSTALL },
	{ "max-message", required_argument, NULL, OPT_MCP_MAX_MESSAGE },
	{ NULL, 0, NULL, 0 },
};

static int handle_mcp_option(int code, const char *arg, void *ud)
{
	mcp_args *m = ud;
	if (code == OPT_MCP_ALLOW_INSTALL) {
		m->allow_runtime_install = true;
		return 0;
	}
	if (code != OPT_MCP_MAX_MESSAGE)
		return 2;
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || !*arg || *end || v < 1024 || v > 1024ull * 1024 * 1024) {
		fprintf(stderr, _("pyward: --max-message needs a byte count from 1024 to 1073741824, not '%s'\n"), arg);
		return 2;
	}
	m->max_message = (size_t)v;
	return 0;
}

static int run_mcp(pw_cli *cli, int argc, char **argv)
{
	mcp_args m = { 0 };
	int first = pw_cli_parse_command(cli, &pw_cmd_mcp, argc, argv, "", mcp_longopts, handle_mcp_option, &m);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first < argc) {
		pw_cli_usage_error(cli, _("'mcp' takes no arguments"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	char *skill = pw_ops_data_file("skills/python-env/SKILL.md");
	pw_mcp_opts o = {
		.ctx = &cli->ctx,
		.allow_runtime_install = m.allow_runtime_install,
		.max_message = m.max_message,
		.skill_file = skill,
	};
	int rc = pw_mcp_serve(&o);
	free(skill);
	return rc;
}

const pw_cmd pw_cmd_mcp = {
	.name = "mcp",
	.summary = N_("serve the tools to an agent (Model Context Protocol, stdin/stdout)"),
	.help = N_("Usage:\n"
		   "  pyward mcp [--allow-runtime-install] [--max-message BYTES]\n"
		   "\n"
		   "Options:\n"
		   "  --allow-runtime-install  the operator's standing consent for the\n"
		   "                        runtime_install tool (recorded with each install)\n"
		   "  --max-message BYTES   the largest message accepted (1024 to 1073741824,\n"
		   "                        default 4194304)"),
	.run = run_mcp,
};

/* ---- pyward serve: the HTTP API front end (src/api) */

typedef struct serve_args {
	pw_api_config cfg;
	const char *list[16];
	const char *hosts[16];
} serve_args;

enum { OPT_SERVE_LISTEN = 0x800, OPT_SERVE_TOKENS, OPT_SERVE_CERT, OPT_SERVE_KEY, OPT_SERVE_ALLOW_HOST,
       OPT_SERVE_MAX_BODY, OPT_SERVE_MAX_HEADER, OPT_SERVE_MAX_CONN, OPT_SERVE_REQ_TIMEOUT, OPT_SERVE_PINS,
       OPT_SERVE_MIRROR, OPT_SERVE_CACERT, OPT_SERVE_REQUIREMENTS };

static const struct option serve_longopts[] = {
	{ "listen", required_argument, NULL, OPT_SERVE_LISTEN },
	{ "token-file", required_argument, NULL, OPT_SERVE_TOKENS },
	{ "tls-cert", required_argument, NULL, OPT_SERVE_CERT },
	{ "tls-key", required_argument, NULL, OPT_SERVE_KEY },
	{ "allow-host", required_argument, NULL, OPT_SERVE_ALLOW_HOST },
	{ "max-body", required_argument, NULL, OPT_SERVE_MAX_BODY },
	{ "max-header", required_argument, NULL, OPT_SERVE_MAX_HEADER },
	{ "max-connections", required_argument, NULL, OPT_SERVE_MAX_CONN },
	{ "request-timeout", required_argument, NULL, OPT_SERVE_REQ_TIMEOUT },
	{ "pins", required_argument, NULL, OPT_SERVE_PINS },
	{ "mirror", required_argument, NULL, OPT_SERVE_MIRROR },
	{ "cacert", required_argument, NULL, OPT_SERVE_CACERT },
	{ "requirements", required_argument, NULL, OPT_SERVE_REQUIREMENTS },
	{ NULL, 0, NULL, 0 },
};

/* A whole number from 1 to max, or 0 when it is not one. */
static unsigned long serve_number(const char *arg, unsigned long max)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	return errno || !*arg || *end || *arg == '-' || v == 0 || v > max ? 0 : v;
}

static int add_repeated(const char **list, size_t *n, const char *arg)
{
	if (*n >= 16) {
		fprintf(stderr, _("pyward: at most 16 of each repeatable option\n"));
		return PW_EXIT_USAGE;
	}
	list[(*n)++] = arg;
	return 0;
}

static int handle_serve_option(int code, const char *arg, void *ud)
{
	serve_args *s = ud;
	pw_api_config *c = &s->cfg;
	unsigned long v = 1;
	switch (code) {
	case OPT_SERVE_LISTEN: return add_repeated(s->list, &c->listen_count, arg);
	case OPT_SERVE_ALLOW_HOST: return add_repeated(s->hosts, &c->allow_host_count, arg);
	case OPT_SERVE_TOKENS: c->token_file = arg; return 0;
	case OPT_SERVE_CERT: c->tls_cert = arg; return 0;
	case OPT_SERVE_KEY: c->tls_key = arg; return 0;
	case OPT_SERVE_PINS: c->pins = arg; return 0;
	case OPT_SERVE_MIRROR: c->mirror = arg; return 0;
	case OPT_SERVE_CACERT: c->cacert = arg; return 0;
	case OPT_SERVE_REQUIREMENTS: c->requirements = arg; return 0;
	case OPT_SERVE_MAX_BODY: v = c->max_body = serve_number(arg, 1UL << 30); break;
	case OPT_SERVE_MAX_HEADER: v = c->max_header = serve_number(arg, 1UL << 20); break;
	case OPT_SERVE_MAX_CONN: v = c->max_connections = (unsigned)serve_number(arg, 10000); break;
	case OPT_SERVE_REQ_TIMEOUT: v = c->request_timeout = (unsigned)serve_number(arg, 86400); break;
	default: return PW_EXIT_USAGE;
	}
	if (v == 0) {
		fprintf(stderr, _("pyward: serve: \"%s\" is not a positive whole number in range\n"), arg);
		return PW_EXIT_USAGE;
	}
	return 0;
}

static int run_serve(pw_cli *cli, int argc, char **argv)
{
	serve_args s = { 0 };
	s.cfg.listen = s.list;
	s.cfg.allow_hosts = s.hosts;
	int first = pw_cli_parse_command(cli, &pw_cmd_serve, argc, argv, "", serve_longopts, handle_serve_option, &s);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first < argc) {
		pw_cli_usage_error(cli, _("'serve' takes no arguments"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	return pw_api_serve(&cli->ctx, &s.cfg);
}

const pw_cmd pw_cmd_serve = {
	.name = "serve",
	.summary = N_("serve the HTTP JSON API (operators, fleets, /metrics)"),
	.help = N_("Usage:\n"
		   "  pyward serve [--listen unix:PATH|HOST:PORT]... [--token-file FILE]\n"
		   "               [--tls-cert FILE --tls-key FILE] [--allow-host NAME]...\n"
		   "               [--max-body BYTES] [--max-header BYTES] [--max-connections N]\n"
		   "               [--request-timeout SECONDS] [--pins FILE] [--mirror URL]\n"
		   "               [--cacert FILE] [--requirements FILE]\n"
		   "\n"
		   "Options:\n"
		   "  --listen ADDRESS      unix:PATH, HOST:PORT, [IPV6]:PORT or a port on 127.0.0.1\n"
		   "                        (repeatable; default: the socket BOX/api.sock)\n"
		   "  --token-file FILE     'NAME TOKEN' lines; needed for TCP\n"
		   "  --tls-cert FILE       the PEM certificate; needed off loopback\n"
		   "  --tls-key FILE        its PEM key\n"
		   "  --allow-host NAME     a Host header name accepted besides the listener's\n"
		   "                        (repeatable)\n"
		   "  --max-body BYTES      the largest request body (default 65536)\n"
		   "  --max-header BYTES    the largest request line and headers (default 32768)\n"
		   "  --max-connections N   connections at once (default 64)\n"
		   "  --request-timeout SECONDS  close a connection silent this long (default 30)\n"
		   "  --pins FILE, --mirror URL, --cacert FILE, --requirements FILE\n"
		   "                        for the installs it runs, as in 'pyward runtime install'"),
	.run = run_serve,
};

static int no_command(pw_cli *cli)
{
	if (isatty(STDOUT_FILENO))
		return start_tui(cli, false, false);
	fprintf(stderr, _("Usage: %s [GLOBAL OPTIONS] COMMAND [ARGS]\n"), cli->prog);
	fprintf(stderr, _("No command given and output is not a terminal; '%s --help' lists the commands.\n"),
		cli->prog);
	return PW_EXIT_USAGE;
}

static int dispatch(pw_cli *cli, int argc, char **argv)
{
	int first = pw_cli_parse_globals(cli, argc, argv);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first >= argc)
		return no_command(cli);
	const char *name = argv[first];
	if (strcmp(name, "help") == 0)
		return run_help(cli, argc - first, argv + first);
	const pw_cmd *cmd = pw_cli_find(name);
	if (!cmd) {
		pw_cli_usage_error(cli, _("unknown command '%s'"), name);
		return PW_EXIT_USAGE;
	}
	cli->command = cmd->name;
	return cmd->run(cli, argc - first, argv + first);
}

int main(int argc, char **argv)
{
	pw_stage_mark("start");
	setlocale(LC_ALL, "");
#ifdef ENABLE_NLS
	/* PYWARD_LOCALEDIR: message catalogs outside $(localedir), such as the
	 * build tree's in the tests or an unpacked but not installed pyward. */
	const char *localedir = getenv("PYWARD_LOCALEDIR");
	bindtextdomain(PACKAGE, localedir && *localedir ? localedir : LOCALEDIR);
	textdomain(PACKAGE);
#endif
	pw_cli cli = { .ctx.mode = PW_MODE_WORKSPACE_WRITE, .prog = "pyward" };
	cli.cmdline = pw_render_cmdline(argc, argv);
	int rc = dispatch(&cli, argc, argv);
	pw_cli_free(&cli);
	if (fflush(stdout) != 0 && rc == 0)
		rc = PW_EXIT_FAILED;
	return rc;
}
