/*
 * History pane: the catalog browser. Operations newest first, read a page at
 * a time (keyset paging on started_at, id) through a read-only catalog
 * connection, so a catalog of 100,000 operations opens as fast as one of
 * ten and nothing is ever written (it works in --mode read-only). '/'
 * filters (kind, target, user or outcome); Enter shows one operation with
 * its attempts (URL, pinned hash, exit, class, output tail).
 *
 * Pages are read by a quiet background job with its own connection, so a
 * filter that has to read every row never holds up the keys: the rows are
 * swapped in (or appended) when the job's DONE event arrives. One load runs
 * at a time; a newer request cancels the older one, and a generation
 * number makes any late result of a superseded load harmless.
 */
#include "config.h"

#include "tui/pane.h"

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/fmt.h"
#include "tui/keys.h"
#include "tui/worker.h"

#include "ops/ctx.h"
#include "ops/op_history.h"

#include "catalog.h"
#include "i18n.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE 200
/* List columns: the operation's id (what 'pyward history show ID' and
 * 'undo ID' take), started (UTC; the year instead of the time when it is
 * not this year's), user, kind, outcome, target. The id, kind and outcome
 * columns are as wide as what the list holds (and their headings), so the
 * target, whose end tells environments apart, gets the rest. A pane
 * narrower than WIDE_W columns (a terminal under 80) gives the user
 * column's room to the target too. */
typedef struct columns {
	int id_w, kind_w, outcome_w;
	int started, user, kind, outcome, target; /* where each starts; user -1: not shown */
} columns;
#define WIDE_W 76

