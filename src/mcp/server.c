/*
 * pyward mcp: the stdio loop and the dispatch of JSON-RPC messages. The
 * reading thread answers the quick methods itself (initialize,
 * server/discover, ping, tools/list) and runs a tools/call itself once
 * stdin is armed for another thread (the loop below), so cancellations
 * and answers to our own requests are read while tools run.
 */
#include "config.h"

#include "mcp/mcp.h"
#include "mcp/argcheck.h"
#include "mcp/pads.h"
#include "mcp/calls.h"
#include "mcp/fastcall.h"
#include "mcp/proto.h"
#include "mcp/reader.h"
#include "mcp/rpc.h"
#include "mcp/tools.h"
#include "mcp/wire.h"

#include "xalloc.h"
#include "fdwrite.h"
#include "sigpipe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct server {
	const pw_mcp_opts *o;
	pw_mcp_wire *wire;
	pw_mcp_calls *calls;
	pw_mcp_toolbox *tools;
	char *instructions;
	/* the legacy session, opened by initialize (read and written by the reading thread only) */
	pw_mcp_version legacy;
	json_t *legacy_caps;
	char *client_name, *client_version;
} server;

/* ---------------------------------------------------------------- instructions */

/* The body of SKILL.md (after its front matter) is what agents are told. */
static char *load_instructions(const char *path)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f) {
		pw_mcp_log("no guidance file (%s): the instructions are one line", path ? path : "unset");
		return xstrdup("pyward manages Python for you: use these tools instead of pip or venv in a shell.");
	}
	size_t len = 0, cap = 8192;
	char *buf = xmalloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0)
		if ((len += n) == cap - 1)
			buf = xrealloc(buf, cap *= 2);
	fclose(f);
	buf[len] = '\0';
	char *body = buf;
	if (strncmp(buf, "---\n", 4) == 0) {
		char *end = strstr(buf + 4, "\n---\n");
		if (end)
			body = end + 5;
	}
	while (*body == '\n')
		body++;
	char *text = xstrdup(body);
	free(buf);
	return text;
}

/* ---------------------------------------------------------------- results */

/* The stateless revision's result fields (2026-07-28 basic/index
 * "Result Responses" and "_meta"). */
static json_t *finish_result(pw_mcp_version v, json_t *result)
{
	if (!pw_mcp_is_stateless(v))
		return result;
	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType", json_string("complete"));
	json_t *meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, PW_MCP_META_SERVER, pw_mcp_server_info(v));
	return result;
}

static json_t *capabilities(void)
{
	return json_pack("{s:{s:b}}", "tools", "listChanged", 0);
}

/* ---------------------------------------------------------------- methods */

static json_t *do_initialize(server *s, const json_t *id, const json_t *params)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	if (!asked)
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "initialize: params.protocolVersion (a string) is missing",
				    NULL);
	if (s->legacy != PW_MCP_NONE)
		return pw_rpc_error(id, PW_RPC_INVALID_REQUEST, "initialize was already answered on this connection", NULL);
	/* 2025-06-18 basic/lifecycle "Version Negotiation": an unsupported
	 * version is answered with the latest one the server speaks. */
	pw_mcp_version v = pw_mcp_version_parse(asked);
	if (v == PW_MCP_NONE || pw_mcp_is_stateless(v))
		v = PW_MCP_LATEST_LEGACY;
	s->legacy = v;
	json_t *caps = json_object_get(params, "capabilities");
	s->legacy_caps = json_is_object(caps) ? json_deep_copy(caps) : json_object();
	json_t *info = json_object_get(params, "clientInfo");
	const char *name = json_string_value(json_object_get(info, "name"));
	const char *version = json_string_value(json_object_get(info, "version"));
	s->client_name = name ? xstrdup(name) : NULL;
	s->client_version = version ? xstrdup(version) : NULL;
	pw_mcp_log("session %s with %s %s", pw_mcp_version_name(v), name ? name : "an unnamed client",
		   version ? version : "");
	json_t *r = json_object();
	json_object_set_new(r, "protocolVersion", json_string(pw_mcp_version_name(v)));
	json_object_set_new(r, "capabilities", capabilities());
	json_object_set_new(r, "serverInfo", pw_mcp_server_info(v));
	json_object_set_new(r, "instructions", json_string(s->instructions));
	return pw_rpc_result(id, r);
}

