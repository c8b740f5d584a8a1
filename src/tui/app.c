/* The main loop: poll terminal, job events and signals; draw when dirty, throttled. */
#include "config.h"

#include "tui/app.h"

#include "tui/dialog.h"
#include "tui/help.h"
#include "tui/keys.h"

#include "ops/ctx.h"

#include "clock.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MIN_COLS 60
#define MIN_LINES 15
/* Job events redraw at most this often; keys and a job's end at once. */
#define FRAME_MS 100

struct pw_app {
	const pw_ops_ctx *ctx;
	bool mouse;
	int signal_fd;
	pw_workers *jobs;
	void **state;          /* one per pane, same order as pw_panes */
	char **filters;        /* each pane's last '/' text, offered again */
	int current;
	pw_dialog *dialog;
	bool help_open;
	int help_scroll;
	int help_page;         /* lines the overlay showed last: PgDn's step */
	char *status;
	pw_color status_color;
	bool dirty, urgent, quit, quit_asked;
	int64_t last_draw_ms;
};

/* ---------------------------------------------------------------- services */

const pw_ops_ctx *pw_app_ctx(pw_app *app)
{
	return app->ctx;
}

const char *pw_app_box_root(const pw_app *app)
{
	return app->ctx->box_root;
}

bool pw_app_read_only(const pw_app *app)
{
	return app->ctx->mode == PW_MODE_READ_ONLY;
}

void pw_app_dirty(pw_app *app)
{
	app->dirty = true;
}

void pw_app_status(pw_app *app, pw_color c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(app->status);
	app->status = xvasprintf(fmt, ap);
	va_end(ap);
	app->status_color = c;
	app->dirty = true;
}

int pw_app_start_job(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *))
{
	app->dirty = true;
	return pw_workers_start(app->jobs, name, owner, fn, ud, ud_free);
}

int pw_app_start_op(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *))
{
	int id = pw_app_start_job(app, name, owner, fn, ud, ud_free);
	pw_workers_set_operation(app->jobs, id);
	return id;
}

int pw_app_start_read(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *))
{
	int id = pw_workers_start(app->jobs, name, owner, fn, ud, ud_free);
	pw_workers_set_quiet(app->jobs, id);
	return id;
}

bool pw_app_cancel_job(pw_app *app, int job_id)
{
	return pw_workers_cancel(app->jobs, job_id);
}

size_t pw_app_jobs_running(const pw_app *app)
{
	return pw_workers_running(app->jobs);
}

static int pane_index(const pw_pane_ops *pane)
{
	for (int i = 0; i < pw_pane_count; i++)
		if (pw_panes[i] == pane)
			return i;
	return -1;
}

static void switch_to(pw_app *app, int index)
{
	if (index < 0 || index >= pw_pane_count || index == app->current)
		return;
	const pw_pane_ops *old = pw_panes[app->current], *new = pw_panes[index];
	if (old->on_leave)
		old->on_leave(app->state[app->current]);
	app->current = index;
	free(app->status); /* the news of the pane left behind */
	app->status = NULL;
	if (new->on_enter)
		new->on_enter(app->state[index]);
	app->dirty = true;
}

void pw_app_show(pw_app *app, const pw_pane_ops *pane)
{
	switch_to(app, pane_index(pane));
}

void *pw_app_pane_state(pw_app *app, const pw_pane_ops *pane)
{
	int i = pane_index(pane);
	return i < 0 ? NULL : app->state[i];
}

void pw_app_open_dialog(pw_app *app, pw_dialog *d)
{
	pw_dialog_free(&app->dialog);
	app->dialog = d;
	app->dirty = true;
}

/* ---------------------------------------------------------------- drawing */

static bool too_small(void)
{
	return COLS < MIN_COLS || LINES < MIN_LINES;
}

/* Nothing but q acts on a screen too small to show what a key would do:
 * a dialog's y or a pane's x must not answer blind. */
