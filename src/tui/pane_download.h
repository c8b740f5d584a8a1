/* The Download pane's entry point for the other panes. */
#ifndef PW_TUI_PANE_DOWNLOAD_H
#define PW_TUI_PANE_DOWNLOAD_H

#include "tui/app.h"

/* Show the Download pane and start the consented runtime install: plan,
 * consent dialog (No is the default), then the install with progress. */
void pw_download_begin(pw_app *app);

#endif
