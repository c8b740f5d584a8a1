/*
 * The HTTP server: one libmicrohttpd daemon per listening socket, a thread
 * per connection (a Server-Sent Events stream may then simply wait for its
 * job's next event). Every request passes the same gates in order before
 * it is routed: Host (TCP), the caller (peer uid or bearer token), the
 * connection limit, the body limit.
 */
#include "config.h"

#include "api/catalog_pool.h"
#include "api/deadline.h"
#include "api/jobs.h"
#include "api/listen.h"
#include "api/peer.h"
#include "api/reply.h"
#include "api/server.h"
#include "api/status_cache.h"

#include "ops/baseline.h"
#include "ops/ctx.h"

#include "i18n.h"
#include "paths.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* One listening socket and its daemon. */
typedef struct listener {
	pw_api_server *srv;
	pw_listener sock;
	struct MHD_Daemon *daemon;
	bool tls;
} listener;

/* One request's state across the handler's calls. */
typedef struct call {
	char *body;
	size_t len;
	bool answered;
	pw_actor actor;
} call;

/* ---------------------------------------------------------------- gates */

/* The Host header names this server: no DNS rebinding (a page on a name
 * that resolves to 127.0.0.1 still sends its own name). */
static bool host_allowed(const listener *l, const char *host)
{
	if (!host || !*host)
		return false;
	char name[256];
	const char *end, *port = NULL;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		host++;
		port = end[1] == ':' ? end + 2 : (end[1] ? "" : NULL);
	} else {
		end = strchr(host, ':');
		if (end && strchr(end + 1, ':'))
			return false;
		if (!end)
			end = host + strlen(host);
		else
			port = end + 1;
	}
	size_t n = (size_t)(end - host);
	if (n == 0 || n >= sizeof name)
		return false;
	memcpy(name, host, n);
	name[n] = '\0';
	if (port && strtoul(port, NULL, 10) != l->sock.port)
		return false;
	/* A loopback name fits a loopback listener; on a wildcard or outside
	 * address it must be allowed by name (below), like any other. */
	if ((strcasecmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0 || strcmp(name, "::1") == 0) &&
	    l->sock.loopback)
		return true;
	/* The address it listens on, as a literal. */
	const char *bound = l->sock.name;
	size_t bl = strlen(bound);
	const char *colon = strrchr(bound, ':');
	if (colon)
		bl = (size_t)(colon - bound);
	if (bound[0] == '[' && bl >= 2 && n == bl - 2 && strncmp(bound + 1, name, n) == 0)
		return true;
	if (bound[0] != '[' && n == bl && strncmp(bound, name, n) == 0)
		return true;
	const pw_api_config *cfg = l->srv->cfg;
	for (size_t i = 0; i < cfg->allow_host_count; i++)
		if (strcasecmp(cfg->allow_hosts[i], name) == 0)
			return true;
	return false;
}

/* What a connection keeps across its requests (MHD's socket context). */
typedef struct conn_ctx {
	pw_api_peer *peer;      /* UNIX sockets: the caller's name (peer.h) */
	pw_api_conn *deadline;  /* deadline.h */
	bool encoded_nul;       /* the request being read has %00 in its path or query */
} conn_ctx;

static conn_ctx *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The connection's peer.h cache, made when it opened (connection_event);
 * a connection without one (cannot happen) looks the name up each time. */
static void actor_of_uid(const pw_api_server *srv, struct MHD_Connection *c, pw_actor *a, uid_t uid)
{
	*a = srv->self;
	a->uid = uid;
	conn_ctx *cc = conn_of(c);
	if (cc && cc->peer)
		pw_api_peer_name(cc->peer, uid, a->user, sizeof a->user);
	else
		pw_api_user_of_uid(uid, a->user, sizeof a->user);
}

