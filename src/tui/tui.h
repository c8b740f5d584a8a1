/* The full-screen front end. Owns the terminal; everything else goes through core. */
#ifndef PW_TUI_H
#define PW_TUI_H

#include <stdbool.h>

struct pw_ops_ctx;

typedef struct pw_tui_opts {
	const struct pw_ops_ctx *ctx; /* prepared (pw_cli_prepare): settings, box root, mode */
	bool ascii;         /* force ASCII line drawing */
	bool mouse;         /* capture the mouse (off by default: it breaks copy and paste) */
} pw_tui_opts;

/* Check that a usable terminal is present; on failure fill why (static text)
 * and return false. */
bool pw_tui_terminal_ok(const char **why);
/* Run until the user quits; returns the exit status. */
int pw_tui_run(const pw_tui_opts *opts);

#endif
