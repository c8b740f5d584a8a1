/* Background jobs: one thread each, events through one pipe to the main loop. */
#include "config.h"

#include "tui/worker.h"

#include "clock.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_EVERY_MS 50
#define STAGE_MAX 32

struct pw_job {
	pw_workers *hub;
	int id;
	char *name;
	void *owner;
	pw_job_fn fn;
	void *ud;
	void (*ud_free)(void *);
	pw_cancel *cancel;
	pw_events events;
	pthread_t thread;
	bool quiet;
	bool operation;
	/* progress coalescing (worker thread only) */
	char last_stage[STAGE_MAX];
	int64_t last_progress_ms;
	pw_job *next;
};

struct pw_workers {
	int pipe[2];
	int next_id;
	pw_job *list; /* running jobs; main thread only */
};

/* What travels through the pipe (as a pointer). */
typedef struct envelope {
	pw_job_event ev;
	pw_job *job;
	char *text;
	char stage[STAGE_MAX];
	void (*free_data)(void *);
	pw_err *err;
} envelope;

pw_workers *pw_workers_new(void)
{
	pw_workers *j = xcalloc(1, sizeof *j);
	if (pipe(j->pipe) != 0) {
		free(j);
		return NULL;
	}
	fcntl(j->pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(j->pipe[1], F_SETFD, FD_CLOEXEC);
	/* The read end never blocks the loop; the write end blocks a worker
	 * when the pipe is full, which is the back-pressure we want. */
	fcntl(j->pipe[0], F_SETFL, fcntl(j->pipe[0], F_GETFL) | O_NONBLOCK);
	j->next_id = 1;
	return j;
}

int pw_workers_fd(const pw_workers *jobs)
{
	return jobs->pipe[0];
}

static void send_envelope(pw_job *job, envelope *env)
{
	env->job = job;
	env->ev.job_id = job->id;
	env->ev.job_name = job->name;
	env->ev.owner = job->owner;
	env->ev.ud = job->ud;
	ssize_t n;
	do
		n = write(job->hub->pipe[1], &env, sizeof env);
	while (n < 0 && errno == EINTR);
}

static void on_log(void *ud, pw_log_level level, const char *msg)
{
	pw_job *job = ud;
	envelope *env = xcalloc(1, sizeof *env);
	env->ev.kind = PW_JOB_LOG;
	env->ev.level = level;
	env->text = xstrdup(msg ? msg : "");
	env->ev.text = env->text;
	send_envelope(job, env);
}

static bool progress_worth_sending(pw_job *job, const pw_progress *p)
{
	int64_t now = pw_clock_mono_ms();
	const char *stage = p->stage ? p->stage : "";
	bool changed = strncmp(stage, job->last_stage, STAGE_MAX - 1) != 0;
	bool end = p->total >= 0 && p->done >= p->total;
	if (!changed && !end && now - job->last_progress_ms < PROGRESS_EVERY_MS)
		return false;
	snprintf(job->last_stage, sizeof job->last_stage, "%s", stage);
	job->last_progress_ms = now;
	return true;
}

static void on_progress(void *ud, const pw_progress *p)
{
	pw_job *job = ud;
	if (!progress_worth_sending(job, p))
		return;
	envelope *env = xcalloc(1, sizeof *env);
	env->ev.kind = PW_JOB_PROGRESS;
	env->ev.progress = *p;
	snprintf(env->stage, sizeof env->stage, "%s", p->stage ? p->stage : "");
	env->ev.progress.stage = env->stage;
	send_envelope(job, env);
}

void pw_job_post(pw_job *job, int code, void *data, void (*free_data)(void *))
{
	envelope *env = xcalloc(1, sizeof *env);
	env->ev.kind = PW_JOB_MESSAGE;
	env->ev.code = code;
	env->ev.data = data;
	env->free_data = free_data;
	send_envelope(job, env);
}

const pw_events *pw_job_events(pw_job *job)
{
	return &job->events;
}

const pw_cancel *pw_job_cancel_token(pw_job *job)
{
	return job->cancel;
}

int pw_job_id(const pw_job *job)
{
	return job->id;
}

static void *job_main(void *arg)
{
	pw_job *job = arg;
	pw_err *e = job->fn(job, job->ud);
	envelope *env = xcalloc(1, sizeof *env);
	env->ev.kind = PW_JOB_DONE;
	env->err = e;
	env->ev.err = e;
	send_envelope(job, env);
	return NULL;
}

int pw_workers_start(pw_workers *jobs, const char *name, void *owner, pw_job_fn fn, void *ud, void (*ud_free)(void *))
{
	pw_job *job = xcalloc(1, sizeof *job);
	job->hub = jobs;
	job->id = jobs->next_id++;
	job->name = xstrdup(name);
	job->owner = owner;
	job->fn = fn;
	job->ud = ud;
	job->ud_free = ud_free;
	job->cancel = pw_cancel_new();
	job->events = (pw_events){ .log = on_log, .progress = on_progress, .ud = job };
	/* Signals (resize, interrupt) belong to the main thread's self-pipe. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&job->thread, NULL, job_main, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		/* No thread: run it here, so the caller still gets its DONE. */
		job_main(job);
	}
	job->next = jobs->list;
	jobs->list = job;
	return job->id;
}

