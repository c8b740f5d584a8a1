/*
 * Environments pane: the environments discovery finds in the guard's roots
 * (path, kind, Python version, pip), and what `pyward venv` does to them:
 * create (with a chooser that shows each base interpreter, its version and
 * which one is picked and why), install, uninstall, remove (asks; No is the
 * default). Every operation is a background job (pane_envs_jobs.c), so the
 * pane stays usable; the list is discovered again when one ends. Read-only
 * mode refuses changes here, before anything starts, with the CLI's words.
 */
#include "config.h"

#include "tui/pane.h"

#include "tui/app.h"
#include "tui/dialog.h"
#include "tui/draw.h"
#include "tui/fmt.h"
#include "tui/keys.h"
#include "tui/pane_attempts.h"
#include "tui/pane_envs_jobs.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUSY 8
/* Columns right of the path: KIND (10) and PYTHON (8), each with its
 * blank; then PIP and STATE (path_width). */
#define KIND_PY_W 20

/* A job of this pane that is still running, and on what. */
typedef struct busy_job {
	int id;
	pw_envs_job_kind kind;
	char *path;        /* the environment (NULL for discovery and probing) */
} busy_job;

typedef struct envs_pane {
	pw_app *app;
	pw_venv_list list;
	bool loaded;
	char *filter;
	size_t selected, top;   /* indexes into the visible (filtered) rows */
	int list_rows;
	busy_job busy[MAX_BUSY];
	/* the create chooser */
	bool choosing;          /* keys go to the chooser (also while probing) */
	bool probing;
	char *create_name;
	pw_envs_candidate cand[PW_ENVS_CANDIDATES + 1];
	int cand_count;         /* the last row is "another interpreter" */
	int cand_selected;
	/* install inputs, gathered over three dialogs */
	char *in_path, *in_specs, *in_index;
	/* the last operation's result */
	char *result;
	pw_color result_color;
} envs_pane;

/* ---------------------------------------------------------------- rows */

/* Paths inside the workspace are shown from it: a deep workspace would
 * otherwise push the part that tells the environments apart off the row. */
static const char *shown(const envs_pane *p, const char *path)
{
	return pw_fmt_under(path, pw_app_ctx(p->app)->workspace);
}

/* The filter matches the path as the row shows it: matched against the
 * absolute path, a part of the workspace's own path would match every row. */
static bool row_visible(const envs_pane *p, size_t i)
{
	return !p->filter || !*p->filter || strstr(shown(p, p->list.items[i].path), p->filter);
}

static size_t visible_count(const envs_pane *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->list.count; i++)
		n += row_visible(p, i);
	return n;
}

/* The nth visible row's environment, or NULL. */
static const pw_venv_info *visible_row(const envs_pane *p, size_t nth)
{
	for (size_t i = 0; i < p->list.count; i++)
		if (row_visible(p, i) && nth-- == 0)
			return &p->list.items[i];
	return NULL;
}

static const pw_venv_info *selected_env(const envs_pane *p)
{
	return visible_row(p, p->selected);
}

static void select_path(envs_pane *p, const char *path)
{
	size_t n = visible_count(p);
	for (size_t i = 0; path && i < n; i++)
		if (strcmp(visible_row(p, i)->path, path) == 0) {
			p->selected = i;
			return;
		}
	if (p->selected >= n)
		p->selected = n ? n - 1 : 0;
}

/* ---------------------------------------------------------------- jobs */