/* 2026-07-28 server/discover (schema.ts DiscoverResult). */
static json_t *do_discover(server *s, const json_t *id, pw_mcp_version v)
{
	json_t *r = json_object();
	json_object_set_new(r, "supportedVersions", pw_mcp_versions_json());
	json_object_set_new(r, "capabilities", capabilities());
	json_object_set_new(r, "instructions", json_string(s->instructions));
	json_object_set_new(r, "ttlMs", json_integer(600000));
	json_object_set_new(r, "cacheScope", json_string("private"));
	return pw_rpc_result(id, finish_result(v, r));
}

static json_t *do_tools_list(server *s, const json_t *id, const json_t *params, pw_mcp_version v)
{
	if (json_object_get(params, "cursor"))
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "tools/list: unknown cursor (every tool is on the first page)",
				    NULL);
	json_t *r = json_object();
	json_object_set_new(r, "tools", pw_mcp_toolbox_list(s->tools, v));
	if (pw_mcp_is_stateless(v)) {
		json_object_set_new(r, "ttlMs", json_integer(600000));
		json_object_set_new(r, "cacheScope", json_string("private"));
	}
	return pw_rpc_result(id, finish_result(v, r));
}

typedef struct tool_job {
	const pw_mcp_tool *tool;
	json_t *args;
	pw_mcp_fastcall fast;  /* a python call read by the scanner (fast.store set): its arguments */
	void *admitted;
	pw_mcp_call *call;  /* when the reading thread runs it itself */
	struct loop *watched; /* the reading thread's python call: it watches the epoll set (see lead) */
} tool_job;

static void hand_over(void *arg);
static int watched_fd(const struct loop *l);

static void run_tool(pw_mcp_call *c, void *ud)
{
	tool_job *job = ud;
	pw_mcp_tool_result res = { 0 };
	if (job->fast.store) {
		pw_mcp_python_args a = { .code = job->fast.code, .venv = job->fast.venv, .session = job->fast.session,
					 .reset = job->fast.reset };
		if (job->watched) {
			a.hand_over = hand_over;
			a.hand_over_arg = job;
			a.watch_fd = watched_fd(job->watched);
		}
		pw_mcp_python_run(c, &a, job->admitted, &res);
	} else {
		job->tool->run(c, job->args, job->admitted, &res);
	}
	if (res.answered) { /* sent as soon as the worker replied */
		json_decref(job->args);
		pw_mcp_fastcall_clear(&job->fast);
		free(job);
		pw_mcp_call_finish_line(c, NULL, 0);
		return;
	}
	if (!res.structured && !res.text && !res.raw)
		pw_mcp_tool_fail(&res, pw_err_new(PW_ERR_FAILED, NULL, "the tool returned nothing"));
	pw_mcp_version v = pw_mcp_call_version(c);
	json_decref(job->args);
	pw_mcp_fastcall_clear(&job->fast);
	free(job);
	if (!pw_mcp_call_batched(c)) { /* the structured object serialised once */
		char *head = pw_mcp_is_stateless(v) ? NULL : pw_rpc_result_head(pw_mcp_call_id(c));
		if (!head) {
			json_t *h = pw_rpc_result(pw_mcp_call_id(c), finish_result(v, json_object()));
			head = json_dumps(h, JSON_COMPACT);
			json_decref(h);
		}
		size_t len = 0;
		char *line = pw_mcp_tool_result_line(&res, v, head, &len);
		free(head);
		if (line) {
			pw_mcp_call_finish_line(c, line, len);
			return;
		}
	}
	json_t *result = finish_result(v, pw_mcp_tool_result_json(&res, v));
	pw_mcp_call_finish(c, pw_rpc_result(pw_mcp_call_id(c), result));
}

