/*
 * The application: the main loop and what it offers panes. The loop polls
 * the terminal, the job event pipe and a signal self-pipe; it redraws only
 * when something changed, at most about ten times a second for job events,
 * and sleeps without a timeout when nothing is pending (idle = no CPU).
 */
#ifndef PW_TUI_APP_H
#define PW_TUI_APP_H

#include "tui/draw.h"
#include "tui/pane.h"
#include "tui/worker.h"

#include <stdbool.h>

struct pw_ops_ctx;
typedef struct pw_dialog pw_dialog;

typedef struct pw_app_config {
	const struct pw_ops_ctx *ctx;   /* prepared: settings, box root, workspace, mode */
	bool mouse;
	int signal_fd;        /* read end of the signal self-pipe */
} pw_app_config;

/* Run until quit; returns the exit status. Curses must be set up. */
int pw_app_run(const pw_app_config *cfg);

/* For panes (main thread only). */
const struct pw_ops_ctx *pw_app_ctx(pw_app *app);
const char *pw_app_box_root(const pw_app *app);
bool pw_app_read_only(const pw_app *app);
/* Redraw at the next frame. */
void pw_app_dirty(pw_app *app);
/* One line for the user above the key hints (replaced by the next one). */
void pw_app_status(pw_app *app, pw_color c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Start a background job (see worker.h); its events reach every pane's on_event. */
int pw_app_start_job(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *));
/* The same for a step of an operation the user asked for: when it succeeds,
 * an error still in the status line (a failure before it) is cleared. */
int pw_app_start_op(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *));
/* The same for a read the user did not ask for (a pane refreshing its
 * state): not shown as work, not asked about when quitting. */
int pw_app_start_read(pw_app *app, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *));
bool pw_app_cancel_job(pw_app *app, int job_id);
size_t pw_app_jobs_running(const pw_app *app);
/* Make a pane the visible one. */
void pw_app_show(pw_app *app, const pw_pane_ops *pane);
/* Another pane's state (for the few panes that hand work to each other). */
void *pw_app_pane_state(pw_app *app, const pw_pane_ops *pane);
/* Show a dialog (dialog.h builds them); it takes the keys until it closes. */
void pw_app_open_dialog(pw_app *app, pw_dialog *d);

#endif
