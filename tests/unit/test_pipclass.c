/*
 * pipclass tests. The classifier is checked against real pip output: every
 * file in tests/fixtures/pip-output/ (made by capture.sh there, from several
 * pip versions) is classified and compared with the class its case name
 * calls for. Synthetic texts then pin the order of evidence. The index probe
 * runs against loopback servers of our own (indexd.py in several fault
 * modes, proxyd.py), started without a shell and stopped by PID.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pipclass.h"
#include "testlib.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* A cap, not a budget: the wait ends as soon as every server wrote its port
 * or one of them exited; seven Python start-ups at once on a loaded machine
 * (a sanitizer build beside other tests) took more than the 8 s it was. */
#define PORT_WAIT_MS 120000
#define MIN_PIP_VERSIONS 2 /* the captured files must come from at least this many pips */

/* ---------------------------------------------------------------- helpers */

/* The whole file, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	for (size_t got; s && (got = fread(s + len, 1, cap - len - 1, f)) > 0;) {
		len += got;
		if (cap - len - 1 == 0) {
			char *t = realloc(s, cap * 2);
			if (!t) {
				free(s);
				s = NULL;
				break;
			}
			s = t;
			cap *= 2;
		}
	}
	fclose(f);
	if (s)
		s[len] = '\0';
	return s;
}

static void assert_has(const char *text, const char *part)
{
	if (!text || !strstr(text, part))
		fail_msg("\"%s\" lacks \"%s\"", text ? text : "(null)", part);
}

static void assert_class(pw_pip_class got, pw_pip_class want, const char *what)
{
	if (got != want)
		fail_msg("%s: expected %s, got %s", what, pw_pipclass_name(want), pw_pipclass_name(got));
}

/* ---------------------------------------------------------------- servers */

enum { SV_OK, SV_TLS, SV_500, SV_EMPTY, SV_STALL, SV_DROP, SV_PROXY, SV_COUNT };

typedef struct server {
	const char *name;
	const char *mode; /* indexd.py --mode; NULL for the proxy */
	bool tls;
	tl_server srv;
} server;

static struct fixture {
	tl_tls_dir t; /* the temporary directory, its CA and certificate */
	char wheels[PATH_MAX];
	server sv[SV_COUNT];
	bool no_python;
} fx = {
	.sv = {
		[SV_OK] = { .name = "ok", .mode = "ok" },
		[SV_TLS] = { .name = "tls", .mode = "ok", .tls = true },
		[SV_500] = { .name = "s500", .mode = "status500" },
		[SV_EMPTY] = { .name = "empty", .mode = "empty" },
		[SV_STALL] = { .name = "stall", .mode = "stall" },
		[SV_DROP] = { .name = "drop", .mode = "drop", .tls = true },
		[SV_PROXY] = { .name = "proxy" },
	},
};

/* indexd.py in its mode (--cert and --key only for TLS) or, for the one
 * server without a mode, proxyd.py. */
static int spawn(server *s)
{
	char script[PATH_MAX];
	const char *py = tl_python();
	tl_server_files(&s->srv, fx.t.dir, s->name);
	tl_fixture_path(script, sizeof script, s->mode ? "indexd.py" : "proxyd.py");
	const char *pf = s->srv.portfile, *log = s->srv.log;
	const char *proxy[] = { py, script, "--port-file", pf, "--log", log, "--idle-exit", "60", NULL };
	/* Without TLS the NULL in place of "--cert" ends the list there. */
	const char *index[] = { py, script, "--wheels", fx.wheels, "--port-file", pf, "--log", log,
				"--mode", s->mode, "--idle-exit", "60", s->tls ? "--cert" : NULL, fx.t.cert,
				"--key", fx.t.key, NULL };
	return tl_spawn(&s->srv, s->mode ? index : proxy);
}

/* All servers start at once (each is a Python start-up); then wait for every
 * port. 0: all up; 1: no Python to run them; -1: one failed or was slow. */
static int wait_ports(void)
{
	tl_server *all[SV_COUNT];
	for (int i = 0; i < SV_COUNT; i++)
		all[i] = &fx.sv[i].srv;
	return tl_wait_ports(all, SV_COUNT, PORT_WAIT_MS);
}

static int group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < SV_COUNT; i++)
		tl_stop(&fx.sv[i].srv);
	if (fx.t.dir[0])
		tl_remove_tree(fx.t.dir);
	return 0;
}

