/*
 * Python pane: the session's persistent scratchpad, the same one `pyward
 * python` reaches from the same workspace. A header names the session, its
 * interpreter and state; a transcript shows each cell (In [n]) and its
 * result (notices of lost state first, then stdout, stderr, the traceback,
 * Out[n]); an input at the bottom takes the code. The pane asks for every
 * key as text (pane.h wants_text): only Tab and Shift-Tab stay global, F1
 * and F10 keep their meaning. Each cell runs as a background job through
 * the scratchpad client, so the screen keeps answering while it runs; Esc
 * or Ctrl-C raises the job's cancel token, which interrupts the cell.
 */
#include "config.h"

#include "tui/pane.h"

#include "tui/app.h"
#include "tui/dialog.h"
#include "tui/draw.h"
#include "tui/keys.h"
#include "tui/pane_python_choose.h"
#include "tui/pane_python_input.h"
#include "tui/pane_python_jobs.h"
#include "tui/pane_python_log.h"

#include "ops/ctx.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#define LOG_LINES 5000
#define HEADER_ROWS 3
/* The input grows with its text up to this many rows (then it scrolls). */
#define INPUT_ROWS_MAX 8
#define PROMPT ">>> "
#define PROMPT_MORE "... "
#define PROMPT_W 4

typedef struct py_pane {
	pw_app *app;
	char *session;
	pw_pyinput *input;
	pw_pylog *log;
	int scroll; /* transcript rows above the bottom */
	int page;   /* transcript rows last drawn, for PgUp/PgDn */
	/* the running cell */
	int cell_job;
	size_t cell_line;   /* its "In [*]" line in the log */
	bool cell_is_reset; /* a reset, not code: no In [n] to number */
	bool interrupting;
	unsigned cells_done;
	/* the header */
	int status_job;
	bool started; /* the session has a worker (as far as we know) */
	char *state;  /* the host's word for it, or NULL */
	int64_t executions, generation;
	char *implementation, *version, *executable;
	char *runtime_python, *runtime_version, *no_runtime;
	/* the interpreter picked with Ctrl-T (NULL: the CLI's default) */
	int find_job;
	pw_pychooser *chooser;
	pw_pychoice choice, pending;
} py_pane;

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

static void *create(pw_app *app)
{
	py_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	p->session = pw_op_scratch_default_session(pw_app_ctx(app)->workspace);
	p->input = pw_pyinput_new();
	p->log = pw_pylog_new(LOG_LINES);
	return p;
}

static void destroy(void *self)
{
	py_pane *p = self;
	free(p->session);
	pw_pyinput_free(&p->input);
	pw_pylog_free(&p->log);
	free(p->state);
	free(p->implementation);
	free(p->version);
	free(p->executable);
	free(p->runtime_python);
	free(p->runtime_version);
	free(p->no_runtime);
	pw_pychooser_free(&p->chooser);
	free(p->choice.python);
	free(p->choice.venv);
	free(p->choice.version);
	free(p->pending.python);
	free(p->pending.venv);
	free(p->pending.version);
	free(p);
}

/* ---------------------------------------------------------------- state */

static void read_status(py_pane *p)
{
	if (p->status_job || p->cell_job)
		return;
	pw_pystatus *s = xcalloc(1, sizeof *s);
	s->ctx = pw_app_ctx(p->app);
	s->box_root = xstrdup(pw_app_box_root(p->app));
	s->session = xstrdup(p->session);
	s->cells_at_start = p->cells_done;
	p->status_job = pw_app_start_read(p->app, _("reading the scratchpad's state"), p, pw_pystatus_read, s,
					  pw_pystatus_free);
}

static void status_done(py_pane *p, const pw_pystatus *s)
{
	set_str(&p->runtime_python, s->runtime_python);
	set_str(&p->runtime_version, s->runtime_version);
	set_str(&p->no_runtime, s->no_runtime);
	if (s->cells_at_start != p->cells_done || p->cell_job)
		return; /* a cell's result is fresher than this read */
	p->started = s->found && s->python;
	set_str(&p->state, s->found ? s->state : NULL);
	if (!s->found)
		return;
	p->executions = s->executions;
	p->generation = s->generation;
	if (s->python && (!p->executable || strcmp(p->executable, s->python) != 0)) {
		set_str(&p->executable, s->python);
		set_str(&p->version, NULL); /* another interpreter: known again by its next fresh result */
		set_str(&p->implementation, NULL);
	}
}

