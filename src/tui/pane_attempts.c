/*
 * Attempts pane: the pip attempt log of one operation. While an install or
 * uninstall from the Environments pane runs, it follows that job: each
 * finished attempt (index, proxy, exit code, class, duration) as the
 * catalog records it, the attempt under way, and pip's output line by line
 * as it arrives. A finished operation (the latest, or the one picked with
 * Enter on an environment) is read back from the catalog, with each
 * attempt's output tail. The stop reason is shown when an operation ended
 * without success (a budget ran out, a cancel, a failure).
 */
#include "config.h"

#include "tui/pane_attempts.h"

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/keys.h"
#include "tui/pane.h"
#include "tui/pane_envs_jobs.h"

#include "ops/ctx.h"
#include "ops/op_history.h"

#include "catalog.h"
#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LINES 2000
#define HSCROLL_STEP 20 /* columns per Left/Right */
#define TABLE_ROWS 5

typedef struct attempts_pane {
	pw_app *app;
	int64_t op;              /* the operation shown; 0: none yet */
	int job;                 /* the job running it; 0 once it ended */
	bool cancelling;
	char *kind, *target;
	char *outcome;           /* NULL while running */
	char *stop;              /* the stop reason, when it did not succeed */
	int64_t duration_ms;
	pw_attempt_list attempts;
	char *now;               /* the running job's latest word (attempt N: ...) */
	char *note;              /* why nothing is shown */
	char **lines;            /* output, oldest first */
	size_t count;
	int scroll;              /* rows above the newest; 0 follows the output */
	int hscroll;             /* columns scrolled off the left of long output lines */
	int out_rows;
	char *filter;
	bool looked;             /* the latest operation was looked up once */
} attempts_pane;

/* ---------------------------------------------------------------- output lines */

static void add_line(attempts_pane *p, const char *text, size_t len)
{
	if (!p->lines)
		p->lines = xcalloc(MAX_LINES, sizeof *p->lines);
	if (p->count == MAX_LINES) {
		free(p->lines[0]);
		memmove(p->lines, p->lines + 1, (MAX_LINES - 1) * sizeof *p->lines);
		p->count--;
	}
	p->lines[p->count++] = xstrndup(text, len);
	if (p->scroll > 0)
		p->scroll++; /* the view stays where the user put it */
}

static void add_text(attempts_pane *p, const char *text)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		add_line(p, text, n);
		text += n + (text[n] == '\n');
	}
}

static void clear_lines(attempts_pane *p)
{
	for (size_t i = 0; i < p->count; i++)
		free(p->lines[i]);
	p->count = 0;
	p->scroll = 0;
}

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

/* ---------------------------------------------------------------- the catalog */

static void reset(attempts_pane *p, int64_t op)
{
	p->op = op;
	p->job = 0;
	p->cancelling = false;
	set_str(&p->kind, NULL);
	set_str(&p->target, NULL);
	set_str(&p->outcome, NULL);
	set_str(&p->stop, NULL);
	set_str(&p->now, NULL);
	set_str(&p->note, NULL);
	pw_attempt_list_clear(&p->attempts);
	clear_lines(p);
}

static void note_error(attempts_pane *p, const pw_err *e)
{
	free(p->note);
	p->note = xasprintf("%s%s%s", pw_err_message(e), pw_err_hint(e) ? " - " : "", pw_err_hint(e) ? pw_err_hint(e) : "");
}

/* Read the operation and its attempts again (main thread; a read-only
 * connection: the jobs write through their own). */
static void load(attempts_pane *p)
{
	pw_catalog *cat = NULL;
	pw_op_rec rec = { 0 };
	pw_attempt_list att = { 0 };
	pw_err *e = pw_ops_catalog_ro(pw_app_ctx(p->app), &cat);
	if (!e)
		e = pw_catalog_op_get(cat, p->op, &rec, &att);
	pw_catalog_close(&cat);
	if (e) {
		note_error(p, e);
		pw_err_free(e);
		return;
	}
	pw_attempt_list_clear(&p->attempts);
	p->attempts = att;
	set_str(&p->kind, rec.kind);
	set_str(&p->target, rec.target);
	bool over = rec.finished_at != NULL;
	set_str(&p->outcome, over || !p->job ? rec.outcome : NULL);
	if (over && rec.stop_reason && !p->stop)
		set_str(&p->stop, rec.stop_reason);
	p->duration_ms = rec.duration_ms;
	pw_op_rec_clear(&rec);
}