static void draw_too_small(const pw_app *app)
{
	pw_draw_set(stdscr, PW_C_NORMAL);
	mvprintw(0, 0, _("terminal %dx%d is too small (need %dx%d)"), COLS, LINES, MIN_COLS, MIN_LINES);
	int y = 1;
	if (pw_workers_running(app->jobs))
		y += pw_draw_wrapped(stdscr, y, 0, COLS, 2, 0, _("q quits and cancels what is running"));
	else
		mvprintw(y++, 0, "%s", _("q quits"));
	if (app->dialog)
		pw_draw_wrapped(stdscr, y, 0, COLS, 3, 0,
				_("A dialog is open: it takes keys again once the terminal is larger (q cancels it)."));
}

static int tab_width(int i, bool titled)
{
	char *t = titled ? xasprintf(" %d %s ", i + 1, _(pw_panes[i]->title)) : xasprintf(" %d ", i + 1);
	int w = pw_draw_width(t) + 1;
	free(t);
	return w;
}

/* Every tab with its title when they fit; on a narrow terminal only the
 * current pane keeps its title and the others show their number, so all
 * six stay reachable at a glance (htop shortens its header the same way). */
static void draw_tabs(const pw_app *app)
{
	int full = 0;
	for (int i = 0; i < pw_pane_count; i++)
		full += tab_width(i, true);
	bool all_titled = full <= COLS;
	int x = 0;
	for (int i = 0; i < pw_pane_count && x < COLS; i++) {
		bool titled = all_titled || i == app->current;
		pw_draw_set(stdscr, i == app->current ? PW_C_TAB_ACTIVE : PW_C_TAB);
		if (titled)
			x += pw_draw_textf(stdscr, 0, x, COLS - x, " %d %s ", i + 1, _(pw_panes[i]->title));
		else
			x += pw_draw_textf(stdscr, 0, x, COLS - x, " %d ", i + 1);
		pw_draw_set(stdscr, PW_C_NORMAL);
		if (x < COLS)
			x += pw_draw_text(stdscr, 0, x, 1, " ");
	}
	pw_draw_set(stdscr, PW_C_NORMAL);
}

/* The frame's top border carries the program's name and version. */
static void draw_title(void)
{
	pw_draw_set(stdscr, PW_C_TITLE);
	pw_draw_textf(stdscr, 1, 2, COLS - 4, " pyward %s ", PACKAGE_VERSION);
	pw_draw_set(stdscr, PW_C_NORMAL);
}

/* Draws the key hints of a pane ("k what  k what", items two blanks apart)
 * from x, whole items only: a cut item ("d re") would name a wrong key.
 * When not all fit, the last place shows a mark ("…", "~" in ASCII): the
 * help (?) lists the rest. */
static void draw_hint_items(int y, int x, int width, const char *hint)
{
	const char *mark = pw_draw_mark();
	bool all_fit = pw_draw_width(hint) <= width;
	int room = all_fit ? width : width - 3; /* "  …" */
	const char *s = hint;
	int used = 0;
	bool cut = false;
	while (*s) {
		const char *end = strstr(s, "  ");
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char *item = xstrndup(s, n);
		int w = pw_draw_width(item) + (used ? 2 : 0);
		if (used + w <= room)
			used += pw_draw_textf(stdscr, y, x + used, room - used, "%s%s", used ? "  " : "", item);
		else
			cut = true;
		free(item);
		if (cut)
			break;
		s += n;
		while (*s == ' ')
			s++;
	}
	if (cut && room >= 0)
		pw_draw_textf(stdscr, y, x + used, width - used, "%s%s", used ? "  " : "", mark);
}

/* The global keys are drawn right-aligned and never cut; the pane's own
 * hint gets what is left (translations are longer than the English). An
 * open dialog takes every key: the line shows its keys alone. */
static void draw_hints(const pw_app *app)
{
	const pw_pane_ops *p = pw_panes[app->current];
	pw_draw_set(stdscr, PW_C_HINT);
	pw_draw_cell(stdscr, LINES - 1, 0, COLS, "");
	if (app->dialog) {
		draw_hint_items(LINES - 1, 1, COLS - 2, _(pw_dialog_hint(app->dialog)));
		pw_draw_set(stdscr, PW_C_NORMAL);
		return;
	}
	char *globals = p->wants_text ? xasprintf("%s ", _("F1 help  F10 quit"))
				      : xasprintf("%s%s ", p->filter ? _("/ filter  ") : "", _("? help  q quit"));
	int gw = pw_draw_width(globals);
	if (gw > COLS - 1)
		gw = COLS - 1;
	if (p->hint && COLS - gw - 3 > 0)
		draw_hint_items(LINES - 1, 1, COLS - gw - 3, _(p->hint));
	pw_draw_text(stdscr, LINES - 1, COLS - gw, gw, globals);
	pw_draw_set(stdscr, PW_C_NORMAL);
	free(globals);
}

