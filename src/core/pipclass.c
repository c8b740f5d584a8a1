/*
 * Classifying a failed pip run from its own words, and asking the index
 * directly when those words cannot tell.
 *
 * The markers below come from real pip output: tests/fixtures/pip-output/
 * holds what pip 18.1 to 24.2 print for each failure (see capture.sh there),
 * and the unit test checks every one of those files against this table.
 * pip words the same failure differently across versions (and OpenSSL names
 * a TLS EOF differently across versions), so a class usually has several
 * markers. Matching is case-insensitive and by substring: pip's messages are
 * stable phrases inside longer, variable text (addresses, ports, object ids).
 */
#include "config.h"

#include "pipclass.h"
#include "pkgname.h"
#include "redact.h"
#include "i18n.h"
#include "libload.h"
#include "sigpipe.h"
#include "xalloc.h"

#include <curl/curl.h>

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROBE_DEFAULT_TIMEOUT_S 10L
#define PROBE_MAX_REDIRECTS 5L
#define PROBE_BODY_MAX (4 * 1024 * 1024) /* a project page bigger than this is only counted so far */

/* ---------------------------------------------------------------- names */

const char *pw_pipclass_name(pw_pip_class c)
{
	switch (c) {
	case PW_PIP_OK:
		return "ok";
	case PW_PIP_NETWORK:
		return "network";
	case PW_PIP_NOT_NETWORK:
		return "not-network";
	case PW_PIP_AMBIGUOUS:
		return "ambiguous";
	}
	return "ambiguous";
}

static bool is_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

/* ---------------------------------------------------------------- matching */

/* strcasestr, which is not in C11 or POSIX. */
static const char *find_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return hay;
	return NULL;
}

static bool has(const char *out, const char *marker)
{
	return find_ci(out, marker) != NULL;
}

/* marker followed by a 5xx status, e.g. "too many 503 error responses"
 * (urllib3 giving up on retried statuses) or "HTTP error 502" (pip 18). */
static bool has_5xx(const char *out, const char *marker)
{
	size_t n = strlen(marker);
	for (const char *p = find_ci(out, marker); p; p = find_ci(p + 1, marker)) {
		const char *s = p + n;
		if (s[0] == '5' && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
		    !isdigit((unsigned char)s[3]))
			return true;
	}
	return false;
}

/* pip's "(from versions: 1.0, 1.1)": did the index list anything? For
 * nothing, pip 22 and later write "none", pip 18 writes nothing at all. */
static bool lists_versions(const char *out, const char *marker)
{
	size_t n = strlen(marker);
	for (const char *p = find_ci(out, marker); p; p = find_ci(p + 1, marker)) {
		const char *s = p + n;
		while (*s == ' ')
			s++;
		if (*s && *s != ')' && strncasecmp(s, "none)", 5) != 0)
			return true;
	}
	return false;
}

/* A no-match is definite only when the index was read and listed versions:
 * then the requirement, not the network, is what failed. */
static bool no_match_with_versions(const char *out, const char *marker)
{
	return has(out, "No matching distribution found") && lists_versions(out, marker);
}

typedef struct rule {
	const char *marker;
	bool (*match)(const char *out, const char *marker); /* NULL: substring */
	pw_pip_class cls;
	const char *reason;
} rule;

#define R_CERT N_("TLS certificate verification failed (CERTIFICATE_VERIFY_FAILED)")
#define R_DNS N_("name resolution failed (DNS)")
#define R_REFUSED N_("urllib3 NewConnectionError (connection refused)")
#define R_CONNECT_TIMEOUT N_("connecting timed out (ConnectTimeoutError)")
#define R_READ_TIMEOUT N_("the index stopped answering (ReadTimeoutError)")
#define R_RESET N_("the connection was reset (Connection reset by peer)")
#define R_TLS_EOF N_("the TLS handshake ended early (EOF)")
#define R_CUT N_("the server closed the connection early (ProtocolError)")
#define R_5XX N_("the index kept answering 5xx (server error)")
#define R_BUILD N_("a package failed to build")
#define R_CONFLICT N_("the requirements conflict (ResolutionImpossible)")
#define R_NONE_LISTED N_("no matching distribution, and the index listed no versions")

/* In order: the first rule that matches decides. Certificate failures come
 * first because pip also prints its Retrying banner for them, and another
 * index or a proxy will not make a certificate trusted. Network evidence
 * comes before everything pip concludes from it: a failed page fetch ends
 * in "No matching distribution found" too. The Retrying banner is the last
 * network marker, since a more specific one names the cause better. */