/* A finished operation: its attempts' output tails stand in for the live output. */
static void show_finished(attempts_pane *p, int64_t op)
{
	reset(p, op);
	load(p);
	for (size_t i = 0; i < p->attempts.count; i++) {
		const pw_attempt_rec *a = &p->attempts.items[i];
		char *head = xasprintf(_("-- attempt %d, the end of its output: %s --"), a->seq, a->argv);
		add_text(p, head);
		free(head);
		add_text(p, a->output_tail);
	}
	p->scroll = 0;
}

static bool is_pip_kind(const char *kind)
{
	return strcmp(kind, "venv.install") == 0 || strcmp(kind, "venv.uninstall") == 0;
}

/* The newest pip operation (on target when given), or 0. */
static int64_t latest_op(attempts_pane *p, const char *target)
{
	pw_op_list l = { 0 };
	pw_op_filter f = { .kind = "venv.", .target = target, .limit = 200 };
	pw_err *e = pw_op_history_list(pw_app_ctx(p->app), &f, &l);
	int64_t id = 0;
	for (size_t i = 0; !e && !id && i < l.count; i++)
		if (is_pip_kind(l.items[i].kind) && (!target || (l.items[i].target && strcmp(l.items[i].target, target) == 0)))
			id = l.items[i].id;
	if (e)
		note_error(p, e);
	pw_err_free(e);
	pw_op_list_clear(&l);
	return id;
}

void pw_attempts_show_target(pw_app *app, const char *target)
{
	attempts_pane *p = pw_app_pane_state(app, &pw_pane_attempts);
	p->looked = true;
	if (p->job && (!target || (p->target && strcmp(p->target, target) == 0))) {
		pw_app_show(app, &pw_pane_attempts); /* it is the one running: keep following it */
		return;
	}
	int64_t id = latest_op(p, target);
	if (id) {
		show_finished(p, id);
	} else if (target) {
		pw_app_status(app, PW_C_WARN, _("no install or uninstall has run on %s yet"), target);
		return;
	}
	pw_app_show(app, &pw_pane_attempts);
}

/* ---------------------------------------------------------------- following a job */

static void on_event(void *self, const pw_job_event *ev)
{
	attempts_pane *p = self;
	if (ev->owner != pw_app_pane_state(p->app, &pw_pane_envs))
		return;
	if (ev->kind == PW_JOB_MESSAGE && ev->code == PW_ENVS_MSG_OP) {
		const pw_envs_op_msg *m = ev->data;
		reset(p, m->id);
		p->job = ev->job_id;
		set_str(&p->kind, m->kind);
		set_str(&p->target, m->target);
		p->looked = true;
		return;
	}
	if (!p->job || ev->job_id != p->job)
		return;
	switch (ev->kind) {
	case PW_JOB_MESSAGE:
		if (ev->code == PW_ENVS_MSG_LINE)
			add_text(p, ev->data);
		break;
	case PW_JOB_LOG: {
		set_str(&p->now, ev->text);
		char *mark = xasprintf("-- %s --", ev->text);
		add_text(p, mark);
		free(mark);
		load(p); /* the attempt before this one is in the catalog now */
		break;
	}
	case PW_JOB_DONE:
		p->job = 0;
		set_str(&p->now, NULL);
		/* The stop reason is shown above the output, not again in it:
		 * its tail would repeat pip's output, which is already here. */
		if (ev->err)
			set_str(&p->stop, pw_err_message(ev->err));
		load(p);
		break;
	case PW_JOB_PROGRESS: break;
	}
}

/* ---------------------------------------------------------------- drawing */