static int digits(int64_t v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static int at_least(int w, const char *text)
{
	int tw = pw_draw_width(text);
	return tw > w ? tw : w;
}

static columns columns_for(int width, const pw_op_rec *rows, size_t count)
{
	columns c = { .id_w = at_least(0, _("ID")), .kind_w = at_least(0, _("KIND")),
		      .outcome_w = at_least(0, _("OUTCOME")) };
	for (size_t i = 0; i < count; i++) {
		int d = digits(rows[i].id > 0 ? rows[i].id : 0);
		if (d > c.id_w)
			c.id_w = d;
		c.kind_w = at_least(c.kind_w, rows[i].kind);
		c.outcome_w = at_least(c.outcome_w, rows[i].outcome);
	}
	if (c.kind_w > 16)
		c.kind_w = 16;
	c.started = c.id_w + 1;
	c.user = width >= WIDE_W ? c.started + 12 : -1;
	c.kind = c.user >= 0 ? c.user + 9 : c.started + 12;
	c.outcome = c.kind + c.kind_w + 1;
	c.target = c.outcome + c.outcome_w + 1;
	return c;
}

typedef struct history_pane {
	pw_app *app;
	pw_op_rec *rows;
	size_t count, cap;
	bool more;          /* the last page was full: there may be older ones */
	size_t selected, top;
	char *filter;
	char *error;
	bool stale, visible;
	int list_rows;      /* rows the list had at the last draw */
	/* the page load in the background */
	unsigned gen;       /* bumped by every request: older results are stale */
	int job;            /* the running load's job id, 0 = none */
	bool appending;     /* that load reads the next page (not the first) */
	int64_t keep;       /* a reload: stay on this operation if it is still there */
	long want;          /* row the cursor was sent to beyond the loaded ones, -1 = none */
	int check_job;      /* the catalog check running, 0 = none */
	/* details of one operation, or the catalog check's report */
	char **detail;
	size_t detail_count;
	size_t detail_top;
} history_pane;

/* ---------------------------------------------------------------- loading */

static void clear_rows(history_pane *p)
{
	for (size_t i = 0; i < p->count; i++)
		pw_op_rec_clear(&p->rows[i]);
	p->count = 0;
	p->more = false;
}

static void set_error(history_pane *p, const pw_err *e)
{
	free(p->error);
	p->error = e ? xasprintf("%s%s%s", pw_err_message(e), pw_err_hint(e) ? " - " : "",
				 pw_err_hint(e) ? pw_err_hint(e) : "")
		     : NULL;
}

/* One page request, owned by its job; the result travels back in it. */
typedef struct page_load {
	const struct pw_ops_ctx *ctx;
	unsigned gen;
	bool append;        /* after the rows loaded so far, or instead of them */
	char *text;         /* the filter, copied: the pane may change it meanwhile */
	char *before_started;
	int64_t before_id;
	pw_op_list ops;     /* the rows read; taken by the pane on DONE */
} page_load;

static void page_load_free(void *ud)
{
	page_load *l = ud;
	pw_op_list_clear(&l->ops);
	free(l->text);
	free(l->before_started);
	free(l);
}

/* Worker thread: a read-only connection of its own (pw_op_history_list only
 * reads the box root, fixed at start, and opens a new SQLite handle). */
static pw_err *page_work(pw_job *job, void *ud)
{
	page_load *l = ud;
	const pw_cancel *cancel = pw_job_cancel_token(job);
	pw_op_filter f = { .limit = PAGE, .text = l->text, .before_started = l->before_started,
			   .before_id = l->before_id, .cancel = cancel };
	if (pw_cancel_raised(cancel))
		return NULL; /* superseded before it began: its result is ignored anyway */
	return pw_op_history_list(l->ctx, &f, &l->ops);
}

/* Start reading a page: the first one again (append false: a refresh, a
 * new filter) or the one after the loaded rows. A newer request replaces a
 * load still running; a second request for the next page while one is
 * under way is not made. */
static void start_load(history_pane *p, bool append)
{
	if (append && (p->job || !p->more || p->count == 0))
		return;
	if (p->job) {
		pw_app_cancel_job(p->app, p->job);
		p->job = 0;
	}
	page_load *l = xcalloc(1, sizeof *l);
	l->ctx = pw_app_ctx(p->app);
	l->gen = ++p->gen;
	l->append = append;
	l->text = p->filter ? xstrdup(p->filter) : NULL;
	if (append) {
		l->before_started = xstrdup(p->rows[p->count - 1].started_at);
		l->before_id = p->rows[p->count - 1].id;
	} else {
		p->keep = p->selected < p->count ? p->rows[p->selected].id : 0;
		p->want = -1;
		p->stale = false;
	}
	p->appending = append;
	p->job = pw_app_start_read(p->app, _("reading the history"), p, page_work, l, page_load_free);
	pw_app_dirty(p->app);
}

static void reload(history_pane *p)
{
	start_load(p, false);
}

static void move_to(history_pane *p, long target);

/* Main thread, the load's DONE: swap in or append its rows. */
static void load_done(history_pane *p, const pw_job_event *ev)
{
	page_load *l = ev->ud;
	if (ev->job_id == p->job)
		p->job = 0;
	if (!l || l->gen != p->gen)
		return; /* superseded: a newer load has been started */
	set_error(p, ev->err);
	if (!l->append) {
		clear_rows(p);
		p->selected = 0;
		p->want = -1; /* moves made in the rows this replaces */
	}
	pw_op_list *ops = &l->ops;
	if (ops->count && p->count + ops->count > p->cap) {
		p->cap = (p->count + ops->count) * 2;
		p->rows = xrealloc(p->rows, p->cap * sizeof *p->rows);
	}
	if (ops->count)
		memcpy(p->rows + p->count, ops->items, ops->count * sizeof *ops->items);
	p->count += ops->count;
	p->more = !ev->err && ops->count == PAGE;
	free(ops->items); /* the records moved into rows */
	ops->items = NULL;
	ops->count = 0;
	if (!l->append) {
		/* Stay on the same operation when it is still in the first page. */
		for (size_t i = 0; p->keep && i < p->count; i++)
			if (p->rows[i].id == p->keep)
				p->selected = i;
		if (p->top > p->selected)
			p->top = p->selected;
		return;
	}
	/* The cursor went past the rows loaded before: take it where it was sent. */
	if (p->want >= 0) {
		long target = p->want;
		p->want = -1;
		move_to(p, target);
	}
}

/* ---------------------------------------------------------------- details */

static void clear_detail(history_pane *p)
{
	for (size_t i = 0; i < p->detail_count; i++)
		free(p->detail[i]);
	free(p->detail);
	p->detail = NULL;
	p->detail_count = p->detail_top = 0;
}

static void add_detail(history_pane *p, char *line)
{
	p->detail = xrealloc(p->detail, (p->detail_count + 1) * sizeof *p->detail);
	p->detail[p->detail_count++] = line;
}

static void add_text_lines(history_pane *p, const char *indent, const char *text)
{
	for (const char *s = text; s && *s;) {
		const char *nl = strchr(s, '\n');
		int len = nl ? (int)(nl - s) : (int)strlen(s);
		add_detail(p, xasprintf("%s%.*s", indent, len, s));
		s += len + (nl ? 1 : 0);
	}
}

static void add_attempt(history_pane *p, const pw_attempt_rec *a)
{
	char when[32];
	pw_fmt_time(a->started_at, when, sizeof when);
	add_detail(p, xasprintf(_("Attempt %d  %s  %lld ms  exit %d  class %s"), a->seq, when,
				(long long)a->duration_ms, a->exit_code, a->klass ? a->klass : "-"));
	add_detail(p, xasprintf(_("  URL:     %s"), a->index_url ? a->index_url : _("(default)")));
	add_detail(p, xasprintf(_("  proxy:   %s"), a->proxy ? a->proxy : _("(none)")));
	add_detail(p, xasprintf(_("  command: %s"), a->argv ? a->argv : "-"));
	if (a->output_tail && *a->output_tail) {
		add_detail(p, xstrdup(_("  output (tail):")));
		add_text_lines(p, "    ", a->output_tail);
	}
}

/* apt's history lines, as `history show` prints them. */
static void add_changes(history_pane *p, const char *env, const pw_pkg_changes *ch)
{
	if (!ch->count)
		return;
	add_detail(p, xasprintf(_("  packages in %s:"), env ? env : "?"));
	char **lines = NULL;
	size_t n = pw_pkg_changes_apt_lines(ch, &lines);
	for (size_t i = 0; i < n; i++)
		add_detail(p, xasprintf("    %s", lines[i]));
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static void open_detail(history_pane *p)
{
	if (p->selected >= p->count)
		return;
	/* The same read as `history show` (ops/op_history.c). */
	pw_op_history_show_result r = { 0 };
	pw_err *e = pw_op_history_show(pw_app_ctx(p->app), p->rows[p->selected].id, &r);
	const pw_op_rec *op = &r.op;
	const pw_attempt_list *att = &r.attempts;
	clear_detail(p);
	if (e) {
		add_detail(p, xasprintf(_("Cannot read the operation: %s"), pw_err_message(e)));
	} else {
		char start[32], end[32];
		pw_fmt_time(op->started_at, start, sizeof start);
		pw_fmt_time(op->finished_at, end, sizeof end);
		add_detail(p, xasprintf(_("Operation %lld"), (long long)op->id));
		add_detail(p, xasprintf(_("  kind:      %s"), op->kind));
		add_detail(p, xasprintf(_("  target:    %s"), op->target ? op->target : "-"));
		add_detail(p, xasprintf(_("  outcome:   %s"), op->outcome));
		if (op->stop_reason)
			add_detail(p, xasprintf(_("  reason:    %s"), op->stop_reason));
		add_detail(p, xasprintf(_("  started:   %s UTC"), start));
		add_detail(p, xasprintf(_("  finished:  %s%s"), op->finished_at ? end : "-", op->finished_at ? " UTC" : ""));
		add_detail(p, xasprintf(_("  user:      %s (uid %lld) on %s, pid %lld"), op->user, (long long)op->uid,
					op->host, (long long)op->pid));
		add_detail(p, xasprintf(_("  command:   %s"), op->args ? op->args : "-"));
		if (op->undo_of)
			add_detail(p, xasprintf(_("  undo of:   operation %lld"), (long long)op->undo_of));
		if (op->note)
			add_detail(p, xasprintf(_("  result:    %s"), op->note));
		add_changes(p, r.env, &r.changes);
		add_detail(p, xasprintf(_("  attempts:  %zu"), att->count));
		for (size_t i = 0; i < att->count; i++)
			add_attempt(p, &att->items[i]);
	}
	pw_err_free(e);
	pw_op_history_show_clear(&r);
}

/* ---------------------------------------------------------------- check */

/* The catalog check (`history check`), owned by its job. */
typedef struct check_run {
	const struct pw_ops_ctx *ctx;
	pw_op_history_check_result result;
} check_run;

static void check_run_free(void *ud)
{
	check_run *c = ud;
	pw_op_history_check_clear(&c->result);
	free(c);
}

/* Worker thread: the same operation as `history check`; it opens its own
 * read-only connection and only reads. */
static pw_err *check_work(pw_job *job, void *ud)
{
	check_run *c = ud;
	pw_op_io io = { .events = pw_job_events(job), .cancel = pw_job_cancel_token(job) };
	return pw_op_history_check(c->ctx, &io, &c->result);
}

static void start_check(history_pane *p)
{
	if (p->check_job) {
		pw_app_status(p->app, PW_C_WARN, "%s", _("the catalog check is still running"));
		return;
	}
	check_run *c = xcalloc(1, sizeof *c);
	c->ctx = pw_app_ctx(p->app);
	p->check_job = pw_app_start_job(p->app, _("checking the catalog"), p, check_work, c, check_run_free);
	pw_app_status(p->app, PW_C_NORMAL, "%s", _("checking the catalog (every page, every index)…"));
}

/* Main thread, the check's DONE: its report replaces the list until Esc. */
static void check_done(history_pane *p, const pw_job_event *ev)
{
	const check_run *c = ev->ud;
	const pw_op_history_check_result *r = &c->result;
	p->check_job = 0;
	clear_detail(p);
	if (ev->err) {
		add_detail(p, xasprintf(_("Cannot check the catalog: %s"), pw_err_message(ev->err)));
		if (pw_err_hint(ev->err))
			add_detail(p, xasprintf("  %s", pw_err_hint(ev->err)));
		pw_app_status(p->app, PW_C_ERROR, _("Cannot check the catalog: %s"), pw_err_message(ev->err));
		return;
	}
	add_detail(p, xasprintf(_("Catalog check of %s"), r->catalog));
	pw_err *damage = pw_op_history_check_damage(r);
	if (!damage) {
		add_detail(p, xasprintf(_("  no damage found: %lld pages read, every index compared with its table"),
					(long long)r->check.pages));
		pw_app_status(p->app, PW_C_OK, _("catalog check: no damage found (%lld pages read)"),
			      (long long)r->check.pages);
		return;
	}
	add_detail(p, xasprintf("  %s", pw_err_message(damage)));
	add_detail(p, xasprintf("  %s", pw_err_hint(damage)));
	add_detail(p, xstrdup(_("  problems, as SQLite words them:")));
	for (size_t i = 0; i < r->check.count; i++)
		add_text_lines(p, "    ", r->check.problems[i]);
	pw_app_status(p->app, PW_C_ERROR, "%s", pw_err_message(damage));
	pw_err_free(damage);
}

/* ---------------------------------------------------------------- drawing */

static void draw_detail(history_pane *p, WINDOW *win, pw_rect r)
{
	int rows = r.h - 1;
	if (p->detail_top >= p->detail_count)
		p->detail_top = p->detail_count ? p->detail_count - 1 : 0;
	/* Long lines (commands, URLs, hashes) wrap rather than being cut. */
	int y = 0;
	for (size_t i = p->detail_top; i < p->detail_count && y < rows; i++)
		y += pw_draw_wrapped(win, r.y + y, r.x, r.w, rows - y, pw_draw_hang(p->detail[i], 4), p->detail[i]);
	pw_draw_set(win, PW_C_DIM);
	pw_draw_text(win, r.y + r.h - 1, r.x, r.w, _("Esc back to the list   Up/Down scroll"));
	pw_draw_set(win, PW_C_NORMAL);
}

/* The current UTC year ("2026"), as the catalog's times are UTC. */
static const char *this_year(void)
{
	static char year[8];
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || strftime(year, sizeof year, "%Y", &tm) == 0)
		year[0] = '\0';
	return year;
}

static void draw_row(WINDOW *win, pw_rect r, const columns *cp, int y, const pw_op_rec *op, bool selected)
{
	static const struct { const char *outcome; pw_color color; } colors[] = {
		{ PW_OUTCOME_OK, PW_C_OK }, { PW_OUTCOME_FAILED, PW_C_ERROR }, { PW_OUTCOME_TIMED_OUT, PW_C_ERROR },
		{ PW_OUTCOME_INTERRUPTED, PW_C_ERROR }, { PW_OUTCOME_REFUSED, PW_C_WARN },
		{ PW_OUTCOME_CANCELLED, PW_C_WARN }, { PW_OUTCOME_RUNNING, PW_C_TITLE },
	};
	char when[32];
	pw_fmt_time(op->started_at, when, sizeof when);
	pw_draw_set(win, selected ? PW_C_SELECTED : PW_C_NORMAL);
	pw_draw_blank(win, y, r.x, r.w);
	/* "12-02 19:38" this year; "2025-12-02" for another year, as ls -l does
	 * (the same column width; the time and seconds are in the details) */
	char shortwhen[16];
	if (strlen(when) >= 16 && strncmp(when, this_year(), 4) == 0)
		snprintf(shortwhen, sizeof shortwhen, "%.11s", when + 5);
	else
		snprintf(shortwhen, sizeof shortwhen, "%.10s", when);
	const columns c = *cp;
	pw_draw_textf(win, y, r.x, c.id_w, "%*lld", c.id_w, (long long)op->id);
	pw_draw_cell(win, y, r.x + c.started, 11, shortwhen);
	if (c.user >= 0)
		pw_draw_cell(win, y, r.x + c.user, 8, op->user);
	pw_draw_cell(win, y, r.x + c.kind, c.kind_w, op->kind);
	if (!selected)
		for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++)
			if (strcmp(op->outcome, colors[i].outcome) == 0)
				pw_draw_set(win, colors[i].color);
	pw_draw_cell(win, y, r.x + c.outcome, c.target - c.outcome - 1, op->outcome);
	pw_draw_set(win, selected ? PW_C_SELECTED : PW_C_NORMAL);
	/* a path's end tells the environments apart; the details show it whole */
	pw_draw_text_tail(win, y, r.x + c.target, r.w - c.target, op->target ? op->target : "-");
	pw_draw_set(win, PW_C_NORMAL);
}

