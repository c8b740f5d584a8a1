/*
 * Runtime pane: the managed CPython's honest state (read in a job from the
 * markers, symlinks and the catalog, never written) and its actions:
 * install (the Download pane's consent), verify, rollback and remove (both
 * confirmed, No the default), run through the same calls as the CLI.
 */
#include "config.h"

#include "tui/pane.h"

#include "tui/app.h"
#include "tui/dialog.h"
#include "tui/draw.h"
#include "tui/fmt.h"
#include "tui/pane_download.h"

#include "ops/ctx.h"
#include "ops/op_history.h"
#include "ops/op_runtime.h"


#include "i18n.h"
#include "runtime.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The label column: as wide as the longest translated label, at least 12. */
static int label_width(void)
{
	static int w;
	if (w)
		return w;
	const char *labels[] = { _("Runtime:"), _("Verify:"), _("Version:"), _("Platform:"), _("Pin SHA256:"),
				 _("Source:"), _("Pins:"), _("Path:"), _("Size:"), _("Installed:"), _("Box root:"),
				 _("Workspace:"), _("Mode:"), _("Hint:"), _("Why:"), _("Previous:"), _("Baseline:") };
	w = 12;
	for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
		if (pw_draw_width(labels[i]) + 1 > w)
			w = pw_draw_width(labels[i]) + 1;
	if (w > 24)
		w = 24;
	return w;
}
#define LABEL_W label_width()
/* Below this many rows the pane drops the places and puts verify first. */
#define COMPACT_BELOW 16

/* What the status job reads. */
typedef struct status_data {
	const pw_ops_ctx *ctx;
	pw_runtime_info info;
	char *error, *error_hint;
	int64_t pinned_size;
	char *pinned_version;
	char *baseline_names;  /* what an install's baseline step brings; NULL: none */
	char *baseline_missing; /* installed: what of it the runtime lacks; NULL: nothing */
	pw_op_rec last_verify;
	bool have_verify;
} status_data;

typedef enum action { ACT_VERIFY, ACT_ROLLBACK, ACT_REMOVE } action;

typedef struct action_data {
	const pw_ops_ctx *ctx;
	action what;
	pw_op_runtime_verify_result verify;
	pw_op_runtime_rollback_result rollback;
	pw_op_runtime_remove_result remove;
} action_data;

typedef struct runtime_pane {
	pw_app *app;
	status_data *st;     /* the last status read, or NULL */
	int status_job, action_job;
	bool reload_wanted;
	char *action_result;
	pw_color action_color;
} runtime_pane;

/* ---------------------------------------------------------------- jobs */

static void status_free(void *p)
{
	status_data *s = p;
	if (!s)
		return;
	pw_runtime_info_clear(&s->info);
	free(s->error);
	free(s->error_hint);
	free(s->pinned_version);
	free(s->baseline_names);
	free(s->baseline_missing);
	pw_op_rec_clear(&s->last_verify);
	free(s);
}

static void read_last_verify(status_data *s)
{
	pw_op_filter f = { .kind = "runtime.verify", .limit = 1 };
	pw_op_list ops = { 0 };
	pw_err *e = pw_op_history_list(s->ctx, &f, &ops);
	if (!e && ops.count == 1) {
		s->last_verify = ops.items[0];
		memset(&ops.items[0], 0, sizeof ops.items[0]);
		s->have_verify = true;
	}
	pw_err_free(e);
	pw_op_list_clear(&ops);
}

static char *joined(char **list, size_t n)
{
	char *out = NULL;
	for (size_t i = 0; i < n; i++) {
		char *old = out;
		out = old ? xasprintf("%s, %s", old, list[i]) : xstrdup(list[i]);
		free(old);
	}
	return out;
}

/* The same status operation as `pyward runtime status`. */
static pw_err *status_work(pw_job *job, void *ud)
{
	(void)job;
	status_data *s = ud;
	pw_runtime_request rq = { 0 };
	pw_op_runtime_status_result r;
	s->pinned_size = -1;
	pw_err *e = pw_op_runtime_status(s->ctx, &rq, &r);
	if (e) {
		s->error = xstrdup(pw_err_message(e));
		s->error_hint = pw_err_hint(e) ? xstrdup(pw_err_hint(e)) : NULL;
		pw_err_free(e);
	} else {
		s->info = r.info;
		memset(&r.info, 0, sizeof r.info);
		if (r.pin) {
			s->pinned_size = r.pin->size;
			s->pinned_version = xstrdup(r.pin->version);
		}
		if (r.baseline_names && *r.baseline_names)
			s->baseline_names = xstrdup(r.baseline_names);
		s->baseline_missing = joined(r.baseline_missing, r.missing_count);
		pw_op_runtime_status_clear(&r);
	}
	read_last_verify(s);
	return NULL;
}

