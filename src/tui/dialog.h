/*
 * Modal dialogs drawn over the panes: confirm (No is the default), consent
 * (a statement of what will happen; Enter on the yes button is the consent,
 * the focus starts on the no button), and a one-line text input. The answer
 * arrives through a callback on the main thread after the dialog closed, so
 * the callback may open another dialog.
 */
#ifndef PW_TUI_DIALOG_H
#define PW_TUI_DIALOG_H

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct pw_app pw_app;
typedef struct pw_dialog pw_dialog;

typedef void (*pw_dialog_answer_fn)(void *ud, bool yes);
/* text is NULL when the input was cancelled. */
typedef void (*pw_dialog_text_fn)(void *ud, const char *text);

/* Ask a yes/no question; 'y' and 'n' answer directly, Esc is No. */
void pw_dialog_confirm(pw_app *app, const char *title, const char *question, const char *yes_label,
		       pw_dialog_answer_fn fn, void *ud);
/* State lines[0..n) then offer yes_label / no_label; only Enter on yes consents. */
void pw_dialog_consent(pw_app *app, const char *title, const char *const *lines, size_t n, const char *yes_label,
		       const char *no_label, pw_dialog_answer_fn fn, void *ud);
/* One line of text; Enter submits, Esc cancels. */
void pw_dialog_input(pw_app *app, const char *title, const char *prompt, const char *initial, pw_dialog_text_fn fn,
		     void *ud);

/* For the app's loop. */
void pw_dialog_draw(pw_dialog *d, WINDOW *win);
/* Feed a raw key; true when the dialog is finished. */
bool pw_dialog_key(pw_dialog *d, int raw);
/* Deliver the answer (callback) and free the dialog. */
void pw_dialog_finish(pw_dialog **d);
/* Free without an answer (the program is ending). */
void pw_dialog_free(pw_dialog **d);
/* Title (for tests and the status line). */
const char *pw_dialog_title(const pw_dialog *d);
/* Its keys for the hint line (untranslated: the caller translates). */
const char *pw_dialog_hint(const pw_dialog *d);

#endif