static void connection_event(void *cls, struct MHD_Connection *c, void **socket_context,
			     enum MHD_ConnectionNotificationCode what)
{
	const listener *l = cls;
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_ctx *cc = xcalloc(1, sizeof *cc);
		if (l->sock.is_unix)
			cc->peer = pw_api_peer_new(NULL);
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci && l->srv->deadlines)
			cc->deadline = pw_api_conn_opened(l->srv->deadlines, ci->connect_fd, !l->tls);
		*socket_context = cc;
	} else if (what == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		conn_ctx *cc = *socket_context;
		pw_api_conn_closed(l->srv->deadlines, cc->deadline);
		pw_api_peer_free(cc->peer);
		free(cc);
		*socket_context = NULL;
	}
}

/* MHD's own %HH decoding, noting a decoded NUL: a C string would end
 * there, so "/api/history/1%00" would read as operation 1 and "kind=a%00b"
 * as "a". Such a request is refused whole (admit). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	size_t n = MHD_http_unescape(s);
	if (memchr(s, '\0', n)) {
		conn_ctx *cc = conn_of(c);
		if (cc)
			cc->encoded_nul = true;
	}
	return n;
}

typedef struct header_scan {
	unsigned hosts;
	bool bad; /* a name that is not a token, a value with a control byte */
} header_scan;

/* RFC 9110 5.1: a field name is a token. */
static bool token_char(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Each header as libmicrohttpd split it, with its length (a NUL inside
 * would end a C string early). */
static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				   const char *value, size_t value_size)
{
	(void)kind;
	header_scan *h = cls;
	if (key && key_size == 4 && strncasecmp(key, MHD_HTTP_HEADER_HOST, 4) == 0)
		h->hosts++;
	h->bad |= !key || key_size == 0;
	for (size_t i = 0; key && i < key_size; i++)
		h->bad |= !token_char((unsigned char)key[i]);
	/* RFC 9110 5.5: no CR, LF or NUL in a value, nor (RFC 9112 5) other
	 * controls but HTAB: a proxy in front may read them otherwise. */
	for (size_t i = 0; value && i < value_size; i++) {
		unsigned char ch = (unsigned char)value[i];
		h->bad |= (ch < 0x20 && ch != '\t') || ch == 0x7f;
	}
	return MHD_YES;
}

/* A request that cannot be read one way only: two Host headers (RFC 9110
 * 7.2: which would a proxy in front have checked?), an encoded NUL, a
 * header whose name is not a token or whose value holds control bytes
 * (libmicrohttpd passes them on). Answers 400 and returns false. */
static bool well_formed(struct MHD_Connection *c, enum MHD_Result *res)
{
	conn_ctx *cc = conn_of(c);
	bool nul = cc && cc->encoded_nul;
	if (cc)
		cc->encoded_nul = false;
	header_scan h = { 0 };
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, scan_header, &h);
	if (h.hosts <= 1 && !nul && !h.bad)
		return true;
	const char *msg = nul ? "the request's path or query has an encoded NUL (%00)"
		: h.bad ? "a header's name is not a token, or its value holds control bytes"
		: "the request has more than one Host header";
	const char *hint = nul ? "ids are whole decimal numbers; no value may hold a NUL byte"
		: h.bad ? "send header names of letters, digits and !#$%&'*+-.^_`|~, values without control bytes"
		: "send one Host header";
	*res = pw_api_send_error(c, MHD_HTTP_BAD_REQUEST, "bad-request", msg, hint, NULL);
	return false;
}

