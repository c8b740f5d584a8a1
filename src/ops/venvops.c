/* Environment work shared by `pyward venv` and the full-screen interface. */
#include "config.h"

#include "ops/venvops.h"

#include "clock.h"
#include "i18n.h"
#include "pkgdb.h"
#include "runtime.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pw_err *pw_ops_resolve_venv(const pw_ops_ctx *ctx, const char *v, char **out)
{
	if (strchr(v, '/'))
		return pw_guard_resolve(ctx->guard, v, out);
	return pw_guard_join_name(ctx->guard, ctx->workspace, v, out);
}

char *pw_ops_managed_python(const pw_ops_ctx *ctx)
{
	char *py = NULL;
	pw_err *e = pw_runtime_python(ctx->box_root, &py);
	pw_err_free(e);
	return py;
}

bool pw_ops_venv_has_pip(const char *venv)
{
	pw_venv_info info;
	pw_err *e = pw_venv_inspect(venv, &info);
	bool has = !e && info.has_pip;
	if (!e)
		pw_venv_info_clear(&info);
	pw_err_free(e);
	return has;
}

/* ---------------------------------------------------------------- specs */

static bool is_remote(const char *s)
{
	static const char *const schemes[] = { "git+", "hg+", "svn+", "bzr+", "http:", "https:", "ftp:", "file:" };
	if (strstr(s, "://"))
		return true;
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
		if (strncmp(s, schemes[i], strlen(schemes[i])) == 0)
			return true;
	return false;
}

/* The project name at the start of a spec ("Foo[x]>=1" -> "Foo"). */
static char *spec_project(const char *spec)
{
	size_t n = 0;
	while (spec[n] && (isalnum((unsigned char)spec[n]) || strchr("-_.", spec[n])))
		n++;
	return n ? xstrndup(spec, n) : NULL;
}

/* Takes s. */
static pw_err *spec_push(pw_spec_list *l, char *s)
{
	if (l->count >= PW_SPEC_MAX - 2) {
		free(s);
		return pw_err_new(PW_ERR_USAGE, NULL, _("too many package specs (at most %d)"), PW_SPEC_MAX - 4);
	}
	l->items[l->count++] = s;
	return NULL;
}

void pw_spec_list_clear(pw_spec_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->project);
	memset(l, 0, sizeof *l);
}

pw_err *pw_spec_add_editable(const pw_ops_ctx *ctx, pw_spec_list *l, const char *path)
{
	if (is_remote(path))
		return pw_err_new(PW_ERR_REFUSED, _("clone it into the workspace and pass the local folder"),
				  _("editable installs of remote or VCS URLs are refused: %s"), path);
	char *abs = NULL;
	pw_err *e = pw_guard_resolve(ctx->guard, path, &abs);
	if (e)
		return e;
	pw_err *e2 = spec_push(l, xstrdup("-e"));
	return e2 ? (free(abs), e2) : spec_push(l, abs);
}

pw_err *pw_spec_add_requirement(const pw_ops_ctx *ctx, pw_spec_list *l, const char *path)
{
	char *abs = NULL;
	pw_err *e = pw_guard_resolve(ctx->guard, path, &abs);
	if (!e && access(abs, R_OK) != 0)
		e = pw_err_errno(PW_ERR_USAGE, errno, NULL, _("requirements file %s"), abs);
	if (!e)
		e = spec_push(l, xstrdup("-r"));
	if (!e)
		return spec_push(l, abs);
	free(abs);
	return e;
}

pw_err *pw_spec_add(pw_spec_list *l, const char *spec)
{
	if (spec[0] == '-')
		return pw_err_new(PW_ERR_REFUSED, _("pass pip options through pyward's own flags (--index, --proxy, --upgrade, -r, -e)"),
				  _("'%s' looks like an option, not a package spec"), spec);
	if (!*spec || strchr(spec, '\n'))
		return pw_err_new(PW_ERR_USAGE, NULL, _("an empty or multi-line package spec"));
	if (!l->project)
		l->project = spec_project(spec);
	return spec_push(l, xstrdup(spec));
}