/* The version to show: the worker's own words, else the managed
 * runtime's when the session runs that interpreter. */
static const char *shown_version(const py_pane *p)
{
	if (p->version)
		return p->version;
	if (!p->executable && p->choice.python)
		return p->choice.version;
	if (p->executable && p->runtime_python && strcmp(p->executable, p->runtime_python) == 0)
		return p->runtime_version;
	return NULL;
}

/* ---------------------------------------------------------------- results */

static void add_prefixed(py_pane *p, pw_color c, const char *prefix, const char *text)
{
	pw_pylog_add_words(p->log, c, c, prefix, text);
}

static void add_interpreter(py_pane *p, const pw_scratch_interp *in)
{
	set_str(&p->implementation, in->implementation);
	set_str(&p->version, in->version);
	set_str(&p->executable, in->executable);
	char *line =
	    xasprintf(_("%s %s %s at %s, in %s"), in->implementation ? in->implementation : "Python",
		      in->version ? in->version : "?", in->build ? in->build : "?",
		      in->executable ? in->executable : "?", in->project_dir ? in->project_dir : "?");
	pw_pylog_add_words(p->log, PW_C_DIM, PW_C_LABEL, _("python: "), line);
	free(line);
}

static void add_cut(py_pane *p, const char *stream, size_t dropped)
{
	if (!dropped)
		return;
	char *line = xasprintf(_("%s: %zu bytes cut from the middle (head and tail kept)"), stream, dropped);
	add_prefixed(p, PW_C_WARN, _("notice: "), line);
	free(line);
}

static void add_status_line(py_pane *p, const pw_scratch_result *r)
{
	if (strcmp(r->status, "timed_out") == 0)
		add_prefixed(p, PW_C_ERROR, _("error: "),
			     _("the cell was stopped: it ran past its time budget"));
	else if (strcmp(r->status, "lost") == 0)
		add_prefixed(p, PW_C_ERROR, _("error: "), _("the cell did not finish: its worker is gone"));
	else if (strcmp(r->status, "interrupted") == 0 && !r->traceback)
		add_prefixed(p, PW_C_WARN, _("notice: "), _("interrupted"));
}

static void add_result(py_pane *p, const pw_scratch_result *r)
{
	for (size_t i = 0; i < r->notice_count; i++)
		add_prefixed(p, PW_C_WARN, _("notice: "), r->notices[i].message);
	if (r->interp)
		add_interpreter(p, r->interp);
	if (r->out && *r->out)
		pw_pylog_add(p->log, PW_C_NORMAL, PW_C_NORMAL, NULL, NULL, r->out);
	if (r->err && *r->err)
		pw_pylog_add(p->log, PW_C_WARN, PW_C_WARN, NULL, NULL, r->err);
	if (r->traceback)
		pw_pylog_add(p->log, PW_C_ERROR, PW_C_ERROR, NULL, NULL, r->traceback);
	if (r->value) {
		char *prefix = xasprintf("Out[%lld]: ", (long long)r->execution);
		pw_pylog_add(p->log, PW_C_NORMAL, PW_C_OK, prefix, NULL, r->value);
		free(prefix);
	}
	add_cut(p, "stdout", r->out_dropped);
	add_cut(p, "stderr", r->err_dropped);
	add_status_line(p, r);
}

static void cell_done(py_pane *p, const pw_job_event *ev)
{
	pw_pycell *c = ev->ud;
	const pw_scratch_result *r = c->result;
	if (!p->cell_is_reset) {
		char *prompt = r && r->execution > 0 ? xasprintf("In [%lld]: ", (long long)r->execution)
						     : xstrdup("In [-]: ");
		pw_pylog_set_prefix(p->log, p->cell_line, prompt);
		free(prompt);
	}
	if (ev->err) {
		add_prefixed(p, PW_C_ERROR, _("error: "), pw_err_message(ev->err));
		if (pw_err_hint(ev->err))
			add_prefixed(p, PW_C_LABEL, _("hint: "), pw_err_hint(ev->err));
	}
	if (r) {
		add_result(p, r);
		p->started = true;
		set_str(&p->state, "idle");
		p->executions = r->execution;
		p->generation = r->generation;
		if (strcmp(r->status, "reset") == 0 && !r->interp) {
			/* A reset starts no worker: the header shows the choice
			 * until the next cell's result names the interpreter. */
			set_str(&p->executable, NULL);
			set_str(&p->version, NULL);
		} else if (!r->interp && !p->executable) {
			set_str(&p->executable, c->fallback_python ? c->fallback_python : p->runtime_python);
		}
	}
	if (p->interrupting && r && strcmp(r->status, "interrupted") == 0)
		pw_app_status(p->app, PW_C_WARN, "%s", _("the cell was interrupted"));
	else if (p->interrupting && r)
		pw_app_status(p->app, PW_C_WARN, "%s", _("the cell ended before the interrupt"));
	p->cell_job = 0;
	p->interrupting = false;
	p->cells_done++;
	p->scroll = 0;
	if (ev->err)
		pw_app_status(p->app, PW_C_ERROR, "%s", pw_err_message(ev->err));
}

