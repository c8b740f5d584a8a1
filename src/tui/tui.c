/*
 * Entry to the full-screen front end: check the terminal, set up curses and
 * the signal self-pipe, run the app's loop, and always give the terminal back.
 */
#include "config.h"

#include "tui/tui.h"

#include "tui/app.h"
#include "tui/draw.h"

#include "i18n.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

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

/* Signals only write one byte into this pipe; the loop does the work. */
static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	char c = sig == SIGWINCH ? 'W' : sig == SIGINT ? 'I' : 'T';
	if (write(signal_pipe[1], &c, 1) < 0) {
		/* full pipe: the loop has enough to wake up for */
	}
	errno = saved;
}

static const int caught[] = { SIGWINCH, SIGINT, SIGTERM, SIGHUP };
#define NCAUGHT (sizeof caught / sizeof caught[0])

static bool signals_install(struct sigaction old[NCAUGHT])
{
	if (pipe(signal_pipe) != 0)
		return false;
	for (int i = 0; i < 2; i++) {
		fcntl(signal_pipe[i], F_SETFL, fcntl(signal_pipe[i], F_GETFL) | O_NONBLOCK);
		fcntl(signal_pipe[i], F_SETFD, FD_CLOEXEC);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaction(caught[i], &sa, &old[i]);
	return true;
}

static void signals_restore(const struct sigaction old[NCAUGHT])
{
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaction(caught[i], &old[i], NULL);
	close(signal_pipe[0]);
	close(signal_pipe[1]);
	signal_pipe[0] = signal_pipe[1] = -1;
}

/* Home and End as PuTTY, screen and tmux send them, whatever TERM claims. */
static void define_extra_keys(void)
{
	static const struct { const char *seq; int key; } extra[] = {
		{ "\033[1~", KEY_HOME }, { "\033[4~", KEY_END }, { "\033[7~", KEY_HOME }, { "\033[8~", KEY_END },
		{ "\033[H", KEY_HOME }, { "\033[F", KEY_END }, { "\033OH", KEY_HOME }, { "\033OF", KEY_END },
	};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
		if (key_defined(extra[i].seq) <= 0)
			define_key(extra[i].seq, extra[i].key);
}

static bool no_color_requested(void)
{
	const char *nc = getenv("NO_COLOR");
	return nc && *nc;
}

int pw_tui_run(const pw_tui_opts *o)
{
	struct sigaction old[NCAUGHT];
	if (!signals_install(old))
		return 1;
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		signals_restore(old);
		return 2;
	}
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	define_extra_keys();
	nodelay(stdscr, TRUE);
	curs_set(0);
	pw_draw_init(o->ascii, no_color_requested());
	pw_app_config cfg = { .ctx = o->ctx, .mouse = o->mouse, .signal_fd = signal_pipe[0] };
	int rc = pw_app_run(&cfg);
	endwin();
	delscreen(scr);
	signals_restore(old);
	return rc;
}
