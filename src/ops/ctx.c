/* The operations context: settings, box root, workspace, guard, mode, caller. */
#include "config.h"

#include "ops/ctx.h"

#include "audit.h"
#include "i18n.h"
#include "paths.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *pw_mode_name(pw_mode m)
{
	switch (m) {
	case PW_MODE_READ_ONLY: return "read-only";
	case PW_MODE_WORKSPACE_WRITE: return "workspace-write";
	case PW_MODE_FULL_ACCESS: return "full-access";
	}
	return "read-only";
}

bool pw_mode_parse(const char *s, pw_mode *out)
{
	static const pw_mode all[] = { PW_MODE_READ_ONLY, PW_MODE_WORKSPACE_WRITE, PW_MODE_FULL_ACCESS };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (strcmp(s, pw_mode_name(all[i])) == 0) {
			*out = all[i];
			return true;
		}
	return false;
}

static pw_err *load_settings(pw_ops_ctx *ctx)
{
	ctx->settings = pw_settings_new();
	ctx->system_config = xstrdup(pw_paths_system_config());
	pw_err *e = pw_settings_load_file(ctx->settings, ctx->system_config, NULL);
	if (e)
		return e;
	ctx->user_config = pw_paths_user_config();
	if (ctx->user_config)
		e = pw_settings_load_file(ctx->settings, ctx->user_config, NULL);
	return e;
}

/* box_root from the system file beats the user file: the box is shared. */
static pw_err *resolve_box_root(pw_ops_ctx *ctx)
{
	pw_settings *sys = pw_settings_new();
	pw_settings *usr = pw_settings_new();
	pw_err *e = pw_settings_load_file(sys, ctx->system_config, NULL);
	if (!e && ctx->user_config)
		e = pw_settings_load_file(usr, ctx->user_config, NULL);
	if (!e) {
		const char *home_env = getenv("PYWARD_HOME");
		pw_paths_input in = {
			.cli_box_root = ctx->box_root_opt,
			.env_home = home_env,
			.system_conf = sys,
			.user_conf = usr,
			.uid = getuid(),
			.xdg_data_home = getenv("XDG_DATA_HOME"),
			.home = getenv("HOME"),
		};
		e = pw_paths_box_root(&in, &ctx->box_root, &ctx->box_root_source);
	}
	pw_settings_free(&sys);
	pw_settings_free(&usr);
	if (!e)
		ctx->catalog_path = pw_paths_catalog(ctx->box_root);
	return e;
}

static pw_err *resolve_workspace(pw_ops_ctx *ctx)
{
	const char *ws = ctx->workspace_opt ? ctx->workspace_opt : ".";
	char *real = realpath(ws, NULL);
	if (!real)
		return pw_err_errno(PW_ERR_USAGE, errno, _("pass an existing directory with -C DIR"),
				    _("workspace '%s'"), ws);
	ctx->workspace = real;
	ctx->guard = pw_guard_new();
	pw_err *e = pw_guard_add_root(ctx->guard, real);
	for (size_t i = 0; !e && i < ctx->root_count; i++)
		e = pw_guard_add_root(ctx->guard, ctx->roots[i]);
	return e ? pw_err_prefix(e, _("allowed roots")) : NULL;
}

static pw_err *apply_mode_setting(pw_ops_ctx *ctx)
{
	const char *m = pw_settings_get(ctx->settings, "mode");
	if (ctx->mode_given || !m)
		return NULL;
	if (!pw_mode_parse(m, &ctx->mode))
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s: unknown mode '%s'"),
				  pw_settings_origin(ctx->settings, "mode"), m);
	return NULL;
}

pw_err *pw_ops_ctx_prepare(pw_ops_ctx *ctx)
{
	if (ctx->box_root)
		return NULL;
	pw_err *e = load_settings(ctx);
	if (!e)
		e = apply_mode_setting(ctx);
	if (!e)
		e = resolve_box_root(ctx);
	if (!e)
		e = resolve_workspace(ctx);
	if (!e)
		e = pw_audit_configure(pw_settings_get(ctx->settings, "audit_log"),
				       pw_settings_get(ctx->settings, "audit_syslog_socket"));
	return e;
}

