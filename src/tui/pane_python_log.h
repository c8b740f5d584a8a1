/*
 * The Python pane's transcript: the cells and their results as logical
 * lines, each with a role (its colour), a prefix ("In [3]: ", "notice: ")
 * and its text, wrapped into screen rows for a width (continuation rows
 * indented under the text) and drawn from the bottom up with a scroll
 * offset. Bounded: the oldest lines go when there are too many.
 */
#ifndef PW_TUI_PANE_PYTHON_LOG_H
#define PW_TUI_PANE_PYTHON_LOG_H

#include "tui/draw.h"

#include <stddef.h>

typedef struct pw_pylog pw_pylog;

pw_pylog *pw_pylog_new(size_t max_lines);
void pw_pylog_free(pw_pylog **log);

/* Add text (one logical line per '\n', tabs expanded, a last empty line
 * dropped); the first line gets prefix (may be NULL), the others blanks as
 * wide, or cont_prefix when given. Returns the index of the first line
 * added (stable while it lives: see pw_pylog_dropped). */
size_t pw_pylog_add(pw_pylog *log, pw_color color, pw_color prefix_color, const char *prefix,
		    const char *cont_prefix, const char *text);
/* The same for prose (notices, errors): no continuation prefix, and rows
 * break at blanks. */
size_t pw_pylog_add_words(pw_pylog *log, pw_color color, pw_color prefix_color, const char *prefix,
			  const char *text);
/* Lines dropped from the top so far: a line's index minus this is its place. */
size_t pw_pylog_dropped(const pw_pylog *log);
/* Change the prefix of a line by its index (no-op when it was dropped). */
void pw_pylog_set_prefix(pw_pylog *log, size_t index, const char *prefix);
size_t pw_pylog_count(const pw_pylog *log);

/* Rows at this width. */
size_t pw_pylog_rows(pw_pylog *log, int width);
/* Draw the rows that end `scroll` rows above the last one into h rows from
 * (y, x); *scroll is clamped to what exists. */
void pw_pylog_draw(pw_pylog *log, WINDOW *win, int y, int x, int h, int width, int *scroll);

#endif
