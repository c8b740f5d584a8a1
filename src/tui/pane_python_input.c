/* The Python pane's input line: editing, history, the continuation rule, layout. */
#include "config.h"

#include "tui/pane_python_input.h"

#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INDENT 4
#define HISTORY_MAX 500

struct pw_pyinput {
	wchar_t *buf; /* not NUL-terminated */
	size_t len, cap, cursor;
	char **history; /* UTF-8, oldest first */
	size_t history_count;
	size_t recall; /* == history_count: not browsing */
	char *draft;   /* what was typed before browsing began */
};

pw_pyinput *pw_pyinput_new(void)
{
	return xcalloc(1, sizeof(pw_pyinput));
}

void pw_pyinput_free(pw_pyinput **in)
{
	if (!in || !*in)
		return;
	for (size_t i = 0; i < (*in)->history_count; i++)
		free((*in)->history[i]);
	free((*in)->history);
	free((*in)->draft);
	free((*in)->buf);
	free(*in);
	*in = NULL;
}

/* ---------------------------------------------------------------- UTF-8 */

static size_t utf8_put(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The next code point of s (invalid bytes become U+FFFD); its length in *n. */
static uint32_t utf8_get(const unsigned char *s, size_t *n)
{
	int more = s[0] < 0x80		   ? 0
		   : (s[0] & 0xe0) == 0xc0 ? 1
		   : (s[0] & 0xf0) == 0xe0 ? 2
		   : (s[0] & 0xf8) == 0xf0 ? 3
					   : -1;
	if (more < 0) {
		*n = 1;
		return 0xfffd;
	}
	uint32_t c = more ? s[0] & (0x3f >> more) : s[0];
	for (int i = 1; i <= more; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*n = (size_t)i;
			return 0xfffd;
		}
		c = (c << 6) | (s[i] & 0x3f);
	}
	*n = (size_t)more + 1;
	return c;
}

static char *to_utf8(const wchar_t *w, size_t len)
{
	char *out = xmalloc(len * 4 + 1), *p = out;
	for (size_t i = 0; i < len; i++)
		p += utf8_put(p, (uint32_t)w[i]);
	*p = '\0';
	return out;
}

/* ---------------------------------------------------------------- editing */

static void reserve(pw_pyinput *in, size_t more)
{
	if (in->len + more <= in->cap)
		return;
	in->cap = (in->len + more) * 2 + 64;
	in->buf = xrealloc(in->buf, in->cap * sizeof *in->buf);
}

static void insert_at_cursor(pw_pyinput *in, const wchar_t *w, size_t n)
{
	reserve(in, n);
	memmove(in->buf + in->cursor + n, in->buf + in->cursor, (in->len - in->cursor) * sizeof *in->buf);
	memcpy(in->buf + in->cursor, w, n * sizeof *w);
	in->len += n;
	in->cursor += n;
}

static void remove_range(pw_pyinput *in, size_t from, size_t to)
{
	memmove(in->buf + from, in->buf + to, (in->len - to) * sizeof *in->buf);
	in->len -= to - from;
	in->cursor = from;
}

static size_t line_start(const pw_pyinput *in, size_t at)
{
	while (at > 0 && in->buf[at - 1] != L'\n')
		at--;
	return at;
}

static size_t line_end(const pw_pyinput *in, size_t at)
{
	while (at < in->len && in->buf[at] != L'\n')
		at++;
	return at;
}

void pw_pyinput_insert(pw_pyinput *in, wchar_t wc)
{
	insert_at_cursor(in, &wc, 1);
}

/* Does the code of [from, to) end with ':' (blanks and a comment aside)?
 * A '#' inside a string is rare enough on a block opener to ignore. */
static bool opens_block(const pw_pyinput *in, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (in->buf[i] == L'#')
			to = i;
	while (to > from && (in->buf[to - 1] == L' ' || in->buf[to - 1] == L'\t'))
		to--;
	return to > from && in->buf[to - 1] == L':';
}

void pw_pyinput_newline(pw_pyinput *in)
{
	size_t start = line_start(in, in->cursor), lead = start;
	while (lead < in->cursor && in->buf[lead] == L' ')
		lead++;
	size_t indent = lead - start + (opens_block(in, start, in->cursor) ? INDENT : 0);
	pw_pyinput_insert(in, L'\n');
	for (size_t i = 0; i < indent; i++)
		pw_pyinput_insert(in, L' ');
}