static void action_free(void *p)
{
	action_data *a = p;
	pw_op_runtime_verify_clear(&a->verify);
	pw_op_runtime_rollback_clear(&a->rollback);
	free(a);
}

static pw_err *action_work(pw_job *job, void *ud)
{
	static char remove_kind[] = "runtime.remove";
	action_data *a = ud;
	/* rollback and remove run after the dialog's yes: that is the consent */
	pw_op_io io = { .events = pw_job_events(job), .cancel = pw_job_cancel_token(job),
			.consent = pw_consent_given, .consent_ud = remove_kind };
	switch (a->what) {
	case ACT_VERIFY: return pw_op_runtime_verify(a->ctx, &io, &a->verify);
	case ACT_ROLLBACK: return pw_op_runtime_rollback(a->ctx, &io, &a->rollback);
	case ACT_REMOVE: return pw_op_runtime_remove(a->ctx, &io, &a->remove);
	}
	return NULL;
}

static void reload(runtime_pane *p)
{
	if (p->status_job) {
		p->reload_wanted = true; /* one read at a time; another after it */
		return;
	}
	status_data *s = xcalloc(1, sizeof *s);
	s->ctx = pw_app_ctx(p->app);
	p->status_job = pw_app_start_read(p->app, _("reading the runtime's state"), p, status_work, s, status_free);
}

/* ---------------------------------------------------------------- actions */

static void set_action_result(runtime_pane *p, pw_color c, char *text)
{
	free(p->action_result);
	p->action_result = text;
	p->action_color = c;
	pw_app_status(p->app, c, "%s", text);
}

static void start_action(runtime_pane *p, action what, const char *name)
{
	if (p->action_job) {
		pw_app_status(p->app, PW_C_WARN, "%s", _("another runtime action is still running"));
		return;
	}
	action_data *a = xcalloc(1, sizeof *a);
	a->ctx = pw_app_ctx(p->app);
	a->what = what;
	p->action_job = pw_app_start_op(p->app, name, p, action_work, a, action_free);
}

static void on_rollback_answer(void *ud, bool yes)
{
	if (yes)
		start_action(ud, ACT_ROLLBACK, _("rolling back the runtime"));
}

static void on_remove_answer(void *ud, bool yes)
{
	if (yes)
		start_action(ud, ACT_REMOVE, _("removing the runtime"));
}

/* Refuse a change in read-only mode before asking anything. */
static bool may_change(runtime_pane *p, const char *what)
{
	pw_err *e = pw_ops_require_write(pw_app_ctx(p->app), what);
	if (!e)
		return true;
	set_action_result(p, PW_C_ERROR, xasprintf(_("Refused: %s (%s)"), pw_err_message(e), pw_err_hint(e) ? pw_err_hint(e) : ""));
	pw_err_free(e);
	return false;
}

static void ask_rollback(runtime_pane *p)
{
	if (!may_change(p, _("a rollback")))
		return;
	const char *prev = p->st && p->st->info.has_previous ? p->st->info.previous_version : NULL;
	if (!prev) {
		set_action_result(p, PW_C_WARN, xstrdup(_("There is no previous install to roll back to.")));
		return;
	}
	char *q = xasprintf(_("Make CPython %s current again? The current install becomes the previous one."), prev);
	pw_dialog_confirm(p->app, _("Roll back"), q, _("Roll back"), on_rollback_answer, p);
	free(q);
}

/* Nothing installed: say so rather than ask about removing or fail a verify. */
static bool not_provisioned(const runtime_pane *p)
{
	return p->st && p->st->info.state == PW_RUNTIME_NOT_PROVISIONED;
}

static void ask_remove(runtime_pane *p)
{
	if (!may_change(p, _("removing the runtime")))
		return;
	if (not_provisioned(p)) {
		set_action_result(p, PW_C_WARN, xstrdup(_("There is no managed runtime to remove.")));
		return;
	}
	pw_dialog_confirm(p->app, _("Remove"), _("Remove the managed Python runtime for every user of this machine?"),
			  _("Remove"), on_remove_answer, p);
}

