/* The Attempts pane's one entry point for the Environments pane. */
#ifndef PW_TUI_PANE_ATTEMPTS_H
#define PW_TUI_PANE_ATTEMPTS_H

typedef struct pw_app pw_app;

/* Show the attempts of the latest pip operation on the environment at
 * target (NULL: the latest of all), read from the catalog, and switch to
 * the pane. */
void pw_attempts_show_target(pw_app *app, const char *target);

#endif