static json_t *do_tools_call(server *s, const json_t *id, const json_t *params, const pw_mcp_peer *peer,
			     pw_mcp_batch *b, bool *answered_later, tool_job **run_here)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *schema = NULL;
	const pw_mcp_tool *tool = pw_mcp_toolbox_find(s->tools, name, &schema);
	if (!tool)
		return pw_rpc_errorf(id, PW_RPC_INVALID_PARAMS, "tools/call: unknown tool '%s'", name ? name : "(no name)");
	json_t *args = json_object_get(params, "arguments");
	if (args && !json_is_object(args))
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "tools/call: arguments must be an object", NULL);
	args = args ? json_incref(args) : json_object(); /* read only, like the call's params */
	char *bad = pw_mcp_argcheck(schema, args, "arguments");
	if (bad) {
		json_t *e = pw_rpc_errorf(id, PW_RPC_INVALID_PARAMS, "%s: %s", tool->name, bad);
		free(bad);
		json_decref(args);
		return e;
	}
	const char *why = NULL;
	pw_mcp_call *c = pw_mcp_calls_begin(s->calls, id, params, peer, b, &why);
	if (!c) {
		json_decref(args);
		return pw_rpc_error(id, PW_RPC_INVALID_REQUEST, why, NULL);
	}
	tool_job *job = xcalloc(1, sizeof *job);
	job->tool = tool;
	job->args = args;
	job->admitted = tool->admit ? tool->admit(c, args) : NULL;
	*answered_later = true;
	if (run_here) { /* the reading thread runs it, once another one reads on */
		job->call = c;
		*run_here = job;
		return NULL;
	}
	if (!pw_mcp_calls_spawn(c, run_tool, job)) {
		*answered_later = false;
		if (tool->forget)
			tool->forget(job->admitted);
		json_decref(args);
		free(job);
		pw_mcp_call_finish(c, NULL);
		return pw_rpc_error(id, PW_RPC_INTERNAL_ERROR, "no thread could be started for the call", NULL);
	}
	*answered_later = true;
	return NULL;
}

/* ---------------------------------------------------------------- eras */

/* A request of the stateless revision: its version and capabilities are
 * checked (2026-07-28 basic/index "Per-request protocol fields",
 * basic/versioning "Protocol Version Negotiation"). NULL when fine. */
static json_t *check_modern(const json_t *id, const json_t *meta, pw_mcp_peer *peer)
{
	const json_t *vj = json_object_get(meta, PW_MCP_META_VERSION);
	pw_mcp_version v = pw_mcp_version_parse(json_string_value(vj));
	if (!json_is_string(vj))
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "_meta." PW_MCP_META_VERSION " must be a string", NULL);
	if (!pw_mcp_is_stateless(v)) {
		json_t *data = json_pack("{s:o, s:O}", "supported", pw_mcp_versions_json(), "requested", vj);
		return pw_rpc_error(id, PW_RPC_UNSUPPORTED_VERSION,
				    v == PW_MCP_NONE ? "Unsupported protocol version"
						     : "Unsupported protocol version in _meta (the older revisions start with initialize)",
				    data);
	}
	const json_t *caps = json_object_get(meta, PW_MCP_META_CAPS);
	if (!json_is_object(caps))
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "_meta." PW_MCP_META_CAPS " (an object) is required", NULL);
	const json_t *info = json_object_get(meta, PW_MCP_META_CLIENT);
	peer->version = v;
	peer->caps = caps;
	peer->name = json_string_value(json_object_get(info, "name"));
	peer->version_text = json_string_value(json_object_get(info, "version"));
	return NULL;
}

static json_t *dispatch_request(server *s, const json_t *id, const char *method, const json_t *params,
				pw_mcp_batch *b, bool *later, tool_job **run_here)
{
	if (params && !json_is_object(params))
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS, "params must be an object", NULL);
	const json_t *meta = json_object_get(params, "_meta");
	pw_mcp_peer peer = { 0 };
	if (json_object_get(meta, PW_MCP_META_VERSION)) {
		json_t *bad = check_modern(id, meta, &peer);
		if (bad)
			return bad;
	} else if (strcmp(method, "initialize") == 0) {
		return do_initialize(s, id, params);
	} else if (strcmp(method, "server/discover") == 0) {
		return pw_rpc_error(id, PW_RPC_INVALID_PARAMS,
				    "server/discover: _meta." PW_MCP_META_VERSION " and " PW_MCP_META_CAPS " are required",
				    NULL);
	} else if (s->legacy == PW_MCP_NONE && strcmp(method, "ping") != 0) {
		return pw_rpc_errorf(id, PW_RPC_INVALID_REQUEST,
				     "%s before initialize: open the session with initialize, or give "
				     "_meta." PW_MCP_META_VERSION " 2026-07-28 on each request", method);
	} else {
		peer.version = s->legacy;
		peer.caps = s->legacy_caps;
		peer.name = s->client_name;
		peer.version_text = s->client_version;
	}
	if (strcmp(method, "ping") == 0)
		return pw_rpc_result(id, finish_result(peer.version, json_object()));
	if (strcmp(method, "server/discover") == 0 && pw_mcp_is_stateless(peer.version))
		return do_discover(s, id, peer.version);
	if (strcmp(method, "tools/list") == 0)
		return do_tools_list(s, id, params, peer.version);
	if (strcmp(method, "tools/call") == 0)
		return do_tools_call(s, id, params, &peer, b, later, run_here);
	return pw_rpc_errorf(id, PW_RPC_METHOD_NOT_FOUND, "Method not found: %s", method);
}