void pw_ops_ctx_clear(pw_ops_ctx *ctx)
{
	pw_settings_free(&ctx->settings);
	free(ctx->box_root);
	free(ctx->workspace);
	pw_guard_free(&ctx->guard);
	free(ctx->system_config);
	free(ctx->user_config);
	free(ctx->catalog_path);
	ctx->box_root = ctx->workspace = ctx->system_config = ctx->user_config = ctx->catalog_path = NULL;
}

pw_err *pw_ops_require_write(const pw_ops_ctx *ctx, const char *what)
{
	if (ctx->mode != PW_MODE_READ_ONLY)
		return NULL;
	return pw_err_new(PW_ERR_REFUSED, _("run again with --mode workspace-write"),
			  _("%s is a change, and the mode is read-only"), what);
}

double pw_ops_budget(const pw_ops_ctx *ctx, double dflt)
{
	return ctx->timeout > 0 ? ctx->timeout : dflt;
}

pw_err *pw_ops_catalog_rw(const pw_ops_ctx *ctx, pw_catalog **cat)
{
	pw_err *e = pw_paths_mkdirs(ctx->box_root, 0755);
	if (e)
		return e;
	return pw_catalog_open(ctx->catalog_path, PW_CATALOG_READ_WRITE, cat);
}

pw_err *pw_ops_catalog_ro(const pw_ops_ctx *ctx, pw_catalog **cat)
{
	return pw_catalog_open(ctx->catalog_path, PW_CATALOG_READ_ONLY, cat);
}

/* The CLI's and TUI's records keep the command line as it was typed; an
 * agent or HTTP client is named beside its request, so History says who.
 * A background job records what its starter's would have (jobs.args). */
char *pw_ops_who_text(const pw_ops_who *w)
{
	const char *fe = w->front_end ? w->front_end : "cli";
	bool plain = strcmp(fe, "cli") == 0 || strcmp(fe, "tui") == 0 || strcmp(fe, "job") == 0;
	if (plain && !w->client)
		return w->args ? xstrdup(w->args) : NULL;
	if (w->client)
		return xasprintf("%s (%s: %s)", w->args ? w->args : "", fe, w->client);
	return xasprintf("%s (%s)", w->args ? w->args : "", fe);
}

pw_err *pw_ops_op_begin(const pw_ops_ctx *ctx, pw_catalog *cat, const char *kind, const char *target, int64_t *id)
{
	char *args = pw_ops_who_text(&ctx->who);
	pw_op_start s = { .kind = kind, .target = target, .args = args, .job_id = ctx->who.job_id,
			  .actor = ctx->who.actor };
	pw_err *e = pw_catalog_op_begin(cat, &s, id);
	free(args);
	return e;
}

const char *pw_ops_outcome_of(const pw_err *e)
{
	if (!e)
		return PW_OUTCOME_OK;
	switch (pw_err_code(e)) {
	case PW_ERR_REFUSED: return PW_OUTCOME_REFUSED;
	case PW_ERR_TIMEOUT: return PW_OUTCOME_TIMED_OUT;
	case PW_ERR_CANCELLED: return PW_OUTCOME_CANCELLED;
	default: return PW_OUTCOME_FAILED;
	}
}

void pw_ops_op_end(pw_catalog *cat, int64_t id, const pw_err *e)
{
	pw_err_free(pw_ops_op_end_with(cat, id, e, NULL, NULL));
}

pw_err *pw_ops_op_end_with(pw_catalog *cat, int64_t id, const pw_err *e, pw_catalog_with_fn with, void *ud)
{
	if (!cat || !id)
		return NULL;
	return pw_catalog_op_finish_with(cat, id, pw_ops_outcome_of(e), e ? pw_err_message(e) : NULL, with, ud);
}

char *pw_ops_data_file(const char *name)
{
	const char *env = getenv("PYWARD_DATADIR");
	const char *dirs[] = { env && *env ? env : NULL, PKGDATADIR, PW_SRCDIR "/data" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i])
			continue;
		char *p = xasprintf("%s/%s", dirs[i], name);
		if (access(p, R_OK) == 0) {
			/* people read it (a consent's "pinned: in"): not "_build/../data/" */
			char *clean = realpath(p, NULL);
			if (clean) {
				free(p);
				return clean;
			}
			return p;
		}
		free(p);
	}
	return xasprintf("%s/%s", PKGDATADIR, name);
}
