/*
 * Text from outside (file and folder names, package names, pip's output,
 * URLs, messages) made safe to print on a terminal: every control
 * character becomes a visible escape, so that a name can neither send the
 * terminal a command (a title, a screen clear, a cursor move) nor forge a
 * line of the report around it. Pure text in, text out; JSON output does
 * not use it (JSON has its own escapes and stays exact).
 *
 * Escaped: C0 controls (U+0000-U+001F: ESC as \e, newline \n, tab \t,
 * carriage return \r, the others \xHH), DEL (\x7f), C1 controls
 * (U+0080-U+009F as \u0080...), the bidirectional overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069, which reorder what a line shows), and
 * every byte that is not part of valid UTF-8 (\xHH: an 8-bit terminal
 * would take 0x9B as CSI). Everything else is kept as it is.
 */
#ifndef PW_VISIBLE_H
#define PW_VISIBLE_H

#include <stdbool.h>
#include <stdio.h>

/* A malloc'd copy of s with every control escaped (NULL gives NULL). */
char *pw_visible(const char *s);
/* The same for a block of lines (pip's output, a traceback): newline and
 * tab are kept, every other control escaped. */
char *pw_visible_lines(const char *s);
/* True when s needs no escape (pw_visible would return it unchanged). */
bool pw_visible_clean(const char *s);
/* Write s escaped to f (pw_visible's rules; keep_lines: pw_visible_lines'). */
void pw_visible_fputs(const char *s, bool keep_lines, FILE *f);

#endif
