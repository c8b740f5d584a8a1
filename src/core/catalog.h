/*
 * The catalog: an SQLite file in the box root recording every operation,
 * every attempt inside it, and (from the runtime and venv work) pins,
 * runtimes, runtime files, venvs and background jobs. WAL mode, a busy
 * timeout, foreign keys, schema versioned with PRAGMA user_version (each
 * step a migration of the file in place), each mutation one transaction.
 * A file that is not a pyward catalog, or is corrupt, is reported and never
 * overwritten. An operation is written when it starts and completed when it
 * ends; one left open by a process that no longer exists reads back as
 * "interrupted".
 */
#ifndef PW_CATALOG_H
#define PW_CATALOG_H

#include "cancel.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pw_catalog pw_catalog;

#define PW_CATALOG_SCHEMA_VERSION 7

typedef enum pw_catalog_mode {
	PW_CATALOG_READ_ONLY,  /* never creates or migrates; missing file = empty history */
	PW_CATALOG_READ_WRITE, /* creates the file and its schema when missing */
} pw_catalog_mode;

/* Open the catalog at path. PW_ERR_CORRUPT with a hint when the file is not
 * a pyward catalog, is damaged, or has a newer schema than this build. */
pw_err *pw_catalog_open(const char *path, pw_catalog_mode mode, pw_catalog **out);
void pw_catalog_close(pw_catalog **c);
int pw_catalog_schema_version(const pw_catalog *c);

/* Who ran an operation: the real user (SUDO_USER behind sudo) and uid, host,
 * pid, filled from the process by pw_catalog_actor_current(). */
typedef struct pw_actor {
	char user[64];
	uid_t uid;
	char host[256];
	pid_t pid;
} pw_actor;
void pw_catalog_actor_current(pw_actor *a);

typedef struct pw_op_start {
	const char *kind;    /* "runtime.install", "venv.create", … */
	const char *target;  /* what it acts on; may be NULL */
	const char *args;    /* the command line, as text */
	const pw_actor *actor; /* NULL: pw_catalog_actor_current() */
	int64_t job_id;      /* the background job running it (jobs.h); 0: none */
	int64_t undo_of;     /* the operation it reverses (history undo); 0: none */
} pw_op_start;

/* Outcomes written by pw_catalog_op_finish. "running" and "interrupted" are
 * derived when reading an operation that has no outcome yet. */
#define PW_OUTCOME_OK "ok"
#define PW_OUTCOME_FAILED "failed"
#define PW_OUTCOME_REFUSED "refused"
#define PW_OUTCOME_TIMED_OUT "timed-out"
#define PW_OUTCOME_CANCELLED "cancelled"
#define PW_OUTCOME_RUNNING "running"
#define PW_OUTCOME_INTERRUPTED "interrupted"

/* The start is committed without a flush (synchronous=NORMAL for that one
 * commit): a process killed later still leaves it ("interrupted"), and the
 * operation's finishing commit flushes it with the outcome. A power cut
 * before that commit may lose the start of an operation that had not
 * finished; nothing it reported done is lost (DESIGN.md, "The catalog"). */
pw_err *pw_catalog_op_begin(pw_catalog *c, const pw_op_start *op, int64_t *id);
/* stop_reason: a sentence for people (NULL when ok). Flushed on commit. */
pw_err *pw_catalog_op_finish(pw_catalog *c, int64_t id, const char *outcome, const char *stop_reason);
/* The same, with rows that belong with the outcome (an operation's package
 * changes) written by with(c, ud) in the same transaction: one flushed
 * commit, and never one without the other. An error from with rolls the
 * whole finish back. */
typedef pw_err *(*pw_catalog_with_fn)(pw_catalog *c, void *ud);
pw_err *pw_catalog_op_finish_with(pw_catalog *c, int64_t id, const char *outcome, const char *stop_reason,
				  pw_catalog_with_fn with, void *ud);

typedef struct pw_attempt_rec {
	int64_t id;
	int64_t operation_id;
	int seq;               /* 1-based order inside the operation */
	char *index_url;       /* may be NULL */
	char *proxy;           /* may be NULL */
	char *argv;            /* the command run, as text */
	int exit_code;         /* -1 when it did not exit normally */
	char *klass;           /* "ok", "network", "resolution", "timeout", … */
	char *started_at;
	int64_t duration_ms;
	char *output_tail;     /* may be NULL */
} pw_attempt_rec;

/* Record a finished attempt; seq and id are assigned (written back). */
pw_err *pw_catalog_attempt_add(pw_catalog *c, pw_attempt_rec *a);

typedef struct pw_op_rec {
	int64_t id;
	char *kind;
	char *target;
	char *args;
	char *started_at;
	char *finished_at;     /* NULL while running / interrupted */
	char *outcome;         /* always set: derived when not finished */
	char *stop_reason;
	char *user;
	int64_t uid;
	char *host;
	int64_t pid;
	char *pyward_version;
	int64_t duration_ms;   /* -1 when not finished */
	int attempt_count;
	int64_t undo_of;       /* the operation this one undid; 0: none */
	char *note;            /* what it did, in one line (a prune's count); may be NULL */
} pw_op_rec;

typedef struct pw_op_filter {
	const char *kind;      /* exact, or prefix when ending in '.' or '*' */
	const char *target;    /* substring */
	const char *outcome;   /* exact (derived outcomes match too) */
	const char *since;     /* ISO date or date-time, UTC: started_at >= since */
	/* Paging, newest first: only operations older than the one started at
	 * before_started with id before_id (the last row of the previous page). */
	const char *before_started;
	int64_t before_id;
	const char *text;      /* substring of kind, target, user or stored outcome */
	const char *package;   /* operations that changed this package (any spelling) */
	int limit;             /* 0 = default 50; negative = no limit */
	/* When raised, the query stops where it is with PW_ERR_CANCELLED (a
	 * filter over a large history that a newer one replaced). */
	const pw_cancel *cancel;
} pw_op_filter;

typedef struct pw_op_list {
	pw_op_rec *items;
	size_t count;
} pw_op_list;

typedef struct pw_attempt_list {
	pw_attempt_rec *items;
	size_t count;
} pw_attempt_list;

/* Operations, newest first. */
pw_err *pw_catalog_ops_query(pw_catalog *c, const pw_op_filter *f, pw_op_list *out);
/* One operation with its attempts in order. PW_ERR_NOTFOUND when no such id. */
pw_err *pw_catalog_op_get(pw_catalog *c, int64_t id, pw_op_rec *op, pw_attempt_list *attempts);

/* Every operation started at or after since (NULL: all), oldest first,
 * with its attempts: one statement walks the operations (in WAL mode it
 * sees one state for as long as it runs), one reused statement reads each
 * one's attempts. An error from fn stops the walk and is returned. */
typedef pw_err *(*pw_op_each_fn)(const pw_op_rec *op, const pw_attempt_list *attempts, void *ud);
pw_err *pw_catalog_ops_each(pw_catalog *c, const char *since, pw_op_each_fn fn, void *ud);

void pw_op_rec_clear(pw_op_rec *r);
void pw_op_list_clear(pw_op_list *l);
void pw_attempt_list_clear(pw_attempt_list *l);

/* The underlying connection, for modules that add their own tables' verbs
 * (pins, runtimes, venvs). */
struct sqlite3 *pw_catalog_db(pw_catalog *c);
/* What to do about an SQLite error those modules meet (translated): for a
 * damaged catalog (SQLITE_CORRUPT, SQLITE_NOTADB) the same hint as
 * catalog.c's own errors, else NULL. */
const char *pw_catalog_damage_hint(int sqlite_code);

#endif
