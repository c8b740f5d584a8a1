/* Modal dialogs: confirm, consent and one-line text input. */
#include "config.h"

#include "tui/dialog.h"

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/keys.h"

#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define INPUT_MAX 1024

typedef enum dialog_kind { DIALOG_CONFIRM, DIALOG_CONSENT, DIALOG_INPUT } dialog_kind;

struct pw_dialog {
	dialog_kind kind;
	char *title;
	char **lines;
	size_t line_count;
	char *yes_label, *no_label;
	bool focus_yes;   /* starts false: No is the default */
	bool answer;      /* yes (or text submitted) */
	int scroll;       /* body rows scrolled off the top when the body is taller than the screen */
	int max_scroll;   /* set by the last draw */
	/* input */
	wchar_t text[INPUT_MAX];
	size_t len, cursor;
	pw_dialog_answer_fn answer_fn;
	pw_dialog_text_fn text_fn;
	void *ud;
};

static pw_dialog *dialog_new(dialog_kind kind, const char *title, void *ud)
{
	pw_dialog *d = xcalloc(1, sizeof *d);
	d->kind = kind;
	d->title = xstrdup(title);
	d->ud = ud;
	return d;
}

static void add_line(pw_dialog *d, const char *line)
{
	d->lines = xrealloc(d->lines, (d->line_count + 1) * sizeof *d->lines);
	d->lines[d->line_count++] = xstrdup(line ? line : "");
}

void pw_dialog_confirm(pw_app *app, const char *title, const char *question, const char *yes_label,
		       pw_dialog_answer_fn fn, void *ud)
{
	pw_dialog *d = dialog_new(DIALOG_CONFIRM, title, ud);
	add_line(d, question);
	d->yes_label = xstrdup(yes_label ? yes_label : _("Yes"));
	d->no_label = xstrdup(_("No"));
	d->answer_fn = fn;
	pw_app_open_dialog(app, d);
}

void pw_dialog_consent(pw_app *app, const char *title, const char *const *lines, size_t n, const char *yes_label,
		       const char *no_label, pw_dialog_answer_fn fn, void *ud)
{
	pw_dialog *d = dialog_new(DIALOG_CONSENT, title, ud);
	for (size_t i = 0; i < n; i++)
		add_line(d, lines[i]);
	d->yes_label = xstrdup(yes_label);
	d->no_label = xstrdup(no_label);
	d->answer_fn = fn;
	pw_app_open_dialog(app, d);
}

void pw_dialog_input(pw_app *app, const char *title, const char *prompt, const char *initial, pw_dialog_text_fn fn,
		     void *ud)
{
	pw_dialog *d = dialog_new(DIALOG_INPUT, title, ud);
	add_line(d, prompt);
	d->text_fn = fn;
	if (initial) {
		size_t n = mbstowcs(d->text, initial, INPUT_MAX - 1);
		d->len = d->cursor = n == (size_t)-1 ? 0 : n;
	}
	pw_app_open_dialog(app, d);
}

const char *pw_dialog_title(const pw_dialog *d)
{
	return d->title;
}

const char *pw_dialog_hint(const pw_dialog *d)
{
	switch (d->kind) {
	case DIALOG_CONFIRM: return N_("y yes  n no  Tab switch  Enter choose  Esc no");
	case DIALOG_CONSENT: return N_("Tab/Left/Right switch  Enter choose  Esc decline");
	case DIALOG_INPUT: break;
	}
	return N_("Enter accept  Esc cancel  Ctrl-U clear");
}

/* ---------------------------------------------------------------- drawing */

/* As wide as the frame allows (a pinned SHA256 with its label fits at 80
 * columns), but not wider than reads well. */
static int dialog_width(void)
{
	int w = COLS - 4;
	return w > 100 ? 100 : w;
}

static int body_rows(const pw_dialog *d, int inner)
{
	int rows = 0;
	for (size_t i = 0; i < d->line_count; i++)
		rows += pw_draw_wrapped(NULL, 0, 0, inner, 100, pw_draw_hang(d->lines[i], 0), d->lines[i]);
	return rows;
}

static void draw_button(WINDOW *win, int y, int x, const char *label, bool focus)
{
	pw_draw_set(win, focus ? PW_C_BUTTON_FOCUS : PW_C_BUTTON);
	pw_draw_textf(win, y, x, 30, focus ? "[ %s ]" : "  %s  ", label);
	pw_draw_set(win, PW_C_DIALOG);
}

