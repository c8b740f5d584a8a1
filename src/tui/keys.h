/*
 * Keys: what the terminal sends, made uniform before panes see it. hjkl
 * arrive as arrows; every function key has a letter alias (F1 '?', F5 'r',
 * F10 'q'), because terminals and multiplexers grab some of them.
 * Characters outside Latin-1 arrive as PW_KEY_WIDE(wc) (text input only).
 */
#ifndef PW_TUI_KEYS_H
#define PW_TUI_KEYS_H

#include <stdbool.h>
#include <wchar.h>

#define PW_KEY_ESC 27
#define PW_KEY_ENTER_CH '\n'
#define PW_KEY_CTRL(c) ((c) & 0x1f)
#define PW_KEY_WIDE_FLAG 0x40000000
#define PW_KEY_WIDE(wc) (PW_KEY_WIDE_FLAG | (int)(wc))

/* Read one key from the window without waiting; false when none is waiting. */
bool pw_keys_read(void *win, int *raw);
/* Navigation aliases: hjkl to arrows, function keys to letters, Enter made one code. */
int pw_keys_normalize(int raw);
bool pw_keys_is_enter(int ch);
/* A printable character for text input (ASCII, Latin-1 or PW_KEY_WIDE); its wide char in *wc. */
bool pw_keys_printable(int raw, wchar_t *wc);

#endif