static int make_material(void)
{
	char wheels_py[PATH_MAX];
	tl_fixture_path(wheels_py, sizeof wheels_py, "make_wheels.py");
	const char *wh_argv[] = { tl_python(), wheels_py, fx.t.dir, NULL };
	int rc = tl_run(wh_argv);
	return rc == 0 ? 0 : rc == 127 ? 1 : -1;
}

static int setup_dirs(void)
{
	if (tl_tls_dir_make(&fx.t, "pw-pipclass"))
		return -1;
	tl_textf(fx.wheels, sizeof fx.wheels, "%s/wheels", fx.t.dir);
	return 0;
}

static int group_setup(void **state)
{
	/* The machine's proxy settings must not reach the probe tests (one test
	 * sets them on purpose, to show they are ignored). */
	tl_unset_proxy_env();
	int rc = setup_dirs() ? -1 : make_material();
	for (int i = 0; rc == 0 && i < SV_COUNT; i++)
		rc = spawn(&fx.sv[i]);
	if (rc == 0)
		rc = wait_ports();
	if (rc == 1) {
		fprintf(stderr, "# no %s to run the fixture servers: the probe tests are skipped\n",
			tl_python());
		fx.no_python = true;
		return 0;
	}
	if (rc != 0) {
		for (int i = 0; i < SV_COUNT; i++) {
			if (fx.sv[i].srv.port > 0)
				continue;
			char *log = slurp(fx.sv[i].srv.log);
			fprintf(stderr, "# fixture server %s: %s; its log: %.400s\n", fx.sv[i].name,
				fx.sv[i].srv.pid > 0 ? "no port yet" : "exited", log ? log : "(none)");
			free(log);
		}
		fprintf(stderr, "# the fixture servers did not all start within %d ms\n", PORT_WAIT_MS);
		group_teardown(state);
	}
	return rc;
}

static void need_servers(void)
{
	if (fx.no_python)
		skip();
}

static void index_url(char *buf, size_t n, int sv, const char *path)
{
	const server *s = &fx.sv[sv];
	tl_textf(buf, n, "%s://%s:%d%s", s->tls ? "https" : "http", s->tls ? "localhost" : "127.0.0.1",
		 s->srv.port, path);
}

static void assert_logged(int sv, const char *line)
{
	char *log = slurp(fx.sv[sv].srv.log);
	if (!log || !strstr(log, line))
		fail_msg("%s.log lacks \"%s\":\n%s", fx.sv[sv].name, line, log ? log : "(unreadable)");
	free(log);
}

static void assert_not_logged(int sv, const char *line)
{
	char *log = slurp(fx.sv[sv].srv.log);
	if (log && strstr(log, line))
		fail_msg("%s.log has \"%s\":\n%s", fx.sv[sv].name, line, log);
	free(log);
}

/* Probe and check the class; the detail must say part. */
static void expect_probe(const char *url, const char *project, const char *proxy, const char *ca,
			 int timeout_s, pw_pip_class want, const char *part)
{
	char *detail = NULL;
	pw_pip_class c = pw_pipclass_probe_index(url, project, proxy, ca, timeout_s, &detail);
	if (c != want)
		fail_msg("probe of %s for %s: expected %s, got %s (%s)", url, project, pw_pipclass_name(want),
			 pw_pipclass_name(c), detail ? detail : "no detail");
	assert_non_null(detail);
	assert_has(detail, part);
	free(detail);
}

/* ---------------------------------------------------------------- names */

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(pw_pipclass_name(PW_PIP_OK), "ok");
	assert_string_equal(pw_pipclass_name(PW_PIP_NETWORK), "network");
	assert_string_equal(pw_pipclass_name(PW_PIP_NOT_NETWORK), "not-network");
	assert_string_equal(pw_pipclass_name(PW_PIP_AMBIGUOUS), "ambiguous");
	assert_string_equal(pw_pipclass_name((pw_pip_class)42), "ambiguous");
}

/* ---------------------------------------------------------------- captured pip output */

typedef struct expectation {
	const char *name;   /* a case (any pip version), or one exact file, e.g. "18.1-status500" */
	pw_pip_class cls;
	const char *reason; /* part of the reason given */
} expectation;

