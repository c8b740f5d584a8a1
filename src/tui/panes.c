/* The panes, in tab order: adding one is a new pane_*.c plus one line here. */
#include "config.h"

#include "tui/pane.h"

const pw_pane_ops *const pw_panes[] = {
	&pw_pane_runtime,
	&pw_pane_download,
	&pw_pane_envs,
	&pw_pane_attempts,
	&pw_pane_history,
	&pw_pane_python,
};

const int pw_pane_count = (int)(sizeof pw_panes / sizeof pw_panes[0]);