/* Who is calling; false after answering 401 (or 500) itself. */
static bool identify(listener *l, struct MHD_Connection *c, call *k, enum MHD_Result *res)
{
	if (l->sock.is_unix) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		uid_t uid;
		pid_t pid;
		if (ci && pw_api_peer_cred(ci->connect_fd, &uid, &pid)) {
			actor_of_uid(l->srv, c, &k->actor, uid);
			return true;
		}
		*res = pw_api_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no-peer", "cannot tell who is calling",
					 NULL, NULL);
		return false;
	}
	const char *name = pw_api_tokens_match(l->srv->tokens,
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
	if (name) {
		k->actor = l->srv->self;
		snprintf(k->actor.user, sizeof k->actor.user, "%s", name);
		return true;
	}
	atomic_fetch_add(&l->srv->refused_auth, 1);
	*res = pw_api_send_error_header(c, MHD_HTTP_UNAUTHORIZED, "unauthorized", "a valid bearer token is required",
					"send Authorization: Bearer TOKEN with a token from the server's --token-file",
					"WWW-Authenticate", "Bearer realm=\"pyward\"");
	return false;
}

#define TOO_BIG_HINT "send less, or start the server with a larger --max-body"

static enum MHD_Result too_big(pw_api_server *srv, struct MHD_Connection *c)
{
	atomic_fetch_add(&srv->refused_limits, 1);
	char msg[128];
	snprintf(msg, sizeof msg, "the request body is larger than %zu bytes", srv->cfg->max_body);
	return pw_api_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body-too-large", msg, TOO_BIG_HINT, NULL);
}

/* A body without Content-Length (chunked) that outgrows --max-body while
 * it is read. libmicrohttpd queues no answer until the whole body is in
 * (its access handler's contract), and a chunk size of gigabytes would
 * keep the connection until --request-timeout cut it without a word; so
 * the 413 is written to the socket here and the connection closed
 * (MHD_NO). On TLS the socket carries records only the library may
 * write: there it is closed without an answer (DESIGN.md). */
static enum MHD_Result too_big_mid_body(listener *l, struct MHD_Connection *c)
{
	pw_api_server *srv = l->srv;
	atomic_fetch_add(&srv->refused_limits, 1);
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (l->tls || !ci)
		return MHD_NO;
	char msg[128];
	snprintf(msg, sizeof msg, "the request body is larger than %zu bytes", srv->cfg->max_body);
	pw_api_write_error_now(ci->connect_fd, MHD_HTTP_CONTENT_TOO_LARGE, "Content Too Large", "body-too-large", msg,
			       TOO_BIG_HINT, 1000);
	return MHD_NO;
}

/* The gates of a request's first call; false after answering. */
static bool admit(listener *l, struct MHD_Connection *c, call *k, enum MHD_Result *res)
{
	pw_api_server *srv = l->srv;
	if (!well_formed(c, res))
		return false;
	if (!l->sock.is_unix && !host_allowed(l, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"))) {
		atomic_fetch_add(&srv->refused_auth, 1);
		*res = pw_api_send_error(c, MHD_HTTP_FORBIDDEN, "host-not-allowed",
			"the Host header does not name this server",
			"use the address the server listens on, or start it with --allow-host NAME", NULL);
		return false;
	}
	if (!identify(l, c, k, res))
		return false;
	if (pw_api_connections(srv) > srv->cfg->max_connections) {
		atomic_fetch_add(&srv->refused_limits, 1);
		*res = pw_api_send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too-many-connections",
			"the server has as many connections as it takes", "try again shortly; see --max-connections",
			NULL);
		return false;
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > srv->cfg->max_body) {
		*res = too_big(srv, c);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- handler */

/* The whole request is in: from here on it is ours to answer. */
static void answering(struct MHD_Connection *c)
{
	conn_ctx *cc = conn_of(c);
	if (cc)
		pw_api_conn_answering(cc->deadline);
}

static enum MHD_Result finish(listener *l, struct MHD_Connection *c, const char *url, const char *method,
			      call *k)
{
	pw_api_request r = {
		.srv = l->srv,
		.conn = c,
		.method = method,
		.path = url,
		.body = k->body ? k->body : "",
		.body_len = k->len,
		.actor = k->actor,
	};
	r.args = k->len ? xasprintf("%s %s %.*s", method, url, (int)(k->len > 2048 ? 2048 : k->len), k->body)
			: xasprintf("%s %s", method, url);
	enum MHD_Result res = pw_api_route(&r);
	free(r.args);
	return res;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	(void)version;
	listener *l = cls;
	call *k = *state;
	if (!k) {
		k = *state = xcalloc(1, sizeof *k);
		atomic_fetch_add(&l->srv->requests, 1);
		enum MHD_Result res = MHD_YES;
		if (!admit(l, c, k, &res)) {
			k->answered = true;
			answering(c);
		}
		return res;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (k->answered)
			return MHD_YES;
		if (k->len + n > l->srv->cfg->max_body) {
			k->answered = true;
			answering(c);
			return too_big_mid_body(l, c);
		}
		k->body = xrealloc(k->body, k->len + n + 1);
		memcpy(k->body + k->len, upload, n);
		k->len += n;
		k->body[k->len] = '\0';
		return MHD_YES;
	}
	if (k->answered)
		return MHD_YES;
	k->answered = true;
	answering(c);
	return finish(l, c, url, method, k);
}

static void completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)why;
	conn_ctx *cc = conn_of(c);
	if (cc)
		pw_api_conn_waiting(cc->deadline);
	call *k = *state;
	if (k)
		free(k->body);
	free(k);
	*state = NULL;
}