/* Exact files first: they override their case. */
static const expectation expected[] = {
	/* pip 18 still says "too many 500 error responses" where later pips
	 * say nothing but "from versions: none". */
	{ "18.1-status500", PW_PIP_NETWORK, "5xx" },
	{ "18.1-status503", PW_PIP_NETWORK, "5xx" },

	{ "ok", PW_PIP_OK, "status 0" },
	{ "ok-nocache", PW_PIP_OK, "status 0" },
	{ "proxy-ok", PW_PIP_OK, "status 0" },
	{ "refused", PW_PIP_NETWORK, "connection refused" },
	{ "refused-nocache", PW_PIP_NETWORK, "connection refused" },
	{ "reset", PW_PIP_NETWORK, "reset" },
	{ "stall", PW_PIP_NETWORK, "ReadTimeoutError" },
	{ "dns", PW_PIP_NETWORK, "DNS" },
	{ "dns-https", PW_PIP_NETWORK, "DNS" },
	{ "tls-eof", PW_PIP_NETWORK, "EOF" },
	{ "proxy-refused", PW_PIP_NETWORK, "ProxyError" },
	{ "proxy-403", PW_PIP_NETWORK, "ProxyError" },
	{ "files500", PW_PIP_NETWORK, "5xx" },
	{ "files502", PW_PIP_NETWORK, "5xx" },
	/* the wheel's body cut at half its Content-Length (indexd --mode cutfiles) */
	{ "hashcut", PW_PIP_NETWORK, "sha256 differed" },
	{ "status500", PW_PIP_AMBIGUOUS, "listed no versions" },
	{ "status503", PW_PIP_AMBIGUOUS, "listed no versions" },
	{ "empty", PW_PIP_AMBIGUOUS, "listed no versions" },
	{ "unknown", PW_PIP_AMBIGUOUS, "listed no versions" },
	{ "nomatch", PW_PIP_NOT_NETWORK, "listed versions" },
	{ "conflict", PW_PIP_NOT_NETWORK, "conflict" },
	{ "invalid", PW_PIP_NOT_NETWORK, "Invalid requirement" },
	{ "insecure-host", PW_PIP_NOT_NETWORK, "trusted-host" },
	{ "tls-untrusted", PW_PIP_NOT_NETWORK, "CERTIFICATE_VERIFY_FAILED" },
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

/* "23.0.1-tls-eof.txt": stem "23.0.1-tls-eof", case "tls-eof". */
static const expectation *expectation_for(const char *stem, size_t *index)
{
	const char *dash = strchr(stem, '-');
	for (size_t i = 0; i < N_EXPECTED; i++) {
		if (strcmp(expected[i].name, stem) == 0 || (dash && strcmp(expected[i].name, dash + 1) == 0)) {
			*index = i;
			return &expected[i];
		}
	}
	return NULL;
}

/* Classify one file; false (with a message printed) when it disagrees. */
static bool check_capture(const char *dir, const char *file, bool seen[N_EXPECTED])
{
	char path[PATH_MAX], stem[NAME_MAX + 1];
	tl_textf(path, sizeof path, "%s/%s", dir, file);
	tl_textf(stem, sizeof stem, "%.*s", (int)(strlen(file) - 4), file);
	size_t idx = 0;
	const expectation *want = expectation_for(stem, &idx);
	char *text = slurp(path);
	int exit_code = -1;
	bool ok = false;
	if (!want)
		print_message("# %s: no expected class for this case: add it to the table\n", file);
	else if (!text || sscanf(text, "# exit=%d", &exit_code) != 1)
		print_message("# %s: does not start with \"# exit=N\"\n", file);
	else {
		const char *out = strchr(text, '\n');
		const char *reason = NULL;
		pw_pip_class got = pw_pipclass_classify(exit_code, out ? out + 1 : "", &reason);
		ok = got == want->cls && reason && strstr(reason, want->reason);
		if (!ok)
			print_message("# %s: expected %s (\"%s\"), got %s (\"%s\")\n", file,
				      pw_pipclass_name(want->cls), want->reason, pw_pipclass_name(got),
				      reason ? reason : "(no reason)");
		seen[idx] = true;
	}
	free(text);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.txt names in dir, sorted; *n of them. */
static char **list_captures(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	*n = 0;
	if (!d)
		return NULL;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".txt") != 0)
			continue;
		char **more = realloc(names, (*n + 1) * sizeof *names);
		assert_non_null(more);
		names = more;
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof *names, cmp_str);
	return names;
}