static void draw_buttons(const pw_dialog *d, WINDOW *win, int y, int x, int inner)
{
	int yes_w = pw_draw_width(d->yes_label) + 4, no_w = pw_draw_width(d->no_label) + 4;
	int start = x + (inner - yes_w - no_w - 4) / 2;
	draw_button(win, y, start, d->yes_label, d->focus_yes);
	draw_button(win, y, start + yes_w + 4, d->no_label, !d->focus_yes);
}

static void draw_input(const pw_dialog *d, WINDOW *win, int y, int x, int inner)
{
	char buf[INPUT_MAX * 4];
	/* Show the end of a long text: the cursor is usually there. */
	size_t from = 0;
	while (from < d->cursor && (int)wcswidth(d->text + from, d->cursor - from) > inner - 3)
		from++;
	wchar_t tmp[INPUT_MAX];
	wmemcpy(tmp, d->text + from, d->len - from);
	tmp[d->len - from] = 0;
	if (wcstombs(buf, tmp, sizeof buf) == (size_t)-1)
		buf[0] = 0;
	pw_draw_set(win, PW_C_SELECTED);
	pw_draw_cell(win, y, x, inner, buf);
	int cx = wcswidth(d->text + from, d->cursor - from);
	mvwchgat(win, y, x + (cx < 0 ? 0 : cx), 1, A_REVERSE | A_UNDERLINE, 0, NULL);
	pw_draw_set(win, PW_C_DIALOG);
}

/* A body taller than the screen scrolls (Up/Down, PgUp/PgDn): a consent
 * must be readable whole on a small terminal, not cut off. */
static void draw_body(pw_dialog *d, WINDOW *win, int y, int x, int inner, int rows, int total)
{
	d->max_scroll = total > rows ? total - rows : 0;
	if (d->scroll > d->max_scroll)
		d->scroll = d->max_scroll;
	int skip = d->scroll, row = y;
	for (size_t i = 0; i < d->line_count && row < y + rows; i++) {
		int hang = pw_draw_hang(d->lines[i], 0);
		int n = pw_draw_wrapped(NULL, 0, 0, inner, 100, hang, d->lines[i]);
		if (skip >= n) {
			skip -= n;
			continue;
		}
		row += pw_draw_wrapped_from(win, row, x, inner, skip, y + rows - row, hang, d->lines[i]);
		skip = 0;
	}
}

static void draw_scroll_mark(const pw_dialog *d, WINDOW *win, int y, int x, int w, int rows, int total)
{
	if (!d->max_scroll)
		return;
	int last = d->scroll + rows < total ? d->scroll + rows : total;
	pw_draw_textf(win, y, x + 2, w - 4, _(" lines %d-%d of %d, Up/Down scroll "), d->scroll + 1, last, total);
}

void pw_dialog_draw(pw_dialog *d, WINDOW *win)
{
	int w = dialog_width(), inner = w - 4;
	int total = body_rows(d, inner), rows = total;
	int h = rows + 5;
	/* Inside the frame (tabs, its two borders and the key line stay): on
	 * a short terminal the dialog scrolls rather than draw over the border. */
	if (h > LINES - 4) {
		h = LINES - 4;
		rows = h - 5;
	}
	int y = (LINES - h) / 2, x = (COLS - w) / 2;
	pw_draw_set(win, PW_C_DIALOG);
	for (int r = 0; r < h; r++)
		pw_draw_blank(win, y + r, x, w);
	pw_draw_box(win, y, x, h, w, PW_C_DIALOG);
	pw_draw_set(win, PW_C_DIALOG);
	wattron(win, A_BOLD);
	pw_draw_textf(win, y, x + 2, w - 4, " %s ", d->title);
	wattroff(win, A_BOLD);
	draw_body(d, win, y + 2, x + 2, inner, rows, total);
	draw_scroll_mark(d, win, y + h - 1, x, w, rows, total);
	if (d->kind == DIALOG_INPUT)
		draw_input(d, win, y + h - 2, x + 2, inner);
	else
		draw_buttons(d, win, y + h - 2, x + 2, inner);
	pw_draw_set(win, PW_C_NORMAL);
}

