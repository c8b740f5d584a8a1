/* Requests in flight, progress, elicitation and batches: see calls.h. */
#include "config.h"

#include "mcp/calls.h"
#include "mcp/rpc.h"

#include "clock.h"
#include "xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_CALLS 64
#define PROGRESS_INTERVAL_MS 250

struct pw_mcp_call {
	pw_mcp_calls *reg;
	pw_mcp_call *next;
	json_t *id, *params, *caps, *progress_token;
	char *client_name, *client_version;
	char *who_client, *who_args;
	pw_mcp_version version;
	pw_mcp_batch *batch;
	pw_cancel *cancel;
	bool cancelled;            /* by the client: send nothing more */
	bool answered;             /* its response went out before the call ended */
	/* progress, under reg->lock */
	double last_progress;
	int64_t last_sent_ms;
	json_t *pending_progress;  /* the latest notice held back by the throttle */
	void (*fn)(pw_mcp_call *c, void *ud);
	void *ud;
};

typedef struct outgoing {
	struct outgoing *next;
	json_t *id;
	json_t *response;  /* the client's answer once it came */
} outgoing;

struct pw_mcp_calls {
	pw_mcp_wire *wire;
	const pw_mcp_opts *opts;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pw_mcp_call *calls;
	size_t count;
	outgoing *waiting;
	long next_out_id;
	bool hung_up;
};

/* ---------------------------------------------------------------- accessors */

const json_t *pw_mcp_call_id(const pw_mcp_call *c) { return c->id; }
const pw_cancel *pw_mcp_call_cancel(const pw_mcp_call *c) { return c->cancel; }
pw_mcp_version pw_mcp_call_version(const pw_mcp_call *c) { return c->version; }
const json_t *pw_mcp_call_params(const pw_mcp_call *c) { return c->params; }
const char *pw_mcp_call_client_name(const pw_mcp_call *c) { return c->client_name ? c->client_name : ""; }
const char *pw_mcp_call_client_version(const pw_mcp_call *c) { return c->client_version ? c->client_version : ""; }
const pw_mcp_opts *pw_mcp_call_opts(const pw_mcp_call *c) { return c->reg->opts; }

void pw_mcp_call_ctx(pw_mcp_call *c, const char *tool, const json_t *args, const char *note, pw_ops_ctx *out)
{
	*out = *c->reg->opts->ctx;
	free(c->who_client);
	free(c->who_args);
	c->who_client = xasprintf("%s %s", c->client_name ? c->client_name : "unnamed client",
				  c->client_version ? c->client_version : "");
	char *a = args ? json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	c->who_args = xasprintf("%s %s%s%s", tool, a ? a : "{}", note ? " " : "", note ? note : "");
	free(a);
	out->who.front_end = "mcp";
	out->who.client = c->who_client;
	out->who.args = c->who_args;
}

bool pw_mcp_call_can_elicit(const pw_mcp_call *c)
{
	json_t *e = json_object_get(c->caps, "elicitation");
	if (!json_is_object(e))
		return false;
	/* 2025-11-25 client/elicitation: {} means form; with modes named, form must be one */
	return json_object_size(e) == 0 || json_object_get(e, "form") != NULL;
}

/* ---------------------------------------------------------------- registry */

pw_mcp_calls *pw_mcp_calls_new(pw_mcp_wire *w, const pw_mcp_opts *o)
{
	pw_mcp_calls *r = xcalloc(1, sizeof *r);
	r->wire = w;
	r->opts = o;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->changed, NULL);
	return r;
}

void pw_mcp_calls_free(pw_mcp_calls **r)
{
	if (!*r)
		return;
	pthread_mutex_destroy(&(*r)->lock);
	pthread_cond_destroy(&(*r)->changed);
	free(*r);
	*r = NULL;
}

static pw_mcp_call *find_locked(pw_mcp_calls *r, const json_t *id)
{
	for (pw_mcp_call *c = r->calls; c; c = c->next)
		if (pw_rpc_id_equal(c->id, id))
			return c;
	return NULL;
}

/* A reference of our own to a part of a message that nobody changes. */
static json_t *shared(const json_t *j)
{
	return (json_t *)(uintptr_t)j;
}

