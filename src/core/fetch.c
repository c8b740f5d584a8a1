/*
 * Downloads with libcurl: bytes go to DEST.part and into SHA256 as they
 * arrive, an earlier .part is resumed with a Range request, and every curl
 * failure is turned into a sentence that says what happened and what to do.
 *
 * The Range header is set with CURLOPT_RANGE rather than
 * CURLOPT_RESUME_FROM_LARGE: with the latter curl itself fails a server that
 * answers 200 (CURLE_RANGE_ERROR), where we want to restart from zero within
 * the same request.
 */
#include "config.h"

#include "fetch.h"
#include "redact.h"
#include "clock.h"
#include "digest.h"
#include "i18n.h"
#include "libload.h"
#include "sigpipe.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <curl/curl.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_CONNECT_S 15
#define DEFAULT_STALL_S 30
#define MAX_REDIRECTS 10L
#define PROGRESS_EVERY_MS 100
#define MAX_ATTEMPTS 2 /* the second only after a 416 for a stale .part */
#define DEADLINE_SLACK_MS 50
#define SHOWN_URL_MAX 2048

#define HINT_RESUME \
	N_("the partial download is kept: run the same command again and it resumes where it stopped")
#define HINT_TLS N_("a proxy may be intercepting TLS: pass --cacert FILE or set SSL_CERT_FILE")
#define HINT_BUDGET N_("the partial download is kept: run again, with a larger time budget, to resume")
#define HINT_UP N_("check that the server is up and reachable, or pass --mirror URL / --archive FILE")
#define HINT_ELSEWHERE N_("check the network or DNS, or pass --mirror URL / --archive FILE")
#define HINT_PROXY \
	N_("check the proxy variables (https_proxy, http_proxy, no_proxy) or ask whoever runs the proxy")
#define HINT_PROXY_AUTH \
	N_("the proxy wants credentials: put them in the proxy variable, " \
	   "e.g. https_proxy=http://USER:PASSWORD@HOST:PORT")
#define HINT_MISMATCH N_("the download does not match the pinned hash; nothing was installed")

enum stop { STOP_NONE, STOP_CANCEL, STOP_DEADLINE, STOP_STALL };

typedef struct job {
	const pw_fetch_opts *o;
	CURL *curl;
	char *part;            /* DEST.part */
	int fd;                /* the .part, open for writing; -1 when not open */
	pw_sha256 *h;          /* hash of the .part's bytes so far */
	bool file_url;
	long connect_s;
	long stall_s;
	int64_t have;          /* bytes in the .part, all of them hashed */
	int64_t resumed_from;  /* of those, bytes kept from before this call */
	int restarts;          /* part_restart() calls */
	int64_t total;         /* expected final size, -1 when unknown */
	int64_t range_start;   /* Content-Range of the current response, -1: none */
	int64_t range_total;
	long status;           /* of the response whose body we take */
	bool got_header;
	bool decided;          /* that response's status has been acted on */
	bool http_error;       /* it is an error status: its body is not kept */
	bool bad_range;        /* a 206 for bytes we did not ask for */
	int write_errno;
	enum stop stop;
	int64_t start_ms;
	int64_t last_data_ms;
	int64_t last_report_ms;
	char errbuf[CURL_ERROR_SIZE];
	char *shown;           /* o->url with any credentials hidden, for messages */
	char *shown_effective; /* SHOWN_URL_MAX bytes, filled by effective_url() */
} job;

/* ---------------------------------------------------------------- curl setup */

static bool is_file_url(const char *url)
{
	return strncasecmp(url, "file:", 5) == 0;
}

/* A file:// URL is allowed as the first request (a local mirror); a redirect
 * may only lead to http or https, so a server cannot point us at local files. */
static void set_protocols(CURL *c, bool file)
{
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, file ? "file" : "https,http");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS,
			 file ? (long)CURLPROTO_FILE : (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
}

/* What every request shares. Proxies come from the environment (curl's
 * default, left alone). libcurl does not read $SSL_CERT_FILE itself. */