/* Up/Down/PgUp/PgDn scroll a tall body in every kind of dialog. */
static bool scroll_key(pw_dialog *d, int ch)
{
	int page = LINES / 2 > 1 ? LINES / 2 : 1;
	switch (ch) {
	case KEY_UP: d->scroll--; break;
	case KEY_DOWN: d->scroll++; break;
	case KEY_PPAGE: d->scroll -= page; break;
	case KEY_NPAGE: d->scroll += page; break;
	default: return false;
	}
	if (d->scroll > d->max_scroll)
		d->scroll = d->max_scroll;
	if (d->scroll < 0)
		d->scroll = 0;
	return true;
}

/* ---------------------------------------------------------------- keys */

static bool choice_key(pw_dialog *d, int raw)
{
	int ch = pw_keys_normalize(raw);
	switch (ch) {
	case KEY_LEFT:
	case KEY_RIGHT:
	case '\t':
	case KEY_BTAB: d->focus_yes = !d->focus_yes; return false;
	case '\n': d->answer = d->focus_yes; return true;
	case PW_KEY_ESC:
	case 'q': d->answer = false; return true;
	case 'n':
	case 'N':
		if (d->kind == DIALOG_CONFIRM) {
			d->answer = false;
			return true;
		}
		return false;
	case 'y':
	case 'Y':
		/* A consent is given with Enter on the button only. */
		if (d->kind == DIALOG_CONFIRM) {
			d->answer = true;
			return true;
		}
		return false;
	}
	return false;
}

static void insert_char(pw_dialog *d, wchar_t wc)
{
	if (d->len + 1 >= INPUT_MAX)
		return;
	wmemmove(d->text + d->cursor + 1, d->text + d->cursor, d->len - d->cursor);
	d->text[d->cursor++] = wc;
	d->len++;
}

static void delete_at(pw_dialog *d, size_t at)
{
	if (at >= d->len)
		return;
	wmemmove(d->text + at, d->text + at + 1, d->len - at - 1);
	d->len--;
}

static bool input_key(pw_dialog *d, int raw)
{
	wchar_t wc;
	switch (raw) {
	case '\n':
	case '\r':
	case KEY_ENTER: d->answer = true; return true;
	case PW_KEY_ESC: d->answer = false; return true;
	case KEY_LEFT: if (d->cursor) d->cursor--; return false;
	case KEY_RIGHT: if (d->cursor < d->len) d->cursor++; return false;
	case KEY_HOME:
	case PW_KEY_CTRL('a'): d->cursor = 0; return false;
	case KEY_END:
	case PW_KEY_CTRL('e'): d->cursor = d->len; return false;
	case PW_KEY_CTRL('u'): d->len = d->cursor = 0; return false;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (d->cursor) {
			d->cursor--;
			delete_at(d, d->cursor);
		}
		return false;
	case KEY_DC: delete_at(d, d->cursor); return false;
	}
	if (pw_keys_printable(raw, &wc))
		insert_char(d, wc);
	return false;
}

bool pw_dialog_key(pw_dialog *d, int raw)
{
	/* In a text field j and k are letters, not scroll keys. */
	if (scroll_key(d, d->kind == DIALOG_INPUT ? raw : pw_keys_normalize(raw)))
		return false;
	return d->kind == DIALOG_INPUT ? input_key(d, raw) : choice_key(d, raw);
}

void pw_dialog_free(pw_dialog **dp)
{
	pw_dialog *d = *dp;
	if (!d)
		return;
	for (size_t i = 0; i < d->line_count; i++)
		free(d->lines[i]);
	free(d->lines);
	free(d->title);
	free(d->yes_label);
	free(d->no_label);
	free(d);
	*dp = NULL;
}

void pw_dialog_finish(pw_dialog **dp)
{
	pw_dialog *d = *dp;
	*dp = NULL;
	if (!d)
		return;
	if (d->kind == DIALOG_INPUT) {
		char buf[INPUT_MAX * 4];
		d->text[d->len] = 0;
		if (wcstombs(buf, d->text, sizeof buf) == (size_t)-1)
			buf[0] = 0;
		if (d->text_fn)
			d->text_fn(d->ud, d->answer ? buf : NULL);
	} else if (d->answer_fn) {
		d->answer_fn(d->ud, d->answer);
	}
	pw_dialog_free(&d);
}
