/* The HTTP API's jobs and their event streams (jobs.h). */
#include "config.h"

#include "api/catalog_pool.h"
#include "api/jobs.h"
#include "api/reply.h"
#include "api/server.h"

#include "ops/ctx.h"
#include "ops/json.h"

#include "apijobs.h"
#include "clock.h"
#include "xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	MAX_JOBS = 256,
	MAX_EVENTS = 4000,        /* per job; log lines past it are counted, not kept */
	PROGRESS_EVERY_MS = 100,  /* at most ten progress events a second */
	KEEPALIVE_S = 10,         /* a comment line keeps a quiet stream open */
};

typedef struct event {
	int64_t seq;
	const char *type;  /* "progress", "log", "result" */
	char *data;        /* one line of JSON */
} event;

typedef struct job {
	int64_t id;
	char *kind, *target, *user;
	char created_at[32], finished_at[32];
	const char *state;        /* "running", then the outcome */
	char *stage;
	int64_t done, total;
	int attempt;
	int64_t last_progress_ms;
	event *events;
	size_t event_count;
	int64_t dropped;
	json_t *result;
	pw_err *err;
	char *cancelled_by;
	pw_cancel *cancel;
	unsigned readers;
	pw_api_job_spec spec;
	pw_api_jobs *owner;
} job;

struct pw_api_jobs {
	pw_api_server *srv;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* a new event, a finished job, stopping */
	job *items[MAX_JOBS];
	size_t count;
	unsigned running;
	bool stopping;
};

pw_api_jobs *pw_api_jobs_new(pw_api_server *srv)
{
	pw_api_jobs *j = xcalloc(1, sizeof *j);
	j->srv = srv;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->changed, &ca);
	pthread_condattr_destroy(&ca);
	return j;
}

static void job_free(job *b)
{
	for (size_t i = 0; i < b->event_count; i++)
		free(b->events[i].data);
	free(b->events);
	free(b->kind);
	free(b->target);
	free(b->user);
	free(b->stage);
	free(b->cancelled_by);
	json_decref(b->result);
	pw_err_free(b->err);
	pw_cancel_free(&b->cancel);
	free(b);
}

/* Call with the lock held. */
static job *find(pw_api_jobs *j, int64_t id)
{
	for (size_t i = 0; i < j->count && id > 0; i++)
		if (j->items[i]->id == id)
			return j->items[i];
	return NULL;
}

/* ---------------------------------------------------------------- events */

/* Append an event (lock held); the stream readers wake. */
static void add_event(job *b, const char *type, json_t *data)
{
	if (b->event_count >= MAX_EVENTS && strcmp(type, "result") != 0) {
		b->dropped++;
		json_decref(data);
		return;
	}
	b->events = xrealloc(b->events, (b->event_count + 1) * sizeof *b->events);
	event *ev = &b->events[b->event_count];
	ev->seq = (int64_t)b->event_count + 1;
	ev->type = type;
	ev->data = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(data);
	b->event_count++;
	pthread_cond_broadcast(&b->owner->changed);
}

static json_t *progress_json(const job *b)
{
	return json_pack("{s:s?, s:I, s:I, s:i}", "stage", b->stage, "done", (json_int_t)b->done, "total",
			 (json_int_t)b->total, "attempt", b->attempt);
}

static void on_log(void *ud, pw_log_level level, const char *msg)
{
	static const char *const names[] = { "debug", "info", "warning", "error" };
	job *b = ud;
	pthread_mutex_lock(&b->owner->lock);
	add_event(b, "log", json_pack("{s:s, s:s}", "level", names[level], "message", msg ? msg : ""));
	pthread_mutex_unlock(&b->owner->lock);
}

