/*
 * The Python pane's input: a multi-line text buffer with a cursor, the
 * editing verbs of a shell prompt, recall of earlier inputs, and the rule
 * the Python prompt uses to decide whether Enter runs the code or asks for
 * another line (after ':', inside open brackets or a triple-quoted string,
 * after a trailing backslash, and inside an indented block until a blank
 * line). No curses here: the pane draws from pw_pyinput_layout().
 */
#ifndef PW_TUI_PANE_PYTHON_INPUT_H
#define PW_TUI_PANE_PYTHON_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

typedef struct pw_pyinput pw_pyinput;

typedef enum pw_pyinput_move {
	PW_PYIN_LEFT,
	PW_PYIN_RIGHT,
	PW_PYIN_HOME, /* start of the line */
	PW_PYIN_END,  /* end of the line */
	PW_PYIN_UP,   /* the line above (false on the first) */
	PW_PYIN_DOWN, /* the line below (false on the last) */
} pw_pyinput_move;

pw_pyinput *pw_pyinput_new(void);
void pw_pyinput_free(pw_pyinput **in);

void pw_pyinput_insert(pw_pyinput *in, wchar_t wc);
/* A new line at the cursor, indented like the current one (four more
 * after a ':'). */
void pw_pyinput_newline(pw_pyinput *in);
/* Backspace (inside leading blanks: back to the previous indent step). */
void pw_pyinput_backspace(pw_pyinput *in);
void pw_pyinput_delete(pw_pyinput *in);
void pw_pyinput_kill_to_end(pw_pyinput *in);
void pw_pyinput_kill_to_start(pw_pyinput *in);
bool pw_pyinput_move_cursor(pw_pyinput *in, pw_pyinput_move m);
void pw_pyinput_clear(pw_pyinput *in);
/* Replace the text (UTF-8); the cursor goes to its end. */
void pw_pyinput_set(pw_pyinput *in, const char *utf8);

bool pw_pyinput_empty(const pw_pyinput *in); /* nothing but blanks */
bool pw_pyinput_multiline(const pw_pyinput *in);
/* Would the Python prompt ask for another line after this text? */
bool pw_pyinput_incomplete(const pw_pyinput *in);
/* The text as UTF-8 without trailing blank lines; malloc'd. */
char *pw_pyinput_text(const pw_pyinput *in);

/* History: remember the current text (not twice in a row), then step
 * through earlier (-1) and later (+1) inputs; stepping past the newest
 * gives back what was being typed. False when there is nowhere to go. */
void pw_pyinput_remember(pw_pyinput *in);
bool pw_pyinput_recall(pw_pyinput *in, int step);

/* Layout for width columns: rows of characters [from, to) (first: the
 * row starts a line of the text), and where the cursor is. */
typedef struct pw_pyinput_row {
	size_t from, to;
	bool first;
} pw_pyinput_row;

size_t pw_pyinput_layout(const pw_pyinput *in, int width, pw_pyinput_row **rows, size_t *cursor_row,
			 int *cursor_col);
const wchar_t *pw_pyinput_chars(const pw_pyinput *in);

#endif