/* Distinct pip versions among the files (the part before the first '-'). */
static size_t count_versions(char **names, size_t n)
{
	size_t versions = 0;
	for (size_t i = 0; i < n; i++) {
		size_t v = strcspn(names[i], "-");
		if (i == 0 || strncmp(names[i], names[i - 1], v) != 0 || names[i - 1][v] != '-')
			versions++;
	}
	return versions;
}

static void test_captured_pip_output(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	tl_fixture_path(dir, sizeof dir, "pip-output");
	size_t n = 0, bad = 0;
	char **names = list_captures(dir, &n);
	bool seen[N_EXPECTED] = { false };
	if (n == 0)
		fail_msg("no captured pip output in %s (run capture.sh there)", dir);
	for (size_t i = 0; i < n; i++) {
		if (!check_capture(dir, names[i], seen))
			bad++;
	}
	size_t versions = count_versions(names, n);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	print_message("# %zu captured outputs from %zu pip versions classified\n", n, versions);
	if (bad)
		fail_msg("%zu of %zu captured outputs were misclassified (listed above)", bad, n);
	assert_true(versions >= MIN_PIP_VERSIONS);
	/* Every case in the table has evidence behind it. */
	for (size_t i = 0; i < N_EXPECTED; i++)
		if (!seen[i])
			fail_msg("no captured file for \"%s\"", expected[i].name);
}

/* ---------------------------------------------------------------- synthetic output */

static void expect_class(int exit_code, const char *out, pw_pip_class want, const char *reason_part)
{
	const char *reason = NULL;
	pw_pip_class got = pw_pipclass_classify(exit_code, out, &reason);
	if (got != want)
		fail_msg("expected %s, got %s (\"%s\") for:\n%s", pw_pipclass_name(want), pw_pipclass_name(got),
			 reason ? reason : "", out ? out : "(null)");
	assert_non_null(reason);
	if (reason_part)
		assert_has(reason, reason_part);
}

#define RETRYING "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) " \
		 "after connection broken by "
#define NOMATCH_LISTED "ERROR: Could not find a version that satisfies the requirement x==9 " \
		       "(from versions: 1.0, 1.1)\nERROR: No matching distribution found for x==9\n"
#define NOMATCH_NONE "ERROR: Could not find a version that satisfies the requirement x " \
		     "(from versions: none)\nERROR: No matching distribution found for x\n"

static void test_network_beats_no_match(void **state)
{
	(void)state;
	/* Versions listed would make it a definite no-match, but a reset came first. */
	expect_class(1,
		     RETRYING "'ProtocolError('Connection aborted.', ConnectionResetError(104, "
			      "'Connection reset by peer'))': /simple/x/\n" NOMATCH_LISTED,
		     PW_PIP_NETWORK, "reset");
	expect_class(1, RETRYING "'NewConnectionError('<x>: Failed to establish a new connection: "
				 "[Errno -3] Temporary failure in name resolution')'\n" NOMATCH_NONE,
		     PW_PIP_NETWORK, "DNS");
	/* The banner alone, its cause unnamed, is still network evidence. */
	expect_class(1, RETRYING "'SomethingNew()': /simple/x/\n" NOMATCH_LISTED, PW_PIP_NETWORK, "Retrying");
	expect_class(1, "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool("
			"host='h', port=443): Max retries exceeded with url: /x.whl (Caused by "
			"ConnectTimeoutError(<x>, 'Connection to h timed out. (connect timeout=3)'))\n",
		     PW_PIP_NETWORK, "ConnectTimeoutError");
	/* The proxy is named even though its failure was a refused connection. */
	expect_class(1, RETRYING "'ProxyError('Cannot connect to proxy.', NewConnectionError('<x>: "
				 "Failed to establish a new connection: [Errno 111] Connection refused'))'\n",
		     PW_PIP_NETWORK, "ProxyError");
}

static void test_certificate_beats_retrying(void **state)
{
	(void)state;
	expect_class(1,
		     RETRYING "'SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] "
			      "certificate verify failed: self-signed certificate (_ssl.c:1006)'))': /simple/x/\n"
			      "Could not fetch URL https://h/simple/x/: There was a problem confirming the ssl "
			      "certificate: ... - skipping\n" NOMATCH_NONE,
		     PW_PIP_NOT_NETWORK, "CERTIFICATE_VERIFY_FAILED");
	/* Spelled the way older OpenSSL builds and Pythons do. */
	expect_class(1, RETRYING "'SSLError(SSLError(1, '[SSL] certificate verify failed (_ssl.c:852)'),)'\n",
		     PW_PIP_NOT_NETWORK, "certificate");
	expect_class(1, "CertificateError: hostname 'a' doesn't match 'b'\n", PW_PIP_NOT_NETWORK, "host");
}