static void on_progress(void *ud, const pw_progress *p)
{
	job *b = ud;
	int64_t now = pw_clock_mono_ms();
	pthread_mutex_lock(&b->owner->lock);
	bool new_stage = !b->stage || !p->stage || strcmp(b->stage, p->stage) != 0;
	if (new_stage) {
		free(b->stage);
		b->stage = p->stage ? xstrdup(p->stage) : NULL;
		if (p->stage && strncmp(p->stage, "pip", 3) == 0)
			b->attempt++;
	}
	b->done = p->done;
	b->total = p->total;
	/* The stream gets stage changes, the end of a stage, and at most ten
	 * a second in between; the job object always has the latest. */
	if (new_stage || (p->total > 0 && p->done >= p->total) || now - b->last_progress_ms >= PROGRESS_EVERY_MS) {
		b->last_progress_ms = now;
		add_event(b, "progress", progress_json(b));
	}
	pthread_mutex_unlock(&b->owner->lock);
}

/* ---------------------------------------------------------------- objects */

static json_t *error_json(const pw_err *e)
{
	return pw_json_error_member(pw_err_code_name(pw_err_code(e)), pw_err_message(e), pw_err_hint(e),
				    pw_err_exit_status(e));
}

/* Lock held. */
static json_t *job_json(const job *b)
{
	char events[64];
	snprintf(events, sizeof events, "/api/jobs/%lld/events", (long long)b->id);
	json_t *o = json_pack("{s:I, s:s, s:s?, s:s, s:s, s:s?, s:s?, s:o, s:I, s:I, s:s}", "id", (json_int_t)b->id,
		"kind", b->kind, "target", b->target, "state", b->state, "created_at", b->created_at, "finished_at",
		b->finished_at[0] ? b->finished_at : NULL, "user", b->user, "progress", progress_json(b), "events",
		(json_int_t)b->event_count, "events_dropped", (json_int_t)b->dropped, "events_url", events);
	json_object_set_new(o, "result", b->result ? json_incref(b->result) : json_null());
	json_object_set_new(o, "error", b->err ? error_json(b->err) : json_null());
	if (b->cancelled_by)
		json_object_set_new(o, "cancel_requested_by", json_string(b->cancelled_by));
	json_object_set_new(o, "live", json_true());
	return o;
}

/* ---------------------------------------------------------------- the catalog's */

static json_t *parsed_or_null(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	return v ? v : json_null();
}

/* A job only the catalog knows: run by an earlier server (or another one
 * on this box), with what it recorded. */
static json_t *stored_json(const pw_apijob_rec *r)
{
	char events[64];
	snprintf(events, sizeof events, "/api/jobs/%lld/events", (long long)r->id);
	bool interrupted = strcmp(r->state, "interrupted") == 0;
	json_t *o = json_pack("{s:I, s:s, s:s?, s:s, s:s, s:s?, s:s, s:n, s:I, s:I, s:s}", "id", (json_int_t)r->id,
		"kind", r->kind, "target", r->target, "state", r->state, "created_at", r->created_at, "finished_at",
		r->finished_at, "user", r->user, "progress", "events", (json_int_t)(r->events > 0 ? r->events : 1),
		"events_dropped", (json_int_t)0, "events_url", events);
	json_object_set_new(o, "result", parsed_or_null(r->result));
	json_t *err = parsed_or_null(r->error);
	if (interrupted && json_is_null(err)) {
		char msg[160];
		snprintf(msg, sizeof msg, "the server that ran it (pid %lld) stopped before the job ended",
			 (long long)r->pid);
		json_decref(err);
		err = json_pack("{s:s, s:s, s:s}", "code", "interrupted", "message", msg, "hint",
				"GET /api/history?kind=KIND shows how far its operation got; start it again if needed");
	}
	json_object_set_new(o, "error", err);
	if (r->cancelled_by)
		json_object_set_new(o, "cancel_requested_by", json_string(r->cancelled_by));
	json_object_set_new(o, "live", json_false());
	return o;
}