unsigned pw_api_connections(const pw_api_server *srv)
{
	unsigned n = 0;
	for (size_t i = 0; i < srv->daemon_count; i++) {
		const union MHD_DaemonInfo *info =
			MHD_get_daemon_info(srv->daemons[i], MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		n += info ? info->num_connections : 0;
	}
	return n;
}

/* ---------------------------------------------------------------- requests */

const char *pw_api_arg(const pw_api_request *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

json_t *pw_api_body(pw_api_request *r, enum MHD_Result *answered)
{
	if (r->body_len == 0)
		return json_object();
	json_error_t je;
	json_t *j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
	if (j && json_is_object(j))
		return j;
	json_decref(j);
	char msg[256];
	snprintf(msg, sizeof msg, "the body is not a JSON object: %s", j ? "another JSON value" : je.text);
	*answered = pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-json", msg,
				      "send a JSON object with Content-Type: application/json", NULL);
	return NULL;
}

/* ---------------------------------------------------------------- daemons */

static char *slurp(const char *path, pw_err **e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size > 1024 * 1024) {
		*e = pw_err_errno(PW_ERR_USAGE, fd < 0 ? errno : EFBIG, NULL, _("cannot read %s"), path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *buf = xcalloc(1, (size_t)st.st_size + 1);
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(buf);
		*e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read %s"), path);
		return NULL;
	}
	return buf;
}

static pw_err *start_daemon(listener *l, const char *cert, const char *key)
{
	const pw_api_config *cfg = l->srv->cfg;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	if (l->tls)
		flags |= MHD_USE_TLS;
	/* MHD itself refuses connections past its limit; the few beyond
	 * max_connections it lets in get a 429 that says so. */
	unsigned hard = cfg->max_connections + 8;
	if (l->tls)
		l->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, l, MHD_OPTION_LISTEN_SOCKET, l->sock.fd,
			MHD_OPTION_CONNECTION_LIMIT, hard, MHD_OPTION_CONNECTION_TIMEOUT, cfg->request_timeout,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->max_header, MHD_OPTION_NOTIFY_COMPLETED, completed, l,
			MHD_OPTION_NOTIFY_CONNECTION, connection_event, l, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
			MHD_OPTION_HTTPS_MEM_CERT, cert,
			MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);
	else /* a second more than the watchdog's (deadline.h), so a silent client is answered 408 first */
		l->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, l, MHD_OPTION_LISTEN_SOCKET, l->sock.fd,
			MHD_OPTION_CONNECTION_LIMIT, hard, MHD_OPTION_CONNECTION_TIMEOUT, cfg->request_timeout + 1,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->max_header, MHD_OPTION_NOTIFY_COMPLETED, completed, l,
			MHD_OPTION_NOTIFY_CONNECTION, connection_event, l, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
			MHD_OPTION_END);
	if (!l->daemon)
		return pw_err_new(PW_ERR_FAILED, l->tls ? _("check that --tls-cert and --tls-key are a PEM pair") : NULL,
				  _("cannot start the HTTP server on %s"), l->sock.name);
	return NULL;
}

