/*
 * The operations context: what every operation needs to know about where
 * and for whom it runs. Each front end (CLI, full-screen interface, agent
 * tool server, HTTP API) builds one, fills the inputs, calls
 * pw_ops_ctx_prepare() once, and then hands it to every operation.
 *
 * Contract: the inputs are the caller's (borrowed until pw_ops_ctx_clear);
 * what prepare resolves (settings, box root, workspace, guard, catalog path)
 * is owned by the context and freed by pw_ops_ctx_clear().
 * Threading: after prepare the context is read-only, so any number of
 * threads may run operations with it at once (each operation opens its own
 * catalog connection; SQLite connections are never shared between threads).
 * Change the inputs only before prepare, or between operations on one thread.
 */
#ifndef PW_OPS_CTX_H
#define PW_OPS_CTX_H

#include "catalog.h"
#include "err.h"
#include "guard.h"
#include "settings.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses, the same for every front end that has one (err.h maps errors). */
enum pw_exit {
	PW_EXIT_OK = 0,
	PW_EXIT_FAILED = 1,
	PW_EXIT_USAGE = 2,
	PW_EXIT_REFUSED = 3,
	PW_EXIT_TIMEOUT = 4,
	PW_EXIT_INTERRUPTED = 130,
};

typedef enum pw_mode { PW_MODE_READ_ONLY, PW_MODE_WORKSPACE_WRITE, PW_MODE_FULL_ACCESS } pw_mode;

/* Who called: recorded with every catalog operation. */
typedef struct pw_ops_who {
	const char *front_end; /* "cli", "tui", "mcp", "api"; NULL reads as "cli"; "job":
				* a background job, args = its starter's recorded request */
	const char *client;    /* optional: the agent or HTTP client's own description */
	const char *args;      /* the request as text (the command line for the CLI) */
	int64_t job_id;        /* the background job running it (jobs.h); 0: none */
	const pw_actor *actor; /* who asked, when not this process's user (the HTTP API's
				* peer uid or token name); NULL: pw_catalog_actor_current() */
} pw_ops_who;

typedef struct pw_ops_ctx {
	/* inputs (the front end's, borrowed) */
	const char *box_root_opt;  /* NULL: settings, $PYWARD_HOME, XDG */
	const char *workspace_opt; /* NULL: the current directory */
	const char **roots;        /* more allowed roots besides the workspace */
	size_t root_count;
	pw_mode mode;              /* workspace-write unless given or set */
	bool mode_given;           /* false: the `mode` setting may change it */
	double timeout;            /* the caller's budget in seconds; 0 = each op's default */
	pw_ops_who who;
	/* resolved by pw_ops_ctx_prepare (owned) */
	pw_settings *settings;
	char *box_root;
	const char *box_root_source;
	char *workspace;
	pw_guard *guard;
	char *system_config;
	char *user_config;
	char *catalog_path;        /* the catalog handle: each op opens its own connection */
} pw_ops_ctx;

/* Load the settings (system, then user file), apply the `mode` setting
 * unless mode_given, resolve the box root, the workspace and the guard's
 * roots. Calling it again after success does nothing. */
pw_err *pw_ops_ctx_prepare(pw_ops_ctx *ctx);
void pw_ops_ctx_clear(pw_ops_ctx *ctx);

const char *pw_mode_name(pw_mode m);
bool pw_mode_parse(const char *s, pw_mode *out);

/* Fail closed (PW_ERR_REFUSED) when the mode does not allow a change. */
pw_err *pw_ops_require_write(const pw_ops_ctx *ctx, const char *what);
/* The caller's budget when given, else dflt (seconds). */
double pw_ops_budget(const pw_ops_ctx *ctx, double dflt);

/* The box's catalog, read only (a missing one reads as empty) or for
 * writing (creating it). One connection per call: close it on the same thread. */
pw_err *pw_ops_catalog_ro(const pw_ops_ctx *ctx, pw_catalog **cat);
pw_err *pw_ops_catalog_rw(const pw_ops_ctx *ctx, pw_catalog **cat);
/* The caller as an operation records it: the request, and the front end
 * and client when they are not a person at a terminal. */
char *pw_ops_who_text(const pw_ops_who *w);
/* Record the start of an operation with the caller (who) as its args. */
pw_err *pw_ops_op_begin(const pw_ops_ctx *ctx, pw_catalog *cat, const char *kind, const char *target, int64_t *id);
/* Record its end: the outcome follows from e (NULL = ok). No-op without cat or id. */
void pw_ops_op_end(pw_catalog *cat, int64_t id, const pw_err *e);
/* The same with rows written by with in the finishing commit (package
 * changes: pw_catalog_op_finish_with), returning why that commit failed
 * (NULL without cat or id): the caller says so rather than report done. */
pw_err *pw_ops_op_end_with(pw_catalog *cat, int64_t id, const pw_err *e, pw_catalog_with_fn with, void *ud);
/* The catalog outcome an error means ("ok" for NULL). */
const char *pw_ops_outcome_of(const pw_err *e);

/* A data file: $PYWARD_DATADIR, the installed pkgdatadir, then the source tree. */
char *pw_ops_data_file(const char *name);

#endif