static const rule rules[] = {
	{ "CERTIFICATE_VERIFY_FAILED", NULL, PW_PIP_NOT_NETWORK, R_CERT },
	{ "certificate verify failed", NULL, PW_PIP_NOT_NETWORK, R_CERT },
	{ "SSLCertVerificationError", NULL, PW_PIP_NOT_NETWORK, R_CERT },
	{ "CertificateError", NULL, PW_PIP_NOT_NETWORK,
	  N_("the TLS certificate does not match the host (CertificateError)") },

	/* pip does not check Content-Length: a download the network cut short,
	 * or a corrupt or stale mirror, ends here. The index's own #sha256=
	 * still guards the next source, so nothing unverified is installed. */
	{ "DO NOT MATCH THE HASHES", NULL, PW_PIP_NETWORK,
	  N_("a download's sha256 differed from the one the index listed (cut short, or a "
	     "corrupt or stale mirror); the next source is tried") },
	{ "ProxyError", NULL, PW_PIP_NETWORK, N_("urllib3 ProxyError (the proxy refused or failed)") },
	{ "Cannot connect to proxy", NULL, PW_PIP_NETWORK,
	  N_("urllib3 ProxyError (the proxy refused or failed)") },
	{ "Tunnel connection failed", NULL, PW_PIP_NETWORK,
	  N_("the proxy refused the tunnel (Tunnel connection failed)") },
	{ "Name or service not known", NULL, PW_PIP_NETWORK, R_DNS },
	{ "Temporary failure in name resolution", NULL, PW_PIP_NETWORK, R_DNS },
	{ "No address associated with hostname", NULL, PW_PIP_NETWORK, R_DNS },
	{ "nodename nor servname provided", NULL, PW_PIP_NETWORK, R_DNS },
	{ "getaddrinfo failed", NULL, PW_PIP_NETWORK, R_DNS },
	{ "Connection refused", NULL, PW_PIP_NETWORK, R_REFUSED },
	{ "ConnectTimeoutError", NULL, PW_PIP_NETWORK, R_CONNECT_TIMEOUT },
	{ "Connection timed out", NULL, PW_PIP_NETWORK, R_CONNECT_TIMEOUT },
	{ "ReadTimeoutError", NULL, PW_PIP_NETWORK, R_READ_TIMEOUT },
	{ "Read timed out", NULL, PW_PIP_NETWORK, R_READ_TIMEOUT },
	{ "Connection reset by peer", NULL, PW_PIP_NETWORK, R_RESET },
	{ "ConnectionResetError", NULL, PW_PIP_NETWORK, R_RESET },
	{ "UNEXPECTED_EOF_WHILE_READING", NULL, PW_PIP_NETWORK, R_TLS_EOF },
	{ "EOF occurred in violation of protocol", NULL, PW_PIP_NETWORK, R_TLS_EOF },
	{ "unexpected eof while reading", NULL, PW_PIP_NETWORK, R_TLS_EOF },
	{ "SSLEOFError", NULL, PW_PIP_NETWORK, R_TLS_EOF },
	{ "SSLZeroReturnError", NULL, PW_PIP_NETWORK, R_TLS_EOF },
	{ "RemoteDisconnected", NULL, PW_PIP_NETWORK, R_CUT },
	{ "IncompleteRead", NULL, PW_PIP_NETWORK, R_CUT },
	{ "Connection aborted", NULL, PW_PIP_NETWORK, R_CUT },
	{ "ProtocolError", NULL, PW_PIP_NETWORK, R_CUT },
	{ "Network is unreachable", NULL, PW_PIP_NETWORK, N_("the network is unreachable") },
	{ "No route to host", NULL, PW_PIP_NETWORK, N_("no route to the index's host") },
	{ "NewConnectionError", NULL, PW_PIP_NETWORK, N_("urllib3 NewConnectionError (cannot connect)") },
	{ "too many ", has_5xx, PW_PIP_NETWORK, R_5XX },
	{ "HTTP error ", has_5xx, PW_PIP_NETWORK, R_5XX },
	{ "Retrying (Retry(", NULL, PW_PIP_NETWORK,
	  N_("pip retried after a connection error (Retrying banner)") },
	{ "Max retries exceeded", NULL, PW_PIP_NETWORK,
	  N_("pip gave up after connection errors (Max retries exceeded)") },

	{ "no such option", NULL, PW_PIP_NOT_NETWORK, N_("pip does not know an option it was given") },
	{ "ResolutionImpossible", NULL, PW_PIP_NOT_NETWORK, R_CONFLICT },
	{ "conflicting dependencies", NULL, PW_PIP_NOT_NETWORK, R_CONFLICT },
	{ "Double requirement given", NULL, PW_PIP_NOT_NETWORK,
	  N_("the requirements conflict (Double requirement given)") },
	{ "Invalid requirement", NULL, PW_PIP_NOT_NETWORK, N_("a requirement is not valid (Invalid requirement)") },
	{ "is not a trusted or secure host", NULL, PW_PIP_NOT_NETWORK,
	  N_("pip ignored a plain-http index it does not trust (--trusted-host)") },
	{ "subprocess-exited-with-error", NULL, PW_PIP_NOT_NETWORK, R_BUILD },
	{ "metadata-generation-failed", NULL, PW_PIP_NOT_NETWORK, R_BUILD },
	{ "Failed building wheel", NULL, PW_PIP_NOT_NETWORK, R_BUILD },
	{ "Failed to build", NULL, PW_PIP_NOT_NETWORK, R_BUILD },
	{ "Command errored out with exit status", NULL, PW_PIP_NOT_NETWORK, R_BUILD },
	{ "requires a different Python", NULL, PW_PIP_NOT_NETWORK,
	  N_("no version supports this Python (Requires-Python)") },
	{ "No space left on device", NULL, PW_PIP_NOT_NETWORK, N_("the disk is full") },
	{ "Permission denied", NULL, PW_PIP_NOT_NETWORK, N_("permission denied while installing") },
	{ "(from versions:", no_match_with_versions, PW_PIP_NOT_NETWORK,
	  N_("no matching distribution, though the index listed versions") },

	{ "No matching distribution found", NULL, PW_PIP_AMBIGUOUS, R_NONE_LISTED },
	{ "Could not find a version that satisfies", NULL, PW_PIP_AMBIGUOUS, R_NONE_LISTED },
};