static void set_common(job *j, const char *ca_file)
{
	CURL *c = j->curl;
	const char *ca = ca_file ? ca_file : getenv("SSL_CERT_FILE");
	curl_easy_setopt(c, CURLOPT_URL, j->o->url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* we may run on a worker thread; SIGPIPE: sigpipe.h */
	curl_easy_setopt(c, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L); /* 2 is the documented "on" */
	if (ca && *ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	set_protocols(c, j->file_url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, MAX_REDIRECTS);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 0L); /* we read the status ourselves */
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, j->connect_s);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, j->stall_s);
}

/* ---------------------------------------------------------------- url words */

/* One redaction for every URL-like value: redact.h. */
char *pw_fetch_url_shown(const char *url)
{
	return pw_redact_url(url);
}

/* The URL now being fetched (after redirects), credentials hidden. */
static const char *effective_url(const job *j)
{
	char *u = NULL;
	if (!(j->curl && curl_easy_getinfo(j->curl, CURLINFO_EFFECTIVE_URL, &u) == CURLE_OK && u))
		return j->shown;
	char *shown = pw_fetch_url_shown(u);
	snprintf(j->shown_effective, SHOWN_URL_MAX, "%s", shown);
	free(shown);
	return j->shown_effective;
}

/* "HOST" or "HOST:PORT" of url (the scheme's port when none is written);
 * NULL when it does not parse. Credentials are never part of it. */
