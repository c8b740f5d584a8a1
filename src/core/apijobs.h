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

#endif
