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

static void draw_frame(bool unicode)
{
	if (unicode)
		border_set(WACS_D_VLINE, WACS_D_VLINE, WACS_D_HLINE, WACS_D_HLINE,
			   WACS_D_ULCORNER, WACS_D_URCORNER, WACS_D_LLCORNER, WACS_D_LRCORNER);
	else
		border('|', '|', '-', '-', '+', '+', '+', '+');
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
	if (ops >= 0)
		mvprintw(5, 3, _("Catalog:    %d operations recorded"), ops);
	else
		mvprintw(5, 3, _("Catalog:    unreadable (run 'pyward history' for details)"));
	mvprintw(7, 3, _("The panes for the runtime, downloads, environments, attempts"));
	mvprintw(8, 3, _("and history are not built yet. Use the command line meanwhile:"));
	mvprintw(9, 5, "pyward --help");
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
