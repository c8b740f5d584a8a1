/*
 * What every operation takes besides its request: the events sink, the
 * consent callback and the cancel token (pw_op_io). Every operation is one
 * function `pw_err *pw_op_NAME(const pw_ops_ctx *, const REQ *, const
 * pw_op_io *, RESULT *)` recording one catalog `kind`; it never prints.
 *
 * Threading: an operation may run on any thread (the full-screen interface
 * runs them on worker threads). Its events and consent callbacks are called
 * on the thread running it; the cancel token may be raised from any thread
 * or a signal handler (cancel.h). A front end that wants the events on
 * another thread forwards them itself (the TUI's worker.c does).
 */
#ifndef PW_OPS_OP_H
#define PW_OPS_OP_H

#include "cancel.h"
#include "err.h"
#include "events.h"

#include <stddef.h>

/* What an operation asks consent for: a title and the lines that state
 * everything the user agrees to (what, from where, how big, where to). */
typedef struct pw_consent {
	const char *kind;           /* the catalog kind, "runtime.install" */
	const char *doing;          /* "installing the runtime" (translated) */
	const char *question;       /* "Download and install it?" (translated) */
	const char *heading;        /* the line above the statement (translated) */
	const char *const *lines;   /* the statement, one line each (translated) */
	size_t line_count;
} pw_consent;

typedef enum pw_consent_answer {
	PW_CONSENT_YES,
	PW_CONSENT_NO,       /* the user declined */
	PW_CONSENT_CANNOT_ASK, /* no one to ask (no terminal, no agent support) */
} pw_consent_answer;

typedef pw_consent_answer (*pw_consent_fn)(const pw_consent *what, void *ud);

typedef struct pw_op_io {
	const pw_events *events;  /* NULL: nothing reported */
	pw_consent_fn consent;    /* NULL: anything needing consent is refused */
	void *consent_ud;
	const pw_cancel *cancel;  /* NULL: cannot be cancelled */
	/* why no one could be asked, as recorded with the refusal (an agent's
	 * client without elicitation); NULL: there is no terminal to ask */
	const char *cannot_ask;
} pw_op_io;

/* Ask io's consent; NULL when given, else a PW_ERR_REFUSED saying why
 * (declined: `declined`; no one to ask: a hint to pass --yes). */
pw_err *pw_op_ask(const pw_op_io *io, const pw_consent *what, const char *declined);

/* Consent the front end obtained itself before it called (a confirm dialog):
 * yes for the catalog kind named by ud (a string), no for anything else. */
pw_consent_answer pw_consent_given(const pw_consent *what, void *kind);

/* A consent answered before the operation ran (the TUI shows a dialog from
 * a dry run, then runs the operation): it says yes only when the operation
 * asks for exactly the statement the user saw, so nothing changed between. */
typedef struct pw_consent_seen {
	char **lines;
	size_t line_count;
} pw_consent_seen;
pw_consent_answer pw_consent_if_seen(const pw_consent *what, void *seen /* pw_consent_seen */);
void pw_consent_seen_set(pw_consent_seen *s, const char *const *lines, size_t n);
void pw_consent_seen_clear(pw_consent_seen *s);

#endif