/* The rules a TCP listener must meet before it may serve. */
static pw_err *check_tcp(const pw_api_server *srv, const listener *l)
{
	if (!srv->tokens)
		return pw_err_new(PW_ERR_USAGE, _("give --token-file FILE (lines: NAME TOKEN)"),
				  _("listening on TCP (%s) needs bearer tokens"), l->sock.name);
	if (!l->sock.loopback && !l->tls)
		return pw_err_new(PW_ERR_REFUSED, _("give --tls-cert FILE and --tls-key FILE, or listen on 127.0.0.1"),
				  _("%s is not a loopback address: tokens would cross the network in clear text"),
				  l->sock.name);
	return NULL;
}

typedef struct listeners {
	listener *items;
	size_t count;
} listeners;

static void add_listener(listeners *ls, pw_api_server *srv, pw_listener *sock)
{
	ls->items = xrealloc(ls->items, (ls->count + 1) * sizeof *ls->items);
	ls->items[ls->count++] = (listener){ .srv = srv, .sock = *sock };
}

static gid_t box_group(const char *box_root)
{
	struct stat st;
	return stat(box_root, &st) == 0 ? st.st_gid : (gid_t)-1;
}

static pw_err *open_listeners(pw_api_server *srv, listeners *ls)
{
	pw_listener *act = NULL;
	size_t nact = 0;
	pw_err *e = pw_listen_activated(&act, &nact);
	for (size_t i = 0; !e && i < nact; i++)
		add_listener(ls, srv, &act[i]);
	free(act);
	const pw_api_config *cfg = srv->cfg;
	gid_t gid = box_group(srv->box_root);
	char *dflt = NULL;
	if (!e && cfg->listen_count == 0 && nact == 0) {
		e = pw_paths_mkdirs(srv->box_root, 0755);
		dflt = xasprintf("unix:%s/api.sock", srv->box_root);
		gid = box_group(srv->box_root);
	}
	for (size_t i = 0; !e && i < (dflt ? 1 : cfg->listen_count); i++) {
		pw_listener sock;
		e = pw_listen_open(dflt ? dflt : cfg->listen[i], gid, &sock);
		if (!e)
			add_listener(ls, srv, &sock);
	}
	free(dflt);
	return e;
}

static pw_err *start_all(pw_api_server *srv, listeners *ls)
{
	const pw_api_config *cfg = srv->cfg;
	pw_err *e = NULL;
	char *cert = NULL, *key = NULL;
	if ((cfg->tls_cert != NULL) != (cfg->tls_key != NULL))
		return pw_err_new(PW_ERR_USAGE, NULL, _("--tls-cert and --tls-key go together"));
	if (cfg->tls_cert) {
		cert = slurp(cfg->tls_cert, &e);
		if (!e)
			key = slurp(cfg->tls_key, &e);
	}
	for (size_t i = 0; !e && i < ls->count; i++) {
		listener *l = &ls->items[i];
		l->tls = !l->sock.is_unix && cert;
		if (!l->sock.is_unix)
			e = check_tcp(srv, l);
		if (!e)
			e = start_daemon(l, cert, key);
		if (!e && srv->daemon_count < sizeof srv->daemons / sizeof srv->daemons[0])
			srv->daemons[srv->daemon_count++] = l->daemon;
	}
	free(cert);
	if (key) {
		memset(key, 0, strlen(key));
		free(key);
	}
	return e;
}