static void test_bare_sslerror(void **state)
{
	(void)state;
	const char *reason = NULL;
	/* "SSLError" and pip's "problem confirming the ssl certificate" are
	 * said for every TLS failure, an EOF included: neither is a verdict. */
	const char *bare = "Could not fetch URL https://h/simple/x/: There was a problem confirming the ssl "
			   "certificate: HTTPSConnectionPool(host='h', port=443): (Caused by SSLError("
			   "SSLError(1, '[SSL: WRONG_VERSION_NUMBER] wrong version number'))) - skipping\n" NOMATCH_NONE;
	pw_pip_class c = pw_pipclass_classify(1, bare, &reason);
	assert_int_not_equal(c, PW_PIP_NOT_NETWORK);
	assert_class(c, PW_PIP_AMBIGUOUS, "bare SSLError");
	expect_class(1, "SSLError\n", PW_PIP_AMBIGUOUS, NULL);
	/* With an EOF marker it is the handshake that failed: network. */
	expect_class(1, "Caused by SSLError(SSLEOFError(8, 'EOF occurred in violation of protocol'))\n",
		     PW_PIP_NETWORK, "EOF");
}

static void test_exit_status(void **state)
{
	(void)state;
	/* Exit 0 wins over anything pip printed on the way. */
	expect_class(0, RETRYING "'NewConnectionError(... Connection refused)'\nSuccessfully installed x-1.0\n",
		     PW_PIP_OK, "0");
	expect_class(0, "", PW_PIP_OK, NULL);
	expect_class(0, NULL, PW_PIP_OK, NULL);
	/* A failure with nothing to go on. */
	expect_class(1, "", PW_PIP_AMBIGUOUS, NULL);
	expect_class(1, NULL, PW_PIP_AMBIGUOUS, NULL);
	expect_class(2, "something pip has never said\n", PW_PIP_AMBIGUOUS, NULL);
	expect_class(-1, "", PW_PIP_AMBIGUOUS, NULL);
	assert_int_equal(pw_pipclass_classify(1, NOMATCH_LISTED, NULL), PW_PIP_NOT_NETWORK);
}

static void test_no_match_versions(void **state)
{
	(void)state;
	expect_class(1, NOMATCH_LISTED, PW_PIP_NOT_NETWORK, "listed versions");
	expect_class(1, NOMATCH_NONE, PW_PIP_AMBIGUOUS, "listed no versions");
	/* pip 18 writes an empty list rather than "none". */
	expect_class(1, "  Could not find a version that satisfies the requirement x (from versions: )\n"
			"No matching distribution found for x\n",
		     PW_PIP_AMBIGUOUS, NULL);
	/* One requirement found nothing, another found versions: the index works. */
	expect_class(1, "(from versions: none)\n(from versions: 2.0)\nNo matching distribution found for y\n",
		     PW_PIP_NOT_NETWORK, NULL);
	/* A version list without pip's conclusion is no verdict. */
	expect_class(1, "(from versions: 1.0)\n", PW_PIP_AMBIGUOUS, NULL);
}

static void test_server_errors(void **state)
{
	(void)state;
	expect_class(1, "Caused by ResponseError('too many 503 error responses')\n", PW_PIP_NETWORK, "5xx");
	expect_class(1, "  HTTP error 502 while getting http://h/x.whl\n", PW_PIP_NETWORK, "5xx");
	/* Not a 5xx: 4xx, and digits that run on. */
	expect_class(1, "  HTTP error 404 while getting http://h/x.whl\n", PW_PIP_AMBIGUOUS, NULL);
	expect_class(1, "too many 5000 things\n", PW_PIP_AMBIGUOUS, NULL);
	expect_class(1, "HTTP error 5\n", PW_PIP_AMBIGUOUS, NULL);
}

