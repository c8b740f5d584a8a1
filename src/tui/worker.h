/*
 * Background jobs for the full-screen interface. A job's function runs on
 * its own thread; everything it reports (log lines, progress, its own
 * messages, its end) becomes a pw_job_event written as a pointer into one
 * pipe. The main loop polls that pipe and hands the events out on the main
 * thread, so curses is only ever touched there. Progress is coalesced on the
 * worker side (a stage change, the end of a stage, or every 50 ms).
 */
#ifndef PW_TUI_WORKER_H
#define PW_TUI_WORKER_H

#include "cancel.h"
#include "err.h"
#include "events.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pw_workers pw_workers;
typedef struct pw_job pw_job;

typedef enum pw_job_event_kind {
	PW_JOB_LOG,      /* level, text */
	PW_JOB_PROGRESS, /* progress (stage copied) */
	PW_JOB_MESSAGE,  /* code, data: posted by the job itself */
	PW_JOB_DONE,     /* err (NULL = success), ud: the job is over */
} pw_job_event_kind;

typedef struct pw_job_event {
	pw_job_event_kind kind;
	int job_id;
	const char *job_name;
	void *owner;           /* whoever started the job (a pane's state) */
	pw_log_level level;
	const char *text;
	pw_progress progress;
	int code;
	void *data;
	const pw_err *err;
	void *ud;              /* the job's argument, still alive during DONE */
	bool quiet;            /* a read the user did not ask for (pw_workers_set_quiet) */
	bool operation;        /* a step of an operation the user asked for (pw_workers_set_operation) */
} pw_job_event;

/* What runs on the worker thread; the returned error travels to DONE. */
typedef pw_err *(*pw_job_fn)(pw_job *job, void *ud);

pw_workers *pw_workers_new(void);
/* Cancel every running job, wait for them and free everything. Events still
 * pending are dropped (their payloads freed). */
void pw_workers_free(pw_workers **jobs);
/* The read end of the event pipe, for poll(). */
int pw_workers_fd(const pw_workers *jobs);

/* Start fn(job, ud) on a new thread. ud_free (may be NULL) frees ud after
 * the DONE event was handed out. Returns the job's id (> 0). */
int pw_workers_start(pw_workers *jobs, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *));
/* A quiet job (a read the user did not ask for) is not counted by
 * pw_workers_running() nor named by pw_workers_any_name(): nothing to show, and
 * nothing to ask about before quitting (it is cancelled like any other). */
void pw_workers_set_quiet(pw_workers *jobs, int id);
/* A step of an operation the user asked for: its success ends the news of
 * a failure before it (the app clears an error in the status line). */
void pw_workers_set_operation(pw_workers *jobs, int id);
/* Raise the job's cancel token; false when no such job runs. */
bool pw_workers_cancel(pw_workers *jobs, int id);
void pw_workers_cancel_all(pw_workers *jobs);
/* Running jobs that are not quiet. */
size_t pw_workers_running(const pw_workers *jobs);
/* Name of one running job that is not quiet (for "quit while X runs?"), or NULL. */
const char *pw_workers_any_name(const pw_workers *jobs);

/* Main thread: hand each waiting event to deliver(); returns how many. */
size_t pw_workers_dispatch(pw_workers *jobs, void (*deliver)(const pw_job_event *ev, void *ctx), void *ctx);

/* Worker side. */
const pw_events *pw_job_events(pw_job *job);
const pw_cancel *pw_job_cancel_token(pw_job *job);
int pw_job_id(const pw_job *job);
/* Post a message; data is the receiver's until free_data (may be NULL) frees it after delivery. */
void pw_job_post(pw_job *job, int code, void *data, void (*free_data)(void *));

#endif