static void stop_all(listeners *ls)
{
	for (size_t i = 0; i < ls->count; i++) {
		listener *l = &ls->items[i];
		if (l->daemon) {
			MHD_stop_daemon(l->daemon);
			l->sock.fd = -1; /* closed by the daemon */
		}
		pw_listener_close(&l->sock);
	}
	free(ls->items);
	ls->items = NULL;
	ls->count = 0;
}

static void say_listening(const listeners *ls)
{
	for (size_t i = 0; i < ls->count; i++)
		fprintf(stderr, _("listening on %s%s\n"), ls->items[i].sock.name,
			ls->items[i].tls ? " (TLS)" : "");
	fflush(stderr);
}

/* SIGINT and SIGTERM are taken by sigwait on the main thread; every
 * thread the server starts inherits the blocked mask. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static void fill_defaults(pw_api_config *c)
{
	if (!c->max_body)
		c->max_body = PW_API_MAX_BODY_DEFAULT;
	if (!c->max_header)
		c->max_header = PW_API_MAX_HEADER_DEFAULT;
	if (!c->max_connections)
		c->max_connections = PW_API_MAX_CONNECTIONS_DEFAULT;
	if (!c->request_timeout)
		c->request_timeout = PW_API_REQUEST_TIMEOUT_DEFAULT;
}

/* The files the runtime status reads besides the box: the ones its
 * operation would pick (serve's --pins and --requirements, else the
 * settings' and the shipped ones). */
static pw_api_status_cache *status_cache_of(const pw_api_server *srv)
{
	char *pins = srv->cfg->pins ? xstrdup(srv->cfg->pins) : pw_ops_data_file("runtime-pins.tsv");
	char *baseline = pw_baseline_file(srv->ctx, srv->cfg->requirements, false);
	pw_api_status_cache *c = pw_api_status_cache_new(srv->box_root, pins, baseline);
	free(pins);
	free(baseline);
	return c;
}

static void report(pw_err *e)
{
	fprintf(stderr, _("pyward serve: error: %s\n"), pw_err_message(e));
	if (pw_err_hint(e))
		fprintf(stderr, _("pyward serve: hint: %s\n"), pw_err_hint(e));
}

int pw_api_serve(struct pw_ops_ctx *ctx, const pw_api_config *given)
{
	pw_api_config cfg = *given;
	fill_defaults(&cfg);
	pw_api_server srv = {
		.cfg = &cfg,
		.ctx = ctx,
		.box_root = ctx->box_root,
		.read_only = ctx->mode == PW_MODE_READ_ONLY,
		.started = time(NULL),
	};
	pw_catalog_actor_current(&srv.self);
	sigset_t set;
	block_signals(&set);
	listeners ls = { 0 };
	pw_err *e = pw_api_mhd_ready();
	if (!e && cfg.token_file)
		e = pw_api_tokens_load(cfg.token_file, &srv.tokens);
	if (!e)
		e = open_listeners(&srv, &ls);
	if (!e) {
		srv.jobs = pw_api_jobs_new(&srv);
		srv.status = status_cache_of(&srv);
		srv.catalogs = pw_api_catalog_pool_new(ctx->catalog_path, 0);
		srv.deadlines = pw_api_deadlines_start(cfg.request_timeout, &srv.refused_limits);
		e = start_all(&srv, &ls);
	}
	int rc = 0;
	if (e) {
		report(e);
		rc = pw_err_exit_status(e);
		pw_err_free(e);
	} else {
		say_listening(&ls);
		int sig = 0;
		sigwait(&set, &sig);
	}
	atomic_store(&srv.stopping, true);
	pw_api_jobs_stop(srv.jobs);
	stop_all(&ls);
	pw_api_jobs_free(&srv.jobs);
	pw_api_status_cache_free(&srv.status);
	pw_api_catalog_pool_free(&srv.catalogs);
	pw_api_deadlines_stop(&srv.deadlines);
	pw_api_tokens_free(&srv.tokens);
	return rc;
}