static void action_done(runtime_pane *p, const pw_job_event *ev)
{
	const action_data *a = ev->ud;
	p->action_job = 0;
	if (ev->err) {
		set_action_result(p, PW_C_ERROR, xasprintf(_("Failed: %s"), pw_err_message(ev->err)));
	} else if (a->what == ACT_VERIFY) {
		const pw_runtime_verify_result *r = &a->verify.verify;
		set_action_result(p, a->verify.diffs ? PW_C_ERROR : PW_C_OK,
				  xasprintf(_("Verify: %lld files checked: %zu modified, %zu mode changed, %zu missing, %zu unexpected"),
					    (long long)r->files_checked, r->modified, r->mode, r->missing, r->unexpected));
	} else if (a->what == ACT_ROLLBACK) {
		set_action_result(p, PW_C_OK, xasprintf(_("Rolled back: CPython %s is current again."), a->rollback.version));
	} else {
		set_action_result(p, PW_C_OK, xstrdup(a->remove.removed ? _("The managed Python runtime was removed.")
								  : _("There was no managed runtime to remove.")));
	}
	reload(p);
}

/* ---------------------------------------------------------------- pane */

static void *create(pw_app *app)
{
	runtime_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	reload(p);
	return p;
}

static void destroy(void *self)
{
	runtime_pane *p = self;
	status_free(p->st);
	free(p->action_result);
	free(p);
}

static void on_event(void *self, const pw_job_event *ev)
{
	runtime_pane *p = self;
	if (ev->kind != PW_JOB_DONE)
		return;
	if (ev->owner == p && ev->job_id == p->status_job) {
		/* Move what the job read into the pane; its husk is freed with the job. */
		status_free(p->st);
		p->st = xmalloc(sizeof *p->st);
		*p->st = *(status_data *)ev->ud;
		*(status_data *)ev->ud = (status_data){ 0 };
		p->status_job = 0;
		if (p->reload_wanted) {
			p->reload_wanted = false;
			reload(p);
		}
		return;
	}
	if (ev->owner == p && ev->job_id == p->action_job) {
		action_done(p, ev);
		return;
	}
	/* An install ended in the Download pane: read the state again. (Only
	 * that pane's jobs: reacting to every job would ping-pong with any
	 * other pane that reads its state in a job.) */
	if (ev->owner && ev->owner == pw_app_pane_state(p->app, &pw_pane_download))
		reload(p);
}

/* A field's label in its column; what follows is drawn in normal colour. */
static void label(WINDOW *win, pw_rect r, int y, const char *text)
{
	pw_draw_set(win, PW_C_LABEL);
	pw_draw_text(win, y, r.x, LABEL_W, text);
	pw_draw_set(win, PW_C_NORMAL);
}

static int field(WINDOW *win, pw_rect r, int y, const char *name, const char *value)
{
	int room = r.y + r.h - y;
	if (room <= 0)
		return 0;
	label(win, r, y, name);
	return pw_draw_wrapped_cut(win, y, r.x + LABEL_W, r.w - LABEL_W, room < 2 ? room : 2, 0,
				   value && *value ? value : "-");
}

/* One row at most: a short terminal shows every field, each cut to fit
 * (path: keeps its end, the rest with a mark); `pyward runtime status` and
 * a taller terminal show the whole values. */
static int field_row(WINDOW *win, pw_rect r, int y, const char *name, const char *value, bool path)
{
	if (y >= r.y + r.h)
		return 0;
	label(win, r, y, name);
	const char *v = value && *value ? value : "-";
	if (path)
		pw_draw_text_tail(win, y, r.x + LABEL_W, r.w - LABEL_W, v);
	else
		pw_draw_text_cut(win, y, r.x + LABEL_W, r.w - LABEL_W, v);
	return 1;
}

