/* The runtime's baseline: which file, its names, what is missing, the step. */
#include "config.h"

#include "ops/baseline.h"

#include "ops/pipsetup.h"

#include "clock.h"
#include "distinfo.h"
#include "i18n.h"
#include "pkgdb.h"
#include "runner.h"
#include "runtime_fixup.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *pw_baseline_file(const pw_ops_ctx *ctx, const char *requirements, bool no_baseline)
{
	if (no_baseline)
		return NULL;
	if (requirements)
		return xstrdup(requirements);
	const char *env = getenv("PYWARD_BASELINE");
	const char *set = env ? env : pw_settings_get(ctx->settings, "baseline");
	if (set)
		return *set ? xstrdup(set) : NULL;
	return pw_ops_data_file("requirements-baseline.txt");
}

/* The project name at the start of a requirement line, or NULL (a comment,
 * an option such as -r or --index-url, a blank line). */
static char *line_name(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t n = 0;
	while (line[n] && (isalnum((unsigned char)line[n]) || strchr("-_.", line[n])))
		n++;
	return n && line[0] != '-' ? xstrndup(line, n) : NULL;
}

/* Calls fn for each name of the file. */
static pw_err *each_name(const char *file, void (*fn)(const char *name, void *ud), void *ud)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return pw_err_errno(PW_ERR_USAGE, errno, _("pass --requirements FILE, or set `baseline` in the settings"),
				    _("requirements file %s"), file);
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		char *name = line_name(line);
		if (name)
			fn(name, ud);
		free(name);
	}
	fclose(f);
	return NULL;
}

static void join_name(const char *name, void *ud)
{
	char **acc = ud;
	char *old = *acc;
	*acc = old ? xasprintf("%s, %s", old, name) : xstrdup(name);
	free(old);
}

pw_err *pw_baseline_names(const char *file, char **names)
{
	*names = NULL;
	pw_err *e = each_name(file, join_name, names);
	if (!e && !*names)
		*names = xstrdup("");
	return e;
}

typedef struct missing_acc {
	const pw_distset *have;
	char **list;
	size_t n;
} missing_acc;

static void note_missing(const char *name, void *ud)
{
	missing_acc *m = ud;
	if (pw_distset_find(m->have, name))
		return;
	m->list = xrealloc(m->list, (m->n + 2) * sizeof *m->list);
	m->list[m->n++] = xstrdup(name);
	m->list[m->n] = NULL;
}

pw_err *pw_baseline_missing(const char *box_root, const char *file, char ***missing, size_t *count)
{
	char *tree = xasprintf("%s/runtime/python/current", box_root);
	pw_distset have = { 0 };
	pw_err *e = pw_distinfo_read(tree, &have);
	missing_acc m = { .have = &have };
	if (!e)
		e = each_name(file, note_missing, &m);
	pw_distset_clear(&have);
	free(tree);
	*missing = m.list ? m.list : xcalloc(1, sizeof **missing);
	*count = m.n;
	return e;
}

static bool run_quiet(const char *const *argv, const pw_child_env *ce, int64_t deadline, const pw_cancel *cancel,
		      char **err_text)
{
	pw_run_opts ro = { .argv = argv, .env_add = (const char *const *)ce->vars, .deadline_ms = deadline,
			   .cancel = cancel };
	pw_run_result *res = NULL;
	pw_err *e = pw_run(&ro, &res);
	bool ok = !e && pw_run_result_status(res) == PW_RUN_EXITED && pw_run_result_exit_code(res) == 0;
	if (err_text)
		*err_text = xstrdup(e ? pw_err_message(e) : pw_run_result_output(res, PW_STREAM_STDERR));
	pw_err_free(e);
	pw_run_result_free(&res);
	return ok;
}

