/*
 * Drawing helpers: the colour table (colour, monochrome, or none with
 * NO_COLOR), box and line glyphs (wide-character ncursesw, or ASCII when the
 * locale is not UTF-8 or --ascii), and text that is cut to a column width
 * counting display cells, not bytes.
 */
#ifndef PW_TUI_DRAW_H
#define PW_TUI_DRAW_H

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdbool.h>
#include <stdint.h>

/* name, foreground, background, attributes with colour, attributes without */
#define PW_COLORS(X)                                                    \
	X(NORMAL, -1, -1, A_NORMAL, A_NORMAL)                           \
	X(FRAME, COLOR_BLUE, -1, A_NORMAL, A_NORMAL)                    \
	X(TITLE, COLOR_CYAN, -1, A_BOLD, A_BOLD)                        \
	X(TAB, -1, -1, A_NORMAL, A_NORMAL)                              \
	X(TAB_ACTIVE, COLOR_BLACK, COLOR_CYAN, A_BOLD, A_REVERSE)       \
	X(HINT, COLOR_BLACK, COLOR_WHITE, A_NORMAL, A_REVERSE)          \
	X(LABEL, COLOR_CYAN, -1, A_NORMAL, A_NORMAL)                    \
	X(OK, COLOR_GREEN, -1, A_BOLD, A_BOLD)                          \
	X(WARN, COLOR_YELLOW, -1, A_BOLD, A_BOLD)                       \
	X(ERROR, COLOR_RED, -1, A_BOLD, A_BOLD)                         \
	X(SELECTED, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE)       \
	X(BAR, COLOR_GREEN, -1, A_BOLD, A_BOLD)                         \
	X(DIALOG, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_NORMAL)          \
	X(BUTTON, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_NORMAL)          \
	X(BUTTON_FOCUS, COLOR_BLACK, COLOR_WHITE, A_BOLD, A_REVERSE)    \
	X(DIM, -1, -1, A_DIM, A_DIM)

typedef enum pw_color {
#define PW_COLOR_ENUM(name, fg, bg, attr, mono) PW_C_##name,
	PW_COLORS(PW_COLOR_ENUM)
#undef PW_COLOR_ENUM
	PW_C_COUNT
} pw_color;

/* Call once after initscr/newterm. */
void pw_draw_init(bool ascii, bool no_color);
bool pw_draw_unicode(void);
/* The mark that ends cut text: "…", or "~" where lines are ASCII. */
const char *pw_draw_mark(void);
/* The attributes for a role (colour pair or monochrome attributes). */
attr_t pw_draw_attr(pw_color c);
void pw_draw_set(WINDOW *w, pw_color c);

/* Box from (y, x) with h rows and w columns; title may be NULL. */
void pw_draw_box(WINDOW *w, int y, int x, int h, int wid, pw_color c);
void pw_draw_hline(WINDOW *w, int y, int x, int n);
/* Fill a row of width n with blanks. */
void pw_draw_blank(WINDOW *w, int y, int x, int n);

/* Text from (y, x), at most width display columns; returns the columns used. */
int pw_draw_text(WINDOW *w, int y, int x, int width, const char *utf8);
int pw_draw_textf(WINDOW *w, int y, int x, int width, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Text padded with blanks to exactly width columns. */
void pw_draw_cell(WINDOW *w, int y, int x, int width, const char *utf8);
/* Text over as many rows as it needs (at most max_rows), cut at width
 * columns; continuation rows start indent columns in. win NULL only counts.
 * Returns the rows used. */
int pw_draw_wrapped(WINDOW *w, int y, int x, int width, int max_rows, int indent, const char *utf8);
/* pw_draw_wrapped, but text that needs more than max_rows ends its last
 * row in a mark ("…", "~" in ASCII), so a cut value does not read as whole. */
int pw_draw_wrapped_cut(WINDOW *w, int y, int x, int width, int max_rows, int indent, const char *utf8);
/* The same, leaving out the first skip rows (for scrolled text); returns the rows drawn. */
int pw_draw_wrapped_from(WINDOW *w, int y, int x, int width, int skip, int max_rows, int indent, const char *utf8);
/* Display width of a UTF-8 string (the locale's). */
int pw_draw_width(const char *utf8);
/* Where a wrapped line goes on: under the value of a "label:   value" line
 * (leading blanks allowed: a consent's "from:   /a/long/path", a detail's
 * "  target:    /path"); under its own text for a line that starts with
 * blanks and has no label (a value's second line); else otherwise columns in. */
int pw_draw_hang(const char *utf8, int otherwise);
/* pw_draw_text, but text that does not fit ends in a mark ("…", "~" in
 * ASCII) so a cut message does not read as a whole one. */
int pw_draw_text_cut(WINDOW *w, int y, int x, int width, const char *utf8);

/* Text that does not fit shows its end after the mark: for paths, whose
 * last parts tell them apart. */
int pw_draw_text_tail(WINDOW *w, int y, int x, int width, const char *utf8);

/* A progress bar of width columns; fraction in 0..1, or < 0 when unknown. */
void pw_draw_bar(WINDOW *w, int y, int x, int width, double fraction);

#endif