/* The status line sits in the frame's bottom border. */
static void draw_status(const pw_app *app)
{
	int y = LINES - 2;
	size_t running = pw_workers_running(app->jobs);
	int x = 2;
	if (running) {
		pw_draw_set(stdscr, PW_C_WARN);
		x += pw_draw_textf(stdscr, y, x, COLS - 4, _(" working: %s "), pw_workers_any_name(app->jobs));
	}
	if (app->status && x < COLS - 4) {
		pw_draw_set(stdscr, app->status_color);
		char *text = xasprintf(" %s ", app->status);
		pw_draw_text_cut(stdscr, y, x, COLS - 2 - x, text);
		free(text);
	}
	pw_draw_set(stdscr, PW_C_NORMAL);
}

static void draw_all(pw_app *app)
{
	erase();
	if (too_small()) {
		draw_too_small(app);
		refresh();
		return;
	}
	draw_tabs(app);
	pw_draw_box(stdscr, 1, 0, LINES - 2, COLS, PW_C_FRAME);
	draw_title();
	draw_status(app);
	pw_rect r = { .y = 2, .x = 2, .h = LINES - 4, .w = COLS - 4 };
	const pw_pane_ops *p = pw_panes[app->current];
	p->draw(app->state[app->current], stdscr, r);
	pw_draw_set(stdscr, PW_C_NORMAL);
	draw_hints(app);
	if (app->help_open)
		app->help_page = pw_help_draw(stdscr, &app->help_scroll, p);
	if (app->dialog)
		pw_dialog_draw(app->dialog, stdscr);
	refresh();
}

/* ---------------------------------------------------------------- keys */

static void on_quit_answer(void *ud, bool yes)
{
	pw_app *app = ud;
	if (yes) {
		pw_workers_cancel_all(app->jobs);
		app->quit = true;
	}
}

static void ask_quit(pw_app *app)
{
	if (pw_workers_running(app->jobs) == 0) {
		app->quit = true;
		return;
	}
	char *q = xasprintf(_("'%s' is still running. Quit and cancel it?"), pw_workers_any_name(app->jobs));
	pw_dialog_confirm(app, _("Quit"), q, _("Quit"), on_quit_answer, app);
	free(q);
}

static void on_filter_text(void *ud, const char *text)
{
	pw_app *app = ud;
	const pw_pane_ops *p = pw_panes[app->current];
	if (text && p->filter) {
		free(app->filters[app->current]);
		app->filters[app->current] = xstrdup(text);
		p->filter(app->state[app->current], text);
	}
	app->dirty = true;
}

static void open_filter(pw_app *app)
{
	const pw_pane_ops *p = pw_panes[app->current];
	if (!p->filter) {
		pw_app_status(app, PW_C_WARN, _("this pane has nothing to filter"));
		return;
	}
	pw_dialog_input(app, _("Filter"), _("Show only lines containing (empty shows all):"),
			app->filters[app->current], on_filter_text, app);
}

static void mouse_key(pw_app *app)
{
	MEVENT m;
	if (getmouse(&m) != OK || m.y != 0 || !(m.bstate & BUTTON1_CLICKED))
		return;
	int x = 0;
	for (int i = 0; i < pw_pane_count; i++) {
		char label[80];
		snprintf(label, sizeof label, " %d %s  ", i + 1, _(pw_panes[i]->title));
		int w = pw_draw_width(label);
		if (m.x >= x && m.x < x + w) {
			switch_to(app, i);
			return;
		}
		x += w;
	}
}