pw_mcp_call *pw_mcp_calls_begin(pw_mcp_calls *r, const json_t *id, const json_t *params,
				const pw_mcp_peer *peer, pw_mcp_batch *batch, const char **why)
{
	pthread_mutex_lock(&r->lock);
	/* A call whose response went out is over for the client, which may
	 * use its id again at once: wait the moments it takes to end. */
	pw_mcp_call *same;
	int64_t until_ms = pw_clock_mono_ms() + 2000; /* not seen: ending takes microseconds */
	while ((same = find_locked(r, id)) && same->answered && pw_clock_mono_ms() < until_ms) {
		struct timespec ts;
		pw_clock_realtime_in(&ts, 10);
		pthread_cond_timedwait(&r->changed, &r->lock, &ts);
	}
	*why = same ? "a request with this id is still running"
	       : r->count >= MAX_CALLS ? "too many requests are running (at most 64)" : NULL;
	if (*why) {
		pthread_mutex_unlock(&r->lock);
		return NULL;
	}
	pw_mcp_call *c = xcalloc(1, sizeof *c);
	c->reg = r;
	c->id = json_deep_copy(id);
	/* shared, not copied: nothing changes a parsed message (jansson's
	 * reference counts are atomic, so the reading thread may drop it) */
	c->params = params ? json_incref(shared(params)) : json_object();
	c->caps = peer->caps ? json_incref(shared(peer->caps)) : json_object();
	c->client_name = peer->name ? xstrdup(peer->name) : NULL;
	c->client_version = peer->version_text ? xstrdup(peer->version_text) : NULL;
	c->version = peer->version;
	c->batch = batch;
	c->cancel = pw_cancel_new();
	json_t *tok = json_object_get(json_object_get(c->params, "_meta"), "progressToken");
	if (json_is_string(tok) || json_is_number(tok))
		c->progress_token = json_incref(tok);
	c->last_progress = 0;
	c->next = r->calls;
	r->calls = c;
	r->count++;
	pthread_mutex_unlock(&r->lock);
	return c;
}

static void unlink_locked(pw_mcp_calls *r, pw_mcp_call *c)
{
	for (pw_mcp_call **p = &r->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			r->count--;
			break;
		}
}

static void call_free(pw_mcp_call *c)
{
	json_decref(c->id);
	json_decref(c->params);
	json_decref(c->caps);
	json_decref(c->progress_token);
	json_decref(c->pending_progress);
	free(c->client_name);
	free(c->client_version);
	free(c->who_client);
	free(c->who_args);
	pw_cancel_free(&c->cancel);
	free(c);
}

/* Out of the registry and freed, once its answer (if any) went out: the
 * server waits for an empty registry before it exits. */
static void call_done(pw_mcp_call *c)
{
	pw_mcp_calls *r = c->reg;
	pthread_mutex_lock(&r->lock);
	unlink_locked(r, c);
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
	call_free(c);
}

void pw_mcp_call_finish(pw_mcp_call *c, json_t *response)
{
	pthread_mutex_lock(&c->reg->lock);
	if (c->cancelled) {
		json_decref(response);
		response = NULL;
	}
	c->answered = response && !c->batch; /* see pw_mcp_call_send_line */
	pthread_mutex_unlock(&c->reg->lock);
	pw_mcp_reply(c->reg->wire, c->batch, response);
	call_done(c);
}

void pw_mcp_call_send_line(pw_mcp_call *c, const char *line, size_t len)
{
	pthread_mutex_lock(&c->reg->lock);
	bool drop = c->cancelled;
	c->answered = !drop; /* before the write: the client may reuse the id as soon as it reads */
	pthread_mutex_unlock(&c->reg->lock);
	if (!drop)
		pw_mcp_wire_send_line(c->reg->wire, line, len);
}

void pw_mcp_call_finish_line(pw_mcp_call *c, char *line, size_t len)
{
	if (line)
		pw_mcp_call_send_line(c, line, len);
	free(line);
	call_done(c);
}

bool pw_mcp_call_batched(const pw_mcp_call *c)
{
	return c->batch != NULL;
}

static void *thread_main(void *arg)
{
	pw_mcp_call *c = arg;
	c->fn(c, c->ud);
	return NULL;
}

bool pw_mcp_calls_spawn(pw_mcp_call *c, void (*fn)(pw_mcp_call *c, void *ud), void *ud)
{
	c->fn = fn;
	c->ud = ud;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &attr, thread_main, c);
	pthread_attr_destroy(&attr);
	return rc == 0;
}