static pw_job *find(const pw_workers *jobs, int id)
{
	for (pw_job *j = jobs->list; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

bool pw_workers_cancel(pw_workers *jobs, int id)
{
	pw_job *j = find(jobs, id);
	if (!j)
		return false;
	pw_cancel_raise(j->cancel);
	return true;
}

void pw_workers_cancel_all(pw_workers *jobs)
{
	for (pw_job *j = jobs->list; j; j = j->next)
		pw_cancel_raise(j->cancel);
}

void pw_workers_set_quiet(pw_workers *jobs, int id)
{
	pw_job *j = find(jobs, id);
	if (j)
		j->quiet = true;
}

void pw_workers_set_operation(pw_workers *jobs, int id)
{
	pw_job *j = find(jobs, id);
	if (j)
		j->operation = true;
}

size_t pw_workers_running(const pw_workers *jobs)
{
	size_t n = 0;
	for (const pw_job *j = jobs->list; j; j = j->next)
		n += !j->quiet;
	return n;
}

const char *pw_workers_any_name(const pw_workers *jobs)
{
	for (const pw_job *j = jobs->list; j; j = j->next)
		if (!j->quiet)
			return j->name;
	return NULL;
}

static void unlink_job(pw_workers *jobs, pw_job *job)
{
	for (pw_job **p = &jobs->list; *p; p = &(*p)->next)
		if (*p == job) {
			*p = job->next;
			return;
		}
}

static void job_free(pw_job *job)
{
	pthread_join(job->thread, NULL);
	if (job->ud_free)
		job->ud_free(job->ud);
	pw_cancel_free(&job->cancel);
	free(job->name);
	free(job);
}

static void envelope_free(envelope *env)
{
	if (env->free_data)
		env->free_data(env->ev.data);
	pw_err_free(env->err);
	free(env->text);
	free(env);
}

/* Read one pointer; NULL when nothing waits. */
static envelope *read_one(pw_workers *jobs)
{
	envelope *env = NULL;
	ssize_t n;
	do
		n = read(jobs->pipe[0], &env, sizeof env);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof env ? env : NULL;
}

size_t pw_workers_dispatch(pw_workers *jobs, void (*deliver)(const pw_job_event *ev, void *ctx), void *ctx)
{
	size_t count = 0;
	envelope *env;
	while ((env = read_one(jobs)) != NULL) {
		env->ev.quiet = env->job->quiet; /* both set on this (the main) thread */
		env->ev.operation = env->job->operation;
		if (deliver)
			deliver(&env->ev, ctx);
		if (env->ev.kind == PW_JOB_DONE) {
			unlink_job(jobs, env->job);
			job_free(env->job);
		}
		envelope_free(env);
		count++;
	}
	return count;
}

void pw_workers_free(pw_workers **jobs)
{
	pw_workers *j = *jobs;
	if (!j)
		return;
	pw_workers_cancel_all(j);
	/* Workers may be blocked writing into a full pipe: keep draining. */
	while (j->list) {
		int flags = fcntl(j->pipe[0], F_GETFL);
		fcntl(j->pipe[0], F_SETFL, flags & ~O_NONBLOCK);
		envelope *env = read_one(j);
		fcntl(j->pipe[0], F_SETFL, flags);
		if (!env)
			break;
		if (env->ev.kind == PW_JOB_DONE) {
			unlink_job(j, env->job);
			job_free(env->job);
		}
		envelope_free(env);
	}
	pw_workers_dispatch(j, NULL, NULL);
	close(j->pipe[0]);
	close(j->pipe[1]);
	free(j);
	*jobs = NULL;
}
