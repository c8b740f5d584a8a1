/*
 * The server's jobs: a long operation (an install) runs on its own thread
 * while the request that started it is answered 202 at once. A job keeps
 * its progress, its events (progress, log lines, the result), numbered for
 * Server-Sent Events with Last-Event-ID resume, and its result. The newest
 * 256 are kept in memory with their events; every job is also a catalog row
 * (apijobs.h: recorded when it starts, its end state and result when it
 * ends), so after a restart GET /api/jobs/ID still answers, from the
 * catalog, and a job whose server died before it ended reads "interrupted".
 */
#ifndef PW_API_JOBS_H
#define PW_API_JOBS_H

#include "api/mhd.h"

#include "cancel.h"
#include "err.h"
#include "events.h"

#include <jansson.h>
#include <stdint.h>

struct pw_api_server;
typedef struct pw_api_jobs pw_api_jobs;

/* What a job runs, on its own thread. run returns the result's JSON (or
 * NULL) and sets *err when the operation failed; both are the job's. */
typedef struct pw_api_job_spec {
	const char *kind;    /* the catalog kind, "runtime.install" */
	const char *target;  /* may be NULL */
	const char *user;    /* who started it */
	const char *args;    /* the request, as the catalog records it; may be NULL */
	json_t *(*run)(void *ud, const pw_events *ev, const pw_cancel *cancel, pw_err **err);
	void (*free_ud)(void *ud); /* may be NULL */
	void *ud;                  /* owned by the job from pw_api_jobs_start on */
} pw_api_job_spec;

pw_api_jobs *pw_api_jobs_new(struct pw_api_server *srv);
typedef enum pw_api_job_started {
	PW_API_JOB_STARTED,
	PW_API_JOB_CONFLICT,  /* a job of the same area ("runtime.") runs: *id is that one (0: a hold) */
	PW_API_JOB_TOO_MANY,  /* as many unfinished jobs as are kept */
	PW_API_JOB_NOT_RECORDED, /* the catalog could not record it: *err says why */
} pw_api_job_started;

/* Start a job; its id (the catalog row's) in *id. One job at a time per area
 * (the text of the kind before its '.'), as the box's locks would have it
 * anyway. The spec's ud is the job's (freed) whatever the answer. */
pw_api_job_started pw_api_jobs_start(pw_api_jobs *j, const pw_api_job_spec *spec, int64_t *id, pw_err **err);
/* The job object (kept in memory, else from the catalog), or NULL when
 * there is no such job. */
json_t *pw_api_jobs_json(pw_api_jobs *j, int64_t id);
/* The newest jobs, this server's and earlier ones from the catalog, newest
 * first (without results: GET /api/jobs/ID has them). */
json_t *pw_api_jobs_all(pw_api_jobs *j);
/* Ask a job to stop: false when this server runs no such job now (none
 * by that id, an earlier server's, or one of its own that has ended). */
bool pw_api_jobs_cancel(pw_api_jobs *j, int64_t id, const char *by);

/* A change answered at once (DELETE /api/venvs) holds what it changes as a
 * job would, so neither runs under the other: PW_API_JOB_STARTED when it
 * is held (until released; a job started on it meanwhile is answered
 * PW_API_JOB_CONFLICT with *id 0), else PW_API_JOB_CONFLICT with *by the
 * job that holds it (0: another hold) or PW_API_JOB_TOO_MANY. */
pw_api_job_started pw_api_jobs_hold(pw_api_jobs *j, const char *kind, const char *target, int64_t *by);
void pw_api_jobs_release(pw_api_jobs *j, const char *kind, const char *target);
/* A text/event-stream of the job's events after event number after (0:
 * from the start); NULL when there is no such job. A job only the catalog
 * knows has one event left: its result, numbered as its last event was. */
struct MHD_Response *pw_api_jobs_events(pw_api_jobs *j, int64_t id, int64_t after);
unsigned pw_api_jobs_running(pw_api_jobs *j);
/* Cancel every job, end every stream and wait for the jobs' threads. */
void pw_api_jobs_stop(pw_api_jobs *j);
void pw_api_jobs_free(pw_api_jobs **j);

#endif