/* ---------------------------------------------------------------- running */

static pw_pycell *new_cell(py_pane *p)
{
	const pw_ops_ctx *ctx = pw_app_ctx(p->app);
	pw_pycell *c = xcalloc(1, sizeof *c);
	c->ctx = ctx;
	c->session = xstrdup(p->session);
	if (p->choice.python) {
		c->python = xstrdup(p->choice.python);
		c->venv = p->choice.venv ? xstrdup(p->choice.venv) : NULL;
	} else if (!p->runtime_python && p->executable) {
		/* Without a managed runtime, a session started elsewhere keeps its interpreter. */
		c->fallback_python = xstrdup(p->executable);
	}
	return c;
}

static void start_cell(py_pane *p, pw_pycell *c)
{
	p->cell_is_reset = c->reset;
	p->scroll = 0;
	p->cell_job =
	    pw_app_start_job(p->app, c->reset ? _("resetting the scratchpad") : _("running a Python cell"), p,
			     pw_pycell_run, c, pw_pycell_free);
}

static void on_reset_answer(void *ud, bool yes)
{
	py_pane *p = ud;
	if (!yes || p->cell_job)
		return;
	pw_pycell *c = new_cell(p);
	c->reset = true;
	pw_pylog_add(p->log, PW_C_LABEL, PW_C_LABEL, NULL, NULL, _("-- reset: a fresh interpreter --"));
	start_cell(p, c);
}

static void ask_reset(py_pane *p)
{
	if (p->cell_job) {
		pw_app_status(p->app, PW_C_WARN, "%s", _("a cell is running (Esc interrupts it)"));
		return;
	}
	pw_dialog_confirm(p->app, _("Reset"),
			  _("Reset the scratchpad? Its variables, imports and background tasks are lost."),
			  _("Reset"), on_reset_answer, p);
}

static void submit(py_pane *p)
{
	pw_pycell *c = new_cell(p);
	c->code = pw_pyinput_text(p->input);
	pw_pyinput_remember(p->input);
	pw_pyinput_clear(p->input);
	/* "...:" under the prompt as wide as the number it will most likely get */
	char *guess = xasprintf("In [%lld]: ", (long long)p->executions + 1);
	int w = pw_draw_width(guess);
	char *cont = xasprintf("%*s", w, "...: ");
	p->cell_line = pw_pylog_add(p->log, PW_C_NORMAL, PW_C_LABEL, "In [*]: ", cont, c->code);
	free(guess);
	free(cont);
	start_cell(p, c);
}

static void enter(py_pane *p)
{
	if (pw_pyinput_incomplete(p->input)) {
		pw_pyinput_newline(p->input);
		return;
	}
	if (pw_pyinput_empty(p->input)) {
		pw_pyinput_clear(p->input);
		return;
	}
	if (p->cell_job) {
		pw_app_status(p->app, PW_C_WARN, "%s",
			      _("a cell is running (Esc interrupts it); your input is kept"));
		return;
	}
	submit(p);
}

static bool interrupt(py_pane *p)
{
	if (!p->cell_job)
		return false;
	if (!p->interrupting) {
		p->interrupting = true;
		pw_app_cancel_job(p->app, p->cell_job);
		pw_app_status(p->app, PW_C_WARN, "%s", _("interrupting the cell (KeyboardInterrupt)"));
	}
	return true;
}

/* ---------------------------------------------------------------- interpreter */

static void choice_clear(pw_pychoice *c)
{
	free(c->python);
	free(c->venv);
	free(c->version);
	memset(c, 0, sizeof *c);
}

