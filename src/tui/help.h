/* The '?' overlay: the global keys, then the current pane's, then the others'. */
#ifndef PW_TUI_HELP_H
#define PW_TUI_HELP_H

#include "tui/pane.h"

/* Draw over the screen from line *scroll (clamped and written back);
 * returns how many lines it showed (a page for PgUp/PgDn). */
int pw_help_draw(WINDOW *win, int *scroll, const pw_pane_ops *current);
/* The global keys (for tests and the man page). */
extern const pw_help_key pw_help_global_keys[];

#endif