static int draw_state_line(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	static const pw_color colors[] = { PW_C_WARN, PW_C_OK, PW_C_ERROR };
	label(win, r, y, _("Runtime:"));
	pw_draw_set(win, colors[s->info.state]);
	const char *names[] = { _("not provisioned"), _("installed"), _("broken") };
	int used = pw_draw_text(win, y, r.x + LABEL_W, r.w - LABEL_W, names[s->info.state]);
	pw_draw_set(win, PW_C_NORMAL);
	if (s->info.state != PW_RUNTIME_NOT_PROVISIONED)
		return 1;
	char size[32];
	pw_fmt_bytes(s->pinned_size, size, sizeof size);
	char *base = xasprintf(s->pinned_size >= 0 ? _(" - press i to install it (~%s, one time)")
						 : _(" - press i to install it (one time)%s"),
			       s->pinned_size >= 0 ? size : "");
	/* what the keystroke brings, as the consent will say it */
	char *hint = s->baseline_names && s->pinned_version
			     ? xasprintf(_("%s: CPython %s and the document libraries %s"), base, s->pinned_version,
					 s->baseline_names)
			     : xstrdup(base);
	free(base);
	int avail = r.w - LABEL_W - used;
	if (pw_draw_width(hint) <= avail) {
		pw_draw_text(win, y, r.x + LABEL_W + used, avail, hint);
		free(hint);
		return 1;
	}
	/* Too long beside the state (a narrow terminal): wrapped below it, on
	 * as many rows as it takes (at 60 columns four: three cut the last
	 * library off). */
	const char *rest = hint + strspn(hint, " -");
	int room = r.y + r.h - (y + 1);
	int rows = pw_draw_wrapped(win, y + 1, r.x + LABEL_W, r.w - LABEL_W, room < 6 ? room : 6, 0, rest);
	free(hint);
	return 1 + rows;
}

static void draw_verify(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	if (!s->have_verify) {
		field(win, r, y, _("Verify:"), _("never run (press v)"));
		return;
	}
	char when[32];
	pw_fmt_time(s->last_verify.started_at, when, sizeof when);
	char *v = xasprintf(_("last run %s, %s UTC%s%s"), s->last_verify.outcome, when, s->last_verify.stop_reason ? ": " : "",
			    s->last_verify.stop_reason ? s->last_verify.stop_reason : "");
	field(win, r, y, _("Verify:"), v);
	free(v);
}

static int draw_version(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	const pw_runtime_info *i = &s->info;
	char *ver = xasprintf(_("%s (release %s)"), i->version ? i->version : "?", i->release ? i->release : "?");
	y += field(win, r, y, _("Version:"), ver);
	free(ver);
	return y;
}

/* Where the pins came from, NULL when unknown; a new string. */
static char *pins_text(const pw_runtime_info *i)
{
	return i->pins_source ? xasprintf("%s%s", i->pins_source, i->pins_from_operator ? _(" (operator-supplied)") : "")
			      : NULL;
}

static int draw_details(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	const pw_runtime_info *i = &s->info;
	y += field(win, r, y, _("Platform:"), i->platform);
	y += field(win, r, y, _("Pin SHA256:"), i->sha256);
	y += field(win, r, y, _("Source:"), i->url);
	char *pins = pins_text(i);
	y += field(win, r, y, _("Pins:"), pins);
	free(pins);
	y += field(win, r, y, _("Path:"), i->path);
	char size[32];
	pw_fmt_bytes(i->size_on_disk, size, sizeof size);
	y += field(win, r, y, _("Size:"), size);
	char when[32];
	pw_fmt_time(i->installed_at, when, sizeof when);
	char *installed = i->installed_at ? xasprintf("%s UTC", when) : NULL;
	y += field(win, r, y, _("Installed:"), installed);
	free(installed);
	return y;
}

/* The details on a short terminal, one row each, what tells this runtime
 * apart first: where it is and when it came, then the hash and the source
 * in their short forms (a digest's ends; a URL's host, then as much of
 * its file name as fits). */
static int draw_details_compact(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	const pw_runtime_info *i = &s->info;
	const char *mark = pw_draw_mark();
	int w = r.w - LABEL_W;
	y += field_row(win, r, y, _("Path:"), i->path, true);
	char size[32], when[32];
	pw_fmt_bytes(i->size_on_disk, size, sizeof size);
	pw_fmt_time(i->installed_at, when, sizeof when);
	char *installed = xasprintf(_("%s UTC, %s"), i->installed_at ? when : "?", size);
	y += field_row(win, r, y, _("Installed:"), installed, false);
	free(installed);
	char sha[96];
	pw_fmt_digest_short(i->sha256, w, mark, sha, sizeof sha);
	y += field_row(win, r, y, _("Pin SHA256:"), sha, false);
	char *url = pw_fmt_url_short(i->url, w, mark);
	y += field_row(win, r, y, _("Source:"), url, false);
	free(url);
	y += field_row(win, r, y, _("Platform:"), i->platform, false);
	char *pins = pins_text(i);
	y += field_row(win, r, y, _("Pins:"), pins, true);
	free(pins);
	return y;
}

