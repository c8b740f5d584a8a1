/* pyward paths: where things live for this invocation, and why. */
#include "config.h"

#include "cli/cli.h"

#include "ops/json.h"
#include "cli/render.h"

#include "i18n.h"
#include "paths.h"
#include "xalloc.h"

#include <stdlib.h>
#include <unistd.h>

static int no_options(int code, const char *arg, void *ud)
{
	(void)code, (void)arg, (void)ud;
	return 2;
}

static json_t *paths_json(const pw_cli *cli, const char *catalog)
{
	json_t *roots = json_array();
	for (size_t i = 0; i < pw_guard_root_count(cli->ctx.guard); i++)
		json_array_append_new(roots, pw_json_str(pw_guard_root(cli->ctx.guard, i)));
	return json_pack("{s:i,s:o,s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "schema", 1,
			 "box_root", pw_json_str(cli->ctx.box_root),
			 "box_root_source", cli->ctx.box_root_source,
			 "catalog", pw_json_str(catalog),
			 "workspace", pw_json_str(cli->ctx.workspace),
			 "roots", roots,
			 "system_config", pw_json_str(cli->ctx.system_config),
			 "user_config", pw_json_str(cli->ctx.user_config),
			 "mode", pw_mode_name(cli->ctx.mode));
}

static void paths_text(const pw_cli *cli, const char *catalog)
{
	printf(_("box root:      %s (from %s)\n"), cli->ctx.box_root, cli->ctx.box_root_source);
	printf(_("catalog:       %s%s\n"), catalog,
	       access(catalog, F_OK) == 0 ? "" : _(" (not created yet)"));
	printf(_("workspace:     %s\n"), cli->ctx.workspace);
	for (size_t i = 1; i < pw_guard_root_count(cli->ctx.guard); i++)
		printf(_("extra root:    %s\n"), pw_guard_root(cli->ctx.guard, i));
	printf(_("system config: %s%s\n"), cli->ctx.system_config,
	       access(cli->ctx.system_config, F_OK) == 0 ? "" : _(" (absent)"));
	if (cli->ctx.user_config)
		printf(_("user config:   %s%s\n"), cli->ctx.user_config,
		       access(cli->ctx.user_config, F_OK) == 0 ? "" : _(" (absent)"));
	printf(_("mode:          %s\n"), pw_mode_name(cli->ctx.mode));
}

static int run_paths(pw_cli *cli, int argc, char **argv)
{
	int first = pw_cli_parse_command(cli, &pw_cmd_paths, argc, argv, "", NULL, no_options, NULL);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	if (first < argc) {
		pw_cli_usage_error(cli, _("'paths' takes no arguments"));
		return PW_EXIT_USAGE;
	}
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	char *catalog = pw_paths_catalog(cli->ctx.box_root);
	int rc = 0;
	if (cli->json)
		rc = pw_render_json(stdout, paths_json(cli, catalog));
	else
		paths_text(cli, catalog);
	free(catalog);
	return rc;
}

const pw_cmd pw_cmd_paths = {
	.name = "paths",
	.summary = N_("show the box root, catalog, workspace and settings files in use"),
	.help = N_("Usage:\n"
		   "  pyward paths [--json]\n"
		   "\n"
		   "Shows the box root and where it came from, the catalog, the workspace, the\n"
		   "extra roots, the settings files and the mode."),
	.run = run_paths,
};