void pw_mcp_calls_cancel(pw_mcp_calls *r, const json_t *id)
{
	pthread_mutex_lock(&r->lock);
	pw_mcp_call *c = find_locked(r, id);
	if (c) {
		c->cancelled = true;
		pw_cancel_raise(c->cancel);
	}
	pthread_cond_broadcast(&r->changed); /* an elicitation wait sees it */
	pthread_mutex_unlock(&r->lock);
}

void pw_mcp_calls_cancel_all(pw_mcp_calls *r)
{
	pthread_mutex_lock(&r->lock);
	for (pw_mcp_call *c = r->calls; c; c = c->next)
		pw_cancel_raise(c->cancel);
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

void pw_mcp_calls_hangup(pw_mcp_calls *r)
{
	pthread_mutex_lock(&r->lock);
	r->hung_up = true;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

bool pw_mcp_calls_wait_idle(pw_mcp_calls *r, int timeout_ms)
{
	struct timespec until;
	if (timeout_ms >= 0)
		pw_clock_realtime_in(&until, timeout_ms);
	pthread_mutex_lock(&r->lock);
	int rc = 0;
	while (r->count > 0 && rc != ETIMEDOUT)
		rc = timeout_ms >= 0 ? pthread_cond_timedwait(&r->changed, &r->lock, &until)
				     : pthread_cond_wait(&r->changed, &r->lock);
	bool idle = r->count == 0;
	pthread_mutex_unlock(&r->lock);
	return idle;
}

/* ---------------------------------------------------------------- progress */

static void send_progress_locked(pw_mcp_call *c)
{
	if (!c->pending_progress || c->cancelled)
		return;
	pw_mcp_wire_send(c->reg->wire, c->pending_progress);
	json_decref(c->pending_progress);
	c->pending_progress = NULL;
	c->last_sent_ms = pw_clock_mono_ms();
}

/* now: sent at once, whatever the throttle (pyward's own lines, which are
 * few: "attempt 2: ...", "waiting for ... locked by"); else the latest
 * pending one goes out at most every PROGRESS_INTERVAL_MS, so pip's chatter
 * cannot hide which attempt it belongs to. */
static void queue_progress(pw_mcp_call *c, double progress, double total, const char *message, bool now)
{
	if (!c->progress_token)
		return;
	pthread_mutex_lock(&c->reg->lock);
	/* 2025-06-18 basic/utilities/progress: the value MUST increase with each notification */
	if (progress <= c->last_progress)
		progress = c->last_progress + 1;
	if (total >= 0 && total < progress)
		total = -1;
	c->last_progress = progress;
	json_t *p = json_object();
	json_object_set(p, "progressToken", c->progress_token);
	json_object_set_new(p, "progress", json_real(progress));
	if (total >= 0)
		json_object_set_new(p, "total", json_real(total));
	if (message && *message)
		json_object_set_new(p, "message", json_string(message));
	json_decref(c->pending_progress);
	c->pending_progress = pw_rpc_message(NULL, "notifications/progress", p);
	if (now || pw_clock_mono_ms() - c->last_sent_ms >= PROGRESS_INTERVAL_MS)
		send_progress_locked(c);
	pthread_mutex_unlock(&c->reg->lock);
}

void pw_mcp_call_progress(pw_mcp_call *c, double progress, double total, const char *message)
{
	queue_progress(c, progress, total, message, false);
}

static void events_progress(void *ud, const pw_progress *p)
{
	pw_mcp_call *c = ud;
	char *msg = p->total > 0 ? xasprintf("%s: %lld of %lld", p->stage, (long long)p->done, (long long)p->total)
				 : xasprintf("%s: %lld", p->stage, (long long)p->done);
	pw_mcp_call_progress(c, (double)p->done, (double)p->total, msg);
	free(msg);
}

static void events_log(void *ud, pw_log_level level, const char *msg)
{
	pw_mcp_call *c = ud;
	if (level >= PW_LOG_INFO)
		queue_progress(c, 0, -1, msg, true); /* "attempt 2: pip install from ...", a lock wait */
}

pw_events pw_mcp_call_events(pw_mcp_call *c)
{
	pw_events ev = { .log = events_log, .progress = events_progress, .ud = c };
	return ev;
}

/* ---------------------------------------------------------------- elicitation */

static pw_mcp_elicit_action action_of(const json_t *response, json_t **content)
{
	json_t *res = json_object_get(response, "result");
	const char *a = json_string_value(json_object_get(res, "action"));
	if (!a)
		return PW_MCP_ELICIT_FAILED;
	if (strcmp(a, "accept") == 0) {
		if (content) {
			json_t *v = json_object_get(res, "content");
			*content = json_is_object(v) ? json_incref(v) : json_object();
		}
		return PW_MCP_ELICIT_ACCEPT;
	}
	return strcmp(a, "decline") == 0 ? PW_MCP_ELICIT_DECLINE : PW_MCP_ELICIT_CANCEL;
}

static outgoing *register_outgoing(pw_mcp_calls *r)
{
	outgoing *o = xcalloc(1, sizeof *o);
	pthread_mutex_lock(&r->lock);
	char *id = xasprintf("pyward-%ld", ++r->next_out_id);
	o->id = json_string(id);
	free(id);
	o->next = r->waiting;
	r->waiting = o;
	pthread_mutex_unlock(&r->lock);
	return o;
}

static void unregister_outgoing_locked(pw_mcp_calls *r, outgoing *o)
{
	for (outgoing **p = &r->waiting; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	json_decref(o->id);
	json_decref(o->response);
	free(o);
}

pw_mcp_elicit_action pw_mcp_call_elicit(pw_mcp_call *c, const char *message, const json_t *schema,
					json_t **content)
{
	if (content)
		*content = NULL;
	pw_mcp_calls *r = c->reg;
	outgoing *o = register_outgoing(r);
	json_t *params = json_pack("{s:s, s:O}", "message", message, "requestedSchema", schema);
	if (c->version >= PW_MCP_2025_11_25)
		json_object_set_new(params, "mode", json_string("form"));
	json_t *req = pw_rpc_message(o->id, "elicitation/create", params);
	bool sent = pw_mcp_wire_send(r->wire, req);
	json_decref(req);
	pthread_mutex_lock(&r->lock);
	while (sent && !o->response && !r->hung_up && !pw_cancel_raised(c->cancel)) {
		struct timespec ts;
		pw_clock_realtime_in(&ts, 200); /* the token may be raised by a signal */
		pthread_cond_timedwait(&r->changed, &r->lock, &ts);
	}
	pw_mcp_elicit_action a = o->response ? action_of(o->response, content) : PW_MCP_ELICIT_FAILED;
	unregister_outgoing_locked(r, o);
	pthread_mutex_unlock(&r->lock);
	return a;
}

bool pw_mcp_calls_take_response(pw_mcp_calls *r, const json_t *msg)
{
	const json_t *id = json_object_get(msg, "id");
	bool taken = false;
	pthread_mutex_lock(&r->lock);
	for (outgoing *o = r->waiting; o && !taken; o = o->next)
		if (!o->response && pw_rpc_id_equal(o->id, id)) {
			o->response = json_deep_copy(msg);
			taken = true;
		}
	if (taken)
		pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
	return taken;
}

/* ---------------------------------------------------------------- batches */

struct pw_mcp_batch {
	pw_mcp_wire *wire;
	pthread_mutex_t lock;
	json_t *responses;
	int pending;
};

pw_mcp_batch *pw_mcp_batch_new(pw_mcp_wire *w)
{
	pw_mcp_batch *b = xcalloc(1, sizeof *b);
	b->wire = w;
	b->responses = json_array();
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

void pw_mcp_batch_hold(pw_mcp_batch *b)
{
	pthread_mutex_lock(&b->lock);
	b->pending++;
	pthread_mutex_unlock(&b->lock);
}

void pw_mcp_batch_put(pw_mcp_batch *b, json_t *msg)
{
	pthread_mutex_lock(&b->lock);
	if (msg)
		json_array_append_new(b->responses, msg);
	bool last = --b->pending == 0;
	pthread_mutex_unlock(&b->lock);
	if (!last)
		return;
	/* JSON-RPC 2.0 section 6: no array at all when every member was a notification */
	if (json_array_size(b->responses) > 0)
		pw_mcp_wire_send(b->wire, b->responses);
	json_decref(b->responses);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

void pw_mcp_reply(pw_mcp_wire *w, pw_mcp_batch *b, json_t *msg)
{
	if (b) {
		pw_mcp_batch_put(b, msg);
		return;
	}
	if (msg)
		pw_mcp_wire_send(w, msg);
	json_decref(msg);
}
