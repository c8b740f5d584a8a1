/* Key normalisation: aliases for navigation and function keys. */
#include "config.h"

#include "tui/keys.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <wctype.h>

bool pw_keys_read(void *win, int *raw)
{
	wint_t wc = 0;
	int rc = wget_wch((WINDOW *)win, &wc);
	if (rc == ERR)
		return false;
	if (rc == KEY_CODE_YES)
		*raw = (int)wc;
	else if (wc >= 0x100)
		*raw = PW_KEY_WIDE(wc);
	else
		*raw = (int)wc;
	return true;
}

int pw_keys_normalize(int raw)
{
	switch (raw) {
	case 'k': return KEY_UP;
	case 'j': return KEY_DOWN;
	case 'h': return KEY_LEFT;
	case 'l': return KEY_RIGHT;
	case '\r':
	case KEY_ENTER: return '\n';
	case KEY_F(1): return '?';
	case KEY_F(5): return 'r';
	case KEY_F(10): return 'q';
	case KEY_F(3): return '/';
	default: return raw;
	}
}

bool pw_keys_is_enter(int ch)
{
	return ch == '\n' || ch == '\r' || ch == KEY_ENTER;
}

bool pw_keys_printable(int raw, wchar_t *wc)
{
	if (raw & PW_KEY_WIDE_FLAG) {
		*wc = (wchar_t)(raw & ~PW_KEY_WIDE_FLAG);
		return iswprint((wint_t)*wc);
	}
	if (raw >= 0x20 && raw < 0x7f) {
		*wc = (wchar_t)raw;
		return true;
	}
	if (raw >= 0xa0 && raw < 0x100) {
		*wc = (wchar_t)raw;
		return iswprint((wint_t)*wc);
	}
	return false;
}