static bool rule_matches(const rule *r, const char *out)
{
	return r->match ? r->match(out, r->marker) : has(out, r->marker);
}

pw_pip_class pw_pipclass_classify(int exit_code, const char *output, const char **reason)
{
	const char *why = N_("pip failed, and its output names no known cause");
	pw_pip_class c = PW_PIP_AMBIGUOUS;
	const char *out = output ? output : "";
	if (exit_code == 0) {
		why = N_("pip exited with status 0");
		c = PW_PIP_OK;
	} else {
		for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
			if (rule_matches(&rules[i], out)) {
				why = rules[i].reason;
				c = rules[i].cls;
				break;
			}
		}
	}
	if (reason)
		*reason = _(why);
	return c;
}

/* ---------------------------------------------------------------- the probe */

typedef struct probe {
	CURL *curl;
	char *url;       /* what is asked for */
	char *shown;     /* the same without credentials, for people */
	char *body;
	size_t len;
	long status;
	char errbuf[CURL_ERROR_SIZE];
} probe;

/* PEP 508 names: letters, digits and -_. , starting and ending with a
 * letter or digit. Anything else could change the URL's meaning. */
static bool is_project_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !is_sep(s[i]))
			return false;
	return true;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	probe *p = ud;
	size_t len = size * n;
	size_t room = PROBE_BODY_MAX - p->len;
	size_t take = len < room ? len : room;
	if (take) {
		p->body = xrealloc(p->body, p->len + take + 1);
		memcpy(p->body + p->len, data, take);
		p->len += take;
		p->body[p->len] = '\0';
	}
	return len;
}

static void set_protocols(CURL *c)
{
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
}

/* TLS is always verified. The proxy is exactly the caller's: "" for
 * CURLOPT_PROXY turns off curl's reading of the proxy variables, and ""
 * for CURLOPT_NOPROXY stops $no_proxy from exempting hosts. */
static void probe_setup(probe *p, const char *proxy, const char *ca_file, long timeout_s)
{
	CURL *c = p->curl;
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file && *ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
	curl_easy_setopt(c, CURLOPT_PROXY, proxy ? proxy : "");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "");
	set_protocols(c);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, PROBE_MAX_REDIRECTS);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, timeout_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, p);
}

/* File links on a PEP 503 page: its <a> elements. */
static size_t count_links(const char *page)
{
	size_t n = 0;
	if (!page)
		return 0;
	for (const char *s = find_ci(page, "<a"); s; s = find_ci(s + 2, "<a"))
		if (isspace((unsigned char)s[2]))
			n++;
	return n;
}