/* The catalog's record of job id; NULL when it has none. */
static json_t *stored_job(pw_api_jobs *j, int64_t id)
{
	pw_api_catalog_lease cat;
	pw_apijob_rec rec;
	pw_err *e = pw_api_catalog_pool_take(j->srv->catalogs, &cat);
	if (!e)
		e = pw_apijobs_get(cat.c, id, &rec);
	pw_api_catalog_pool_give(j->srv->catalogs, &cat);
	if (e) {
		pw_err_free(e);
		return NULL;
	}
	json_t *o = stored_json(&rec);
	pw_apijob_rec_clear(&rec);
	return o;
}

json_t *pw_api_jobs_json(pw_api_jobs *j, int64_t id)
{
	pthread_mutex_lock(&j->lock);
	job *b = find(j, id);
	json_t *o = b ? job_json(b) : NULL;
	pthread_mutex_unlock(&j->lock);
	return o || id <= 0 ? o : stored_job(j, id);
}

json_t *pw_api_jobs_all(pw_api_jobs *j)
{
	json_t *a = json_array();
	pw_api_catalog_lease cat;
	pw_apijob_rec *recs = NULL;
	size_t n = 0;
	pw_err *e = pw_api_catalog_pool_take(j->srv->catalogs, &cat);
	if (!e)
		e = pw_apijobs_list(cat.c, MAX_JOBS, &recs, &n);
	pw_api_catalog_pool_give(j->srv->catalogs, &cat);
	pthread_mutex_lock(&j->lock);
	if (e) {
		/* no catalog to read: this server's jobs */
		for (size_t i = j->count; i-- > 0;)
			if (j->items[i]->id > 0)
				json_array_append_new(a, job_json(j->items[i]));
	}
	for (size_t i = 0; i < n; i++) {
		job *b = find(j, recs[i].id);
		json_array_append_new(a, b ? job_json(b) : stored_json(&recs[i]));
	}
	pthread_mutex_unlock(&j->lock);
	for (size_t i = 0; i < n; i++)
		pw_apijob_rec_clear(&recs[i]);
	free(recs);
	pw_err_free(e);
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o)
		json_object_del(o, "result");
	return a;
}

/* ---------------------------------------------------------------- running */

static const char *state_of(const pw_err *e)
{
	if (!e)
		return "ok";
	switch (pw_err_code(e)) {
	case PW_ERR_REFUSED: return "refused";
	case PW_ERR_TIMEOUT: return "timed-out";
	case PW_ERR_CANCELLED: return "cancelled";
	default: return "failed";
	}
}

/* The catalog gets the end first, so what a client is told has ended is on
 * disk (the catalog syncs its commits) before the result event goes out. */
static void record_end(job *b, json_t *result, const pw_err *err)
{
	pw_api_jobs *j = b->owner;
	pw_clock_iso_now(b->finished_at, sizeof b->finished_at);
	char *res = result ? json_dumps(result, JSON_COMPACT) : NULL;
	json_t *ej = err ? error_json(err) : NULL;
	char *etext = ej ? json_dumps(ej, JSON_COMPACT) : NULL;
	json_decref(ej);
	pthread_mutex_lock(&j->lock);
	char *by = b->cancelled_by ? xstrdup(b->cancelled_by) : NULL;
	int64_t events = (int64_t)b->event_count + 1; /* the result event is the last */
	pthread_mutex_unlock(&j->lock);
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_rw(j->srv->ctx, &cat);
	if (!e)
		e = pw_apijobs_finish(cat, b->id, state_of(err), b->finished_at, res, etext, events, by);
	pw_catalog_close(&cat);
	if (e) {
		pthread_mutex_lock(&j->lock);
		add_event(b, "log", json_pack("{s:s, s:s}", "level", "warning", "message", pw_err_message(e)));
		pthread_mutex_unlock(&j->lock);
		pw_err_free(e);
	}
	free(res);
	free(etext);
	free(by);
}