static void choice_copy(pw_pychoice *dst, const pw_pychoice *src)
{
	choice_clear(dst);
	dst->python = xstrdup(src->python);
	dst->venv = src->venv ? xstrdup(src->venv) : NULL;
	dst->version = src->version ? xstrdup(src->version) : NULL;
}

static void find_interpreters(py_pane *p)
{
	if (p->cell_job || p->find_job) {
		pw_app_status(p->app, PW_C_WARN, "%s", _("wait for the running cell (Esc interrupts it)"));
		return;
	}
	p->find_job = pw_app_start_job(p->app, _("finding interpreters"), p, pw_pyfind_run,
				       pw_pyfind_new(pw_app_ctx(p->app)), pw_pyfind_free);
}

static void find_done(py_pane *p, const pw_job_event *ev)
{
	p->find_job = 0;
	const char *current = p->executable	 ? p->executable
			      : p->choice.python ? p->choice.python
						 : p->runtime_python;
	p->chooser = pw_pychooser_new(ev->ud, current);
	if (!p->chooser)
		pw_app_status(p->app, PW_C_WARN, "%s",
			      ev->err ? pw_err_message(ev->err)
				      : _("no interpreter found: install the runtime (pane 1) or create an "
					  "environment (pane 3)"));
}

static void on_restart_answer(void *ud, bool yes)
{
	py_pane *p = ud;
	if (yes && !p->cell_job) {
		choice_copy(&p->choice, &p->pending);
		pw_pycell *c = new_cell(p);
		c->reset = true;
		pw_pylog_add(p->log, PW_C_LABEL, PW_C_LABEL, NULL, NULL,
			     _("-- reset: a fresh interpreter --"));
		start_cell(p, c);
	}
	choice_clear(&p->pending);
}

/* A session that runs another interpreter must start again to switch. */
static void pick(py_pane *p, const pw_pychoice *c)
{
	if (p->started && p->executable && strcmp(p->executable, c->python) != 0) {
		choice_copy(&p->pending, c);
		char *q = xasprintf(_("Session %s runs %s. Start it again with %s? Its state is lost."),
				    p->session, p->executable, c->python);
		pw_dialog_confirm(p->app, _("Interpreter"), q, _("Restart"), on_restart_answer, p);
		free(q);
		return;
	}
	choice_copy(&p->choice, c);
	pw_app_status(p->app, PW_C_OK, _("cells run with %s"), c->python);
}

static void chooser_key(py_pane *p, int ch)
{
	pw_pychooser_answer a = pw_pychooser_key(p->chooser, ch);
	if (a == PW_PYCH_MORE)
		return;
	if (a == PW_PYCH_PICKED)
		pick(p, pw_pychooser_selected(p->chooser));
	pw_pychooser_free(&p->chooser);
}

static void on_event(void *self, const pw_job_event *ev)
{
	py_pane *p = self;
	if (ev->owner != p || ev->kind != PW_JOB_DONE)
		return;
	if (ev->job_id == p->status_job) {
		p->status_job = 0;
		status_done(p, ev->ud);
	} else if (ev->job_id == p->cell_job) {
		cell_done(p, ev);
	} else if (ev->job_id == p->find_job) {
		find_done(p, ev);
	}
}

/* ---------------------------------------------------------------- keys */

static bool edit_key(py_pane *p, int ch)
{
	pw_pyinput *in = p->input;
	switch (ch) {
	case KEY_LEFT:
		pw_pyinput_move_cursor(in, PW_PYIN_LEFT);
		return true;
	case KEY_RIGHT:
		pw_pyinput_move_cursor(in, PW_PYIN_RIGHT);
		return true;
	case KEY_HOME:
	case PW_KEY_CTRL('a'):
		pw_pyinput_move_cursor(in, PW_PYIN_HOME);
		return true;
	case KEY_END:
	case PW_KEY_CTRL('e'):
		pw_pyinput_move_cursor(in, PW_PYIN_END);
		return true;
	case KEY_BACKSPACE:
	case 0x7f:
	case PW_KEY_CTRL('h'):
		pw_pyinput_backspace(in);
		return true;
	case KEY_DC:
	case PW_KEY_CTRL('d'):
		pw_pyinput_delete(in);
		return true;
	case PW_KEY_CTRL('k'):
		pw_pyinput_kill_to_end(in);
		return true;
	case PW_KEY_CTRL('u'):
		pw_pyinput_kill_to_start(in);
		return true;
	case KEY_UP:
		if (!pw_pyinput_move_cursor(in, PW_PYIN_UP))
			pw_pyinput_recall(in, -1);
		return true;
	case KEY_DOWN:
		if (!pw_pyinput_move_cursor(in, PW_PYIN_DOWN))
			pw_pyinput_recall(in, +1);
		return true;
	case PW_KEY_CTRL('p'):
		pw_pyinput_recall(in, -1);
		return true;
	case PW_KEY_CTRL('n'):
		pw_pyinput_recall(in, +1);
		return true;
	case PW_KEY_CTRL('r'):
		ask_reset(p);
		return true;
	case PW_KEY_CTRL('t'):
		find_interpreters(p);
		return true;
	}
	return false;
}

