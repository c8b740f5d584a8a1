/* pyward pins import: a pins table from upstream's SHA256SUMS (ops/op_pins.h). */
#include "config.h"

#include "cli/cli.h"
#include "cli/render.h"

#include "ops/op_pins.h"

#include "i18n.h"

#include <stdio.h>
#include <string.h>

enum { OPT_RELEASE = 0x200, OPT_BASE_URL, OPT_VERSION, OPT_SIZES, OPT_ARCHIVES };

static const struct option longopts[] = {
	{ "release", required_argument, NULL, OPT_RELEASE },
	{ "base-url", required_argument, NULL, OPT_BASE_URL },
	{ "version", required_argument, NULL, OPT_VERSION },
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "archives", required_argument, NULL, OPT_ARCHIVES },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static int handle_opt(int code, const char *arg, void *ud)
{
	pw_op_pins_import_request *rq = ud;
	switch (code) {
	case OPT_RELEASE: rq->release = arg; return 0;
	case OPT_BASE_URL: rq->base_url = arg; return 0;
	case OPT_VERSION: rq->version = arg; return 0;
	case OPT_SIZES: rq->sizes = arg; return 0;
	case OPT_ARCHIVES: rq->archives = arg; return 0;
	case 'o': rq->output = arg; return 0;
	}
	return 2;
}

static int run_import(pw_cli *cli, const pw_op_pins_import_request *rq)
{
	pw_op_pins_import_result r;
	pw_err *e = pw_op_pins_import(&cli->ctx, rq, NULL, &r);
	if (e)
		return pw_cli_fail(cli, e);
	int rc = 0;
	if (cli->json)
		rc = pw_render_json(stdout, pw_op_pins_import_json(&r));
	else if (!r.output)
		fputs(r.tsv, stdout);
	if (!cli->json && (r.output ? cli->verbosity >= 0 : cli->verbosity > 0)) {
		/* On stderr when the table itself is on stdout. */
		FILE *to = r.output ? stdout : stderr;
		fprintf(to, _("%zu pins of release %s (%zu with a size)"), r.rows, r.release, r.sized);
		if (r.output)
			fprintf(to, _(" written to %s"), pw_render_safe(r.output));
		fputc('\n', to);
	}
	pw_op_pins_import_clear(&r);
	return rc;
}

static int run_pins(pw_cli *cli, int argc, char **argv)
{
	pw_op_pins_import_request rq = { 0 };
	int first = pw_cli_parse_command(cli, &pw_cmd_pins, argc, argv, "o:", longopts, handle_opt, &rq);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first == argc) {
		pw_cli_usage_error(cli, _("'pins' needs a subcommand: import"));
		return PW_EXIT_USAGE;
	}
	if (strcmp(argv[first], "import") != 0) {
		pw_cli_usage_error(cli, _("unknown pins subcommand '%s'"), argv[first]);
		return PW_EXIT_USAGE;
	}
	if (argc - first != 2) {
		pw_cli_usage_error(cli, _("'pins import' takes one SHA256SUMS file"));
		return PW_EXIT_USAGE;
	}
	if (!rq.release) {
		pw_cli_usage_error(cli, _("'pins import' needs --release DATE (the release the SHA256SUMS belongs to)"));
		return PW_EXIT_USAGE;
	}
	rq.sums = argv[first + 1];
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	return run_import(cli, &rq);
}

const pw_cmd pw_cmd_pins = {
	.name = "pins",
	.summary = N_("make a runtime pins table from upstream's published SHA256SUMS"),
	.usage = N_("import SHA256SUMS --release DATE [--base-url URL] [--version V]\n"
		    "         [--sizes FILE] [--archives DIR] [-o FILE]"),
	.help = N_("Usage:\n"
		   "  pyward pins import SHA256SUMS --release DATE [--base-url URL] [--version V]\n"
		   "                     [--sizes FILE] [--archives DIR] [-o FILE]\n"
		   "\n"
		   "Writes a pins table (the runtime's trusted archives, by SHA256) for the\n"
		   "install_only archives of the platforms pyward supports that the SHA256SUMS\n"
		   "lists. Nothing is downloaded. Without -o the table goes to standard output.\n"
		   "\n"
		   "Options:\n"
		   "  --release DATE    the release the SHA256SUMS belongs to (8 digits, 20260414)\n"
		   "  --base-url URL    the archives are at URL/DATE/NAME\n"
		   "                    (default: upstream's releases)\n"
		   "  --version V       only this CPython version (default: every version listed)\n"
		   "  --sizes FILE      sizes from a listing of '<bytes> <file name>' lines\n"
		   "  --archives DIR    sizes from the archives in DIR, each checked against its\n"
		   "                    SHA256 first (a mismatch is an error); before --sizes\n"
		   "  -o, --output FILE\n"
		   "                    write the table to FILE (a change: refused in read-only\n"
		   "                    mode, inside the allowed roots, replaced durably,\n"
		   "                    recorded as pins.import)"),
	.run = run_pins,
};
