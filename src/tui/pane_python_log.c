/* The Python pane's transcript: logical lines, wrapped into rows on demand. */
#include "config.h"

#include "tui/pane_python_log.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef struct log_line {
	pw_color color, prefix_color;
	char *prefix; /* drawn on the first row; continuation rows are indented as wide */
	char *text;
	bool words; /* prose: rows break at a blank when one is near the end */
} log_line;

typedef struct log_row {
	size_t line;	 /* place in lines[] */
	size_t from, to; /* bytes of its text */
	bool first;
} log_row;

struct pw_pylog {
	log_line *lines;
	size_t count, cap, max, dropped;
	/* rows for one width, for lines [0, laid_out) */
	log_row *rows;
	size_t row_count, row_cap, laid_out;
	int width;
};

pw_pylog *pw_pylog_new(size_t max_lines)
{
	pw_pylog *log = xcalloc(1, sizeof *log);
	log->max = max_lines < 16 ? 16 : max_lines;
	return log;
}

static void line_clear(log_line *l)
{
	free(l->prefix);
	free(l->text);
}

void pw_pylog_free(pw_pylog **log)
{
	if (!log || !*log)
		return;
	for (size_t i = 0; i < (*log)->count; i++)
		line_clear(&(*log)->lines[i]);
	free((*log)->lines);
	free((*log)->rows);
	free(*log);
	*log = NULL;
}

static void invalidate(pw_pylog *log)
{
	log->row_count = log->laid_out = 0;
}

/* Drop the oldest tenth at once, so adding stays cheap. */
static void make_room(pw_pylog *log)
{
	if (log->count < log->max)
		return;
	size_t drop = log->max / 10;
	for (size_t i = 0; i < drop; i++)
		line_clear(&log->lines[i]);
	memmove(log->lines, log->lines + drop, (log->count - drop) * sizeof *log->lines);
	log->count -= drop;
	log->dropped += drop;
	invalidate(log);
}

/* Tabs to blanks (stops of 8), carriage returns and other controls out. */
static char *clean_line(const char *s, size_t len)
{
	size_t tabs = 0;
	for (size_t i = 0; i < len; i++)
		tabs += s[i] == '\t';
	char *out = xmalloc(len + tabs * 8 + 1), *p = out;
	size_t col = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\t') {
			do
				*p++ = ' ';
			while (++col % 8);
		} else if (c == '\r') {
			continue;
		} else {
			*p++ = c < 0x20 || c == 0x7f ? ' ' : (char)c;
			col += (c & 0xc0) != 0x80;
		}
	}
	*p = '\0';
	return out;
}

static char *blanks_as_wide(const char *prefix)
{
	int w = prefix ? pw_draw_width(prefix) : 0;
	char *b = xmalloc((size_t)w + 1);
	memset(b, ' ', (size_t)w);
	b[w] = '\0';
	return b;
}

size_t pw_pylog_add(pw_pylog *log, pw_color color, pw_color prefix_color, const char *prefix,
		    const char *cont_prefix, const char *text)
{
	size_t first = log->dropped + log->count;
	size_t len = strlen(text);
	if (len && text[len - 1] == '\n')
		len--;
	size_t at = 0;
	bool is_first = true;
	do {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		make_room(log);
		if (is_first)
			first = log->dropped + log->count;
		if (log->count == log->cap) {
			log->cap = log->cap * 2 + 64;
			log->lines = xrealloc(log->lines, log->cap * sizeof *log->lines);
		}
		log->lines[log->count++] = (log_line){
		    .color = color,
		    .prefix_color = prefix_color,
		    .prefix = is_first	    ? xstrdup(prefix ? prefix : "")
			      : cont_prefix ? xstrdup(cont_prefix)
					    : blanks_as_wide(prefix),
		    .text = clean_line(text + at, end - at),
		};
		is_first = false;
		at = end + 1;
	} while (at <= len);
	return first;
}