static pw_pip_class judge_status(const probe *p, const char *project, char **detail)
{
	long st = p->status;
	if (st >= 500) {
		*detail = xasprintf(_("HTTP %ld from %s"), st, p->shown);
		return PW_PIP_NETWORK;
	}
	if (st == 407 || st == 429 || st == 408) {
		*detail = xasprintf(_("HTTP %ld from %s (a proxy or the index is refusing for now)"), st,
				    p->shown);
		return PW_PIP_NETWORK;
	}
	if (st == 404 || st == 410) {
		*detail = xasprintf(_("HTTP %ld from %s: the index does not have %s"), st, p->shown, project);
		return PW_PIP_NOT_NETWORK;
	}
	if (st < 200 || st >= 300) {
		*detail = xasprintf(_("HTTP %ld from %s"), st, p->shown);
		return PW_PIP_NOT_NETWORK;
	}
	size_t links = count_links(p->body);
	if (links)
		*detail = xasprintf(_("%s lists files for %s (links: %zu)"), p->shown, project, links);
	else
		*detail = xasprintf(_("%s answered, but lists no files"), p->shown);
	return PW_PIP_NOT_NETWORK;
}

static pw_pip_class judge_failure(const probe *p, CURLcode rc, char **detail)
{
	const char *why = p->errbuf[0] ? p->errbuf : curl_easy_strerror(rc);
	long connect_code = 0;
	curl_easy_getinfo(p->curl, CURLINFO_HTTP_CONNECTCODE, &connect_code);
	if (connect_code >= 300) {
		*detail = xasprintf(_("the proxy answered HTTP %ld to the tunnel for %s"), connect_code,
				    p->shown);
		return PW_PIP_NETWORK;
	}
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		/* Another index or a proxy will not make a certificate trusted. */
		*detail = xasprintf(_("the TLS certificate of %s is not trusted: %s"), p->shown, why);
		return PW_PIP_NOT_NETWORK;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_TOO_MANY_REDIRECTS:
		*detail = xasprintf(_("cannot use %s as an index: %s"), p->shown, why);
		return PW_PIP_NOT_NETWORK;
	default:
		*detail = xasprintf(_("cannot reach %s: %s"), p->shown, why);
		return PW_PIP_NETWORK;
	}
}

static pw_pip_class probe_run(probe *p, const char *project, const char *proxy, const char *ca_file,
			      long timeout_s, char **detail)
{
	pw_sigpipe_guard g;
	p->curl = curl_easy_init();
	if (!p->curl) {
		*detail = xstrdup(_("cannot start a libcurl transfer"));
		return PW_PIP_AMBIGUOUS;
	}
	probe_setup(p, proxy, ca_file, timeout_s);
	pw_sigpipe_block(&g);
	CURLcode rc = curl_easy_perform(p->curl);
	pw_sigpipe_unblock(&g);
	if (rc != CURLE_OK)
		return judge_failure(p, rc, detail);
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &p->status);
	return judge_status(p, project, detail);
}

static pw_pip_class probe_checked(const char *index_url, const char *project, const char *proxy,
				  const char *ca_file, int timeout_s, char **detail)
{
	if (!index_url || !*index_url || !project) {
		*detail = xstrdup(_("no index URL or project to ask about"));
		return PW_PIP_AMBIGUOUS;
	}
	if (!is_project_name(project)) {
		*detail = xasprintf(_("\"%s\" is not a valid project name"), project);
		return PW_PIP_NOT_NETWORK;
	}
	pw_err *e = pw_libcurl_ready();
	if (e) {
		*detail = xstrdup(pw_err_message(e));
		pw_err_free(e);
		return PW_PIP_AMBIGUOUS;
	}
	size_t n = strlen(index_url);
	while (n > 0 && index_url[n - 1] == '/')
		n--;
	char *norm = pw_pkgname_key(project);
	probe p = { 0 };
	p.url = xasprintf("%.*s/%s/", (int)n, index_url, norm);
	p.shown = pw_redact_url(p.url); /* details are shown and logged */
	pw_pip_class c = probe_run(&p, norm, proxy, ca_file,
				   timeout_s > 0 ? (long)timeout_s : PROBE_DEFAULT_TIMEOUT_S, detail);
	if (p.curl)
		curl_easy_cleanup(p.curl);
	free(p.url);
	free(p.shown);
	free(p.body);
	free(norm);
	return c;
}

pw_pip_class pw_pipclass_probe_index(const char *index_url, const char *project, const char *proxy,
				     const char *ca_file, int timeout_s, char **detail)
{
	char *msg = NULL;
	pw_pip_class c = probe_checked(index_url, project, proxy, ca_file, timeout_s, &msg);
	/* libcurl's own words may quote the proxy as given. */
	if (detail)
		*detail = pw_redact_text(msg);
	free(msg);
	return c;
}