static void *job_main(void *arg)
{
	job *b = arg;
	pw_api_jobs *j = b->owner;
	pw_events ev = { .log = on_log, .progress = on_progress, .ud = b };
	pw_err *err = NULL;
	json_t *result = b->spec.run(b->spec.ud, &ev, b->cancel, &err);
	if (b->spec.free_ud)
		b->spec.free_ud(b->spec.ud);
	b->spec.ud = NULL;
	record_end(b, result, err);
	pthread_mutex_lock(&j->lock);
	b->result = result;
	b->err = err;
	b->state = state_of(err);
	add_event(b, "result", pw_api_with_schema(job_json(b))); /* the object GET /api/jobs/ID answers */
	j->running--;
	pthread_cond_broadcast(&j->changed);
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

static const char *area_end(const char *kind)
{
	const char *dot = strchr(kind, '.');
	return dot ? dot : kind + strlen(kind);
}

/* Lock held: a running job this one must wait for. */
static job *conflicting(pw_api_jobs *j, const pw_api_job_spec *s)
{
	size_t an = (size_t)(area_end(s->kind) - s->kind);
	bool whole_area = strncmp(s->kind, "runtime", an) == 0;
	for (size_t i = 0; i < j->count; i++) {
		job *b = j->items[i];
		if (strcmp(b->state, "running") != 0 || strncmp(b->kind, s->kind, an) != 0 || b->kind[an] != s->kind[an])
			continue;
		if (whole_area || (b->target && s->target && strcmp(b->target, s->target) == 0))
			return b;
	}
	return NULL;
}

/* Lock held: room for one more job (the oldest finished one nobody reads goes). */
static bool make_room(pw_api_jobs *j)
{
	if (j->count < MAX_JOBS)
		return true;
	for (size_t i = 0; i < j->count; i++) {
		job *b = j->items[i];
		if (strcmp(b->state, "running") == 0 || b->readers)
			continue;
		job_free(b);
		memmove(&j->items[i], &j->items[i + 1], (j->count - i - 1) * sizeof *j->items);
		j->count--;
		return true;
	}
	return false;
}

static void spec_drop(const pw_api_job_spec *s)
{
	if (s->free_ud)
		s->free_ud(s->ud);
}

/* Record the job in the catalog: its row's id is the job's. */
static pw_err *record_start(pw_api_jobs *j, job *b, const pw_api_job_spec *spec, int64_t *id)
{
	pw_catalog *cat = NULL;
	pw_err *e = pw_ops_catalog_rw(j->srv->ctx, &cat);
	if (!e)
		e = pw_apijobs_begin(cat, spec->kind, spec->target, spec->user, spec->args, b->created_at, id);
	pw_catalog_close(&cat);
	return e;
}

/* Lock held: take job b out of the list. */
static void unlist(pw_api_jobs *j, job *b)
{
	for (size_t i = 0; i < j->count; i++)
		if (j->items[i] == b) {
			memmove(&j->items[i], &j->items[i + 1], (j->count - i - 1) * sizeof *j->items);
			j->count--;
			return;
		}
}

pw_api_job_started pw_api_jobs_start(pw_api_jobs *j, const pw_api_job_spec *spec, int64_t *id, pw_err **err)
{
	*err = NULL;
	pthread_mutex_lock(&j->lock);
	job *other = conflicting(j, spec);
	if (other || j->stopping || !make_room(j)) {
		*id = other ? other->id : 0;
		pthread_mutex_unlock(&j->lock);
		spec_drop(spec);
		return other ? PW_API_JOB_CONFLICT : PW_API_JOB_TOO_MANY;
	}
	/* Listed (with id 0) while the catalog records it, so a second
	 * request meanwhile sees the conflict; no reader can find it yet. */
	job *b = xcalloc(1, sizeof *b);
	b->kind = xstrdup(spec->kind);
	b->target = spec->target ? xstrdup(spec->target) : NULL;
	b->user = spec->user ? xstrdup(spec->user) : NULL;
	b->state = "running";
	b->total = -1;
	b->cancel = pw_cancel_new();
	b->spec = *spec;
	b->spec.args = NULL;
	b->owner = j;
	pw_clock_iso_now(b->created_at, sizeof b->created_at);
	j->items[j->count++] = b;
	j->running++;
	pthread_mutex_unlock(&j->lock);

	int64_t rid = 0;
	pw_err *e = record_start(j, b, spec, &rid);
	pthread_mutex_lock(&j->lock);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	b->id = *id = e ? 0 : rid;
	if (e || pthread_create(&t, &attr, job_main, b) != 0) {
		unlist(j, b);
		j->running--;
		pthread_cond_broadcast(&j->changed);
		b->spec.ud = NULL;
		job_free(b);
		spec_drop(spec);
		pthread_attr_destroy(&attr);
		pthread_mutex_unlock(&j->lock);
		*err = e;
		return e ? PW_API_JOB_NOT_RECORDED : PW_API_JOB_TOO_MANY;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_unlock(&j->lock);
	return PW_API_JOB_STARTED;
}

/* A hold is an entry with id 0 that no reader finds (find wants id > 0)
 * and that is not counted as running, but that conflicting() sees. */
pw_api_job_started pw_api_jobs_hold(pw_api_jobs *j, const char *kind, const char *target, int64_t *by)
{
	pw_api_job_spec spec = { .kind = kind, .target = target };
	*by = 0;
	pthread_mutex_lock(&j->lock);
	job *other = conflicting(j, &spec);
	if (other || !make_room(j)) {
		*by = other ? other->id : 0;
		pthread_mutex_unlock(&j->lock);
		return other ? PW_API_JOB_CONFLICT : PW_API_JOB_TOO_MANY;
	}
	job *b = xcalloc(1, sizeof *b);
	b->kind = xstrdup(kind);
	b->target = target ? xstrdup(target) : NULL;
	b->state = "running";
	b->owner = j;
	j->items[j->count++] = b;
	pthread_mutex_unlock(&j->lock);
	return PW_API_JOB_STARTED;
}

void pw_api_jobs_release(pw_api_jobs *j, const char *kind, const char *target)
{
	pthread_mutex_lock(&j->lock);
	for (size_t i = 0; i < j->count; i++) {
		job *b = j->items[i];
		if (b->id == 0 && !b->cancel && strcmp(b->kind, kind) == 0 &&
		    (b->target == NULL) == (target == NULL) && (!target || strcmp(b->target, target) == 0)) {
			unlist(j, b);
			job_free(b);
			break;
		}
	}
	pthread_cond_broadcast(&j->changed);
	pthread_mutex_unlock(&j->lock);
}

bool pw_api_jobs_cancel(pw_api_jobs *j, int64_t id, const char *by)
{
	pthread_mutex_lock(&j->lock);
	job *b = find(j, id);
	bool running = b && strcmp(b->state, "running") == 0;
	if (running) {
		if (!b->cancelled_by)
			b->cancelled_by = xstrdup(by ? by : "");
		pw_cancel_raise(b->cancel);
	}
	pthread_mutex_unlock(&j->lock);
	return running;
}

unsigned pw_api_jobs_running(pw_api_jobs *j)
{
	pthread_mutex_lock(&j->lock);
	unsigned n = j->running;
	pthread_mutex_unlock(&j->lock);
	return n;
}

void pw_api_jobs_stop(pw_api_jobs *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stopping = true;
	for (size_t i = 0; i < j->count; i++)
		if (strcmp(j->items[i]->state, "running") == 0)
			pw_cancel_raise(j->items[i]->cancel);
	pthread_cond_broadcast(&j->changed);
	while (j->running > 0)
		pthread_cond_wait(&j->changed, &j->lock);
	pthread_mutex_unlock(&j->lock);
}

void pw_api_jobs_free(pw_api_jobs **jp)
{
	pw_api_jobs *j = jp ? *jp : NULL;
	if (!j)
		return;
	for (size_t i = 0; i < j->count; i++)
		job_free(j->items[i]);
	pthread_cond_destroy(&j->changed);
	pthread_mutex_destroy(&j->lock);
	free(j);
	*jp = NULL;
}

/* ---------------------------------------------------------------- streams */

typedef struct stream {
	pw_api_jobs *jobs;
	job *job;
	int64_t next;     /* the next event number to send */
	char *buf;        /* formatted, not yet sent */
	size_t len, pos;
	bool ended;
} stream;

/* Lock held: format the events from s->next on into s->buf. */
static void format_pending(stream *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	job *b = s->job;
	while (s->next >= 1 && s->next <= (int64_t)b->event_count) {
		const event *ev = &b->events[s->next - 1];
		fprintf(f, "id: %lld\nevent: %s\ndata: %s\n\n", (long long)ev->seq, ev->type, ev->data);
		s->next++;
		if (strcmp(ev->type, "result") == 0)
			s->ended = true;
	}
	/* Resumed after the last event of a finished job: nothing more comes. */
	if (strcmp(b->state, "running") != 0 && s->next > (int64_t)b->event_count)
		s->ended = true;
	fclose(f);
	free(s->buf);
	s->buf = out;
	s->len = len;
	s->pos = 0;
}

static bool wait_for_events(stream *s)
{
	pw_api_jobs *j = s->jobs;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += KEEPALIVE_S;
	while (!j->stopping && s->next > (int64_t)s->job->event_count && strcmp(s->job->state, "running") == 0) {
		if (pthread_cond_timedwait(&j->changed, &j->lock, &until) == ETIMEDOUT)
			return false;
	}
	return true;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	stream *s = cls;
	if (s->pos == s->len) {
		if (s->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		pthread_mutex_lock(&s->jobs->lock);
		bool news = wait_for_events(s);
		bool stopping = s->jobs->stopping;
		if (news)
			format_pending(s);
		pthread_mutex_unlock(&s->jobs->lock);
		if (stopping && s->pos == s->len)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (!news) {
			free(s->buf);
			s->buf = xstrdup(": keep-alive\n\n");
			s->len = strlen(s->buf);
			s->pos = 0;
		}
		if (s->pos == s->len)
			return s->ended ? MHD_CONTENT_READER_END_OF_STREAM : 0;
	}
	size_t n = s->len - s->pos < max ? s->len - s->pos : max;
	memcpy(buf, s->buf + s->pos, n);
	s->pos += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	stream *s = cls;
	pthread_mutex_lock(&s->jobs->lock);
	s->job->readers--;
	pthread_mutex_unlock(&s->jobs->lock);
	free(s->buf);
	free(s);
}

static void stream_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
}

/* A job only the catalog knows: its result as its last event, unless the
 * client has it already. */
static struct MHD_Response *stored_events(pw_api_jobs *j, int64_t id, int64_t after)
{
	json_t *o = stored_job(j, id);
	if (!o)
		return NULL;
	o = pw_api_with_schema(o);
	json_int_t last = json_integer_value(json_object_get(o, "events"));
	char *text = NULL;
	if (after < last) {
		char *data = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		text = xasprintf("id: %lld\nevent: result\ndata: %s\n\n", (long long)last, data ? data : "{}");
		free(data);
	} else {
		text = xstrdup("");
	}
	json_decref(o);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return NULL;
	}
	stream_headers(r);
	return r;
}

struct MHD_Response *pw_api_jobs_events(pw_api_jobs *j, int64_t id, int64_t after)
{
	pthread_mutex_lock(&j->lock);
	job *b = find(j, id);
	if (b)
		b->readers++;
	pthread_mutex_unlock(&j->lock);
	if (!b)
		return stored_events(j, id, after);
	stream *s = xcalloc(1, sizeof *s);
	s->jobs = j;
	s->job = b;
	/* A client's number, however large (Last-Event-ID: 9999…9 reads as
	 * INT64_MAX), must not wrap the next one round to a negative index. */
	s->next = after <= 0 ? 1 : after < INT64_MAX ? after + 1 : INT64_MAX;
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
	if (!r) {
		stream_free(s);
		return NULL;
	}
	stream_headers(r);
	return r;
}