static void draw_footer(const history_pane *p, WINDOW *win, pw_rect r)
{
	char *filter = p->filter && *p->filter ? xasprintf(_(", filter '%s' (/ changes it)"), p->filter) : NULL;
	char *f = xasprintf("%s%s", filter ? filter : "", p->job ? _(", loading…") : "");
	free(filter);
	pw_draw_set(win, PW_C_DIM);
	pw_draw_textf(win, r.y + r.h - 1, r.x, r.w, _("%zu shown%s%s"), p->count, p->more ? _(", more below") : "", f);
	pw_draw_set(win, PW_C_NORMAL);
	free(f);
}

static void draw(void *self, WINDOW *win, pw_rect r)
{
	history_pane *p = self;
	if (p->detail) {
		draw_detail(p, win, r);
		return;
	}
	columns c = columns_for(r.w, p->rows, p->count);
	pw_draw_set(win, PW_C_LABEL);
	pw_draw_textf(win, r.y, r.x, c.id_w, "%*s", c.id_w, _("ID"));
	pw_draw_text(win, r.y, r.x + c.started, 11, _("STARTED"));
	if (c.user >= 0)
		pw_draw_text(win, r.y, r.x + c.user, 8, _("USER"));
	pw_draw_text(win, r.y, r.x + c.kind, c.kind_w, _("KIND"));
	pw_draw_text(win, r.y, r.x + c.outcome, c.target - c.outcome - 1, _("OUTCOME"));
	pw_draw_text(win, r.y, r.x + c.target, r.w - c.target, _("TARGET"));
	pw_draw_set(win, PW_C_NORMAL);
	if (p->error) {
		pw_draw_set(win, PW_C_ERROR);
		pw_draw_wrapped(win, r.y + 2, r.x, r.w, 4, 0, p->error);
		pw_draw_set(win, PW_C_NORMAL);
		return;
	}
	if (p->count == 0) {
		char *none = p->filter ? xasprintf(_("No operation matches '%s' (/ changes the filter)."), p->filter)
				       : xstrdup(_("No operations recorded yet."));
		pw_draw_text(win, r.y + 2, r.x, r.w, p->job ? _("Reading the history…") : none);
		free(none);
		draw_footer(p, win, r);
		return;
	}
	p->list_rows = r.h - 2;
	if (p->selected < p->top)
		p->top = p->selected;
	if (p->selected >= p->top + (size_t)p->list_rows)
		p->top = p->selected - (size_t)p->list_rows + 1;
	for (int i = 0; i < p->list_rows && p->top + (size_t)i < p->count; i++)
		draw_row(win, r, &c, r.y + 1 + i, &p->rows[p->top + (size_t)i], p->top + (size_t)i == p->selected);
	draw_footer(p, win, r);
}