/* The runtime has pip, or gets it offline from its own ensurepip. */
static pw_err *runtime_pip(const char *box_root, const char *python, const pw_child_env *ce, int64_t deadline,
			  const pw_cancel *cancel)
{
	const char *check[] = { python, "-I", "-m", "pip", "--version", NULL };
	const char *repair[] = { python, "-I", "-m", "ensurepip", "--upgrade", NULL };
	if (run_quiet(check, ce, deadline, cancel, NULL))
		return NULL;
	char *why = NULL;
	/* ensurepip drops every PIP_* variable and gives its pip no override:
	 * the PEP 668 file steps aside for its one run (runtime_fixup.h) */
	char *root = xasprintf("%s/runtime/python/current", box_root);
	pw_err *e = pw_runtime_pep668_aside(root, true);
	bool repaired = !e && run_quiet(repair, ce, deadline, cancel, &why);
	pw_err *back = pw_runtime_pep668_aside(root, false);
	free(root);
	if (e || back) {
		pw_err_free(back ? e : NULL);
		free(why);
		return back ? back : e;
	}
	if (!repaired || !run_quiet(check, ce, deadline, cancel, NULL))
		e = pw_err_new(PW_ERR_FAILED, _("reinstall the runtime with 'pyward runtime install'"),
			       _("the managed runtime has no working pip, and ensurepip did not give it one: %s"),
			       why ? why : "");
	free(why);
	return e;
}

static pw_err *baseline_pip(const pw_ops_ctx *ctx, const char *index, const pw_op_io *io, const char *python,
			    const char *reqs, const pw_child_env *ce, pw_catalog *cat, int64_t op, pw_pip_result *res)
{
	/* the runtime's EXTERNALLY-MANAGED stops stray pip installs; this one
	 * is pyward's own (the variable in the environment says it too) */
	const char *args[] = { "install", "--break-system-packages", "--only-binary=:all:", "-r", reqs, NULL };
	char **mirrors = pw_ops_mirrors(ctx);
	int ports[32];
	size_t nports = pw_ops_proxy_ports(ctx, ports, 32);
	pw_pip_request pr = {
		.python = python, .pip_args = args, .chain = true,
		.index = index ? index : pw_settings_get(ctx->settings, "index_url"),
		.proxy = pw_settings_get(ctx->settings, "proxy"), .mirrors = (const char *const *)mirrors,
		.proxy_ports = ports, .proxy_port_count = nports, .project = "python-docx",
		.ca_file = getenv("PIP_CERT"), .cwd = ctx->workspace, .env_add = (const char *const *)ce->vars,
		.deadline_ms = pw_clock_deadline_after(pw_ops_budget(ctx, 600)),
		.cancel = io->cancel, .events = io->events, .catalog = cat, .operation_id = op,
	};
	pw_err *e = pw_pip_run(&pr, res);
	pw_ops_list_free(mirrors);
	return e;
}

pw_err *pw_baseline_step(const pw_ops_ctx *ctx, const char *file, const char *index, const pw_op_io *io,
			 pw_catalog *cat, int64_t op, pw_pip_result *pip, pw_runtime_changes *changes)
{
	char *python = NULL;
	pw_child_env ce = { 0 };
	pw_manifest before = { 0 };
	pw_events_progress(io->events, &(pw_progress){ .stage = "baseline", .total = -1, .eta_seconds = -1 });
	pw_err *e = pw_runtime_python(ctx->box_root, &python);
	if (!e)
		e = pw_child_env_make(ctx, &ce);
	/* pyward manages this interpreter: pip may install into it. */
	if (!e && ce.n < 15)
		ce.vars[ce.n++] = xstrdup("PIP_BREAK_SYSTEM_PACKAGES=1");
	/* What the baseline adds goes into the runtime's manifest, so verify checks it. */
	if (!e)
		e = pw_runtime_snapshot(ctx->box_root, &before);
	pw_pkgwatch w = { 0 };
	char *tree = e ? NULL : xasprintf("%s/runtime/python/current", ctx->box_root);
	if (tree)
		pw_err_free(pw_pkgwatch_begin(&w, tree));
	bool snapped = !e;
	if (!e)
		e = runtime_pip(ctx->box_root, python, &ce, pw_clock_deadline_after(120), io->cancel);
	if (!e)
		e = baseline_pip(ctx, index, io, python, file, &ce, cat, op, pip);
	if (tree)
		pw_err_free(pw_pkgwatch_end(&w, cat, op, NULL));
	free(tree);
	/* What is in the tree now goes into the manifest even when pip failed
	 * half way (ensurepip's pip, what pip had put in): that is what happened. */
	if (snapped) {
		pw_err *rec = pw_runtime_record_changes(ctx->box_root, cat, &before, changes);
		if (e)
			pw_err_free(rec);
		else
			e = rec;
	}
	pw_manifest_clear(&before);
	pw_child_env_clear(&ce);
	free(python);
	return e;
}