static void help_key(pw_app *app, int ch)
{
	/* A page is what was shown less one line, so no line is ever stepped
	 * over (half the screen's rows skipped a tall entry at 60x20). */
	int page = app->help_page > 1 ? app->help_page - 1 : 1;
	switch (ch) {
	case KEY_UP: app->help_scroll--; break;
	case KEY_DOWN: app->help_scroll++; break;
	case KEY_PPAGE: app->help_scroll -= page; break;
	case KEY_NPAGE:
	case ' ': app->help_scroll += page; break;
	case KEY_HOME: app->help_scroll = 0; break;
	case PW_KEY_ESC:
	case 'q':
	case '?':
	case '\n': app->help_open = false; break;
	}
	if (app->help_scroll < 0)
		app->help_scroll = 0;
}

static bool global_key(pw_app *app, int ch)
{
	if (ch >= '1' && ch < '1' + pw_pane_count) {
		switch_to(app, ch - '1');
		return true;
	}
	switch (ch) {
	case '\t': switch_to(app, (app->current + 1) % pw_pane_count); return true;
	case KEY_BTAB: switch_to(app, (app->current + pw_pane_count - 1) % pw_pane_count); return true;
	case '?': app->help_open = true; app->help_scroll = 0; return true;
	case '/': open_filter(app); return true;
	case 'q': ask_quit(app); return true;
	case PW_KEY_CTRL('l'): clearok(curscr, TRUE); return true;
	case KEY_MOUSE: if (app->mouse) mouse_key(app); return true;
	}
	return false;
}

/* A key for the open dialog; the dialog goes once it is answered. */
static void dialog_key(pw_app *app, int raw)
{
	if (pw_dialog_key(app->dialog, raw)) {
		pw_dialog *d = app->dialog;
		app->dialog = NULL;
		pw_dialog_finish(&d);
	}
}

static void handle_key(pw_app *app, int raw)
{
	app->dirty = app->urgent = true;
	if (raw == KEY_RESIZE)
		return;
	if (too_small()) {
		if (pw_keys_normalize(raw) == 'q') {
			if (app->dialog) /* answered as Esc would: no, or no text */
				dialog_key(app, PW_KEY_ESC);
			on_quit_answer(app, true);
		}
		return;
	}
	if (app->dialog) {
		dialog_key(app, raw);
		return;
	}
	int ch = pw_keys_normalize(raw);
	if (app->help_open) {
		help_key(app, ch);
		return;
	}
	const pw_pane_ops *p = pw_panes[app->current];
	if (p->wants_text) { /* text first: only Tab and Shift-Tab stay global */
		if (raw == '\t' || raw == KEY_BTAB || !p->key(app->state[app->current], raw))
			global_key(app, ch);
		return;
	}
	/* Pane keys first, except the ones that must work everywhere. */
	bool reserved = ch == '\t' || ch == KEY_BTAB || ch == '?' || ch == 'q' || ch == '/' ||
			(ch >= '1' && ch < '1' + pw_pane_count);
	if (!reserved && p->key && p->key(app->state[app->current], ch))
		return;
	global_key(app, ch);
}

/* Esc with '[' or 'O' right behind it in the same burst is an escape
 * sequence curses did not know: skip it up to its final byte rather than
 * acting on its characters ("Esc [ 4 ~" must not mean "pane 4"). Anything
 * else behind an Esc is a key of its own. */
static void after_escape(pw_app *app)
{
	int next, c;
	if (!pw_keys_read(stdscr, &next)) {
		handle_key(app, PW_KEY_ESC);
		return;
	}
	if (next == '[' || next == 'O') {
		while (pw_keys_read(stdscr, &c))
			if (c >= 0x40 && c <= 0x7e)
				break;
		return;
	}
	handle_key(app, PW_KEY_ESC);
	if (!app->quit)
		handle_key(app, next);
}

static void read_keys(pw_app *app)
{
	int raw;
	while (!app->quit && pw_keys_read(stdscr, &raw)) {
		if (raw == PW_KEY_ESC)
			after_escape(app);
		else
			handle_key(app, raw);
	}
}

/* ---------------------------------------------------------------- events, signals */

static void deliver(const pw_job_event *ev, void *ctx)
{
	pw_app *app = ctx;
	/* An operation that succeeded ends the news of one that failed before
	 * (the pane may put its own news right after). */
	if (ev->kind == PW_JOB_DONE && ev->operation && !ev->err && app->status && app->status_color == PW_C_ERROR) {
		free(app->status);
		app->status = NULL;
	}
	for (int i = 0; i < pw_pane_count; i++)
		if (pw_panes[i]->on_event)
			pw_panes[i]->on_event(app->state[i], ev);
	app->dirty = true;
	/* A job's end is news, and rare: shown at once. Streams (progress,
	 * log lines) wait for the next frame. */
	if (ev->kind == PW_JOB_DONE)
		app->urgent = true;
}