/* ---------------------------------------------------------------- keys, events */

/* Where the cursor is going: beyond the loaded rows while a page loads. */
static long cursor(const history_pane *p)
{
	return p->want >= 0 ? p->want : (long)p->selected;
}

/* End: the last row loaded; while the next page loads, a page further for
 * each press (so End End End goes as far as it would with instant reads). */
static long last_row(const history_pane *p)
{
	long last = (long)p->count - 1;
	if (p->job && p->appending)
		last = (p->want > last ? p->want : last) + PAGE;
	return last;
}

static void move_to(history_pane *p, long target)
{
	if (target < 0)
		target = 0;
	/* Near the end of what is loaded: read the next page ahead. */
	if (p->more && (size_t)target + (size_t)p->list_rows + 1 >= p->count)
		start_load(p, true);
	p->want = p->more && (size_t)target >= p->count ? target : -1;
	if (p->count == 0)
		return;
	if ((size_t)target >= p->count)
		target = (long)p->count - 1;
	p->selected = (size_t)target;
}

static bool detail_key(history_pane *p, int ch)
{
	switch (ch) {
	case PW_KEY_ESC:
	case KEY_LEFT:
	case KEY_BACKSPACE:
	case '\n': clear_detail(p); return true;
	case KEY_UP: if (p->detail_top) p->detail_top--; return true;
	case KEY_DOWN: p->detail_top++; return true;
	case KEY_NPAGE: p->detail_top += 10; return true;
	case KEY_PPAGE: p->detail_top = p->detail_top > 10 ? p->detail_top - 10 : 0; return true;
	}
	return false;
}

