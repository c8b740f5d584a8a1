/* The help overlay: every key, scrolled when it does not fit. */
#include "config.h"

#include "tui/help.h"

#include "tui/draw.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>

const pw_help_key pw_help_global_keys[] = {
	{ N_("Tab, Shift-Tab"), N_("next / previous pane") },
	{ N_("1 ... 6"), N_("go to a pane by its number") },
	{ N_("Arrows, h j k l"), N_("move") },
	{ N_("PgUp, PgDn, Home, End"), N_("move by pages, to the ends") },
	{ N_("Enter"), N_("act on the selection / open its details") },
	{ N_("Esc"), N_("close a dialog or details; cancel") },
	{ N_("? or F1"), N_("this help (Esc closes it)") },
	{ N_("/ or F3"), N_("filter the list (empty shows all)") },
	{ N_("r or F5"), N_("refresh") },
	{ N_("q or F10"), N_("quit (asks only while work is running)") },
	{ N_("Ctrl-L"), N_("redraw the screen") },
	{ NULL, NULL },
};

typedef struct help_line {
	const char *keys; /* NULL: a heading in what */
	const char *what;
} help_line;

static size_t add_keys(help_line *out, size_t n, const char *heading, const pw_help_key *keys)
{
	out[n++] = (help_line){ NULL, heading };
	for (size_t i = 0; keys && keys[i].keys; i++)
		out[n++] = (help_line){ _(keys[i].keys), _(keys[i].what) };
	out[n++] = (help_line){ "", "" };
	return n;
}

static size_t count_keys(const pw_help_key *keys)
{
	size_t n = 0;
	while (keys && keys[n].keys)
		n++;
	return n + 2;
}

static help_line *collect(const pw_pane_ops *current, size_t *count)
{
	size_t cap = count_keys(pw_help_global_keys);
	for (int i = 0; i < pw_pane_count; i++)
		cap += count_keys(pw_panes[i]->help_keys);
	help_line *lines = xcalloc(cap, sizeof *lines);
	size_t n = add_keys(lines, 0, _("Everywhere"), pw_help_global_keys);
	n = add_keys(lines, n, _(current->title), current->help_keys);
	for (int i = 0; i < pw_pane_count; i++)
		if (pw_panes[i] != current && pw_panes[i]->help_keys && pw_panes[i]->help_keys[0].keys)
			n = add_keys(lines, n, _(pw_panes[i]->title), pw_panes[i]->help_keys);
	*count = n;
	return lines;
}

/* Rows a key's description may take: at 60 columns the longest (the
 * Python pane's Enter) takes five, and a cut one would read as whole. */
#define DESC_ROWS 8

/* The columns: keys from column 3, as wide as the widest key (at most a
 * third of the screen: a longer one wraps), descriptions two blanks after
 * it up to one short of the right border, as every other line keeps a
 * blank beside the border. */
typedef struct columns {
	int key_w, desc_x, desc_w;
} columns;

static columns measure(const help_line *lines, size_t count, int w)
{
	columns c = { 0, 0, 0 };
	for (size_t i = 0; i < count; i++)
		if (lines[i].keys) {
			int kw = pw_draw_width(lines[i].keys);
			if (kw > c.key_w)
				c.key_w = kw;
		}
	int cap = (w - 8) / 3;
	if (c.key_w > cap)
		c.key_w = cap;
	c.desc_x = 3 + c.key_w + 2;
	c.desc_w = w - c.desc_x - 2;
	return c;
}

static int line_rows(const help_line *l, const columns *c)
{
	if (!l->keys)
		return 1;
	int keys = pw_draw_wrapped(NULL, 0, 0, c->key_w, DESC_ROWS, 0, l->keys);
	int what = pw_draw_wrapped(NULL, 0, 0, c->desc_w, DESC_ROWS, 2, l->what);
	return keys > what ? keys : what;
}

/* The first line from which the rest fits: scrolling further shows nothing new. */
static int last_start(const help_line *lines, size_t count, int rows, const columns *c)
{
	int used = 0;
	for (size_t i = count; i > 0; i--) {
		used += line_rows(&lines[i - 1], c);
		if (used > rows)
			return (int)i;
	}
	return 0;
}

int pw_help_draw(WINDOW *win, int *scroll, const pw_pane_ops *current)
{
	int h = LINES - 2, w = COLS, y = 1, x = 0;
	size_t count = 0;
	help_line *lines = collect(current, &count);
	columns c = measure(lines, count, w);
	int rows = h - 3, max_scroll = last_start(lines, count, rows, &c);
	if (*scroll > max_scroll)
		*scroll = max_scroll;
	pw_draw_set(win, PW_C_NORMAL);
	for (int r = 0; r < h; r++)
		pw_draw_blank(win, y + r, x, w);
	pw_draw_box(win, y, x, h, w, PW_C_TITLE);
	pw_draw_set(win, PW_C_TITLE);
	pw_draw_textf(win, y, x + 2, w - 4, _(" Keys (pyward %s) "), PACKAGE_VERSION);
	int row = 0;
	size_t i = (size_t)*scroll;
	for (; i < count && row + line_rows(&lines[i], &c) <= rows; i++) {
		const help_line *l = &lines[i];
		if (!l->keys) {
			pw_draw_set(win, PW_C_TITLE);
			pw_draw_text(win, y + 1 + row, x + 2, w - 4, l->what);
			row++;
			continue;
		}
		pw_draw_set(win, PW_C_LABEL);
		pw_draw_wrapped(win, y + 1 + row, x + 3, c.key_w, DESC_ROWS, 0, l->keys);
		pw_draw_set(win, PW_C_NORMAL);
		pw_draw_wrapped(win, y + 1 + row, x + c.desc_x, c.desc_w, DESC_ROWS, 2, l->what);
		row += line_rows(l, &c);
	}
	pw_draw_set(win, PW_C_DIM);
	pw_draw_textf(win, y + h - 2, x + 2, w - 4, _("lines %d-%zu of %zu   Up/Down/PgUp/PgDn scroll, Esc closes"),
		      *scroll + 1, i, count);
	pw_draw_set(win, PW_C_NORMAL);
	free(lines);
	return (int)i - *scroll;
}
