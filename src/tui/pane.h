/*
 * The pane interface. Each pane lives in its own pane_*.c file and exports
 * one `const pw_pane_ops`; panes.c lists them in tab order. Everything a
 * pane does happens on the main thread: it draws into the rectangle it is
 * given, answers keys, and hears every background job's events. Long work
 * goes to a job (worker.h) started through the app (app.h).
 */
#ifndef PW_TUI_PANE_H
#define PW_TUI_PANE_H

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdbool.h>

#include "tui/worker.h"

typedef struct pw_app pw_app;

/* Inside the frame: the rows and columns a pane may draw on. */
typedef struct pw_rect {
	int y, x, h, w;
} pw_rect;

/* One line of the help overlay: keys (e.g. "i" or "Enter") and what they do.
 * Both are N_() text; arrays end with { NULL, NULL }. */
typedef struct pw_help_key {
	const char *keys;
	const char *what;
} pw_help_key;

typedef struct pw_pane_ops {
	const char *title;                      /* N_() text, the tab's name */
	void *(*create)(pw_app *app);           /* once, at start; the pane's state */
	void (*destroy)(void *self);
	void (*draw)(void *self, WINDOW *win, pw_rect r);
	/* A key (keys.h: hjkl arrive as arrows, function keys as their
	 * letters). Return true when handled; the screen is then redrawn. */
	bool (*key)(void *self, int ch);
	/* Every job event from every job (so a pane can follow work it did
	 * not start). May be NULL. */
	void (*on_event)(void *self, const pw_job_event *ev);
	/* '/' asks the user for text and passes it here (empty = clear).
	 * NULL: the pane has no filter. */
	void (*filter)(void *self, const char *text);
	void (*on_enter)(void *self);           /* became the visible pane; may be NULL */
	void (*on_leave)(void *self);           /* may be NULL */
	const pw_help_key *help_keys;           /* the pane's keys, for '?' */
	const char *hint;                       /* N_() text for the bottom line */
	/* A pane with a text input: it gets every key first, raw (not
	 * normalised: 'q', '/', '?', digits and hjkl are text), all but Tab
	 * and Shift-Tab, and Ctrl-C; what it declines goes the usual way
	 * (F1 help, F10 quit, Ctrl-C asks to quit). */
	bool wants_text;
} pw_pane_ops;

/* The table in panes.c, in tab order (keys 1..count). */
extern const pw_pane_ops *const pw_panes[];
extern const int pw_pane_count;

/* Each pane's ops, defined in its own file. */
extern const pw_pane_ops pw_pane_runtime;
extern const pw_pane_ops pw_pane_download;
extern const pw_pane_ops pw_pane_envs;
extern const pw_pane_ops pw_pane_attempts;
extern const pw_pane_ops pw_pane_history;
extern const pw_pane_ops pw_pane_python;

#endif