static bool key(void *self, int ch)
{
	history_pane *p = self;
	if (p->detail)
		return detail_key(p, ch);
	long page = p->list_rows > 1 ? p->list_rows - 1 : 10;
	switch (ch) {
	/* Up from the row in view (dropping a jump still waiting for its page);
	 * down from where the cursor is going. */
	case KEY_UP: move_to(p, (long)p->selected - 1); return true;
	case KEY_DOWN: move_to(p, cursor(p) + 1); return true;
	case KEY_PPAGE: move_to(p, (long)p->selected - page); return true;
	case KEY_NPAGE: move_to(p, cursor(p) + page); return true;
	case KEY_HOME: move_to(p, 0); return true;
	case KEY_END: move_to(p, last_row(p)); return true;
	case '\n':
	case KEY_RIGHT: open_detail(p); return true;
	case 'r': reload(p); return true;
	case 'c': start_check(p); return true;
	}
	return false;
}

static void set_filter(void *self, const char *text)
{
	history_pane *p = self;
	free(p->filter);
	p->filter = text && *text ? xstrdup(text) : NULL;
	p->selected = p->top = 0;
	reload(p);
}

static void on_event(void *self, const pw_job_event *ev)
{
	history_pane *p = self;
	if (ev->kind != PW_JOB_DONE)
		return;
	if (ev->owner == p && ev->job_id == p->check_job) {
		check_done(p, ev);
		return;
	}
	if (ev->owner == p) {
		load_done(p, ev);
		return;
	}
	/* Work that ended was recorded: show it when the list is in view. */
	if (p->visible && !p->detail)
		reload(p);
	else
		p->stale = true;
}