static void draw_header(const attempts_pane *p, WINDOW *win, pw_rect r)
{
	pw_draw_set(win, PW_C_TITLE);
	int used = pw_draw_textf(win, r.y, r.x, r.w, _("Operation %lld: %s %s"), (long long)p->op,
				 p->kind ? p->kind : "?", p->target ? p->target : "");
	bool ok = p->outcome && strcmp(p->outcome, PW_OUTCOME_OK) == 0;
	pw_draw_set(win, !p->outcome ? PW_C_WARN : ok ? PW_C_OK : PW_C_ERROR);
	if (!p->outcome)
		pw_draw_text(win, r.y, r.x + used, r.w - used, p->cancelling ? _("  cancelling...") : _("  running"));
	else if (p->duration_ms >= 0)
		pw_draw_textf(win, r.y, r.x + used, r.w - used, _("  %s in %.1f s"), p->outcome,
			      (double)p->duration_ms / 1000.0);
	else
		pw_draw_textf(win, r.y, r.x + used, r.w - used, "  %s", p->outcome);
	pw_draw_set(win, PW_C_NORMAL);
}

static int draw_table(const attempts_pane *p, WINDOW *win, pw_rect r, int y)
{
	pw_draw_set(win, PW_C_LABEL);
	pw_draw_textf(win, y++, r.x, r.w, "%-3s%-31s%-17s%5s %-11s %7s", "#", _("INDEX"), _("PROXY"), _("EXIT"),
		      _("CLASS"), _("TIME"));
	pw_draw_set(win, PW_C_NORMAL);
	size_t first = p->attempts.count > TABLE_ROWS ? p->attempts.count - TABLE_ROWS : 0;
	for (size_t i = first; i < p->attempts.count; i++) {
		const pw_attempt_rec *a = &p->attempts.items[i];
		bool ok = a->klass && strcmp(a->klass, "ok") == 0;
		pw_draw_set(win, ok ? PW_C_OK : PW_C_WARN);
		pw_draw_textf(win, y++, r.x, r.w, "%-3d%-30.30s %-16.16s %5d %-11.11s %5.1f s", a->seq,
			      a->index_url ? a->index_url : _("default index"), a->proxy ? a->proxy : "-", a->exit_code,
			      a->klass ? a->klass : "?", (double)a->duration_ms / 1000.0);
	}
	pw_draw_set(win, PW_C_NORMAL);
	if (p->now) {
		pw_draw_set(win, PW_C_WARN);
		pw_draw_textf(win, y++, r.x, r.w, _("now: %s"), p->now);
		pw_draw_set(win, PW_C_NORMAL);
	}
	if (p->stop) {
		pw_draw_set(win, PW_C_ERROR);
		size_t n = strcspn(p->stop, "\n");
		pw_draw_textf(win, y++, r.x, r.w, _("stop reason: %.*s"), (int)n, p->stop);
		pw_draw_set(win, PW_C_NORMAL);
	}
	return y;
}

static bool line_shown(const attempts_pane *p, size_t i)
{
	return !p->filter || strstr(p->lines[i], p->filter);
}

/* A line drawn from column skip on; a mark at the left says part is hidden. */
static void draw_from_column(WINDOW *win, int y, int x, int w, const char *line, int skip)
{
	if (skip <= 0) {
		pw_draw_text(win, y, x, w, line);
		return;
	}
	const char *s = line;
	while (*s && pw_draw_width(line) - pw_draw_width(s) < skip)
		s++;
	while ((*s & 0xc0) == 0x80) /* not inside a character */
		s++;
	if (!*s)
		return;
	pw_draw_set(win, PW_C_DIM);
	int used = pw_draw_text(win, y, x, 1, "<");
	pw_draw_set(win, PW_C_NORMAL);
	pw_draw_text(win, y, x + used, w - used, s);
}

