/* Environment work shared by `pyward venv` and the full-screen interface. */
#include "config.h"

#include "ops/venvops.h"

#include "clock.h"
#include "durable.h"
#include "i18n.h"
#include "pkgdb.h"
#include "reqfile.h"
#include "runtime.h"
#include "stagetime.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
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
	for (size_t i = 0; i < l->ntmp; i++) {
		unlink(l->tmp_files[i]);
		free(l->tmp_files[i]);
	}
	for (size_t i = 0; i < sizeof l->pip_env / sizeof l->pip_env[0]; i++)
		free(l->pip_env[i]);
	free(l->file_index);
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

/* lines into a new file under the workspace's .pyward/tmp (0600). */
static pw_err *write_flat(const pw_ops_ctx *ctx, pw_spec_list *l, char **lines, size_t n, char **out)
{
	char *tmp = NULL;
	pw_err *e = pw_venv_workspace_state(ctx->workspace, NULL, &tmp);
	if (e)
		return e;
	if (l->ntmp >= sizeof l->tmp_files / sizeof l->tmp_files[0]) {
		free(tmp);
		return pw_err_new(PW_ERR_USAGE, NULL, _("too many requirements files (at most %d)"), 4);
	}
	char *path = xasprintf("%s/requirements-XXXXXX", tmp);
	free(tmp);
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	if (!f || ferror(f) | (fclose(f) != 0)) {
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), path);
		if (fd >= 0 && !f)
			close(fd);
		unlink(path);
		free(path);
		return e;
	}
	l->tmp_files[l->ntmp++] = path;
	*out = xstrdup(path);
	return NULL;
}

/* slot = "NAME=a b c": values appended space-separated, as pip reads them. */
static void env_append(char **slot, const char *name, char **values, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *next = *slot ? xasprintf("%s %s", *slot, values[i]) : xasprintf("%s=%s", name, values[i]);
		free(*slot);
		*slot = next;
	}
}

static pw_err *add_flat(const pw_ops_ctx *ctx, pw_spec_list *l, const char *flag, char **lines, size_t n)
{
	char *path = NULL;
	pw_err *e = n ? write_flat(ctx, l, lines, n, &path) : NULL;
	if (!e && path)
		e = spec_push(l, xstrdup(flag));
	if (!e && path) {
		e = spec_push(l, path);
		path = NULL;
	}
	free(path);
	return e;
}

pw_err *pw_spec_add_requirement(const pw_ops_ctx *ctx, pw_spec_list *l, const char *path)
{
	pw_reqs r = { 0 };
	pw_err *e = pw_reqs_parse_file(ctx->guard, path, &r);
	/* The file's own flags (--pre, --only-binary=...) stay in the flat file. */
	for (size_t i = 0; !e && i < r.nflags; i++) {
		r.lines = xrealloc(r.lines, (r.nlines + 1) * sizeof *r.lines);
		r.lines[r.nlines++] = xstrdup(r.pip_flags[i]);
	}
	if (!e)
		e = add_flat(ctx, l, "-r", r.lines, r.nlines);
	if (!e)
		e = add_flat(ctx, l, "-c", r.constraints, r.nconstraints);
	if (!e) {
		if (r.index_url) {
			free(l->file_index);
			l->file_index = xstrdup(r.index_url);
		}
		env_append(&l->pip_env[0], "PIP_EXTRA_INDEX_URL", r.extra_index, r.nextra);
		env_append(&l->pip_env[1], "PIP_FIND_LINKS", r.find_links, r.nfind);
		env_append(&l->pip_env[2], "PIP_TRUSTED_HOST", r.trusted_hosts, r.ntrusted);
		if (r.no_index && !l->pip_env[3])
			l->pip_env[3] = xstrdup("PIP_NO_INDEX=1");
		if (!l->project && r.project)
			l->project = xstrdup(r.project);
	}
	pw_reqs_clear(&r);
	return e;
}

pw_err *pw_spec_add(const pw_ops_ctx *ctx, pw_spec_list *l, const char *spec)
{
	if (spec[0] == '-')
		return pw_err_new(PW_ERR_REFUSED, _("pass pip options through pyward's own flags (--index, --proxy, --upgrade, -r, -e)"),
				  _("'%s' looks like an option, not a package spec"), spec);
	if (!*spec || strchr(spec, '\n'))
		return pw_err_new(PW_ERR_USAGE, NULL, _("an empty or multi-line package spec"));
	char *line = NULL;
	pw_err *e = pw_reqs_check_spec(ctx->guard, spec, &line);
	if (e)
		return e;
	if (!l->project)
		l->project = spec_project(spec);
	return spec_push(l, line);
}

/* ---------------------------------------------------------------- create */

/* The start row is committed on a thread of its own while the environment
 * is made (a new catalog log's header and folder are flushed first: 2 ms
 * on a quiet disk, up to 30 under other users' writes); the create waits
 * for it before anything is put at the target (pw_venv_create_opts.gate),
 * so an environment is never there without its operation. */
struct begin_job {
	const pw_ops_ctx *ctx;
	pw_catalog *cat;
	const char *target;
	int64_t op;
	pw_err *e;
	pthread_t thread;
	bool running;
};

static void *begin_run(void *ud)
{
	struct begin_job *j = ud;
	j->e = pw_ops_op_begin(j->ctx, j->cat, "venv.create", j->target, &j->op);
	pw_stage_mark("op: operation begun");
	return NULL;
}