static void on_enter(void *self)
{
	history_pane *p = self;
	p->visible = true;
	if (p->stale || (p->count == 0 && !p->job))
		reload(p);
}

static void on_leave(void *self)
{
	((history_pane *)self)->visible = false;
}

static void *create(pw_app *app)
{
	history_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	p->stale = true; /* read when first shown */
	p->list_rows = 18;
	p->want = -1;
	return p;
}

static void destroy(void *self)
{
	history_pane *p = self;
	/* A load still running is cancelled and freed by the workers. */
	clear_rows(p);
	free(p->rows);
	clear_detail(p);
	free(p->filter);
	free(p->error);
	free(p);
}

static const pw_help_key help_keys[] = {
	{ N_("Up, Down, PgUp, PgDn"), N_("move through the operations (older ones load as you go)") },
	{ N_("Enter"), N_("details: attempts, URL, pinned hash, output (Esc back)") },
	{ N_("/"), N_("show only operations whose kind, target, user or outcome contains a text") },
	{ N_("r"), N_("read the catalog again") },
	{ N_("c"), N_("check the whole catalog for damage, as 'pyward history check' does (it only reads)") },
	{ NULL, NULL },
};

const pw_pane_ops pw_pane_history = {
	.title = N_("History"),
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.key = key,
	.on_event = on_event,
	.filter = set_filter,
	.on_enter = on_enter,
	.on_leave = on_leave,
	.help_keys = help_keys,
	.hint = N_("Enter details  c check  r refresh"),
};