size_t pw_pylog_add_words(pw_pylog *log, pw_color color, pw_color prefix_color, const char *prefix,
			  const char *text)
{
	size_t first = pw_pylog_add(log, color, prefix_color, prefix, NULL, text);
	for (size_t i = first > log->dropped ? first - log->dropped : 0; i < log->count; i++)
		log->lines[i].words = true;
	return first;
}

size_t pw_pylog_dropped(const pw_pylog *log)
{
	return log->dropped;
}

size_t pw_pylog_count(const pw_pylog *log)
{
	return log->count;
}

void pw_pylog_set_prefix(pw_pylog *log, size_t index, const char *prefix)
{
	if (index < log->dropped || index - log->dropped >= log->count)
		return;
	log_line *l = &log->lines[index - log->dropped];
	free(l->prefix);
	l->prefix = xstrdup(prefix);
	invalidate(log);
}

/* ---------------------------------------------------------------- rows */

/* Bytes of s[from, len) that fit in width columns (at least one character). */
static size_t fit(const char *s, size_t from, size_t len, int width)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int col = 0;
	size_t i = from;
	while (i < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + i, len - i, &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof st);
			n = 1, wc = L'?';
		}
		int cw = wcwidth(wc);
		cw = cw < 0 ? 1 : cw;
		if (col + cw > width && i > from)
			break;
		col += cw;
		i += n;
	}
	return i;
}

static void add_row(pw_pylog *log, size_t line, size_t from, size_t to, bool first)
{
	if (log->row_count == log->row_cap) {
		log->row_cap = log->row_cap * 2 + 256;
		log->rows = xrealloc(log->rows, log->row_cap * sizeof *log->rows);
	}
	log->rows[log->row_count++] = (log_row){line, from, to, first};
}

static void lay_out(pw_pylog *log, int width)
{
	if (width != log->width) {
		invalidate(log);
		log->width = width;
	}
	for (; log->laid_out < log->count; log->laid_out++) {
		const log_line *l = &log->lines[log->laid_out];
		int room = width - pw_draw_width(l->prefix);
		if (room < 8)
			room = 8;
		size_t len = strlen(l->text), at = 0;
		do {
			size_t end = fit(l->text, at, len, room), next = end;
			if (l->words && end < len) { /* a blank in the row's second half */
				for (size_t b = end; b > at + (end - at) / 2; b--)
					if (l->text[b - 1] == ' ') {
						end = b - 1, next = b;
						break;
					}
			}
			add_row(log, log->laid_out, at, end, at == 0);
			at = next;
		} while (at < len);
	}
}

size_t pw_pylog_rows(pw_pylog *log, int width)
{
	lay_out(log, width);
	return log->row_count;
}

static void draw_row(const pw_pylog *log, const log_row *r, WINDOW *win, int y, int x, int width)
{
	const log_line *l = &log->lines[r->line];
	int pw = pw_draw_width(l->prefix);
	if (r->first) {
		pw_draw_set(win, l->prefix_color);
		pw_draw_text(win, y, x, width, l->prefix);
	}
	char *slice = xmalloc(r->to - r->from + 1);
	memcpy(slice, l->text + r->from, r->to - r->from);
	slice[r->to - r->from] = '\0';
	pw_draw_set(win, l->color);
	if (width > pw)
		pw_draw_text(win, y, x + pw, width - pw, slice);
	free(slice);
	pw_draw_set(win, PW_C_NORMAL);
}

void pw_pylog_draw(pw_pylog *log, WINDOW *win, int y, int x, int h, int width, int *scroll)
{
	lay_out(log, width);
	int total = (int)log->row_count;
	int max_scroll = total > h ? total - h : 0;
	if (*scroll > max_scroll)
		*scroll = max_scroll;
	if (*scroll < 0)
		*scroll = 0;
	int last = total - *scroll; /* one past the last row shown */
	int first = last - h < 0 ? 0 : last - h;
	for (int i = first; i < last; i++)
		draw_row(log, &log->rows[i], win, y + (i - first), x, width);
}