static int draw_previous(const status_data *s, WINDOW *win, pw_rect r, int y)
{
	if (!s->info.has_previous)
		return y;
	char *prev = xasprintf(_("%s (b rolls back to it)"), s->info.previous_version);
	y += field(win, r, y, _("Previous:"), prev);
	free(prev);
	return y;
}

static void draw(void *self, WINDOW *win, pw_rect whole)
{
	runtime_pane *p = self;
	pw_rect r = whole;
	bool compact = whole.h < COMPACT_BELOW;
	/* On a short terminal the last action's result keeps its two rows. */
	if (compact && p->action_result)
		r.h -= 2;
	const pw_ops_ctx *ctx = pw_app_ctx(p->app);
	int y = r.y;
	/* A short terminal keeps the runtime's own lines; the places are also
	 * in `pyward paths`. */
	if (!compact) {
		y += field(win, r, y, _("Box root:"), ctx->box_root);
		y += field(win, r, y, _("Workspace:"), ctx->workspace);
	}
	y += field(win, r, y, _("Mode:"), pw_mode_name(ctx->mode));
	if (!compact)
		y++;
	const status_data *s = p->st;
	if (!s) {
		pw_draw_text(win, y, r.x, r.w, _("Reading the runtime's state..."));
		return;
	}
	if (s->error) {
		pw_draw_set(win, PW_C_ERROR);
		y += field(win, r, y, _("Runtime:"), s->error);
		pw_draw_set(win, PW_C_NORMAL);
		if (s->error_hint)
			y += field(win, r, y, _("Hint:"), s->error_hint);
		return;
	}
	y += draw_state_line(s, win, r, y);
	if (s->info.why) {
		pw_draw_set(win, PW_C_ERROR);
		y += field(win, r, y, _("Why:"), s->info.why);
	}
	if (s->baseline_missing) {
		char *b = xasprintf(_("missing %s: 'pyward runtime baseline' finishes it"), s->baseline_missing);
		pw_draw_set(win, PW_C_WARN);
		y += field(win, r, y, _("Baseline:"), b);
		pw_draw_set(win, PW_C_NORMAL);
		free(b);
	}
	bool installed = s->info.state != PW_RUNTIME_NOT_PROVISIONED;
	if (compact) {
		/* What a short terminal must not lose comes first. */
		if (installed) {
			y = draw_version(s, win, r, y);
			if (y < r.y + r.h)
				draw_verify(s, win, r, y++);
		}
		y = draw_previous(s, win, r, y);
		if (installed)
			y = draw_details_compact(s, win, r, y);
	} else {
		if (installed)
			y = draw_details(s, win, r, draw_version(s, win, r, y));
		y = draw_previous(s, win, r, y);
		if (installed)
			draw_verify(s, win, r, y++);
	}
	if (p->action_result && (compact || y < whole.y + whole.h - 1)) {
		pw_draw_set(win, p->action_color);
		pw_draw_wrapped(win, whole.y + whole.h - 2, whole.x, whole.w, 2, 0, p->action_result);
		pw_draw_set(win, PW_C_NORMAL);
	}
}

static bool key(void *self, int ch)
{
	runtime_pane *p = self;
	switch (ch) {
	case 'r': reload(p); return true;
	case 'i': pw_download_begin(p->app); return true;
	case 'v':
		if (not_provisioned(p))
			set_action_result(p, PW_C_WARN, xstrdup(_("Nothing to verify: the runtime is not provisioned (i installs it).")));
		else
			start_action(p, ACT_VERIFY, _("verifying the runtime"));
		return true;
	case 'b': ask_rollback(p); return true;
	case 'x':
	case KEY_DC: ask_remove(p); return true;
	}
	return false;
}

static void on_enter(void *self)
{
	runtime_pane *p = self;
	if (!p->status_job) /* a read under way is fresh enough */
		reload(p);
}

static const pw_help_key help_keys[] = {
	{ N_("i"), N_("install the managed runtime (Download pane; asks first)") },
	{ N_("v"), N_("verify the install against its recorded manifest") },
	{ N_("b"), N_("roll back to the previous install (asks; No is the default)") },
	{ N_("x or Delete"), N_("remove the runtime (asks; No is the default)") },
	{ N_("r"), N_("read the state again") },
	{ NULL, NULL },
};

const pw_pane_ops pw_pane_runtime = {
	.title = N_("Runtime"),
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.key = key,
	.on_event = on_event,
	.on_enter = on_enter,
	.help_keys = help_keys,
	.hint = N_("i install  v verify  b rollback  x remove  r refresh"),
};