static bool key(void *self, int ch)
{
	py_pane *p = self;
	wchar_t wc;
	if (p->chooser) {
		chooser_key(p, ch);
		return true;
	}
	if (ch == PW_KEY_ESC) {
		interrupt(p);
		return true;
	}
	if (ch == PW_KEY_CTRL('c')) { /* interrupt, else clear the input, else (empty) quit */
		if (interrupt(p))
			return true;
		if (pw_pyinput_empty(p->input) && !pw_pyinput_multiline(p->input))
			pw_app_status(p->app, PW_C_WARN, "%s", _("nothing runs; F10 quits"));
		pw_pyinput_clear(p->input);
		return true;
	}
	if (ch == KEY_PPAGE || ch == KEY_NPAGE) {
		int step = p->page > 2 ? p->page - 1 : 1;
		p->scroll += ch == KEY_PPAGE ? step : -step;
		if (p->scroll < 0)
			p->scroll = 0;
		return true;
	}
	bool handled = true;
	if (ch == '\r' || ch == KEY_ENTER)
		enter(p);
	else if (ch == '\n') /* Ctrl-J */
		pw_pyinput_newline(p->input);
	else if (pw_keys_printable(ch, &wc))
		pw_pyinput_insert(p->input, wc);
	else
		handled = edit_key(p, ch);
	if (handled)
		p->scroll = 0; /* typing shows the end of the transcript again */
	return handled;
}

/* ---------------------------------------------------------------- drawing */

/* A path too long for its place keeps its end: "...versions/3.12/bin/python3". */
static void draw_tail(WINDOW *win, int y, int x, int width, const char *s)
{
	const char *dots = pw_draw_unicode() ? "\u2026" : "...";
	if (pw_draw_width(s) <= width) {
		pw_draw_text(win, y, x, width, s);
		return;
	}
	int dw = pw_draw_width(dots);
	while (*s && pw_draw_width(s) > width - dw)
		s++;
	while ((*s & 0xc0) == 0x80) /* not inside a character */
		s++;
	x += pw_draw_text(win, y, x, width, dots);
	pw_draw_text(win, y, x, width - dw, s);
}

