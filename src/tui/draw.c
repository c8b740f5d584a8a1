/* Colours, glyphs and width-aware text for the full-screen interface. */
#include "config.h"

#include "tui/draw.h"

#include "xalloc.h"

#include <langinfo.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static bool unicode;
static attr_t attrs[PW_C_COUNT];

static const struct {
	short fg, bg;
	attr_t color_attr, mono_attr;
} table[PW_C_COUNT] = {
#define PW_COLOR_ROW(name, fg, bg, attr, mono) { fg, bg, attr, mono },
	PW_COLORS(PW_COLOR_ROW)
#undef PW_COLOR_ROW
};

void pw_draw_init(bool ascii, bool no_color)
{
	const char *cs = nl_langinfo(CODESET);
	unicode = !ascii && cs && strcmp(cs, "UTF-8") == 0;
	bool color = !no_color && has_colors() && start_color() == OK;
	if (color)
		use_default_colors();
	for (int i = 0; i < PW_C_COUNT; i++) {
		if (color && (table[i].fg >= 0 || table[i].bg >= 0) && i < COLOR_PAIRS) {
			init_pair((short)i, table[i].fg, table[i].bg);
			attrs[i] = COLOR_PAIR(i) | table[i].color_attr;
		} else {
			attrs[i] = color ? table[i].color_attr : table[i].mono_attr;
		}
	}
}

bool pw_draw_unicode(void)
{
	return unicode;
}

const char *pw_draw_mark(void)
{
	return unicode ? "\u2026" : "~";
}

attr_t pw_draw_attr(pw_color c)
{
	return attrs[c];
}

void pw_draw_set(WINDOW *w, pw_color c)
{
	wattrset(w, attrs[c]);
}

void pw_draw_hline(WINDOW *w, int y, int x, int n)
{
	if (n <= 0)
		return;
	if (unicode)
		mvwhline_set(w, y, x, WACS_HLINE, n);
	else
		mvwhline(w, y, x, '-', n);
}

void pw_draw_box(WINDOW *w, int y, int x, int h, int wid, pw_color c)
{
	if (h < 2 || wid < 2)
		return;
	attr_t saved = getattrs(w);
	pw_draw_set(w, c);
	int bottom = y + h - 1, right = x + wid - 1;
	if (unicode) {
		mvwhline_set(w, y, x + 1, WACS_D_HLINE, wid - 2);
		mvwhline_set(w, bottom, x + 1, WACS_D_HLINE, wid - 2);
		mvwvline_set(w, y + 1, x, WACS_D_VLINE, h - 2);
		mvwvline_set(w, y + 1, right, WACS_D_VLINE, h - 2);
		mvwadd_wch(w, y, x, WACS_D_ULCORNER);
		mvwadd_wch(w, y, right, WACS_D_URCORNER);
		mvwadd_wch(w, bottom, x, WACS_D_LLCORNER);
		mvwadd_wch(w, bottom, right, WACS_D_LRCORNER);
	} else {
		mvwhline(w, y, x + 1, '-', wid - 2);
		mvwhline(w, bottom, x + 1, '-', wid - 2);
		mvwvline(w, y + 1, x, '|', h - 2);
		mvwvline(w, y + 1, right, '|', h - 2);
		mvwaddch(w, y, x, '+');
		mvwaddch(w, y, right, '+');
		mvwaddch(w, bottom, x, '+');
		mvwaddch(w, bottom, right, '+');
	}
	wattrset(w, saved);
}

void pw_draw_blank(WINDOW *w, int y, int x, int n)
{
	if (n > 0)
		mvwhline(w, y, x, ' ', n);
}

/* Decode the next character; invalid bytes become '?' so nothing is lost silently. */
static size_t next_wchar(const char *s, size_t len, mbstate_t *st, wchar_t *wc)
{
	size_t n = mbrtowc(wc, s, len, st);
	if (n == (size_t)-1 || n == (size_t)-2) {
		memset(st, 0, sizeof *st);
		*wc = L'?';
		return 1;
	}
	if (n == 0)
		return 1;
	if (*wc < 0x20 || *wc == 0x7f)
		*wc = L' ';
	return n;
}

static int wchar_width(wchar_t wc)
{
	int cw = wcwidth(wc);
	return cw < 0 ? 1 : cw;
}

int pw_draw_width(const char *s)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t len = s ? strlen(s) : 0;
	int width = 0;
	for (size_t i = 0; i < len;) {
		wchar_t wc;
		i += next_wchar(s + i, len - i, &st, &wc);
		width += wchar_width(wc);
	}
	return width;
}

int pw_draw_text(WINDOW *w, int y, int x, int width, const char *s)
{
	if (!s || width <= 0)
		return 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t len = strlen(s);
	wmove(w, y, x);
	int used = 0;
	for (size_t i = 0; i < len;) {
		wchar_t wc[2] = { 0, 0 };
		i += next_wchar(s + i, len - i, &st, &wc[0]);
		int cw = wchar_width(wc[0]);
		if (used + cw > width)
			break;
		if (!unicode && wc[0] > 0x7e)
			wc[0] = L'?';
		waddnwstr(w, wc, 1);
		used += cw;
	}
	return used;
}