static void draw_output(attempts_pane *p, WINDOW *win, pw_rect r, int y)
{
	pw_draw_set(win, PW_C_FRAME);
	pw_draw_hline(win, y, r.x, r.w);
	pw_draw_set(win, PW_C_LABEL);
	pw_draw_textf(win, y, r.x + 2, r.w - 4, p->filter ? _(" output (filter: %s) ") : _(" output%s "),
		      p->filter ? p->filter : "");
	pw_draw_set(win, PW_C_NORMAL);
	int rows = r.y + r.h - y - 1;
	p->out_rows = rows;
	size_t shown = 0;
	for (size_t i = 0; i < p->count; i++)
		shown += line_shown(p, i);
	int max_scroll = (int)shown > rows ? (int)shown - rows : 0;
	if (p->scroll > max_scroll)
		p->scroll = max_scroll;
	/* The window of shown lines that ends scroll rows above the newest. */
	size_t end = shown - (size_t)p->scroll, begin = end > (size_t)rows ? end - (size_t)rows : 0, k = 0;
	int row = y + 1;
	for (size_t i = 0; i < p->count; i++) {
		if (!line_shown(p, i))
			continue;
		if (k >= begin && k < end)
			draw_from_column(win, row++, r.x, r.w, p->lines[i], p->hscroll);
		k++;
	}
}

static void draw(void *self, WINDOW *win, pw_rect r)
{
	attempts_pane *p = self;
	if (!p->op) {
		pw_draw_wrapped(win, r.y, r.x, r.w, 4, 0,
				p->note ? p->note
					: _("No install or uninstall yet. In the Environments pane (3), i installs into the "
					    "selected environment; its attempts and pip's output appear here as they happen."));
		return;
	}
	draw_header(p, win, r);
	int y = draw_table(p, win, r, r.y + 1);
	draw_output(p, win, r, y);
}

/* ---------------------------------------------------------------- keys */

static bool key(void *self, int ch)
{
	attempts_pane *p = self;
	int page = p->out_rows > 1 ? p->out_rows - 1 : 1;
	switch (ch) {
	case KEY_UP: p->scroll++; return true;
	case KEY_DOWN: if (p->scroll > 0) p->scroll--; return true;
	case KEY_PPAGE: p->scroll += page; return true;
	case KEY_NPAGE: p->scroll = p->scroll > page ? p->scroll - page : 0; return true;
	case KEY_HOME: p->scroll = MAX_LINES; return true;
	case KEY_END: p->scroll = 0; return true;
	case KEY_RIGHT: p->hscroll += HSCROLL_STEP; return true;
	case KEY_LEFT: p->hscroll = p->hscroll > HSCROLL_STEP ? p->hscroll - HSCROLL_STEP : 0; return true;
	case 'r':
		if (p->job) {
			load(p);
		} else {
			int64_t id = latest_op(p, NULL);
			if (id)
				show_finished(p, id);
		}
		return true;
	case PW_KEY_ESC:
		if (p->job && !p->cancelling) {
			p->cancelling = pw_app_cancel_job(p->app, p->job);
			return true;
		}
		return false;
	}
	return false;
}

static void set_filter(void *self, const char *text)
{
	attempts_pane *p = self;
	set_str(&p->filter, *text ? text : NULL);
	p->scroll = 0;
}

/* Nothing followed or picked yet: the latest pip operation in the catalog. */
static void on_enter(void *self)
{
	attempts_pane *p = self;
	if (p->looked)
		return;
	p->looked = true;
	int64_t id = latest_op(p, NULL);
	if (id)
		show_finished(p, id);
}

static void *create(pw_app *app)
{
	attempts_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	return p;
}

static void destroy(void *self)
{
	attempts_pane *p = self;
	reset(p, 0);
	free(p->lines);
	free(p->filter);
	free(p);
}

static const pw_help_key help_keys[] = {
	{ N_("Up/Down, PgUp/PgDn"), N_("scroll pip's output") },
	{ N_("Home/End"), N_("oldest output / follow the newest") },
	{ N_("Left/Right"), N_("scroll long output lines sideways") },
	{ N_("r"), N_("read the attempts again (or the latest operation)") },
	{ N_("Esc"), N_("cancel the running install or uninstall") },
	{ NULL, NULL },
};

const pw_pane_ops pw_pane_attempts = {
	.title = N_("Attempts"),
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.key = key,
	.on_event = on_event,
	.filter = set_filter,
	.on_enter = on_enter,
	.help_keys = help_keys,
	.hint = N_("Up/Down scroll  Left/Right sideways  End follow  r reload  Esc cancel"),
};