void pw_pyinput_backspace(pw_pyinput *in)
{
	if (in->cursor == 0)
		return;
	size_t start = line_start(in, in->cursor), i = start;
	while (i < in->cursor && in->buf[i] == L' ')
		i++;
	size_t col = in->cursor - start;
	if (i == in->cursor && col > 0) { /* only blanks before: one indent step back */
		size_t drop = col % INDENT ? col % INDENT : INDENT;
		remove_range(in, in->cursor - drop, in->cursor);
		return;
	}
	remove_range(in, in->cursor - 1, in->cursor);
}

void pw_pyinput_delete(pw_pyinput *in)
{
	if (in->cursor < in->len)
		remove_range(in, in->cursor, in->cursor + 1);
}

void pw_pyinput_kill_to_end(pw_pyinput *in)
{
	size_t end = line_end(in, in->cursor);
	if (end == in->cursor && end < in->len)
		end++; /* at the end of a line: join the next */
	remove_range(in, in->cursor, end);
}

void pw_pyinput_kill_to_start(pw_pyinput *in)
{
	remove_range(in, line_start(in, in->cursor), in->cursor);
}

static bool move_vertically(pw_pyinput *in, bool up)
{
	size_t start = line_start(in, in->cursor), col = in->cursor - start;
	size_t target;
	if (up) {
		if (start == 0)
			return false;
		target = line_start(in, start - 1);
	} else {
		size_t end = line_end(in, in->cursor);
		if (end == in->len)
			return false;
		target = end + 1;
	}
	size_t tend = line_end(in, target);
	in->cursor = target + col < tend ? target + col : tend;
	return true;
}

bool pw_pyinput_move_cursor(pw_pyinput *in, pw_pyinput_move m)
{
	switch (m) {
	case PW_PYIN_LEFT:
		if (in->cursor == 0)
			return false;
		in->cursor--;
		return true;
	case PW_PYIN_RIGHT:
		if (in->cursor == in->len)
			return false;
		in->cursor++;
		return true;
	case PW_PYIN_HOME:
		in->cursor = line_start(in, in->cursor);
		return true;
	case PW_PYIN_END:
		in->cursor = line_end(in, in->cursor);
		return true;
	case PW_PYIN_UP:
		return move_vertically(in, true);
	case PW_PYIN_DOWN:
		return move_vertically(in, false);
	}
	return false;
}

void pw_pyinput_clear(pw_pyinput *in)
{
	in->len = in->cursor = 0;
	in->recall = in->history_count;
	free(in->draft);
	in->draft = NULL;
}

static void set_text(pw_pyinput *in, const char *s)
{
	in->len = in->cursor = 0;
	size_t n = strlen(s);
	reserve(in, n);
	for (size_t i = 0; i < n;) {
		size_t k;
		in->buf[in->len++] = (wchar_t)utf8_get((const unsigned char *)s + i, &k);
		i += k;
	}
	in->cursor = in->len;
}

void pw_pyinput_set(pw_pyinput *in, const char *utf8)
{
	set_text(in, utf8);
	in->recall = in->history_count;
}

/* ---------------------------------------------------------------- questions */

bool pw_pyinput_empty(const pw_pyinput *in)
{
	for (size_t i = 0; i < in->len; i++)
		if (in->buf[i] != L' ' && in->buf[i] != L'\n' && in->buf[i] != L'\t')
			return false;
	return true;
}

bool pw_pyinput_multiline(const pw_pyinput *in)
{
	return wmemchr(in->buf, L'\n', in->len) != NULL;
}

/* A small scan of the Python tokens that matter: strings (with their
 * quotes and escapes), comments and brackets. */
typedef struct scan {
	int depth;     /* open brackets */
	wchar_t quote; /* inside a string: its quote character */
	bool triple;
	bool backslash_end; /* the last line ends with a continuation backslash */
} scan;

static void scan_text(const wchar_t *b, size_t len, scan *s)
{
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < len; i++) {
		wchar_t c = b[i];
		s->backslash_end = false;
		if (s->quote) {
			if (c == L'\\') {
				s->backslash_end = i + 1 < len && b[i + 1] == L'\n';
				i++;
			} else if (c == s->quote &&
				   (!s->triple || (i + 2 < len && b[i + 1] == c && b[i + 2] == c))) {
				i += s->triple ? 2 : 0;
				s->quote = 0;
			} else if (c == L'\n' && !s->triple) {
				s->quote = 0; /* an unclosed one-line string: Python's error to report */
			}
			continue;
		}
		if (c == L'#') {
			while (i + 1 < len && b[i + 1] != L'\n')
				i++;
		} else if (c == L'\'' || c == L'"') {
			s->quote = c;
			s->triple = i + 2 < len && b[i + 1] == c && b[i + 2] == c;
			i += s->triple ? 2 : 0;
		} else if (c == L'(' || c == L'[' || c == L'{') {
			s->depth++;
		} else if ((c == L')' || c == L']' || c == L'}') && s->depth > 0) {
			s->depth--;
		} else if (c == L'\\' && (i + 1 == len || b[i + 1] == L'\n')) {
			s->backslash_end = true;
		}
	}
}