static void draw_header(const py_pane *p, WINDOW *win, pw_rect r)
{
	pw_draw_set(win, PW_C_LABEL);
	int x = pw_draw_text(win, r.y, r.x, r.w, _("Session "));
	pw_draw_set(win, PW_C_TITLE);
	x += pw_draw_text(win, r.y, r.x + x, r.w - x, p->session);
	pw_draw_set(win, PW_C_NORMAL);
	char *state;
	if (p->cell_job)
		state =
		    xstrdup(p->interrupting ? _("interrupting...") : _("running a cell (Esc interrupts)"));
	else if (!p->started)
		state = xstrdup(r.w - x >= pw_draw_width(_("not started (the first cell starts Python)")) + 2
				    ? _("not started (the first cell starts Python)")
				    : _("not started"));
	else if (p->executions == 0)
		state = xasprintf(_("fresh, generation %lld"), (long long)p->generation);
	else
		state = xasprintf(P_("%lld execution, generation %lld", "%lld executions, generation %lld",
				     (unsigned long)p->executions),
				  (long long)p->executions, (long long)p->generation);
	pw_draw_set(win, p->cell_job ? PW_C_WARN : PW_C_NORMAL);
	pw_draw_textf(win, r.y, r.x + x, r.w - x, "  %s", state);
	free(state);

	pw_draw_set(win, PW_C_LABEL);
	x = pw_draw_text(win, r.y + 1, r.x, r.w, _("Python  "));
	pw_draw_set(win, PW_C_NORMAL);
	const char *version = shown_version(p);
	const char *exe = p->executable	     ? p->executable
			  : p->choice.python ? p->choice.python
					     : p->runtime_python;
	if (exe) {
		if (!version && !p->executable)
			version = p->runtime_version;
		/* Before the first cell the version may not be known yet: the path alone, not "Python ?".
		 * The label already says Python: the implementation only when a worker named it. */
		char *name = !version		 ? xstrdup("")
			     : p->implementation ? xasprintf("%s %s  ", p->implementation, version)
						 : xasprintf("%s  ", version);
		x += pw_draw_text(win, r.y + 1, r.x + x, r.w - x, name);
		draw_tail(win, r.y + 1, r.x + x, r.w - x, exe);
		free(name);
	} else {
		pw_draw_set(win, PW_C_WARN);
		const char *none = _("none: install the runtime in pane 1, or Ctrl-T picks an environment");
		if (pw_draw_width(none) > r.w - x)
			none = _("none: pane 1 installs one; Ctrl-T picks a venv");
		pw_draw_text(win, r.y + 1, r.x + x, r.w - x, p->no_runtime ? none : "...");
	}
	pw_draw_set(win, PW_C_FRAME);
	pw_draw_hline(win, r.y + 2, r.x, r.w);
	pw_draw_set(win, PW_C_NORMAL);
}

/* What an empty transcript says: what is missing first (on a short
 * terminal the usage text below it would otherwise push it off), then how to
 * use the pane. */
static void draw_welcome(const py_pane *p, WINDOW *win, int y, int x, int h, int w)
{
	int row = 0;
	if (p->no_runtime && !p->started) {
		char *msg = xasprintf(_("No interpreter yet: %s."), p->no_runtime);
		pw_draw_set(win, PW_C_WARN);
		row += pw_draw_wrapped(win, y + row, x, w, h - row, 0, msg);
		row += pw_draw_wrapped(
		    win, y + row, x, w, h - row, 0,
		    _("Install the managed runtime in pane 1 (Runtime, key i), or create an environment in "
		      "pane 3 and pick it here with Ctrl-T."));
		pw_draw_set(win, PW_C_NORMAL);
		free(msg);
		row++;
	}
	if (row >= h)
		return;
	pw_draw_set(win, PW_C_DIM);
	pw_draw_wrapped(
	    win, y + row, x, w, h - row, 0,
	    _("Type Python and press Enter to run it in this workspace's scratchpad (the session "
	      "'pyward python' uses here too). Enter after ':' or inside brackets continues the "
	      "cell, Ctrl-J adds a line; Esc or Ctrl-C interrupts a running cell; PgUp/PgDn scroll; "
	      "Ctrl-T picks the interpreter, Ctrl-R resets. Letters and digits are text here: Tab "
	      "leaves the pane, F10 quits."));
	pw_draw_set(win, PW_C_NORMAL);
}

/* The input's rows, the cursor's row kept in view; returns rows used. */
static int input_rows(const py_pane *p, int w, int *first, pw_pyinput_row **rows, size_t *nrows, size_t *crow,
		      int *ccol)
{
	*nrows = pw_pyinput_layout(p->input, w - PROMPT_W, rows, crow, ccol);
	int shown = (int)*nrows < INPUT_ROWS_MAX ? (int)*nrows : INPUT_ROWS_MAX;
	*first = (int)*crow >= shown ? (int)*crow - shown + 1 : 0;
	return shown;
}

static void draw_cursor_cell(WINDOW *win, int y, int x, wchar_t wc)
{
	wchar_t s[2] = {wc && wc != L'\n' ? wc : L' ', 0};
	if (!pw_draw_unicode() && s[0] > 0x7e)
		s[0] = L'?';
	attr_t a = pw_draw_attr(PW_C_NORMAL) | A_REVERSE;
	wattrset(win, a);
	mvwaddnwstr(win, y, x, s, 1);
	pw_draw_set(win, PW_C_NORMAL);
}