/* ---------------------------------------------------------------- create */

pw_err *pw_ops_venv_create(const pw_ops_ctx *ctx, const pw_create_request *rq, pw_catalog *cat, pw_created *c)
{
	char *managed = pw_ops_managed_python(ctx), *base = NULL, *version = NULL;
	char *cache = xasprintf("%s/cache", ctx->box_root);
	int64_t op = 0;
	pw_err *e = pw_ops_op_begin(ctx, cat, "venv.create", rq->target, &op);
	if (!e)
		e = pw_venv_choose_base_cached(cache, rq->python, managed, &base, &version, &c->why);
	pw_venv_create_opts o = { .target = rq->target, .base = base, .seed = rq->seed, .cache_dir = cache,
				  .env_add = (const char *const *)rq->ce->vars,
				  .deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S)),
				  .cancel = rq->cancel, .events = rq->events };
	if (!e)
		e = pw_venv_create(&o, &c->r);
	/* A new environment starts from nothing: what the seed put in is its
	 * first package change. */
	if (!e && !c->r.existed) {
		pw_pkgwatch w = { .env = xstrdup(rq->target), .armed = true };
		pw_err_free(pw_pkgwatch_end(&w, cat, op, NULL));
	}
	pw_ops_op_end(cat, op, e);
	c->path = xstrdup(rq->target);
	free(managed);
	free(cache);
	free(base);
	free(version);
	return e;
}

void pw_created_clear(pw_created *c)
{
	pw_venv_create_result_clear(&c->r);
	free(c->why);
	free(c->path);
	memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- pip */

pw_err *pw_ops_pip_run(const pw_ops_ctx *ctx, const pw_pip_job *job, const char *venv, const pw_spec_list *specs,
		       const pw_child_env *ce, pw_catalog *cat, int64_t op, pw_pip_result *res)
{
	char *python = NULL, *managed = xasprintf("%s/runtime", ctx->box_root);
	pw_err *bad = pw_venv_interpreter(venv, managed, &python);
	free(managed);
	if (bad)
		return bad;
	const char *args[PW_SPEC_MAX + 4];
	size_t k = 0;
	args[k++] = job->verb;
	if (!job->chain)
		args[k++] = "-y";
	if (job->upgrade && job->chain)
		args[k++] = "--upgrade";
	for (size_t i = 0; i < specs->count; i++)
		args[k++] = specs->items[i];
	args[k] = NULL;
	char **mirrors = pw_ops_mirrors(ctx);
	int ports[32];
	size_t nports = pw_ops_proxy_ports(ctx, ports, 32);
	pw_pip_request rq = {
		.python = python, .pip_args = args, .chain = job->chain,
		.index = job->index ? job->index : pw_settings_get(ctx->settings, "index_url"),
		.proxy = job->proxy ? job->proxy : pw_settings_get(ctx->settings, "proxy"),
		.mirrors = (const char *const *)mirrors, .proxy_ports = ports, .proxy_port_count = nports,
		.project = specs->project, .ca_file = getenv("PIP_CERT"), .cwd = ctx->workspace,
		.env_add = (const char *const *)ce->vars,
		.deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S)),
		.cancel = job->cancel, .events = job->events,
		.on_line = job->on_line, .line_ud = job->line_ud, .catalog = cat, .operation_id = op,
	};
	/* What pip changed, read from the dist-info folders before and after
	 * (recorded even when pip failed half way: that is what happened). */
	pw_pkgwatch w;
	pw_err_free(pw_pkgwatch_begin(&w, venv));
	pw_err *e = pw_pip_run(&rq, res);
	pw_err_free(pw_pkgwatch_end(&w, cat, op, NULL));
	pw_ops_list_free(mirrors);
	free(python);
	return e;
}