static void test_definite_failures(void **state)
{
	(void)state;
	expect_class(1, "ERROR: ResolutionImpossible: for help visit ...\n", PW_PIP_NOT_NETWORK, "conflict");
	expect_class(1, "ERROR: Invalid requirement: 'a b'\n", PW_PIP_NOT_NETWORK, "Invalid requirement");
	expect_class(1, "  error: subprocess-exited-with-error\n  Failed building wheel for x\n",
		     PW_PIP_NOT_NETWORK, "build");
	/* not definite: another source may serve the bytes the index listed */
	expect_class(1, "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n",
		     PW_PIP_NETWORK, "sha256 differed");
	expect_class(2, "Usage: pip install [options]\n\nno such option: --bogus\n", PW_PIP_NOT_NETWORK,
		     "option");
	expect_class(1, "ERROR: Could not install packages due to an OSError: [Errno 28] "
			"No space left on device\n",
		     PW_PIP_NOT_NETWORK, "disk");
	/* Markers match whatever the case. */
	expect_class(1, "error: resolutionimpossible\n", PW_PIP_NOT_NETWORK, "conflict");
}

/* ---------------------------------------------------------------- the probe */

static void test_probe_ok(void **state)
{
	(void)state;
	need_servers();
	char url[256];
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "links: 2");
	assert_logged(SV_OK, "GET /simple/pwtest-alpha/ 200\n");
	/* The name is normalised, and the index URL may lack its final slash. */
	index_url(url, sizeof url, SV_OK, "/simple");
	expect_probe(url, "PWTest_Beta", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "links: 1");
	assert_logged(SV_OK, "GET /simple/pwtest-beta/ 200\n");
	assert_not_logged(SV_OK, "PWTest");
	/* A project the index does not have. */
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-gamma", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "HTTP 404");
	/* A page that answers but lists nothing. */
	index_url(url, sizeof url, SV_OK, "/status/200/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "no files");
}

static void test_probe_faults(void **state)
{
	(void)state;
	need_servers();
	char url[256];
	index_url(url, sizeof url, SV_500, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NETWORK, "HTTP 500");
	index_url(url, sizeof url, SV_OK, "/status/503/simple/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NETWORK, "HTTP 503");
	index_url(url, sizeof url, SV_EMPTY, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "HTTP 404");
	assert_logged(SV_EMPTY, "GET /simple/pwtest-alpha/ 404\n");
	tl_textf(url, sizeof url, "http://127.0.0.1:%d/simple/", tl_dead_port());
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NETWORK, "cannot reach");
}

static void test_probe_stall(void **state)
{
	(void)state;
	need_servers();
	char url[256];
	index_url(url, sizeof url, SV_STALL, "/simple/");
	long long t0 = tl_now_ms();
	expect_probe(url, "pwtest-alpha", NULL, NULL, 2, PW_PIP_NETWORK, "cannot reach");
	long long took = tl_now_ms() - t0;
	if (took < 1500 || took > 6000)
		fail_msg("a 2 s probe of a stalled index took %lld ms", took);
	assert_logged(SV_STALL, "GET /simple/pwtest-alpha/ STALL\n");
}

static void test_probe_tls(void **state)
{
	(void)state;
	need_servers();
	char url[256];
	index_url(url, sizeof url, SV_TLS, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, fx.t.ca, 5, PW_PIP_NOT_NETWORK, "links: 2");
	/* Verification is never off: a CA we do not trust is a certificate
	 * failure, which another route would not cure. */
	expect_probe(url, "pwtest-alpha", NULL, fx.t.other_ca, 5, PW_PIP_NOT_NETWORK, "not trusted");
	/* A server that hangs up during the handshake is the network's fault. */
	index_url(url, sizeof url, SV_DROP, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, fx.t.ca, 5, PW_PIP_NETWORK, "cannot reach");
	assert_logged(SV_DROP, "DROP ");
}