static void draw_input(const py_pane *p, WINDOW *win, int y, int x, int w, pw_pyinput_row *rows, int first,
		       int shown, size_t crow, int ccol)
{
	const wchar_t *chars = pw_pyinput_chars(p->input);
	for (int i = 0; i < shown; i++) {
		const pw_pyinput_row *row = &rows[first + i];
		pw_draw_set(win, PW_C_LABEL);
		pw_draw_text(win, y + i, x, PROMPT_W,
			     row->first ? (first + i == 0 ? PROMPT : PROMPT_MORE) : "");
		pw_draw_set(win, PW_C_NORMAL);
		wmove(win, y + i, x + PROMPT_W);
		for (size_t k = row->from; k < row->to; k++) {
			wchar_t s[2] = {chars[k], 0};
			if (!pw_draw_unicode() && s[0] > 0x7e)
				s[0] = L'?';
			waddnwstr(win, s, 1);
		}
		if ((size_t)(first + i) == crow) {
			size_t at = row->from;
			int col = 0;
			while (at < row->to && col < ccol) {
				int cw = wcwidth(chars[at]);
				col += cw < 0 ? 1 : cw;
				at++;
			}
			draw_cursor_cell(win, y + i, x + PROMPT_W + ccol, at < row->to ? chars[at] : L' ');
		}
	}
	(void)w;
}

static void draw(void *self, WINDOW *win, pw_rect r)
{
	py_pane *p = self;
	draw_header(p, win, r);
	pw_pyinput_row *rows = NULL;
	size_t nrows, crow;
	int ccol, first;
	int shown = input_rows(p, r.w, &first, &rows, &nrows, &crow, &ccol);
	int log_y = r.y + HEADER_ROWS, log_h = r.h - HEADER_ROWS - shown - 1;
	int sep_y = log_y + log_h;
	p->page = log_h;
	if (p->chooser)
		pw_pychooser_draw(p->chooser, win, log_y, r.x, log_h, r.w);
	else if (pw_pylog_count(p->log) == 0)
		draw_welcome(p, win, log_y, r.x, log_h, r.w);
	else
		pw_pylog_draw(p->log, win, log_y, r.x, log_h, r.w, &p->scroll);
	pw_draw_set(win, PW_C_FRAME);
	pw_draw_hline(win, sep_y, r.x, r.w);
	if (p->scroll > 0) {
		pw_draw_set(win, PW_C_WARN);
		char *more = xasprintf(_(" %d rows below (PgDn) "), p->scroll);
		int mw = pw_draw_width(more);
		pw_draw_text(win, sep_y, r.x + r.w - mw - 1, mw, more);
		free(more);
	}
	pw_draw_set(win, PW_C_NORMAL);
	draw_input(p, win, sep_y + 1, r.x, r.w, rows, first, shown, crow, ccol);
	free(rows);
}

static void on_enter(void *self)
{
	read_status(self);
}

static const pw_help_key help_keys[] = {
    {N_("Enter"), N_("run the cell; after ':', inside brackets or in an indented block it adds a line, "
		     "as the Python prompt does (a blank line ends the block)")},
    {N_("Ctrl-J"), N_("add a line to the input (a multi-line cell)")},
    {N_("Esc, Ctrl-C"), N_("interrupt the running cell (KeyboardInterrupt); Ctrl-C also clears the input")},
    {N_("Left, Right, Home, End"), N_("move in the input (Ctrl-A, Ctrl-E: start, end of the line)")},
    {N_("Backspace, Delete"), N_("delete (Ctrl-K: to the end of the line, Ctrl-U: to its start)")},
    {N_("Up, Down, Ctrl-P, Ctrl-N"), N_("earlier / later inputs (Up, Down move between the lines of a "
					"multi-line input first)")},
    {N_("PgUp, PgDn"), N_("scroll the transcript")},
    {N_("Ctrl-R"), N_("reset the scratchpad: a fresh interpreter (asks; No is the default)")},
    {N_("Ctrl-T"), N_("choose the interpreter: the managed runtime or an environment pane 3 lists "
		      "(a running session starts again; asks)")},
    {N_("letters, digits, q ? /"), N_("are text in this pane: Tab, Shift-Tab leave it, F1 help, F10 quits")},
    {NULL, NULL},
};

const pw_pane_ops pw_pane_python = {
    .title = N_("Python"),
    .create = create,
    .destroy = destroy,
    .draw = draw,
    .key = key,
    .on_event = on_event,
    .on_enter = on_enter,
    .help_keys = help_keys,
    .hint = N_("Enter run  Ctrl-J new line  Esc interrupt  PgUp/PgDn scroll"),
    .wants_text = true,
};