static void resize_from_tty(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resize_term(ws.ws_row, ws.ws_col);
}

/* Ctrl-C is a signal, not a key: a text pane (interrupting its work,
 * clearing its input) hears it before it means quit. */
static bool text_pane_took(pw_app *app, int ch)
{
	const pw_pane_ops *p = pw_panes[app->current];
	return p->wants_text && !app->help_open && !too_small() && p->key(app->state[app->current], ch);
}

static void read_signals(pw_app *app)
{
	char buf[64];
	ssize_t n = read(app->signal_fd, buf, sizeof buf);
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == 'W') {
			resize_from_tty();
			clearok(curscr, TRUE);
		} else if (buf[i] == 'I' && !app->dialog) {
			if (!text_pane_took(app, PW_KEY_CTRL('c')))
				ask_quit(app);
		} else if (buf[i] == 'T' || buf[i] == 'I') {
			pw_workers_cancel_all(app->jobs);
			app->quit = true;
		}
	}
	app->dirty = app->urgent = true;
}

/* ---------------------------------------------------------------- loop */

static int frame_wait(pw_app *app)
{
	if (!app->dirty)
		return -1; /* nothing to draw: sleep until something happens */
	int64_t since = pw_clock_mono_ms() - app->last_draw_ms;
	if (app->urgent || since >= FRAME_MS) {
		draw_all(app);
		app->dirty = app->urgent = false;
		app->last_draw_ms = pw_clock_mono_ms();
		return -1;
	}
	return (int)(FRAME_MS - since);
}

static void loop(pw_app *app)
{
	struct pollfd fds[3] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = pw_workers_fd(app->jobs), .events = POLLIN },
		{ .fd = app->signal_fd, .events = POLLIN },
	};
	while (!app->quit) {
		int timeout = frame_wait(app);
		int n = poll(fds, 3, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (fds[2].revents & POLLIN)
			read_signals(app);
		if (fds[1].revents & POLLIN)
			pw_workers_dispatch(app->jobs, deliver, app);
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!(fds[0].revents & POLLIN)) {
				app->quit = true; /* the terminal went away */
				pw_workers_cancel_all(app->jobs);
			}
			read_keys(app);
		}
	}
}

static pw_app *app_new(const pw_app_config *cfg)
{
	pw_workers *jobs = pw_workers_new();
	if (!jobs)
		return NULL; /* no pipe: panes could not start their jobs */
	pw_app *app = xcalloc(1, sizeof *app);
	app->ctx = cfg->ctx;
	app->mouse = cfg->mouse;
	app->signal_fd = cfg->signal_fd;
	app->jobs = jobs;
	app->state = xcalloc((size_t)pw_pane_count, sizeof *app->state);
	app->filters = xcalloc((size_t)pw_pane_count, sizeof *app->filters);
	for (int i = 0; i < pw_pane_count; i++)
		app->state[i] = pw_panes[i]->create(app);
	app->dirty = app->urgent = true;
	return app;
}

static void app_free(pw_app *app)
{
	/* Jobs first: their last events may still name pane state. */
	pw_workers_free(&app->jobs);
	for (int i = 0; i < pw_pane_count; i++) {
		pw_panes[i]->destroy(app->state[i]);
		free(app->filters[i]);
	}
	free(app->state);
	free(app->filters);
	pw_dialog_free(&app->dialog);
	free(app->status);
	free(app);
}

int pw_app_run(const pw_app_config *cfg)
{
	if (!cfg->mouse)
		mousemask(0, NULL);
	else
		mousemask(BUTTON1_CLICKED, NULL);
	pw_app *app = app_new(cfg);
	if (!app)
		return PW_EXIT_FAILED;
	if (pw_panes[0]->on_enter)
		pw_panes[0]->on_enter(app->state[0]);
	loop(app);
	app_free(app);
	return PW_EXIT_OK;
}