static void on_notification(server *s, const char *method, const json_t *params)
{
	if (strcmp(method, "notifications/cancelled") == 0) {
		const json_t *rid = json_object_get(params, "requestId");
		if (pw_rpc_id_ok(rid))
			pw_mcp_calls_cancel(s->calls, rid);
	}
	/* notifications/initialized and anything else: nothing to answer */
}

/* One message (an object); exactly one pw_mcp_reply for it, possibly later.
 * A tool call is left in *run_here when run_here is given. */
static void dispatch(server *s, const json_t *msg, pw_mcp_batch *b, tool_job **run_here)
{
	if (!json_is_object(msg)) {
		pw_mcp_reply(s->wire, b, pw_rpc_error(NULL, PW_RPC_INVALID_REQUEST, "a message must be a JSON object", NULL));
		return;
	}
	const json_t *id = json_object_get(msg, "id");
	const json_t *method = json_object_get(msg, "method");
	bool has_id = id != NULL;
	if (!method && has_id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
		if (!pw_mcp_calls_take_response(s->calls, msg))
			pw_mcp_log("a response to no request of ours was dropped");
		pw_mcp_reply(s->wire, b, NULL);
		return;
	}
	const char *jv = json_string_value(json_object_get(msg, "jsonrpc"));
	if (!jv || strcmp(jv, "2.0") != 0 || !json_is_string(method) || (has_id && !pw_rpc_id_ok(id))) {
		const char *why = !jv || strcmp(jv, "2.0") != 0 ? "\"jsonrpc\" must be \"2.0\""
				  : !json_is_string(method)	    ? "\"method\" must be a string"
								    : "\"id\" must be a string or a number";
		pw_mcp_reply(s->wire, b, pw_rpc_errorf(pw_rpc_id_ok(id) ? id : NULL, PW_RPC_INVALID_REQUEST,
						       "Invalid request: %s", why));
		return;
	}
	const json_t *params = json_object_get(msg, "params");
	if (!has_id) {
		on_notification(s, json_string_value(method), params);
		pw_mcp_reply(s->wire, b, NULL);
		return;
	}
	bool later = false;
	json_t *resp = dispatch_request(s, id, json_string_value(method), params, b, &later, run_here);
	if (!later)
		pw_mcp_reply(s->wire, b, resp);
}

static void dispatch_batch(server *s, const json_t *arr)
{
	if (!pw_mcp_has_batches(s->legacy)) {
		json_t *e = pw_rpc_errorf(NULL, PW_RPC_INVALID_REQUEST,
					  "JSON-RPC batches are part of protocol revision 2025-03-26 only (this session: %s)",
					  pw_mcp_version_name(s->legacy));
		pw_mcp_wire_send(s->wire, e);
		json_decref(e);
		return;
	}
	if (json_array_size(arr) == 0) {
		json_t *e = pw_rpc_error(NULL, PW_RPC_INVALID_REQUEST, "an empty batch", NULL);
		pw_mcp_wire_send(s->wire, e);
		json_decref(e);
		return;
	}
	pw_mcp_batch *b = pw_mcp_batch_new(s->wire);
	pw_mcp_batch_hold(b); /* until every member was dispatched */
	size_t i;
	json_t *m;
	json_array_foreach(arr, i, m) {
		pw_mcp_batch_hold(b);
		dispatch(s, m, b, NULL);
	}
	pw_mcp_batch_put(b, NULL);
}

static bool blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r", line[i]))
			return false;
	return true;
}