static pw_err *begin_joined(void *ud)
{
	struct begin_job *j = ud;
	if (j->running) {
		pthread_join(j->thread, NULL);
		j->running = false;
	}
	return j->e ? pw_err_new(pw_err_code(j->e), pw_err_hint(j->e), "%s", pw_err_message(j->e)) : NULL;
}

struct changes_row {
	const char *env;
	int64_t op;
	pw_pkg_changes changes;
};

static pw_err *insert_changes(pw_catalog *cat, void *ud)
{
	struct changes_row *r = ud;
	return pw_pkgdb_insert(cat, r->op, r->env, &r->changes);
}

pw_err *pw_ops_venv_create(const pw_ops_ctx *ctx, const pw_create_request *rq, pw_catalog *cat, pw_created *c)
{
	char *managed = pw_ops_managed_python(ctx), *base = NULL, *version = NULL;
	char *cache = xasprintf("%s/cache", ctx->box_root);
	struct begin_job j = { .ctx = ctx, .cat = cat, .target = rq->target };
	j.running = pthread_create(&j.thread, NULL, begin_run, &j) == 0;
	if (!j.running)
		begin_run(&j);
	pw_err *e = pw_venv_choose_base_cached(cache, rq->python, managed, &base, &version, &c->why);
	pw_venv_create_opts o = { .target = rq->target, .base = base, .seed = rq->seed, .cache_dir = cache,
				  .env_add = (const char *const *)rq->ce->vars,
				  .deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S)),
				  .cancel = rq->cancel, .events = rq->events, .gate = begin_joined, .gate_ud = &j };
	if (!e)
		e = pw_venv_create(&o, &c->r);
	pw_err_free(begin_joined(&j));
	if (j.e) { /* nothing was put at the target (the gate) */
		pw_err_free(e);
		e = j.e;
	}
	int64_t op = j.op;
	/* A new environment starts from nothing: what the seed put in is its
	 * first package change, recorded in the commit that records the
	 * outcome (one flush, after the environment is on disk). */
	struct changes_row ch = { .env = rq->target, .op = op };
	if (!e && !c->r.existed) {
		pw_pkgwatch w = { .env = xstrdup(rq->target), .armed = true };
		pw_err_free(pw_pkgwatch_end(&w, NULL, op, &ch.changes));
	}
	pw_stage_mark("op: package changes read");
	pw_err *f = pw_ops_op_end_with(cat, op, e, insert_changes, &ch);
	pw_stage_mark("op: operation finished");
	pw_pkg_changes_clear(&ch.changes);
	/* Done means recorded too: an environment the catalog does not name
	 * is not reported as made (it is on disk; a create again records it). */
	if (f && !e)
		e = pw_err_new(pw_err_code(f), pw_err_hint(f),
			       _("%s was made and flushed to disk, but the catalog could not record it (%s)"),
			       rq->target, pw_err_message(f));
	pw_err_free(f);
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

/* What pip wrote or removed on disk before the catalog records the
 * change and the outcome. pip does not flush and pyward cannot name its
 * files (scripts, data, removals), so the environment's file system is
 * flushed, even after a failed pip: the changes it made are recorded. */
static pw_err *flush_pip(const char *venv, const char *verb)
{
	pw_err *f = pw_durable_sync_fs(venv);
	if (!f)
		return NULL;
	pw_err *e = pw_err_new(PW_ERR_IO, pw_err_hint(f),
			       strcmp(verb, "install") == 0
				       ? _("pip installed the packages in %s, but they could not be flushed to disk, so "
					   "the install is recorded as failed (%s)")
				       : _("pip uninstalled the packages from %s, but the removal could not be flushed "
					   "to disk, so it is recorded as failed (%s)"),
			       venv, pw_err_message(f));
	pw_err_free(f);
	return e;
}

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
	/* The child environment, then the requirements files' index options. */
	const char *env[32];
	size_t ne = 0;
	for (size_t i = 0; i < ce->n && ne < 27; i++)
		env[ne++] = ce->vars[i];
	for (size_t i = 0; i < sizeof specs->pip_env / sizeof specs->pip_env[0]; i++)
		if (specs->pip_env[i])
			env[ne++] = specs->pip_env[i];
	env[ne] = NULL;
	char **mirrors = pw_ops_mirrors(ctx);
	int ports[32];
	size_t nports = pw_ops_proxy_ports(ctx, ports, 32);
	pw_pip_request rq = {
		.python = python, .pip_args = args, .chain = job->chain,
		.index = job->index ? job->index
			 : specs->file_index ? specs->file_index : pw_settings_get(ctx->settings, "index_url"),
		.proxy = job->proxy ? job->proxy : pw_settings_get(ctx->settings, "proxy"),
		.mirrors = (const char *const *)mirrors, .proxy_ports = ports, .proxy_port_count = nports,
		.project = specs->project, .ca_file = getenv("PIP_CERT"), .cwd = ctx->workspace,
		.env_add = (const char *const *)env,
		.deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, PW_VENV_BUDGET_S)),
		.cancel = job->cancel, .events = job->events,
		.on_line = job->on_line, .line_ud = job->line_ud, .catalog = cat, .operation_id = op,
	};
	/* What pip changed, read from the dist-info folders before and after
	 * (recorded even when pip failed half way: that is what happened). */
	pw_pkgwatch w;
	pw_err_free(pw_pkgwatch_begin(&w, venv));
	pw_err *e = pw_pip_run(&rq, res);
	pw_err *f = flush_pip(venv, job->verb);
	if (!e)
		e = f;
	else
		pw_err_free(f);
	pw_err_free(pw_pkgwatch_end(&w, cat, op, NULL));
	pw_ops_list_free(mirrors);
	free(python);
	return e;
}
