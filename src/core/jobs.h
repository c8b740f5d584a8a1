/*
 * Background jobs: a long operation (a pip install) run by a detached copy of
 * pyward, recorded in the catalog's jobs table (schema 2). The job process
 * runs exactly the foreground path (mode, guard, locks, budget); the
 * operations it records point at the job (operations.job_id), so a job's
 * attempts are those of its operations.
 *
 * States: a finished job has a stored outcome (ok, failed, refused,
 * timed-out, cancelled). An unfinished one is "running" while its process
 * lives on this host (pid and kernel start time both match, so a recycled
 * pid is not taken for it), else "interrupted" (killed, machine rebooted).
 */
#ifndef PW_JOBS_H
#define PW_JOBS_H

#include "catalog.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The environment variable naming the job a detached pyward runs. */
#define PW_JOB_ENV "PYWARD_JOB"

typedef struct pw_job_start {
	const char *kind;     /* "venv.install" */
	const char *target;   /* what it acts on; may be NULL */
	const char *args;     /* the command line, as text */
	const char *workspace;
	const char *log_dir;  /* the log is <log_dir>/<id>.log */
	double budget_s;      /* the time budget the job runs under */
	const pw_actor *actor; /* who asked (user, uid); NULL: this process's user */
} pw_job_start;

typedef struct pw_job_rec {
	int64_t id;
	char *kind, *target, *args, *workspace, *log_path;
	double budget_s;
	char *user;
	int64_t uid;
	char *host;
	int64_t pid;          /* 0 when the job never got a process */
	int64_t proc_start;   /* the process's start time in clock ticks since boot */
	char *started_at, *finished_at;
	char *state;          /* stored outcome, or derived "running"/"interrupted" */
	int exit_status;      /* -1 when not recorded */
	char *stop_reason;
	char *cancel_requested_at, *cancelled_by;
	int64_t duration_ms;  /* up to now while running */
} pw_job_rec;

typedef struct pw_job_list {
	pw_job_rec *items;
	size_t count;
} pw_job_list;

/* Record a new job (no process yet); *id and its log path are assigned. */
pw_err *pw_jobs_begin(pw_catalog *c, const pw_job_start *s, int64_t *id);
/* Record the process that runs it. */
pw_err *pw_jobs_attach(pw_catalog *c, int64_t id, pid_t pid, int64_t proc_start);
/* In the job process: check that job id is unfinished and names this very
 * process (so a stray $PYWARD_JOB cannot take over another job's record). */
pw_err *pw_jobs_claim(pw_catalog *c, int64_t id);
/* The job is over with exit_status: its outcome and stop reason are those
 * of its last operation (or follow from the status when it ran none). */
pw_err *pw_jobs_finish(pw_catalog *c, int64_t id, int exit_status);
/* Record a cancel request by user (before the signal is sent). */
pw_err *pw_jobs_request_cancel(pw_catalog *c, int64_t id, const char *user);
/* Close a job whose process ended without recording an outcome. */
pw_err *pw_jobs_close_dead(pw_catalog *c, int64_t id, const char *outcome, int exit_status, const char *reason);

/* Newest first; limit <= 0: 50. A catalog without a jobs table lists none. */
pw_err *pw_jobs_list(pw_catalog *c, int limit, pw_job_list *out);
/* PW_ERR_NOTFOUND when there is no such job. */
pw_err *pw_jobs_get(pw_catalog *c, int64_t id, pw_job_rec *out);
/* The ids of the operations the job recorded, oldest first. */
pw_err *pw_jobs_operations(pw_catalog *c, int64_t id, int64_t **ids, size_t *count);
void pw_job_rec_clear(pw_job_rec *r);
void pw_job_list_clear(pw_job_list *l);

/* The status a job's waiter exits with: the recorded one, else 130 for
 * interrupted or cancelled, 1 otherwise; -1 while running. */
int pw_jobs_exit_status(const pw_job_rec *r);

typedef struct pw_job_spawn {
	const char *exe;               /* the program (pyward itself) */
	char *const *argv;
	const char *const *env_add;    /* "NAME=VALUE" added to the environment */
	const char *log_path;          /* created 0600 (truncated) */
	size_t head_cap, tail_cap;     /* joblog.h bounds */
	/* Called in the caller with the job's pid before the job may start;
	 * an error stops it before it runs. */
	pw_err *(*started)(void *ud, pid_t pid, int64_t proc_start);
	void *ud;
} pw_job_spawn;

/* Start argv detached: in a new session, its own process group, stdin
 * /dev/null, stdout and stderr through a pipe into the bounded log (the
 * pump is the job's parent, reaps it and notes how it ended). Returns once
 * the job has been told to start; never waits for it. */
pw_err *pw_jobs_detach(const pw_job_spawn *sp);

/* The last max_lines lines of a log file (at most the last 64 KiB). */
pw_err *pw_jobs_log_tail(const char *path, int max_lines, char **out);

#endif