/* A python call the scanner read (fastcall.h): what dispatch and
 * do_tools_call do for it, with nothing left to check but the id. */
static bool fast_call(server *s, const char *line, size_t len, tool_job **run_here)
{
	tool_job *job = xcalloc(1, sizeof *job);
	if (!pw_mcp_fastcall_scan(line, len, &job->fast)) {
		free(job);
		return false;
	}
	pw_mcp_fastcall *f = &job->fast;
	json_t *id = f->id_is_string ? json_string(f->id_text) : json_integer((json_int_t)f->id_int);
	pw_mcp_peer peer = { .version = s->legacy, .caps = s->legacy_caps, .name = s->client_name,
			     .version_text = s->client_version };
	const char *why = NULL;
	pw_mcp_call *c = pw_mcp_calls_begin(s->calls, id, NULL, &peer, NULL, &why);
	if (!c) {
		pw_mcp_reply(s->wire, NULL, pw_rpc_error(id, PW_RPC_INVALID_REQUEST, why, NULL));
		json_decref(id);
		pw_mcp_fastcall_clear(f);
		free(job);
		return true;
	}
	json_decref(id);
	job->tool = &pw_mcp_tool_python;
	job->admitted = pw_mcp_python_admit(c, f->session);
	job->call = c;
	*run_here = job;
	return true;
}

static void on_line(server *s, const char *line, size_t len, tool_job **run_here)
{
	if (blank(line, len))
		return;
	/* a session's python call, read without jansson (the other paths need
	 * a session too: before initialize the request is refused below) */
	if (s->legacy != PW_MCP_NONE && run_here && fast_call(s, line, len, run_here))
		return;
	json_error_t err;
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (!msg) {
		json_t *e = pw_rpc_errorf(NULL, PW_RPC_PARSE_ERROR, "Parse error: %s (column %d)", err.text, err.column);
		pw_mcp_wire_send(s->wire, e);
		json_decref(e);
		return;
	}
	if (json_is_array(msg))
		dispatch_batch(s, msg);
	else
		dispatch(s, msg, NULL, run_here);
	json_decref(msg);
}

static void on_too_long(server *s, size_t len)
{
	/* the message was skipped unread, so its id is unknown (JSON-RPC: null) */
	json_t *e = pw_rpc_errorf(NULL, PW_RPC_INVALID_REQUEST,
				  "message of %zu bytes refused: the limit is %zu bytes per line (pyward mcp --max-message)",
				  len, s->o->max_message ? s->o->max_message : (size_t)PW_MCP_DEFAULT_MAX_MESSAGE);
	pw_mcp_wire_send(s->wire, e);
	json_decref(e);
	pw_mcp_log("a message of %zu bytes was refused unread", len);
}

/* ---------------------------------------------------------------- the loop */

static int wake_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;
	ssize_t n = write(wake_pipe[1], &c, 1);
	(void)n;
	errno = saved;
}