int pw_draw_hang(const char *line, int otherwise)
{
	int cols = 0;
	const char *c = line;
	for (; *c == ' '; c++)
		cols++;
	const char *label = c;
	for (; *c && *c != ':' && *c != ' ' && cols < 16; c++)
		if ((*c & 0xC0) != 0x80) /* a UTF-8 lead byte: one column for a label's letters */
			cols++;
	if (*c != ':' || c == label || c[1] != ' ') /* no label: an indented line keeps its indent */
		return label > line && label - line <= 20 && *label ? (int)(label - line) : otherwise;
	for (c++, cols++; *c == ' '; c++)
		cols++;
	return cols <= 20 && *c ? cols : otherwise;
}

int pw_draw_text_cut(WINDOW *w, int y, int x, int width, const char *s)
{
	if (!s || width <= 1 || pw_draw_width(s) <= width)
		return pw_draw_text(w, y, x, width, s);
	int used = pw_draw_text(w, y, x, width - 1, s);
	mvwaddstr(w, y, x + used, pw_draw_mark());
	return used + 1;
}

int pw_draw_wrapped_cut(WINDOW *w, int y, int x, int width, int max_rows, int indent, const char *s)
{
	int rows = pw_draw_wrapped(w, y, x, width, max_rows, indent, s);
	if (w && rows > 0 && width > 1 && pw_draw_wrapped(NULL, 0, 0, width, max_rows + 1, indent, s) > max_rows)
		mvwaddstr(w, y + rows - 1, x + width - 1, pw_draw_mark());
	return rows;
}

int pw_draw_text_tail(WINDOW *w, int y, int x, int width, const char *s)
{
	if (!s || width <= 1 || pw_draw_width(s) <= width)
		return pw_draw_text(w, y, x, width, s);
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t len = strlen(s);
	const char *tail = s;
	while (*tail && pw_draw_width(tail) > width - 1) {
		wchar_t wc;
		size_t n = next_wchar(tail, len - (size_t)(tail - s), &st, &wc);
		tail += n ? n : 1;
	}
	mvwaddstr(w, y, x, pw_draw_mark());
	return 1 + pw_draw_text(w, y, x + 1, width - 1, tail);
}

/* Where the row starting at byte from ends: the last blank that fits (in
 * the row's second half), else as many characters as fit. *next is where the following row starts. */
static size_t row_end(const char *s, size_t len, size_t from, int width, size_t *next)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int col = 0;
	size_t i = from, blank = 0;
	while (i < len) {
		wchar_t wc;
		size_t n = next_wchar(s + i, len - i, &st, &wc);
		int cw = wchar_width(wc);
		if (col + cw > width)
			break;
		/* Only a blank in the row's second half: "from:   URL" keeps URL beside its label. */
		if (wc == L' ' && col >= width / 2)
			blank = i;
		col += cw;
		i += n;
	}
	if (i >= len) {
		*next = len;
		return len;
	}
	if (blank > from) {
		*next = blank + 1;
		return blank;
	}
	*next = i > from ? i : i + 1;
	return i;
}

static void draw_slice(WINDOW *w, int y, int x, const char *s, size_t len)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wmove(w, y, x);
	for (size_t i = 0; i < len;) {
		wchar_t wc[2] = { 0, 0 };
		i += next_wchar(s + i, len - i, &st, &wc[0]);
		if (!unicode && wc[0] > 0x7e)
			wc[0] = L'?';
		waddnwstr(w, wc, 1);
	}
}

int pw_draw_wrapped_from(WINDOW *w, int y, int x, int width, int skip, int max_rows, int indent, const char *s)
{
	if (!s || width <= indent || max_rows <= 0)
		return 0;
	size_t len = strlen(s), from = 0;
	int row = 0, drawn = 0;
	do {
		int in = row ? indent : 0;
		size_t next;
		size_t end = row_end(s, len, from, width - in, &next);
		if (w && row >= skip)
			draw_slice(w, y + drawn, x + in, s + from, end - from);
		if (row >= skip)
			drawn++;
		from = next;
		row++;
	} while (from < len && drawn < max_rows);
	return drawn;
}

int pw_draw_wrapped(WINDOW *w, int y, int x, int width, int max_rows, int indent, const char *s)
{
	return pw_draw_wrapped_from(w, y, x, width, 0, max_rows, indent, s);
}

int pw_draw_textf(WINDOW *w, int y, int x, int width, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	int used = pw_draw_text(w, y, x, width, s);
	free(s);
	return used;
}

void pw_draw_cell(WINDOW *w, int y, int x, int width, const char *s)
{
	int used = pw_draw_text(w, y, x, width, s);
	pw_draw_blank(w, y, x + used, width - used);
}

void pw_draw_bar(WINDOW *w, int y, int x, int width, double fraction)
{
	if (width < 3)
		return;
	int inner = width - 2;
	int filled = fraction < 0 ? 0 : (int)(fraction * inner + 0.5);
	if (filled > inner)
		filled = inner;
	mvwaddch(w, y, x, '[');
	attr_t saved = getattrs(w);
	pw_draw_set(w, PW_C_BAR);
	for (int i = 0; i < inner; i++) {
		if (i < filled) {
			if (unicode)
				mvwaddwstr(w, y, x + 1 + i, L"\x2588");
			else
				mvwaddch(w, y, x + 1 + i, '#');
		} else {
			wattrset(w, saved);
			mvwaddch(w, y, x + 1 + i, unicode ? ' ' : '.');
			pw_draw_set(w, PW_C_BAR);
		}
	}
	wattrset(w, saved);
	mvwaddch(w, y, x + width - 1, ']');
}