static char *url_place(const char *url, bool with_port)
{
	const unsigned flags = CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME;
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *out = NULL;
	if (u && curl_url_set(u, CURLUPART_URL, url, flags) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		if (with_port && curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
			out = xasprintf("%s:%s", host, port);
		else
			out = xstrdup(host);
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

char *pw_fetch_url_host(const char *url)
{
	char *host = url_place(url, false);
	size_t n = host ? strlen(host) : 0;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') { /* an IPv6 literal */
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	}
	return host;
}

/* Does a no_proxy list cover host? Entries are names or domain suffixes
 * ("example.com" and ".example.com" both cover "a.example.com"); "*" covers
 * all. Ports and address ranges are not looked at: this only decides how an
 * error is worded, curl makes the real choice. */
static bool no_proxy_covers(const char *list, const char *host)
{
	size_t hl = strlen(host);
	for (const char *p = list; *p;) {
		p += strspn(p, ", \t");
		const char *tok = p;
		size_t n = strcspn(p, ", \t");
		p += n;
		if (n == 1 && *tok == '*')
			return true;
		if (n && *tok == '.') {
			tok++;
			n--;
		}
		if (n == 0 || n > hl || strncasecmp(host + hl - n, tok, n) != 0)
			continue;
		if (n == hl || host[hl - n - 1] == '.')
			return true;
	}
	return false;
}

/* The environment variable curl takes a proxy from for url, or NULL. curl
 * reads only the lower-case http_proxy (HTTP_PROXY can come from a CGI
 * request header). */
static const char *proxy_var(const char *url)
{
	static const char *const for_https[] = {
		"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL,
	};
	static const char *const for_http[] = { "http_proxy", "all_proxy", "ALL_PROXY", NULL };
	const char *const *names;
	if (strncasecmp(url, "https:", 6) == 0)
		names = for_https;
	else if (strncasecmp(url, "http:", 5) == 0)
		names = for_http;
	else
		return NULL;
	for (; *names; names++) {
		const char *v = getenv(*names);
		if (v && *v)
			return *names;
	}
	return NULL;
}

/* The proxy for url described for people, "HOST:PORT (from $NAME)" with any
 * credentials left out; NULL when none applies. */
static char *env_proxy(const char *url, bool honour_no_proxy)
{
	const char *name = proxy_var(url);
	if (!name)
		return NULL;
	if (honour_no_proxy) {
		const char *np = getenv("no_proxy");
		if (!np || !*np)
			np = getenv("NO_PROXY");
		char *host = url_place(url, false);
		bool skip = host && np && no_proxy_covers(np, host);
		free(host);
		if (skip)
			return NULL;
	}
	char *place = url_place(getenv(name), true);
	char *d = place ? xasprintf(_("%s (from $%s)"), place, name) : xasprintf(_("(from $%s)"), name);
	free(place);
	return d;
}

/* ---------------------------------------------------------------- errors */

static const char *detail(const job *j, CURLcode rc)
{
	return j->errbuf[0] ? j->errbuf : curl_easy_strerror(rc);
}

static pw_err *stalled_error(const job *j)
{
	return pw_err_new(PW_ERR_NETWORK, _(HINT_RESUME),
			  _("the server stalled (no data for %ld s) while sending %s"), j->stall_s,
			  effective_url(j));
}

static pw_err *stop_error(const job *j)
{
	switch (j->stop) {
	case STOP_CANCEL:
		return pw_err_new(PW_ERR_CANCELLED, _(HINT_RESUME), _("the download of %s was interrupted"),
				  j->shown);
	case STOP_DEADLINE:
		return pw_err_new(PW_ERR_TIMEOUT, _(HINT_BUDGET),
				  _("the download of %s ran out of its time budget"), j->shown);
	case STOP_STALL:
	case STOP_NONE:
		break;
	}
	return stalled_error(j);
}

static pw_err *write_error(const job *j)
{
	/* The bytes that arrived are kept: freeing space and running again
	 * resumes from them instead of fetching them twice. */
	struct stat st;
	long long kept = j->fd >= 0 && fstat(j->fd, &st) == 0 ? (long long)st.st_size : (long long)j->have;
	if (j->write_errno == ENOSPC || j->write_errno == EDQUOT)
		return pw_err_new(PW_ERR_IO,
				  _("free some space on that file system and run the same command again: "
				    "the download resumes where it stopped (or delete the .part file to "
				    "give its space back)"),
				  _("disk full: no space left to download %s into %s; the %lld bytes that "
				    "arrived are kept in %s"),
				  j->shown, j->o->dest, kept, j->part);
	return pw_err_errno(PW_ERR_IO, j->write_errno, NULL, _("cannot write %s"), j->part);
}

static const char *http_hint(long status)
{
	if (status == 404 || status == 410)
		return _("the file is not on the server: check the version, or pass --mirror URL");
	if (status == 401 || status == 403)
		return _("the server refused access: check the URL, or pass --mirror URL");
	if (status == 407)
		return _(HINT_PROXY_AUTH);
	if (status == 429)
		return _("the server asks to slow down: wait a while and run again");
	if (status >= 500)
		return _("the server failed: try again later, or pass --mirror URL");
	return _("check the URL, or pass --mirror URL / --archive FILE");
}

static pw_err *http_error(const job *j)
{
	const char *eff = effective_url(j);
	const char *hint = http_hint(j->status);
	if (strcmp(eff, j->shown) != 0)
		return pw_err_new(PW_ERR_NETWORK, hint, _("HTTP %ld from %s (redirected from %s)"),
				  j->status, eff, j->shown);
	return pw_err_new(PW_ERR_NETWORK, hint, _("HTTP %ld from %s"), j->status, eff);
}

static pw_err *proxy_error(const job *j, CURLcode rc, long connect_code)
{
	const char *eff = effective_url(j);
	char *proxy = env_proxy(eff, false);
	char *target = url_place(eff, true);
	const char *p = proxy ? proxy : _("from the environment");
	pw_err *e;
	if (connect_code == 407)
		e = pw_err_new(PW_ERR_NETWORK,
			       _(HINT_PROXY_AUTH),
			       _("the proxy %s refused to connect to %s (HTTP 407: credentials required)"), p,
			       target ? target : eff);
	else if (connect_code)
		e = pw_err_new(PW_ERR_NETWORK, _(HINT_PROXY),
			       _("the proxy %s refused to connect to %s (HTTP %ld)"), p,
			       target ? target : eff, connect_code);
	else if (rc == CURLE_COULDNT_RESOLVE_PROXY)
		e = pw_err_new(PW_ERR_NETWORK, _(HINT_PROXY),
			       _("the proxy refused: cannot resolve the proxy %s"), p);
	else
		e = pw_err_new(PW_ERR_NETWORK, _(HINT_PROXY), _("the proxy %s refused the connection: %s"), p,
			       detail(j, rc));
	free(proxy);
	free(target);
	return e;
}

static const char *trust_store(const char *ca_file)
{
	const char *env = getenv("SSL_CERT_FILE");
	if (ca_file)
		return ca_file;
	return env && *env ? env : _("the system's trusted certificates");
}

static pw_err *tls_error(const job *j, CURLcode rc)
{
	const char *eff = effective_url(j);
	const char *store = trust_store(j->o->ca_file);
	if (rc == CURLE_SSL_CACERT_BADFILE)
		return pw_err_new(PW_ERR_NETWORK,
				  _("pass --cacert FILE with a PEM bundle, or set SSL_CERT_FILE to one"),
				  _("cannot load the trusted certificates from %s: %s"), store,
				  detail(j, rc));
	if (rc == CURLE_SSL_CONNECT_ERROR)
		return pw_err_new(PW_ERR_NETWORK, _(HINT_TLS), _("the TLS handshake for %s failed: %s"), eff,
				  detail(j, rc));
	return pw_err_new(PW_ERR_NETWORK, _(HINT_TLS),
			  _("the server's TLS certificate is not trusted (%s, checked against %s): %s"), eff,
			  store, detail(j, rc));
}

/* Where a connection attempt went: the proxy's words when one was in use. */
static pw_err *connect_error(const job *j, CURLcode rc)
{
	const char *eff = effective_url(j);
	char *proxy = env_proxy(eff, true);
	if (proxy) {
		free(proxy);
		return proxy_error(j, rc, 0);
	}
	char *place = url_place(eff, true);
	pw_err *e = pw_err_new(PW_ERR_NETWORK, _(HINT_UP), _("connection refused by %s (%s)"),
			       place ? place : eff, eff);
	free(place);
	return e;
}

static pw_err *resolve_error(const job *j)
{
	const char *eff = effective_url(j);
	char *host = url_place(eff, false);
	pw_err *e = pw_err_new(PW_ERR_NETWORK, _(HINT_ELSEWHERE), _("cannot resolve host %s (%s)"),
			       host ? host : eff, eff);
	free(host);
	return e;
}

/* A connect timeout and a stall both end as CURLE_OPERATION_TIMEDOUT; a
 * transfer that never got past connecting (and TLS) was the former. */
static pw_err *timed_out_error(const job *j)
{
	curl_off_t pre = 0;
	curl_easy_getinfo(j->curl, CURLINFO_PRETRANSFER_TIME_T, &pre);
	if (pre > 0)
		return stalled_error(j);
	const char *eff = effective_url(j);
	char *place = url_place(eff, true);
	pw_err *e = pw_err_new(PW_ERR_NETWORK, _(HINT_ELSEWHERE),
			       _("connecting to %s timed out after %ld s (%s)"), place ? place : eff,
			       j->connect_s, eff);
	free(place);
	return e;
}

static pw_err *cut_error(const job *j)
{
	return pw_err_new(PW_ERR_NETWORK, _(HINT_RESUME),
			  _("the connection was cut after %lld bytes of %s; run again to resume"),
			  (long long)j->have, effective_url(j));
}

static pw_err *curl_error(const job *j, CURLcode rc)
{
	long connect_code = 0;
	curl_easy_getinfo(j->curl, CURLINFO_HTTP_CONNECTCODE, &connect_code);
	if (connect_code >= 300)
		return proxy_error(j, rc, connect_code);
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
		return tls_error(j, rc);
	case CURLE_COULDNT_RESOLVE_HOST:
		return resolve_error(j);
	case CURLE_COULDNT_RESOLVE_PROXY:
		return proxy_error(j, rc, 0);
	case CURLE_COULDNT_CONNECT:
		return connect_error(j, rc);
	case CURLE_OPERATION_TIMEDOUT:
		return timed_out_error(j);
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return cut_error(j);
	case CURLE_TOO_MANY_REDIRECTS:
		return pw_err_new(PW_ERR_NETWORK, _("check the URL, or pass --mirror URL"),
				  _("%s redirected more than %ld times"), j->shown, MAX_REDIRECTS);
	case CURLE_UNSUPPORTED_PROTOCOL:
		return pw_err_new(PW_ERR_NETWORK,
				  _("pyward downloads https:// and http:// URLs (and file:// ones "
				    "given directly, never through a redirect)"),
				  _("downloading %s failed: unsupported protocol: %s"), j->shown,
				  detail(j, rc));
	case CURLE_URL_MALFORMAT:
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s is not a valid URL"), j->shown);
	case CURLE_FILE_COULDNT_READ_FILE:
		return pw_err_new(PW_ERR_NOTFOUND, NULL, _("cannot read %s"), j->shown);
	default:
		return pw_err_new(PW_ERR_NETWORK, _(HINT_ELSEWHERE), _("downloading %s failed: %s"),
				  effective_url(j), detail(j, rc));
	}
}

/* ---------------------------------------------------------------- the .part */

/* Forget what the .part holds and start it over from byte zero. */
static int part_restart(job *j)
{
	if (ftruncate(j->fd, 0) != 0 || lseek(j->fd, 0, SEEK_SET) != 0)
		return errno;
	pw_sha256_free(&j->h);
	j->h = pw_sha256_new();
	j->have = 0;
	j->resumed_from = 0;
	j->restarts++;
	return 0;
}

/* Open DEST.part; bytes already in it are hashed again (the hash state does
 * not survive between runs) so that the download can continue after them.
 * O_NOFOLLOW and O_NONBLOCK: a symlink or a FIFO planted there is refused,
 * not followed or waited on. */
static pw_err *part_open(job *j)
{
	struct stat st;
	j->fd = open(j->part, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (j->fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), j->part);
	if (fstat(j->fd, &st) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot examine %s"), j->part);
	if (!S_ISREG(st.st_mode)) {
		close(j->fd);
		j->fd = -1;
		return pw_err_new(PW_ERR_IO, _("remove it and run again"), _("%s is not a regular file"),
				  j->part);
	}
	j->have = st.st_size;
	/* A local copy is cheaper to redo than to trust a range of. */
	int rc = j->have > 0 && j->file_url ? part_restart(j) : 0;
	if (rc)
		return pw_err_errno(PW_ERR_IO, rc, NULL, _("cannot truncate %s"), j->part);
	if (j->have > 0) {
		pw_err *e = pw_sha256_update_file(j->h, j->part, j->have);
		if (e)
			return e;
		if (lseek(j->fd, j->have, SEEK_SET) < 0)
			return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot seek in %s"), j->part);
	}
	j->resumed_from = j->have;
	return NULL;
}

/* ---------------------------------------------------------------- callbacks */

/* Act on the status of the response whose body is about to arrive (redirect
 * bodies never reach us). False stops the transfer. */
static bool job_decide(job *j)
{
	j->decided = true;
	curl_easy_getinfo(j->curl, CURLINFO_RESPONSE_CODE, &j->status);
	if (!j->file_url && (j->status < 200 || j->status >= 300)) {
		j->http_error = true;
		return false;
	}
	if (j->status == 206 && j->range_start != j->have) {
		j->bad_range = true;
		return false;
	}
	/* Anything but 206 is the whole file: the server ignored our Range. */
	if (j->status != 206 && j->have > 0 && (j->write_errno = part_restart(j)) != 0)
		return false;
	curl_off_t len = -1;
	curl_easy_getinfo(j->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	j->total = len >= 0 ? j->have + (int64_t)len : -1;
	return true;
}

static void parse_content_range(const char *s, job *j)
{
	long long a, b, t;
	if (sscanf(s, " bytes %lld-%lld/%lld", &a, &b, &t) == 3) {
		j->range_start = a;
		j->range_total = t;
	} else if (sscanf(s, " bytes %lld-%lld/", &a, &b) == 2) {
		j->range_start = a; /* total given as "*": unknown */
	} else if (sscanf(s, " bytes */%lld", &t) == 1) {
		j->range_total = t; /* a 416's statement of the size */
	}
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	job *j = ud;
	size_t len = size * n;
	j->got_header = true;
	j->last_data_ms = pw_clock_mono_ms();
	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		j->range_start = j->range_total = -1; /* a new response (after a redirect) */
	} else if (len > 14 && strncasecmp(data, "Content-Range:", 14) == 0) {
		char line[128];
		size_t m = len - 14 < sizeof line - 1 ? len - 14 : sizeof line - 1;
		memcpy(line, data + 14, m);
		line[m] = '\0';
		parse_content_range(line, j);
	}
	return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	job *j = ud;
	size_t len = size * n;
	j->last_data_ms = pw_clock_mono_ms();
	if (pw_cancel_raised(j->o->cancel)) {
		j->stop = STOP_CANCEL;
		return 0;
	}
	if (!j->decided && !job_decide(j))
		return 0;
	if ((j->write_errno = pw_write_all(j->fd, data, len) ? errno : 0) != 0)
		return 0;
	pw_sha256_update(j->h, data, len);
	j->have += (int64_t)len;
	return len;
}

static void report(const job *j, int64_t now, bool final)
{
	double secs = (double)(now - j->start_ms) / 1000.0;
	double rate = secs > 0 ? (double)(j->have - j->resumed_from) / secs : 0;
	pw_progress p = {
		.stage = "download",
		.done = j->have,
		.total = final ? j->have : j->total,
		.rate = rate,
		.eta_seconds = final ? 0 : -1,
	};
	if (!final && p.total >= 0 && rate > 0)
		p.eta_seconds = (double)(p.total - p.done) / rate;
	pw_events_progress(j->o->events, &p);
}

/* curl's own low-speed check averages over about five seconds, so a server
 * that goes quiet after a burst is caught late; the silence is timed here
 * directly. Before the first header curl's check is exact and stays in charge. */
static enum stop stop_reason(const job *j, int64_t now)
{
	if (pw_cancel_raised(j->o->cancel))
		return STOP_CANCEL;
	if (j->o->deadline_ms > 0 && now >= j->o->deadline_ms)
		return STOP_DEADLINE;
	if (j->got_header && now - j->last_data_ms >= (int64_t)j->stall_s * 1000)
		return STOP_STALL;
	return STOP_NONE;
}

static int on_xfer(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	job *j = ud;
	int64_t now = pw_clock_mono_ms();
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow; /* our own counters include resumed bytes */
	if ((j->stop = stop_reason(j, now)) != STOP_NONE)
		return 1;
	if (j->decided && !j->http_error && now - j->last_report_ms >= PROGRESS_EVERY_MS) {
		j->last_report_ms = now;
		report(j, now, false);
	}
	return 0;
}

/* ---------------------------------------------------------------- the job */

static pw_err *job_init(job *j, const pw_fetch_opts *o)
{
	memset(j, 0, sizeof *j);
	j->o = o;
	j->fd = -1;
	j->h = pw_sha256_new();
	j->file_url = is_file_url(o->url);
	j->connect_s = o->connect_timeout_s > 0 ? o->connect_timeout_s : DEFAULT_CONNECT_S;
	j->stall_s = o->low_speed_time_s > 0 ? o->low_speed_time_s : DEFAULT_STALL_S;
	j->part = xasprintf("%s.part", o->dest);
	j->shown = pw_fetch_url_shown(o->url);
	j->shown_effective = xcalloc(1, SHOWN_URL_MAX);
	j->curl = curl_easy_init();
	if (!j->curl)
		return pw_err_new(PW_ERR_FAILED, NULL, _("cannot start a libcurl transfer"));
	set_common(j, o->ca_file);
	curl_easy_setopt(j->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(j->curl, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(j->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(j->curl, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(j->curl, CURLOPT_XFERINFOFUNCTION, on_xfer);
	curl_easy_setopt(j->curl, CURLOPT_XFERINFODATA, j);
	curl_easy_setopt(j->curl, CURLOPT_NOPROGRESS, 0L);
	return NULL;
}

static void job_free(job *j)
{
	if (j->curl)
		curl_easy_cleanup(j->curl);
	if (j->fd >= 0)
		close(j->fd);
	pw_sha256_free(&j->h);
	free(j->part);
	free(j->shown);
	free(j->shown_effective);
}

static CURLcode job_perform(job *j, const char *range)
{
	int64_t now = pw_clock_mono_ms();
	j->decided = j->http_error = j->bad_range = j->got_header = false;
	j->range_start = j->range_total = j->total = -1;
	j->status = 0;
	j->errbuf[0] = '\0';
	j->start_ms = j->last_data_ms = now;
	j->last_report_ms = 0;
	curl_easy_setopt(j->curl, CURLOPT_RANGE, range);
	/* Covers the phases the progress callback may not see (name lookup). */
	if (j->o->deadline_ms > 0)
		curl_easy_setopt(j->curl, CURLOPT_TIMEOUT_MS,
				 (long)(j->o->deadline_ms > now + 1 ? j->o->deadline_ms - now : 1));
	return curl_easy_perform(j->curl);
}

/* 416 to our Range: the server has nothing past what the .part holds. When
 * its size equals the .part, the download had finished (it was stopped
 * before the rename): keep it and let the hash decide. Otherwise the .part is
 * not a prefix of this file: start again from zero. */
static pw_err *job_unsatisfiable(job *j, bool *again)
{
	if (j->range_total == j->have) {
		j->http_error = false;
		j->total = j->have;
		return NULL;
	}
	int rc = part_restart(j);
	if (rc)
		return pw_err_errno(PW_ERR_IO, rc, NULL, _("cannot truncate %s"), j->part);
	*again = true;
	return NULL;
}

static pw_err *job_outcome(job *j, CURLcode rc, bool *again)
{
	*again = false;
	if (rc == CURLE_OK && !j->decided)
		job_decide(j); /* a response without a body still has a status */
	/* curl's CURLOPT_TIMEOUT_MS fired: our clock may read a hair earlier. */
	if (rc == CURLE_OPERATION_TIMEDOUT && j->o->deadline_ms > 0 &&
	    pw_clock_mono_ms() + DEADLINE_SLACK_MS >= j->o->deadline_ms)
		j->stop = STOP_DEADLINE;
	if (j->stop != STOP_NONE)
		return stop_error(j);
	if (j->write_errno)
		return write_error(j);
	if (j->bad_range) {
		unlink(j->part);
		return pw_err_new(PW_ERR_NETWORK,
				  _("the partial download was discarded: run again to start over"),
				  _("%s answered the resume with the wrong byte range"), effective_url(j));
	}
	if (j->http_error)
		return j->status == 416 && j->have > 0 ? job_unsatisfiable(j, again) : http_error(j);
	if (rc != CURLE_OK)
		return curl_error(j, rc);
	return NULL;
}

static pw_err *job_transfer(job *j)
{
	bool again = true;
	pw_err *e = NULL;
	for (int i = 0; i < MAX_ATTEMPTS && again && !e; i++) {
		char range[32];
		snprintf(range, sizeof range, "%lld-", (long long)j->have);
		e = job_outcome(j, job_perform(j, j->have > 0 ? range : NULL), &again);
	}
	if (!e && again)
		e = pw_err_new(PW_ERR_NETWORK, _("check the URL, or pass --mirror URL"),
			       _("%s keeps refusing the byte range asked for"), j->shown);
	return e;
}

/* Make the rename durable too; a directory that cannot be synced (some file
 * systems refuse) is not worth failing a finished download over. */
static void sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

static pw_err *job_finish(job *j, pw_fetch_result *res)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	const char *want = j->o->expected_sha256;
	report(j, pw_clock_mono_ms(), true);
	if (fsync(j->fd) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), j->part);
	pw_sha256_final_hex(j->h, hex);
	if (want && strcasecmp(hex, want) != 0) {
		unlink(j->part);
		return pw_err_new(PW_ERR_CORRUPT, _(HINT_MISMATCH),
				  _("SHA256 mismatch for %s: expected %s, got %s"), j->shown, want, hex);
	}
	int fd = j->fd;
	j->fd = -1;
	if (close(fd) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), j->part);
	if (rename(j->part, j->o->dest) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot rename %s to %s"), j->part, j->o->dest);
	sync_parent(j->o->dest);
	memcpy(res->sha256, hex, sizeof hex);
	res->bytes = j->have;
	res->resumed_from = j->resumed_from;
	return NULL;
}

/* ---------------------------------------------------------------- public */

static bool is_sha256_hex(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isxdigit((unsigned char)s[n]))
			return false;
	return n == PW_SHA256_HEX_LEN;
}

/* DEST is already the pinned file: nothing to download. */
static bool cache_hit(const pw_fetch_opts *o, pw_fetch_result *res)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	int64_t size = 0;
	struct stat st;
	if (!o->expected_sha256 || stat(o->dest, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	pw_err *e = pw_sha256_file(o->dest, hex, &size);
	if (e) {
		pw_err_free(e); /* unreadable: download it again */
		return false;
	}
	if (strcasecmp(hex, o->expected_sha256) != 0)
		return false;
	memcpy(res->sha256, hex, sizeof hex);
	res->bytes = res->resumed_from = size;
	char *shown = pw_fetch_url_shown(o->url);
	snprintf(res->effective_url, sizeof res->effective_url, "%s", shown);
	free(shown);
	return true;
}

static pw_err *check_opts(const pw_fetch_opts *o, const pw_fetch_result *res)
{
	if (!o || !o->url || !o->dest || !*o->dest || !res)
		return pw_err_new(PW_ERR_USAGE, NULL,
				  _("a download needs a URL, a destination and a result"));
	if (o->expected_sha256 && !is_sha256_hex(o->expected_sha256))
		return pw_err_new(PW_ERR_USAGE, NULL, _("\"%s\" is not a SHA256 (64 hex digits)"),
				  o->expected_sha256);
	return NULL;
}

static void note_result(const job *j, pw_fetch_result *res)
{
	res->restarts = j->restarts;
	res->http_status = 0;
	curl_easy_getinfo(j->curl, CURLINFO_RESPONSE_CODE, &res->http_status);
	snprintf(res->effective_url, sizeof res->effective_url, "%s", effective_url(j));
}

static pw_err *job_run(job *j, pw_fetch_result *res)
{
	pw_err *e = NULL;
	if ((j->stop = stop_reason(j, pw_clock_mono_ms())) != STOP_NONE)
		e = stop_error(j);
	if (!e && !(e = part_open(j)) && !(e = job_transfer(j)))
		e = job_finish(j, res);
	note_result(j, res);
	/* An empty .part helps no later run; one with bytes is kept for resuming. */
	if (e && j->fd >= 0 && j->have == 0)
		unlink(j->part);
	return e;
}

pw_err *pw_fetch(const pw_fetch_opts *opts, pw_fetch_result *res)
{
	pw_err *e = check_opts(opts, res);
	if (e)
		return e;
	memset(res, 0, sizeof *res);
	if (cache_hit(opts, res))
		return NULL;
	if ((e = pw_libcurl_ready()))
		return e;
	pw_sigpipe_guard g;
	job j;
	pw_sigpipe_block(&g);
	if (!(e = job_init(&j, opts)))
		e = job_run(&j, res);
	job_free(&j);
	pw_sigpipe_unblock(&g);
	return e;
}

/* The ranged GET of the fallback wants headers only: any body stops it. */
static size_t probe_body(char *data, size_t size, size_t n, void *ud)
{
	(void)data, (void)size, (void)n, (void)ud;
	return 0;
}

static CURLcode probe_perform(job *j, bool head)
{
	curl_easy_setopt(j->curl, CURLOPT_NOBODY, head ? 1L : 0L);
	if (!head) {
		curl_easy_setopt(j->curl, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(j->curl, CURLOPT_WRITEFUNCTION, probe_body);
	}
	CURLcode rc = job_perform(j, head ? NULL : "0-0");
	curl_easy_getinfo(j->curl, CURLINFO_RESPONSE_CODE, &j->status);
	return rc;
}

static pw_err *probe(job *j, int64_t *size)
{
	CURLcode rc = probe_perform(j, true);
	/* Some servers refuse HEAD; a one-byte ranged GET tells the size too. */
	if (rc == CURLE_OK && (j->status == 405 || j->status == 501))
		rc = probe_perform(j, false);
	if (rc == CURLE_WRITE_ERROR && j->status)
		rc = CURLE_OK; /* probe_body stopped it after the headers */
	if (j->stop != STOP_NONE)
		return stop_error(j);
	if (rc != CURLE_OK)
		return curl_error(j, rc);
	if (!j->file_url && (j->status < 200 || j->status >= 300))
		return http_error(j);
	curl_off_t len = -1;
	curl_easy_getinfo(j->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	*size = j->status == 206 ? j->range_total : (int64_t)len;
	if (*size < 0)
		*size = -1;
	return NULL;
}

pw_err *pw_fetch_probe_size(const char *url, const char *ca_file, int timeout_s, int64_t *size)
{
	if (!url || !size)
		return pw_err_new(PW_ERR_USAGE, NULL, _("a size probe needs a URL and a result"));
	*size = -1;
	pw_err *e = pw_libcurl_ready();
	if (e)
		return e;
	pw_fetch_opts o = {
		.url = url,
		.dest = "",
		.ca_file = ca_file,
		.connect_timeout_s = timeout_s,
		.low_speed_time_s = timeout_s,
	};
	pw_sigpipe_guard g;
	job j;
	pw_sigpipe_block(&g);
	if (!(e = job_init(&j, &o))) {
		curl_easy_setopt(j.curl, CURLOPT_TIMEOUT, j.connect_s);
		e = probe(&j, size);
	}
	job_free(&j);
	pw_sigpipe_unblock(&g);
	return e;
}