static bool blank_range(const wchar_t *b, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (b[i] != L' ' && b[i] != L'\t')
			return false;
	return true;
}

bool pw_pyinput_incomplete(const pw_pyinput *in)
{
	if (pw_pyinput_empty(in))
		return false;
	scan s;
	scan_text(in->buf, in->len, &s);
	if ((s.quote && s.triple) || s.depth > 0 || s.backslash_end)
		return true;
	size_t last = line_start(in, in->len);
	if (opens_block(in, last, in->len))
		return true;
	/* Inside an indented block a blank line ends the cell, as at the
	 * Python prompt. */
	return pw_pyinput_multiline(in) && !blank_range(in->buf, last, in->len) &&
	       (in->buf[last] == L' ' || in->buf[last] == L'\t');
}

char *pw_pyinput_text(const pw_pyinput *in)
{
	size_t len = in->len;
	for (;;) { /* drop trailing blank lines */
		size_t start = len;
		while (start > 0 && in->buf[start - 1] != L'\n')
			start--;
		if (start == 0 || !blank_range(in->buf, start, len))
			break;
		len = start - 1;
	}
	if (blank_range(in->buf, 0, len) && !pw_pyinput_multiline(in))
		len = 0;
	return to_utf8(in->buf, len);
}

/* ---------------------------------------------------------------- history */

void pw_pyinput_remember(pw_pyinput *in)
{
	char *text = pw_pyinput_text(in);
	if (!*text || (in->history_count && strcmp(in->history[in->history_count - 1], text) == 0)) {
		free(text);
	} else {
		if (in->history_count == HISTORY_MAX) {
			free(in->history[0]);
			memmove(in->history, in->history + 1, (HISTORY_MAX - 1) * sizeof *in->history);
			in->history_count--;
		}
		in->history = xrealloc(in->history, (in->history_count + 1) * sizeof *in->history);
		in->history[in->history_count++] = text;
	}
	in->recall = in->history_count;
	free(in->draft);
	in->draft = NULL;
}

bool pw_pyinput_recall(pw_pyinput *in, int step)
{
	if (step < 0 && in->recall == 0)
		return false;
	if (step > 0 && in->recall >= in->history_count)
		return false;
	if (in->recall == in->history_count) {
		free(in->draft);
		in->draft = to_utf8(in->buf, in->len);
	}
	in->recall = step < 0 ? in->recall - 1 : in->recall + 1;
	set_text(in, in->recall < in->history_count ? in->history[in->recall] : in->draft ? in->draft : "");
	return true;
}

/* ---------------------------------------------------------------- layout */

static int char_width(wchar_t c)
{
	int w = wcwidth(c);
	return w < 0 ? 1 : w;
}

static void add_row(pw_pyinput_row **rows, size_t *n, size_t *cap, size_t from, size_t to, bool first)
{
	if (*n == *cap) {
		*cap = *cap * 2 + 8;
		*rows = xrealloc(*rows, *cap * sizeof **rows);
	}
	(*rows)[(*n)++] = (pw_pyinput_row){from, to, first};
}

size_t pw_pyinput_layout(const pw_pyinput *in, int width, pw_pyinput_row **rows, size_t *cursor_row,
			 int *cursor_col)
{
	size_t n = 0, cap = 0, at = 0;
	*rows = NULL;
	*cursor_row = 0;
	*cursor_col = 0;
	if (width < 2)
		width = 2;
	do {
		size_t end = line_end(in, at), from = at;
		int col = 0;
		bool first = true;
		for (size_t j = at; j < end; j++) {
			int cw = char_width(in->buf[j]);
			if (col + cw > width) {
				add_row(rows, &n, &cap, from, j, first);
				from = j, col = 0, first = false;
			}
			if (j == in->cursor)
				*cursor_row = n, *cursor_col = col;
			col += cw;
		}
		if (in->cursor == end) {
			if (col >= width) { /* the cursor needs a row of its own */
				add_row(rows, &n, &cap, from, end, first);
				from = end, col = 0, first = false;
			}
			*cursor_row = n, *cursor_col = col;
		}
		add_row(rows, &n, &cap, from, end, first);
		at = end + 1;
	} while (at <= in->len);
	return n;
}

const wchar_t *pw_pyinput_chars(const pw_pyinput *in)
{
	return in->buf;
}