static void set_result(envs_pane *p, pw_color c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_result(envs_pane *p, pw_color c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(p->result);
	p->result = xvasprintf(fmt, ap);
	va_end(ap);
	p->result_color = c;
	pw_app_status(p->app, c, "%s", p->result);
}

static void set_error(envs_pane *p, const char *what, const pw_err *e)
{
	const char *hint = pw_err_hint(e);
	set_result(p, PW_C_ERROR, "%s: %s%s%s", what, pw_err_message(e), hint ? _(" - ") : "", hint ? hint : "");
}

/* A running job of this kind (kind < 0: any) or on this environment. */
static busy_job *busy_find(envs_pane *p, int kind, const char *path)
{
	for (int i = 0; i < MAX_BUSY; i++) {
		busy_job *b = &p->busy[i];
		if (b->id && ((int)b->kind == kind || (path && b->path && strcmp(b->path, path) == 0)))
			return b;
	}
	return NULL;
}

static const busy_job *busy_on(const envs_pane *p, const char *path)
{
	for (int i = 0; i < MAX_BUSY; i++)
		if (p->busy[i].id && p->busy[i].path && strcmp(p->busy[i].path, path) == 0)
			return &p->busy[i];
	return NULL;
}

static const char *job_name(pw_envs_job_kind k)
{
	switch (k) {
	case PW_ENVS_DISCOVER: return _("discovering environments");
	case PW_ENVS_PROBE: return _("looking for interpreters");
	case PW_ENVS_CREATE: return _("creating an environment");
	case PW_ENVS_INSTALL: return _("installing packages");
	case PW_ENVS_UNINSTALL: return _("uninstalling packages");
	case PW_ENVS_REMOVE: return _("removing an environment");
	}
	return "";
}

/* Start j (taken) unless a job of its kind, or one on its environment, still runs. */
static bool start(envs_pane *p, pw_envs_job *j, const char *path)
{
	busy_job *slot = NULL;
	for (int i = 0; i < MAX_BUSY && !slot; i++)
		if (!p->busy[i].id)
			slot = &p->busy[i];
	bool one_per_kind = j->kind == PW_ENVS_DISCOVER || j->kind == PW_ENVS_PROBE || j->kind == PW_ENVS_CREATE;
	const busy_job *other = busy_find(p, one_per_kind ? (int)j->kind : -1, path);
	if (!slot || other) {
		pw_app_status(p->app, PW_C_WARN, _("wait: %s is still running"),
			      other ? job_name(other->kind) : _("too much work"));
		pw_envs_job_free(j);
		return false;
	}
	slot->kind = j->kind;
	slot->path = path ? xstrdup(path) : NULL;
	bool op = j->kind != PW_ENVS_DISCOVER && j->kind != PW_ENVS_PROBE; /* a catalog operation */
	slot->id = (op ? pw_app_start_op : pw_app_start_job)(p->app, job_name(j->kind), p, pw_envs_job_run, j,
							     pw_envs_job_free);
	return true;
}

static void rediscover(envs_pane *p)
{
	if (!busy_find(p, PW_ENVS_DISCOVER, NULL))
		start(p, pw_envs_job_new(PW_ENVS_DISCOVER, pw_app_ctx(p->app)), NULL);
}

/* Changes are refused up front in read-only mode (the job checks again). */
static bool writable(envs_pane *p, const char *what)
{
	pw_err *e = pw_ops_require_write(pw_app_ctx(p->app), what);
	if (!e)
		return true;
	set_error(p, _("Refused"), e);
	pw_err_free(e);
	return false;
}

/* ---------------------------------------------------------------- create */

static void clear_candidates(envs_pane *p)
{
	for (int i = 0; i < p->cand_count; i++) {
		free(p->cand[i].label);
		free(p->cand[i].python);
		free(p->cand[i].path);
		free(p->cand[i].version);
		free(p->cand[i].why);
	}
	memset(p->cand, 0, sizeof p->cand);
	p->cand_count = 0;
}

static void start_create(envs_pane *p, const char *python)
{
	pw_envs_job *j = pw_envs_job_new(PW_ENVS_CREATE, pw_app_ctx(p->app));
	j->target = xstrdup(p->create_name);
	j->python = python ? xstrdup(python) : NULL;
	if (start(p, j, NULL))
		pw_app_status(p->app, PW_C_NORMAL, _("creating %s..."), p->create_name);
}

static void on_other_python(void *ud, const char *text)
{
	envs_pane *p = ud;
	if (text && *text)
		start_create(p, text);
}

static void choose(envs_pane *p)
{
	const pw_envs_candidate *c = &p->cand[p->cand_selected];
	if (p->cand_selected == p->cand_count - 1) {
		p->choosing = false;
		pw_dialog_input(p->app, _("Create"), _("Base interpreter (a path, or a name on PATH):"), "",
				on_other_python, p);
		return;
	}
	if (!c->usable) {
		pw_app_status(p->app, PW_C_WARN, _("that interpreter cannot be used: %s"), c->why);
		return;
	}
	p->choosing = false;
	start_create(p, c->python);
}

/* The probe is back: the chooser opens with the automatic choice selected. */
static void open_chooser(envs_pane *p, pw_envs_job *j)
{
	clear_candidates(p);
	for (int i = 0; i < j->cand_count; i++) {
		p->cand[i] = j->cand[i];
		memset(&j->cand[i], 0, sizeof j->cand[i]);
	}
	p->cand_count = j->cand_count;
	j->cand_count = 0;
	pw_envs_candidate *other = &p->cand[p->cand_count++];
	other->label = xstrdup(_("another interpreter..."));
	other->why = xstrdup(_("type a path or a program name"));
	other->usable = true;
	p->cand_selected = 0;
}

static void probed(envs_pane *p, pw_envs_job *j, const pw_err *err)
{
	p->probing = false;
	if (!p->choosing)
		return; /* Esc while probing */
	if (err) {
		p->choosing = false;
		set_error(p, _("No interpreter"), err);
		return;
	}
	open_chooser(p, j);
}

static void on_create_name(void *ud, const char *text)
{
	envs_pane *p = ud;
	if (!text)
		return;
	free(p->create_name);
	p->create_name = xstrdup(*text ? text : ".venv");
	clear_candidates(p);
	p->choosing = p->probing = start(p, pw_envs_job_new(PW_ENVS_PROBE, pw_app_ctx(p->app)), NULL);
}

static void ask_create(envs_pane *p)
{
	if (!writable(p, _("creating an environment")))
		return;
	pw_dialog_input(p->app, _("Create an environment"),
			_("Name (a folder of the workspace) or path of the new environment:"), ".venv", on_create_name,
			p);
}

/* ---------------------------------------------------------------- install, uninstall, remove */

static void clear_inputs(envs_pane *p)
{
	free(p->in_path);
	free(p->in_specs);
	free(p->in_index);
	p->in_path = p->in_specs = p->in_index = NULL;
}

static pw_envs_job *pip_job(envs_pane *p, pw_envs_job_kind kind, const char *specs)
{
	pw_envs_job *j = pw_envs_job_new(kind, pw_app_ctx(p->app));
	pw_err *e = pw_envs_parse_specs(pw_app_ctx(p->app), specs, kind == PW_ENVS_INSTALL, &j->specs, &j->upgrade);
	if (e) {
		set_error(p, _("Not started"), e);
		pw_err_free(e);
		pw_envs_job_free(j);
		return NULL;
	}
	j->target = xstrdup(p->in_path);
	return j;
}

static void on_proxy(void *ud, const char *text)
{
	envs_pane *p = ud;
	pw_envs_job *j = text ? pip_job(p, PW_ENVS_INSTALL, p->in_specs) : NULL;
	if (j) {
		j->index = p->in_index && *p->in_index ? xstrdup(p->in_index) : NULL;
		j->proxy = *text ? xstrdup(text) : NULL;
		if (start(p, j, p->in_path))
			pw_app_status(p->app, PW_C_NORMAL, _("installing into %s (4 shows the attempts)"), p->in_path);
	}
	clear_inputs(p);
}

static void on_index(void *ud, const char *text)
{
	envs_pane *p = ud;
	if (!text) {
		clear_inputs(p);
		return;
	}
	p->in_index = xstrdup(text);
	pw_dialog_input(p->app, _("Install"),
			_("Proxy URL for pip (empty: none, or a local proxy found after a network failure):"), "",
			on_proxy, p);
}

static void on_specs(void *ud, const char *text)
{
	envs_pane *p = ud;
	pw_envs_job *check = text ? pip_job(p, PW_ENVS_INSTALL, text) : NULL;
	if (!check) {
		clear_inputs(p);
		return;
	}
	pw_envs_job_free(check);
	p->in_specs = xstrdup(text);
	pw_dialog_input(p->app, _("Install"),
			_("Index URL (empty: the configured one, else the default index, then a local proxy and the "
			  "mirrors):"),
			"", on_index, p);
}

static void on_uninstall(void *ud, const char *text)
{
	envs_pane *p = ud;
	pw_envs_job *j = text ? pip_job(p, PW_ENVS_UNINSTALL, text) : NULL;
	if (j && start(p, j, p->in_path))
		pw_app_status(p->app, PW_C_NORMAL, _("uninstalling from %s (4 shows the attempts)"), p->in_path);
	clear_inputs(p);
}

static void on_remove(void *ud, bool yes)
{
	envs_pane *p = ud;
	if (yes) {
		pw_envs_job *j = pw_envs_job_new(PW_ENVS_REMOVE, pw_app_ctx(p->app));
		j->target = xstrdup(p->in_path);
		start(p, j, p->in_path);
	} else {
		pw_app_status(p->app, PW_C_NORMAL, _("kept %s"), p->in_path);
	}
	clear_inputs(p);
}

/* i, u, d: on the selected environment, when the mode allows it. */
static void act(envs_pane *p, int ch)
{
	const pw_venv_info *v = selected_env(p);
	static const char *const what[] = { N_("installing packages"), N_("uninstalling packages"),
					    N_("removing an environment") };
	int k = ch == 'i' ? 0 : ch == 'u' ? 1 : 2;
	if (!v) {
		pw_app_status(p->app, PW_C_WARN, "%s", _("no environment selected: c creates one"));
		return;
	}
	if (!writable(p, _(what[k])))
		return;
	if (busy_on(p, v->path)) {
		pw_app_status(p->app, PW_C_WARN, _("wait: %s is busy"), v->path);
		return;
	}
	clear_inputs(p);
	p->in_path = xstrdup(v->path);
	/* the prompt names the environment: the selection is out of sight
	 * behind the dialog */
	if (k == 0) {
		char *q = xasprintf(_("Packages to install into %s (specs separated by spaces; -r FILE, -e PATH, -U to "
				      "upgrade):"),
				    shown(p, v->path));
		pw_dialog_input(p->app, _("Install"), q, "", on_specs, p);
		free(q);
	} else if (k == 1) {
		char *q = xasprintf(_("Packages to uninstall from %s (names separated by spaces):"), shown(p, v->path));
		pw_dialog_input(p->app, _("Uninstall"), q, "", on_uninstall, p);
		free(q);
	} else {
		char *q = xasprintf(_("Remove the environment %s and everything in it?"), v->path);
		pw_dialog_confirm(p->app, _("Remove"), q, _("Remove"), on_remove, p);
		free(q);
	}
}

/* ---------------------------------------------------------------- job results */

static void discovered(envs_pane *p, pw_envs_job *j, const pw_err *err)
{
	if (err) {
		set_error(p, _("Discovery failed"), err);
		return;
	}
	const pw_venv_info *v = selected_env(p);
	char *keep = v ? xstrdup(v->path) : NULL;
	pw_venv_list_clear(&p->list);
	p->list = j->list;
	memset(&j->list, 0, sizeof j->list);
	p->loaded = true;
	select_path(p, keep);
	free(keep);
}

static void finished(envs_pane *p, pw_envs_job_kind kind, pw_envs_job *j, const pw_err *err)
{
	const pw_created *c = &j->created;
	if (err) {
		const char *what[] = { [PW_ENVS_CREATE] = _("Create failed"), [PW_ENVS_INSTALL] = _("Install failed"),
				       [PW_ENVS_UNINSTALL] = _("Uninstall failed"), [PW_ENVS_REMOVE] = _("Remove failed") };
		set_error(p, what[kind], err);
	} else if (kind == PW_ENVS_CREATE && c->r.existed) {
		set_result(p, PW_C_OK, _("%s is already an environment (Python %s): nothing to do"), c->path,
			   c->r.version ? c->r.version : "?");
	} else if (kind == PW_ENVS_CREATE) {
		set_result(p, PW_C_OK, _("Created %s with Python %s; base: %s"), j->target,
			   c->r.version ? c->r.version : "?", c->why ? c->why : "?");
	} else if (kind == PW_ENVS_REMOVE) {
		set_result(p, PW_C_OK, _("Removed %s"), j->target);
	} else {
		set_result(p, PW_C_OK,
			   P_("%s done in %s after %zu attempt (operation %lld; 4 shows the attempts)",
			      "%s done in %s after %zu attempts (operation %lld; 4 shows the attempts)", j->pip.count),
			   kind == PW_ENVS_INSTALL ? _("Install") : _("Uninstall"), j->target, j->pip.count,
			   (long long)j->op);
	}
	rediscover(p);
}

static void on_event(void *self, const pw_job_event *ev)
{
	envs_pane *p = self;
	if (ev->owner != p || ev->kind != PW_JOB_DONE)
		return;
	busy_job *b = NULL;
	for (int i = 0; i < MAX_BUSY && !b; i++)
		if (p->busy[i].id == ev->job_id)
			b = &p->busy[i];
	if (!b)
		return;
	pw_envs_job_kind kind = b->kind;
	free(b->path);
	memset(b, 0, sizeof *b);
	pw_envs_job *j = ev->ud;
	if (kind == PW_ENVS_DISCOVER)
		discovered(p, j, ev->err);
	else if (kind == PW_ENVS_PROBE)
		probed(p, j, ev->err);
	else
		finished(p, kind, j, ev->err);
}

/* ---------------------------------------------------------------- drawing */

/* The STATE column's word for work running on an environment. */
static const char *busy_word(pw_envs_job_kind k)
{
	switch (k) {
	case PW_ENVS_INSTALL: return _("installing");
	case PW_ENVS_UNINSTALL: return _("uninstalling");
	case PW_ENVS_REMOVE: return _("removing");
	default: return _("busy");
	}
}

/* The PIP column is as wide as its widest word in the language shown
 * (German "kein pip" pushed the STATE column out of line). */
static int pip_width(void)
{
	int w = 6;
	const char *words[] = { _("PIP"), _("pip"), _("no pip") };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (pw_draw_width(words[i]) > w)
			w = pw_draw_width(words[i]);
	return w;
}

/* The STATE column's text for an environment: work running on it, a
 * missing interpreter, or nothing. */
static const char *state_word(const envs_pane *p, const pw_venv_info *v)
{
	const busy_job *b = busy_on(p, v->path);
	return b ? busy_word(b->kind) : v->python_exists ? "" : _("no python");
}

/* Where the columns after PATH begin: KIND, PYTHON and PIP always; STATE
 * as wide as what the rows show, and not at all while every row's is
 * empty, so that PATH keeps that room (at 60 columns it was cut while an
 * empty STATE column kept 11). */
static int path_width(const envs_pane *p, int width)
{
	int state_w = 0;
	for (size_t i = 0; i < p->list.count; i++) {
		int w = pw_draw_width(state_word(p, &p->list.items[i]));
		if (w > state_w)
			state_w = w;
	}
	if (state_w > 0 && state_w < pw_draw_width(_("STATE")))
		state_w = pw_draw_width(_("STATE"));
	return width - (KIND_PY_W + pip_width() + (state_w ? 1 + state_w : 0));
}

static void draw_row(const envs_pane *p, WINDOW *win, int y, pw_rect r, const pw_venv_info *v, bool sel)
{
	int pathw = path_width(p, r.w);
	pw_draw_set(win, sel ? PW_C_SELECTED : PW_C_NORMAL);
	pw_draw_blank(win, y, r.x, r.w);
	pw_draw_text(win, y, r.x, 1, sel ? ">" : " ");
	pw_draw_text_tail(win, y, r.x + 1, pathw - 2, shown(p, v->path)); /* its end tells them apart */
	pw_draw_textf(win, y, r.x + pathw, r.w - pathw, "%-10.10s %-8.8s %-*s %s", v->kind,
		      v->version ? v->version : "?", pip_width(), v->has_pip ? _("pip") : _("no pip"), state_word(p, v));
	pw_draw_set(win, PW_C_NORMAL);
}

static void draw_chooser(envs_pane *p, WINDOW *win, pw_rect r)
{
	int y = r.y;
	pw_draw_set(win, PW_C_TITLE);
	pw_draw_textf(win, y, r.x, r.w, _("Create %s: choose the base interpreter"), p->create_name);
	pw_draw_set(win, PW_C_NORMAL);
	y += 2;
	if (p->probing)
		pw_draw_text(win, y, r.x, r.w, _("Looking for interpreters (running each one to ask its version)..."));
	for (int i = 0; i < p->cand_count && y < r.y + r.h - 3; i++) {
		const pw_envs_candidate *c = &p->cand[i];
		bool sel = i == p->cand_selected;
		pw_draw_set(win, sel ? PW_C_SELECTED : c->usable ? PW_C_NORMAL : PW_C_DIM);
		pw_draw_blank(win, y, r.x, r.w);
		pw_draw_textf(win, y, r.x, r.w, "%s %-18s %-9s %s", sel ? ">" : " ", c->label,
			      c->version ? c->version : c->usable ? "" : _("unusable"), c->path ? c->path : "");
		pw_draw_set(win, PW_C_NORMAL);
		y++;
		pw_draw_set(win, c->usable ? PW_C_DIM : PW_C_WARN);
		y += pw_draw_wrapped(win, y, r.x + 4, r.w - 4, 2, 0, c->why ? c->why : "");
		pw_draw_set(win, PW_C_NORMAL);
	}
	pw_draw_wrapped(win, r.y + r.h - 2, r.x, r.w, 2, 0,
			_("automatic is what 'pyward venv create' picks without --python: the managed runtime when "
			  "provisioned, else python3 or python on PATH. Enter creates, Esc cancels."));
}

/* How many columns the interpreter and the base get when both do not fit
 * in avail: the base, which the list's row does not show, gets two thirds
 * unless either one fits whole in its share. */
static void share_width(int avail, int python, int base, int *wp, int *wb)
{
	int third = avail / 3;
	if (python <= third)
		*wp = python, *wb = avail - python;
	else if (base <= avail - third)
		*wp = avail - base, *wb = base;
	else
		*wp = third, *wb = avail - third;
}

/* "python: P   base: B". When the row is too narrow for both, each path
 * keeps its last parts behind a mark: a base's version folder
 * (.../versions/3.11.7) and a missing interpreter's note are what tell
 * environments apart, not the leading /root or /usr. */
static void draw_python_base(WINDOW *win, int y, int x, int w, const char *python, const char *base)
{
	const char *lp = _("python: "), *lb = _("   base: ");
	int avail = w - pw_draw_width(lp) - pw_draw_width(lb);
	int pw = pw_draw_width(python), bw = pw_draw_width(base);
	if (pw + bw <= avail || avail < 16) {
		char *line = xasprintf("%s%s%s%s", lp, python, lb, base);
		pw_draw_text_cut(win, y, x, w, line);
		free(line);
		return;
	}
	int wp, wb;
	share_width(avail, pw, bw, &wp, &wb);
	int used = pw_draw_text(win, y, x, w, lp);
	used += pw_draw_text_tail(win, y, x + used, wp, python);
	used += pw_draw_text(win, y, x + used, w - used, lb);
	pw_draw_text_tail(win, y, x + used, w - used, base);
}

static void draw_details(const envs_pane *p, WINDOW *win, pw_rect r, int y)
{
	const pw_venv_info *v = selected_env(p);
	if (v) {
		pw_draw_set(win, PW_C_LABEL);
		char *python = xasprintf("%s%s", shown(p, v->python), v->python_exists ? "" : _(" (missing)"));
		draw_python_base(win, y, r.x, r.w, python, v->base ? v->base : "?");
		free(python);
		pw_draw_set(win, PW_C_NORMAL);
	}
	if (p->result) {
		pw_draw_set(win, p->result_color);
		pw_draw_wrapped(win, y + 1, r.x, r.w, 3, 2, p->result);
		pw_draw_set(win, PW_C_NORMAL);
	}
}

static void draw(void *self, WINDOW *win, pw_rect r)
{
	envs_pane *p = self;
	if (p->choosing) {
		draw_chooser(p, win, r);
		return;
	}
	const pw_ops_ctx *ctx = pw_app_ctx(p->app);
	size_t n = visible_count(p);
	pw_draw_set(win, PW_C_TITLE);
	int used = pw_draw_textf(win, r.y, r.x, r.w, _("Environments under %s"),
				 p->list.root_count ? p->list.roots[0] : ctx->workspace);
	pw_draw_set(win, PW_C_NORMAL);
	if (p->list.root_count > 1)
		used += pw_draw_textf(win, r.y, r.x + used, r.w - used, _(" and %zu more roots"), p->list.root_count - 1);
	if (p->filter && *p->filter)
		pw_draw_textf(win, r.y, r.x + used, r.w - used, _("  (filter: %s)"), p->filter);
	pw_draw_set(win, PW_C_LABEL);
	int pathw = path_width(p, r.w);
	bool states = pathw < r.w - (KIND_PY_W + pip_width());
	pw_draw_textf(win, r.y + 1, r.x + 1, r.w - 1, "%-*s%-10s %-8s %-*s %s", pathw - 1, _("PATH"), _("KIND"),
		      _("PYTHON"), pip_width(), _("PIP"), states ? _("STATE") : "");
	pw_draw_set(win, PW_C_NORMAL);
	int rows = r.h - 6;
	p->list_rows = rows;
	if (!p->loaded) {
		pw_draw_text(win, r.y + 2, r.x + 1, r.w - 1, _("Looking for environments..."));
	} else if (n == 0) {
		pw_draw_wrapped(win, r.y + 2, r.x + 1, r.w - 1, 3, 0,
				p->list.count ? _("No environment matches the filter (/ and an empty text clears it).")
					      : _("No environments found. c creates one; r looks again."));
	}
	if (p->selected < p->top)
		p->top = p->selected;
	if (p->selected >= p->top + (size_t)rows)
		p->top = p->selected - (size_t)rows + 1;
	for (int i = 0; i < rows && p->top + (size_t)i < n; i++)
		draw_row(p, win, r.y + 2 + i, r, visible_row(p, p->top + (size_t)i), p->top + (size_t)i == p->selected);
	if (p->list.truncated)
		pw_draw_text(win, r.y + r.h - 4, r.x, r.w, _("(the scan stopped early: some folders were not looked at)"));
	draw_details(p, win, r, r.y + r.h - 3);
}

/* ---------------------------------------------------------------- keys */

static bool chooser_key(envs_pane *p, int ch)
{
	switch (ch) {
	case KEY_UP: if (p->cand_selected > 0) p->cand_selected--; return true;
	case KEY_DOWN: if (p->cand_selected < p->cand_count - 1) p->cand_selected++; return true;
	case '\n': if (!p->probing) choose(p); return true;
	case PW_KEY_ESC:
		p->choosing = false;
		pw_app_status(p->app, PW_C_NORMAL, "%s", _("nothing created"));
		return true;
	}
	return true; /* the chooser keeps the pane's keys while it is open */
}

static void move_selection(envs_pane *p, long by)
{
	long n = (long)visible_count(p), s = (long)p->selected + by;
	if (s >= n)
		s = n - 1;
	if (s < 0)
		s = 0;
	p->selected = (size_t)s;
}

static bool key(void *self, int ch)
{
	envs_pane *p = self;
	if (p->choosing)
		return chooser_key(p, ch);
	int page = p->list_rows > 1 ? p->list_rows - 1 : 1;
	const pw_venv_info *v;
	switch (ch) {
	case KEY_UP: move_selection(p, -1); return true;
	case KEY_DOWN: move_selection(p, 1); return true;
	case KEY_PPAGE: move_selection(p, -page); return true;
	case KEY_NPAGE: move_selection(p, page); return true;
	case KEY_HOME: p->selected = 0; return true;
	case KEY_END: move_selection(p, (long)visible_count(p)); return true;
	case 'r': rediscover(p); return true;
	case 'c': ask_create(p); return true;
	case 'i':
	case 'u':
	case 'd': act(p, ch); return true;
	case '\n':
		v = selected_env(p);
		pw_attempts_show_target(p->app, v ? v->path : NULL);
		return true;
	}
	return false;
}

static void set_filter(void *self, const char *text)
{
	envs_pane *p = self;
	free(p->filter);
	p->filter = *text ? xstrdup(text) : NULL;
	p->selected = p->top = 0;
}

/* The first visit discovers (not at start: the first frame stays instant). */
static void on_enter(void *self)
{
	envs_pane *p = self;
	if (!p->loaded)
		rediscover(p);
}

static void *create(pw_app *app)
{
	envs_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	return p;
}

static void destroy(void *self)
{
	envs_pane *p = self;
	pw_venv_list_clear(&p->list);
	for (int i = 0; i < MAX_BUSY; i++)
		free(p->busy[i].path);
	clear_candidates(p);
	clear_inputs(p);
	free(p->create_name);
	free(p->filter);
	free(p->result);
	free(p);
}

static const pw_help_key help_keys[] = {
	{ N_("Up/Down, PgUp/PgDn"), N_("select an environment") },
	{ N_("r"), N_("discover the environments again") },
	{ N_("c"), N_("create an environment (name, then the base interpreter)") },
	{ N_("i"), N_("install packages into the selected one (specs, index, proxy)") },
	{ N_("u"), N_("uninstall packages from the selected one") },
	{ N_("d"), N_("remove the selected environment (asks; No is the default)") },
	{ N_("Enter"), N_("the attempts of its latest pip operation (Attempts pane)") },
	{ NULL, NULL },
};

const pw_pane_ops pw_pane_envs = {
	.title = N_("Environments"),
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.key = key,
	.on_event = on_event,
	.filter = set_filter,
	.on_enter = on_enter,
	.help_keys = help_keys,
	.hint = N_("c new  i install  u uninstall  d remove  r refresh"),
};
