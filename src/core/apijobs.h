/*
 * The HTTP API's jobs in the catalog (schema 5, table api_jobs), so that a
 * job outlives the server that ran it: `pyward serve` records a job when it
 * starts one (the row's id is the job's id, unique across restarts) and its
 * end state, result and error (as JSON text) when it ends. A row left
 * "running" by a server that is gone (its pid and kernel start time no
 * longer match a live process on this host) reads as "interrupted".
 */
#ifndef PW_APIJOBS_H
#define PW_APIJOBS_H

#include "catalog.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_apijob_rec {
	int64_t id;
	char *kind, *target, *user, *args, *host;
	int64_t pid, proc_start;   /* the server that ran it */
	char *created_at, *finished_at;
	char *state;               /* stored end state, "running", or derived "interrupted" */
	char *result, *error;      /* JSON text, or NULL */
	int64_t events;            /* how many events the job had when it ended */
	char *cancelled_by;
} pw_apijob_rec;

/* Record a job this process starts now (created_at is its ISO time). */
pw_err *pw_apijobs_begin(pw_catalog *c, const char *kind, const char *target, const char *user, const char *args,
			 const char *created_at, int64_t *id);
/* Record how it ended. */
pw_err *pw_apijobs_finish(pw_catalog *c, int64_t id, const char *state, const char *finished_at, const char *result,
			  const char *error, int64_t events, const char *cancelled_by);
/* PW_ERR_NOTFOUND when there is no such job. */
pw_err *pw_apijobs_get(pw_catalog *c, int64_t id, pw_apijob_rec *out);
/* The newest jobs first, at most limit; *out is an array of *count records. */
pw_err *pw_apijobs_list(pw_catalog *c, int limit, pw_apijob_rec **out, size_t *count);
void pw_apijob_rec_clear(pw_apijob_rec *r);

/* A job belongs to the operation it ran: the catalog id its result names
 * ("operation", as every operation's JSON does). A job that recorded none
 * (refused or failed before one began, interrupted, still running) stands
 * on its own, dated by created_at. history prune and export treat a job
 * with its operation (history_admin.h). */

/* Inside the caller's write transaction, after the operations started
 * before `before` (its first before_len bytes) are deleted: delete the jobs
 * whose operation is no longer in the catalog, and the jobs that ran none
 * created before `before`, except one still running on a live server.
 * *deleted: how many went. */
pw_err *pw_apijobs_prune(pw_catalog *c, const char *before, int before_len, int64_t *deleted);

/* The jobs of operations, for a walk over them (one read transaction). */
typedef struct pw_apijobs_reader pw_apijobs_reader;
pw_err *pw_apijobs_reader_open(pw_catalog *c, pw_apijobs_reader **out);
/* *found false when no job ran operation op_id; else *out is its job. */
pw_err *pw_apijobs_reader_get(pw_apijobs_reader *r, int64_t op_id, pw_apijob_rec *out, bool *found);
void pw_apijobs_reader_close(pw_apijobs_reader **r);

/* The jobs whose operation is not in the catalog, created at or after
 * since (its first since_len bytes; NULL: all), oldest first. */
typedef pw_err *(*pw_apijob_each_fn)(const pw_apijob_rec *job, void *ud);
pw_err *pw_apijobs_each_alone(pw_catalog *c, const char *since, int since_len, pw_apijob_each_fn fn, void *ud);

#endif