static void install_signals(void)
{
	if (pipe(wake_pipe) == 0) {
		fcntl(wake_pipe[0], F_SETFD, FD_CLOEXEC);
		fcntl(wake_pipe[1], F_SETFD, FD_CLOEXEC);
		fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* a client or worker that went away is a failed write, not our death
	 * (and the scratchpad's guards around its writes are not needed) */
	pw_sigpipe_ignore_for_good();
}

static bool woken(void)
{
	struct pollfd p = { .fd = wake_pipe[0], .events = POLLIN };
	return poll(&p, 1, 0) > 0;
}

/* stdin closed: the calls still running finish (the client may still read
 * their answers) unless a signal says stop. */
static void drain(server *s, bool stop)
{
	pw_mcp_calls_hangup(s->calls);
	while (!stop && !pw_mcp_calls_wait_idle(s->calls, 200))
		stop = woken();
	if (stop) {
		pw_mcp_calls_cancel_all(s->calls);
		if (!pw_mcp_calls_wait_idle(s->calls, 5000))
			pw_mcp_log("calls still running after 5 s of cancellation: leaving them");
	}
}

/* Leaders and followers, without a hand-over. The threads that wait for
 * input all wait in one epoll set where stdin is armed one-shot, so
 * exactly one of them wakes for a message. It reads, arms stdin again
 * and, when the message is a tools/call, runs it itself: the answer needs
 * no hand-over between threads, and the others sleep on (waking one to
 * take over the reading cost 15-20 us a call, more on a busy machine).
 * Bytes left in the buffer behind a call go to the next thread through
 * the kick, an always-readable eventfd armed one-shot instead of stdin
 * (and stdin again once no complete line is left), so that one thread at
 * a time holds the reader. A thread is started only when a call begins
 * and none waits.
 * A python call on the fast path needs no second reader at first: the
 * thread running it watches the epoll set beside the worker's pipes and
 * wakes another one only when input (or a signal) comes meanwhile
 * (hand_over), or before any other wait. And a thread back from a call
 * parks while another waits on the epoll set: with two waiting, the next
 * message could go to either, and calls taken in turn on the two CPUs
 * cost a wake-up each (6-14 us a call in bench/mcp.sh); the one back from
 * its call often finds the next message there and takes it unslept.
 * Such a call leaves stdin unarmed and watches it in a second epoll set
 * where it is level-triggered (watch_ep): nobody else can read meanwhile,
 * a hand-over arms it, and without one the thread reads the next request
 * without waiting (RWF_NOWAIT) once it has answered, arming stdin and
 * waiting only when nothing is there: two system calls fewer a call. */
enum { EV_INPUT, EV_KICK, EV_WAKE, EV_STOP };

typedef struct loop {
	server *s;
	pw_mcp_reader *rd;
	pthread_mutex_t reading;  /* held while the reader is used (never contended: the token is the event) */
	int ep;                   /* epoll set: stdin, the kick, the wake pipe, the stop */
	int watch_ep;             /* stdin (level), the wake pipe, the stop: what a fast call watches */
	bool input_held;          /* a fast call's thread keeps stdin unarmed (only that thread looks) */
	int in_fd, kick_fd, stop_fd;
	pthread_mutex_t lock;
	pthread_cond_t parked_cv;
	int waiting;              /* threads in (or on their way to) epoll_wait */
	int parked;               /* threads idle on parked_cv */
	int called;               /* of them, called back to wait (counted in waiting) */
	bool done;
	pw_mcp_read_status end;   /* why reading stopped */
} loop;

static bool watch(loop *l, int op, int fd, uint32_t events, uint32_t tag)
{
	struct epoll_event ev = { .events = events, .data.u32 = tag };
	return epoll_ctl(l->ep, op, fd, &ev) == 0;
}

/* Give the reader up: arm the kick when a call leaves bytes in the
 * buffer (maybe lines), else stdin (also for a line that needs more).
 * True when the kick was armed. */
static bool pass_reader(loop *l, bool after_call)
{
	bool kick = after_call && pw_mcp_reader_holds_bytes(l->rd);
	pthread_mutex_unlock(&l->reading);
	if (!(kick ? watch(l, EPOLL_CTL_MOD, l->kick_fd, EPOLLIN | EPOLLONESHOT, EV_KICK)
		   : watch(l, EPOLL_CTL_MOD, l->in_fd, EPOLLIN | EPOLLONESHOT, EV_INPUT)))
		pw_mcp_log("epoll_ctl: %s", strerror(errno)); /* not seen: the fds stay in the set */
	return kick;
}

static void stop_reading(loop *l, pw_mcp_read_status st)
{
	if (st == PW_MCP_READ_WAKE)
		pw_mcp_calls_cancel_all(l->s->calls);
	pw_mcp_calls_hangup(l->s->calls);
	pthread_mutex_lock(&l->lock);
	l->done = true;
	l->end = st;
	pthread_cond_broadcast(&l->parked_cv);
	pthread_mutex_unlock(&l->lock);
	uint64_t one = 1; /* never read: every waiting thread wakes and sees done */
	if (write(l->stop_fd, &one, sizeof one) < 0)
		pw_mcp_log("cannot wake the waiting threads: %s", strerror(errno));
}

static void *follower_main(void *arg);

/* A call begins: a thread must wait for what comes next. */
static void keep_one_waiting(loop *l)
{
	pthread_mutex_lock(&l->lock);
	bool start = l->waiting == 0 && !l->done;
	bool call_back = start && l->parked > l->called;
	if (start)
		l->waiting++; /* counted for it, so that a second call does not start another */
	if (call_back) {
		l->called++;
		pthread_cond_signal(&l->parked_cv);
	}
	pthread_mutex_unlock(&l->lock);
	if (!start || call_back)
		return;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	if (pthread_create(&t, &attr, follower_main, l) != 0) {
		pw_mcp_log("no thread to read on: the next message waits for this call");
		pthread_mutex_lock(&l->lock);
		l->waiting--;
		pthread_mutex_unlock(&l->lock);
	}
	pthread_attr_destroy(&attr);
}

/* Wait for an event; false once reading has stopped. */
static bool wait_event(loop *l, bool counted, uint32_t *tag)
{
	pthread_mutex_lock(&l->lock);
	if (!counted && l->waiting > 0 && !l->done) { /* another one reads: park (see loop) */
		l->parked++;
		while (!l->called && !l->done)
			pthread_cond_wait(&l->parked_cv, &l->lock);
		l->parked--;
		if (l->called) {
			l->called--;
			counted = true;
		}
	}
	if (!counted)
		l->waiting++;
	pthread_mutex_unlock(&l->lock);
	struct epoll_event ev;
	int n;
	while ((n = epoll_wait(l->ep, &ev, 1, -1)) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&l->lock);
	l->waiting--;
	bool done = l->done;
	pthread_mutex_unlock(&l->lock);
	if (done)
		return false;
	if (n < 0) {
		pw_mcp_log("epoll_wait: %s", strerror(errno));
		stop_reading(l, PW_MCP_READ_ERROR);
		return false;
	}
	*tag = ev.data.u32;
	return true;
}

/* After a fast python call that kept the input (stdin left unarmed, no
 * hand-over): read what came meanwhile without waiting. True when bytes
 * (or the end) came and the reading lock is held; false when nothing
 * did: stdin is armed again for whichever thread waits next. */
static bool read_held(loop *l)
{
	pthread_mutex_lock(&l->reading);
	pw_mcp_nowait r = pw_mcp_reader_read_nowait(l->rd);
	if (r != PW_MCP_NOWAIT_EMPTY)
		return true; /* an error reads as one below */
	pass_reader(l, false);
	return false;
}

static void lead(loop *l, bool counted)
{
	bool held = false;
	for (;;) {
		bool may_read = false;
		if (!held || !read_held(l)) {
			uint32_t tag;
			if (!wait_event(l, counted, &tag))
				return;
			counted = false;
			if (tag == EV_WAKE) {
				stop_reading(l, PW_MCP_READ_WAKE);
				return;
			}
			if (tag == EV_STOP)
				continue; /* done is set: the next wait says so */
			pthread_mutex_lock(&l->reading);
			may_read = tag == EV_INPUT;
		}
		held = false;
		const char *line = NULL;
		size_t len = 0;
		tool_job *job = NULL;
		pw_mcp_read_status st;
		while (!job && ((st = pw_mcp_reader_next_ready(l->rd, &may_read, &line, &len)) == PW_MCP_READ_LINE ||
				st == PW_MCP_READ_TOO_LONG)) {
			if (st == PW_MCP_READ_LINE)
				on_line(l->s, line, len, &job);
			else
				on_too_long(l->s, len);
		}
		if (!job && st != PW_MCP_READ_AGAIN) {
			pthread_mutex_unlock(&l->reading);
			if (st == PW_MCP_READ_ERROR)
				pw_mcp_log("reading stdin: %s", strerror(errno));
			stop_reading(l, st);
			return;
		}
		if (job && job->fast.store && !pw_mcp_reader_holds_bytes(l->rd)) {
			/* stdin stays unarmed: the call watches it (watch_ep) and arms it
			 * at a hand-over; else the next message is read here, unwaited */
			pthread_mutex_unlock(&l->reading);
			l->input_held = true;
			job->watched = l;
		} else {
			pass_reader(l, job != NULL);
			if (job)
				keep_one_waiting(l);
		}
		if (job) {
			run_tool(job->call, job);
			held = l->input_held;
			l->input_held = false;
		}
	}
}

/* A second epoll set, readable when stdin is (whether or not it is armed
 * in the first), or the signal's wake pipe or the stop is, which no
 * thread would see otherwise while the call runs. */
static int watched_fd(const loop *l)
{
	return l->watch_ep;
}

/* Input came while a call watched the epoll set, or the call waits on
 * something else now: another thread reads. Once per call. */
static void hand_over(void *arg)
{
	tool_job *job = arg;
	loop *l = job->watched;
	job->watched = NULL;
	if (!l)
		return;
	if (l->input_held) {
		l->input_held = false;
		pthread_mutex_lock(&l->reading);
		pass_reader(l, false);
	}
	keep_one_waiting(l);
}

static void *follower_main(void *arg)
{
	lead(arg, true);
	return NULL;
}

/* What epoll cannot watch (stdin from a regular file or /dev/null) is
 * copied into a pipe by a thread of its own, which can. */
static void *pump_main(void *arg)
{
	int *fds = arg;
	char buf[65536];
	for (;;) {
		ssize_t n = read(fds[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pw_mcp_log("reading stdin: %s", strerror(errno));
		if (n <= 0 || pw_write_all(fds[1], buf, (size_t)n) != 0) /* a failed write: the server stopped */
			break;
	}
	close(fds[1]);
	free(fds);
	return NULL;
}

static int pumped(int fd)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	int *fds = xmalloc(2 * sizeof *fds);
	fds[0] = fd;
	fds[1] = p[1];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &attr, pump_main, fds);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		close(p[0]);
		close(p[1]);
		free(fds);
		return -1;
	}
	return p[0];
}

static bool open_loop(loop *l)
{
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->kick_fd = eventfd(1, EFD_CLOEXEC); /* always readable */
	l->stop_fd = eventfd(0, EFD_CLOEXEC);
	l->in_fd = STDIN_FILENO;
	if (l->ep < 0 || l->kick_fd < 0 || l->stop_fd < 0)
		return false;
	if (!watch(l, EPOLL_CTL_ADD, l->in_fd, EPOLLIN | EPOLLONESHOT, EV_INPUT)) {
		if (errno != EPERM || (l->in_fd = pumped(STDIN_FILENO)) < 0 ||
		    !watch(l, EPOLL_CTL_ADD, l->in_fd, EPOLLIN | EPOLLONESHOT, EV_INPUT))
			return false;
	}
	if (!watch(l, EPOLL_CTL_ADD, l->kick_fd, EPOLLONESHOT, EV_KICK) || /* disarmed until kicked */
	    !watch(l, EPOLL_CTL_ADD, l->stop_fd, EPOLLIN, EV_STOP) ||
	    (wake_pipe[0] >= 0 && !watch(l, EPOLL_CTL_ADD, wake_pipe[0], EPOLLIN, EV_WAKE)))
		return false;
	if ((l->watch_ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return false;
	int fds[] = { l->in_fd, l->stop_fd, wake_pipe[0] };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
		struct epoll_event ev = { .events = EPOLLIN };
		if (fds[i] >= 0 && epoll_ctl(l->watch_ep, EPOLL_CTL_ADD, fds[i], &ev) != 0)
			return false;
	}
	return true;
}

int pw_mcp_serve(const pw_mcp_opts *o)
{
	install_signals();
	static server s; /* followers may look at it until the process ends */
	s.o = o;
	s.wire = pw_mcp_wire_new(STDOUT_FILENO);
	s.calls = pw_mcp_calls_new(s.wire, o);
	s.tools = pw_mcp_toolbox_new();
	s.instructions = load_instructions(o->skill_file);
	size_t limit = o->max_message ? o->max_message : PW_MCP_DEFAULT_MAX_MESSAGE;
	static loop l; /* followers may look at it until the process ends */
	l.s = &s;
	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.parked_cv, NULL);
	pthread_mutex_init(&l.reading, NULL);
	if (!open_loop(&l)) {
		pw_mcp_log("cannot wait for input: %s", strerror(errno));
		return 1;
	}
	l.rd = pw_mcp_reader_new(l.in_fd, -1, limit);
	lead(&l, false);
	/* reading has stopped; this thread may have been running a call meanwhile */
	drain(&s, l.end == PW_MCP_READ_WAKE);
	bool idle = pw_mcp_calls_wait_idle(s.calls, 0);
	if (idle) { /* followers may still wake to see the end: the loop stays */
		pw_mcp_pads_close_all();
		pw_mcp_toolbox_free(&s.tools);
	}
	free(s.instructions);
	json_decref(s.legacy_caps);
	free(s.client_name);
	free(s.client_version);
	return l.end == PW_MCP_READ_ERROR ? 1 : 0;
}