static void test_probe_proxy(void **state)
{
	(void)state;
	need_servers();
	char url[256], proxy[64], line[320];
	tl_textf(proxy, sizeof proxy, "http://127.0.0.1:%d", fx.sv[SV_PROXY].srv.port);
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-alpha", proxy, NULL, 5, PW_PIP_NOT_NETWORK, "links: 2");
	tl_textf(line, sizeof line, "GET %spwtest-alpha/ 200\n", url);
	assert_logged(SV_PROXY, line);

	index_url(url, sizeof url, SV_TLS, "/simple/");
	expect_probe(url, "pwtest-beta", proxy, fx.t.ca, 5, PW_PIP_NOT_NETWORK, "links: 1");
	tl_textf(line, sizeof line, "CONNECT localhost:%d 200\n", fx.sv[SV_TLS].srv.port);
	assert_logged(SV_PROXY, line);

	/* A proxy that refuses the tunnel (proxyd only reaches loopback). */
	expect_probe("https://nonexistent.invalid/simple/", "pwtest-alpha", proxy, fx.t.ca, 5, PW_PIP_NETWORK,
		     "HTTP 403");
	assert_logged(SV_PROXY, "CONNECT nonexistent.invalid:443 403\n");

	/* A proxy that is not there. */
	tl_textf(proxy, sizeof proxy, "http://127.0.0.1:%d", tl_dead_port());
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-alpha", proxy, NULL, 5, PW_PIP_NETWORK, "cannot reach");
}

/* proxy NULL means none: the proxy variables are not read. */
static void test_probe_ignores_env_proxy(void **state)
{
	(void)state;
	need_servers();
	char url[256], dead[64];
	tl_textf(dead, sizeof dead, "http://127.0.0.1:%d", tl_dead_port());
	setenv("http_proxy", dead, 1);
	setenv("https_proxy", dead, 1);
	setenv("all_proxy", dead, 1);
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "links: 2");
	index_url(url, sizeof url, SV_TLS, "/simple/");
	expect_probe(url, "pwtest-alpha", NULL, fx.t.ca, 5, PW_PIP_NOT_NETWORK, "links: 2");
	/* and no_proxy does not exempt a host from the proxy we were given */
	char proxy[64];
	tl_textf(proxy, sizeof proxy, "http://127.0.0.1:%d", fx.sv[SV_PROXY].srv.port);
	setenv("no_proxy", "*", 1);
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "pwtest-beta", proxy, NULL, 5, PW_PIP_NOT_NETWORK, "links: 1");
	char line[320];
	tl_textf(line, sizeof line, "GET %spwtest-beta/ 200\n", url);
	assert_logged(SV_PROXY, line);
	tl_unset_proxy_env();
}

static void test_probe_arguments(void **state)
{
	(void)state;
	need_servers();
	char url[256], cred[256];
	/* Not a project name: refused before any request. */
	index_url(url, sizeof url, SV_OK, "/simple/");
	expect_probe(url, "../files/x", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "not a valid project name");
	expect_probe(url, "a b", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "not a valid project name");
	expect_probe(url, "", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "not a valid project name");
	assert_not_logged(SV_OK, "/files/x");
	expect_probe(NULL, "x", NULL, NULL, 5, PW_PIP_AMBIGUOUS, "index");
	expect_probe(url, NULL, NULL, NULL, 5, PW_PIP_AMBIGUOUS, "project");
	expect_probe("ftp://127.0.0.1/simple/", "x", NULL, NULL, 5, PW_PIP_NOT_NETWORK, "cannot use");
	/* Credentials in the index URL stay out of the detail. */
	tl_textf(cred, sizeof cred, "http://someone:s3cret@127.0.0.1:%d/status/503/simple/",
		 fx.sv[SV_OK].srv.port);
	char *detail = NULL;
	assert_int_equal(pw_pipclass_probe_index(cred, "pwtest-alpha", NULL, NULL, 5, &detail), PW_PIP_NETWORK);
	assert_has(detail, "HTTP 503");
	assert_null(strstr(detail, "s3cret"));
	free(detail);
	/* A NULL detail is allowed. */
	assert_int_equal(pw_pipclass_probe_index(url, "pwtest-alpha", NULL, NULL, 5, NULL), PW_PIP_NOT_NETWORK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_captured_pip_output),
		cmocka_unit_test(test_network_beats_no_match),
		cmocka_unit_test(test_certificate_beats_retrying),
		cmocka_unit_test(test_bare_sslerror),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_no_match_versions),
		cmocka_unit_test(test_server_errors),
		cmocka_unit_test(test_definite_failures),
		cmocka_unit_test(test_probe_ok),
		cmocka_unit_test(test_probe_faults),
		cmocka_unit_test(test_probe_stall),
		cmocka_unit_test(test_probe_tls),
		cmocka_unit_test(test_probe_proxy),
		cmocka_unit_test(test_probe_ignores_env_proxy),
		cmocka_unit_test(test_probe_arguments),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
