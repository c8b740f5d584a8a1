/*
 * Placeholder screen for the full-screen front end: it proves the terminal
 * handling (capability check, resize, too-small notice, ASCII fallback) and
 * shows where things live. The panes arrive with the TUI issue.
 */
#include "config.h"

#include "tui/tui.h"

#include "catalog.h"
#include "i18n.h"
#include "paths.h"
#include "runtime.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#define MIN_COLS 80
#define MIN_LINES 24

bool pw_tui_terminal_ok(const char **why)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		*why = _("standard input and output must be a terminal");
		return false;
	}
	const char *term = getenv("TERM");
	if (!term || !*term || strcmp(term, "dumb") == 0) {
		*why = _("the terminal type (TERM) is unset or 'dumb'");
		return false;
	}
	int status = 0;
	if (setupterm(NULL, STDOUT_FILENO, &status) != OK) {
		*why = _("the terminal type (TERM) is not known to terminfo");
		return false;
	}
	del_curterm(cur_term);
	return true;
}

static bool use_unicode(const pw_tui_opts *o)
{
	const char *cs = nl_langinfo(CODESET);
	return !o->ascii && cs && strcmp(cs, "UTF-8") == 0;
}

/* The frame stops above the key hint line, which has the last row. */
static void draw_frame(bool unicode)
{
	int bottom = LINES - 2, right = COLS - 1;
	if (unicode) {
		mvhline_set(0, 1, WACS_D_HLINE, right - 1);
		mvhline_set(bottom, 1, WACS_D_HLINE, right - 1);
		mvvline_set(1, 0, WACS_D_VLINE, bottom - 1);
		mvvline_set(1, right, WACS_D_VLINE, bottom - 1);
		mvadd_wch(0, 0, WACS_D_ULCORNER);
		mvadd_wch(0, right, WACS_D_URCORNER);
		mvadd_wch(bottom, 0, WACS_D_LLCORNER);
		mvadd_wch(bottom, right, WACS_D_LRCORNER);
	} else {
		mvhline(0, 1, '-', right - 1);
		mvhline(bottom, 1, '-', right - 1);
		mvvline(1, 0, '|', bottom - 1);
		mvvline(1, right, '|', bottom - 1);
		mvaddch(0, 0, '+');
		mvaddch(0, right, '+');
		mvaddch(bottom, 0, '+');
		mvaddch(bottom, right, '+');
	}
}

/* One line on the managed runtime's honest state. */
static void draw_runtime(const pw_tui_opts *o, int row)
{
	pw_runtime_info info;
	pw_runtime_status(o->box_root, &info);
	if (info.state == PW_RUNTIME_INSTALLED)
		mvprintw(row, 3, _("Runtime:    CPython %s (%s)"), info.version, info.platform ? info.platform : "?");
	else if (info.state == PW_RUNTIME_BROKEN)
		mvprintw(row, 3, _("Runtime:    broken: %.*s"), COLS - 24, info.why ? info.why : "?");
	else
		mvprintw(row, 3, _("Runtime:    not provisioned ('pyward runtime install')"));
	pw_runtime_info_clear(&info);
}

static int count_operations(const char *box_root)
{
	char *path = pw_paths_catalog(box_root);
	pw_catalog *cat = NULL;
	pw_op_list ops = { 0 };
	pw_op_filter f = { .limit = -1 };
	int n = -1;
	pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_ONLY, &cat);
	if (!e)
		e = pw_catalog_ops_query(cat, &f, &ops);
	if (!e)
		n = (int)ops.count;
	pw_err_free(e);
	pw_op_list_clear(&ops);
	pw_catalog_close(&cat);
	free(path);
	return n;
}

static void draw_too_small(void)
{
	erase();
	mvprintw(0, 0, _("terminal too small (need %dx%d)"), MIN_COLS, MIN_LINES);
	mvprintw(1, 0, _("q quits"));
}

static void draw_screen(const pw_tui_opts *o, int ops)
{
	erase();
	draw_frame(use_unicode(o));
	attron(A_BOLD);
	mvprintw(0, 2, " pyward %s ", PACKAGE_VERSION);
	attroff(A_BOLD);
	mvprintw(2, 3, _("Box root:   %.*s"), COLS - 20, o->box_root);
	mvprintw(3, 3, _("Workspace:  %.*s"), COLS - 20, o->workspace);
	mvprintw(4, 3, _("Mode:       %s"), o->mode);
	draw_runtime(o, 6);
	if (ops >= 0)
		mvprintw(5, 3, _("Catalog:    %d operations recorded"), ops);
	else
		mvprintw(5, 3, _("Catalog:    unreadable (run 'pyward history' for details)"));
	mvprintw(8, 3, _("The panes for the runtime, downloads, environments, attempts"));
	mvprintw(9, 3, _("and history are not built yet. Use the command line meanwhile:"));
	mvprintw(10, 5, "pyward --help");
	attron(A_REVERSE);
	mvprintw(LINES - 1, 0, "%-*s", COLS, _(" q quit   r refresh"));
	attroff(A_REVERSE);
}

static void redraw(const pw_tui_opts *o, int ops)
{
	if (COLS < MIN_COLS || LINES < MIN_LINES)
		draw_too_small();
	else
		draw_screen(o, ops);
	refresh();
}

int pw_tui_run(const pw_tui_opts *o)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return 2;
	set_escdelay(25);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	int ops = count_operations(o->box_root);
	redraw(o, ops);
	for (;;) {
		int ch = getch();
		if (ch == 'q' || ch == 'Q')
			break;
		if (ch == 'r')
			ops = count_operations(o->box_root);
		redraw(o, ops);
	}
	endwin();
	delscreen(scr);
	return 0;
}
