/*
 * Download tests against loopback servers: tests/fixtures/httpsd.py over TLS
 * (certificates from tests/fixtures/make_ca.sh) and a second one in plain
 * HTTP that also plays a proxy asking for credentials. The servers are our
 * own children, started without a shell and stopped by PID.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fetch.h"
#include "digest.h"
#include "cancel.h"
#include "clock.h"
#include "err.h"
#include "testlib.h"

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PAYLOAD_SIZE (2 * 1024 * 1024 + 4321)
#define CUT_AT 500000
#define STALL_SENT 1024 /* what /stall/ sends before going quiet */
/* A cap, not a budget: the wait ends once the port is written or the server
 * exited (tl_wait_port), so only a hung start-up runs into it. */
#define PORT_WAIT_MS 120000

static struct fixture {
	tl_tls_dir t;        /* the temporary directory, its CA and certificate */
	char root[PATH_MAX]; /* what the servers serve */
	char dl[PATH_MAX];   /* download destinations */
	char payload[PATH_MAX];
	char sha[PW_SHA256_HEX_LEN + 1];
	unsigned char *bytes; /* the payload, PAYLOAD_SIZE of them */
	tl_server https, plain;
	bool no_python;
} fx;

/* ---------------------------------------------------------------- helpers */

static long long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = fwrite(data, 1, len, f);
	return fclose(f) == 0 && n == len ? 0 : -1;
}

static char *read_text(const char *path, long from)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long end = ftell(f);
	assert_true(end >= from);
	char *s = malloc((size_t)(end - from) + 1);
	assert_non_null(s);
	assert_int_equal(fseek(f, from, SEEK_SET), 0);
	size_t n = fread(s, 1, (size_t)(end - from), f);
	s[n] = '\0';
	fclose(f);
	return s;
}

static long log_mark(void)
{
	long long n = file_size(fx.https.log);
	return n < 0 ? 0 : (long)n;
}

/* The server's log lines since mark must contain line. */
static void assert_logged(long mark, const char *line)
{
	char *s = read_text(fx.https.log, mark);
	if (!strstr(s, line))
		fail_msg("server log lacks \"%s\":\n%s", line, s);
	free(s);
}

static void url_for(char *buf, size_t n, const char *path)
{
	tl_textf(buf, n, "https://localhost:%d/%s", fx.https.port, path);
}

static void dest_for(char *buf, size_t n, const char *name)
{
	tl_textf(buf, n, "%s/%s", fx.dl, name);
}

static void part_for(char *buf, size_t n, const char *dest)
{
	tl_textf(buf, n, "%s.part", dest);
}

static pw_fetch_opts opts_for(const char *url, const char *dest)
{
	pw_fetch_opts o = {
		.url = url,
		.dest = dest,
		.ca_file = fx.t.ca,
		.connect_timeout_s = 5,
		.low_speed_time_s = 10,
	};
	return o;
}

static void need_server(void)
{
	if (fx.no_python)
		skip();
}

static void assert_err(const pw_err *e, pw_errcode code)
{
	if (!e)
		fail_msg("expected a %s error, got success", pw_err_code_name(code));
	if (pw_err_code(e) != code)
		fail_msg("expected a %s error, got %s: %s", pw_err_code_name(code),
			 pw_err_code_name(pw_err_code(e)), pw_err_message(e));
}

static void assert_msg_has(const pw_err *e, const char *s)
{
	if (!strstr(pw_err_message(e), s))
		fail_msg("message lacks \"%s\": %s", s, pw_err_message(e));
}

static void assert_hint_has(const pw_err *e, const char *s)
{
	const char *h = pw_err_hint(e);
	if (!h || !strstr(h, s))
		fail_msg("hint lacks \"%s\": %s (message: %s)", s, h ? h : "(none)", pw_err_message(e));
}

static void assert_payload_at(const char *path)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	int64_t size = 0;
	assert_ok(pw_sha256_file(path, hex, &size));
	assert_int_equal(size, PAYLOAD_SIZE);
	assert_string_equal(hex, fx.sha);
}

static void assert_gone(const char *dest)
{
	char part[PATH_MAX];
	part_for(part, sizeof part, dest);
	assert_int_equal(file_size(dest), -1);
	assert_int_equal(file_size(part), -1);
}

typedef struct progress_log {
	int events;
	int64_t last_done;
	int64_t last_total;
	bool saw_full_total;
	bool went_back;
	bool wrong_stage;
	pw_cancel *cancel; /* raised at the first event when set */
} progress_log;

static void on_progress(void *ud, const pw_progress *p)
{
	progress_log *l = ud;
	l->wrong_stage |= strcmp(p->stage, "download") != 0;
	l->went_back |= p->done < l->last_done;
	l->saw_full_total |= p->total == PAYLOAD_SIZE;
	l->last_done = p->done;
	l->last_total = p->total;
	l->events++;
	if (l->cancel)
		pw_cancel_raise(l->cancel);
}

/* ---------------------------------------------------------------- fixture */

/* Random-looking bytes from a fixed seed, so a failure can be replayed. */
static int make_payload(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	fx.bytes = malloc(PAYLOAD_SIZE);
	if (!fx.bytes)
		return -1;
	for (size_t i = 0; i < PAYLOAD_SIZE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fx.bytes[i] = (unsigned char)(x >> 24);
	}
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, fx.bytes, PAYLOAD_SIZE);
	pw_sha256_final_hex(h, fx.sha);
	pw_sha256_free(&h);
	return write_file(fx.payload, fx.bytes, PAYLOAD_SIZE);
}

/* Start a server (its port is waited for in group_setup). */
static int start_server(tl_server *s, bool plain, const char *name)
{
	char script[PATH_MAX];
	tl_fixture_path(script, sizeof script, "httpsd.py");
	tl_server_files(s, fx.t.dir, name);
	/* For TLS the NULL in place of "--plain" ends the list there. */
	const char *argv[] = {
		tl_python(), script, "--root", fx.root, "--port-file", s->portfile, "--log", s->log,
		"--cert", fx.t.cert, "--key", fx.t.key, "--idle-exit", "60", plain ? "--plain" : NULL, NULL,
	};
	return tl_spawn(s, argv);
}

static int group_teardown(void **state)
{
	(void)state;
	tl_stop(&fx.https);
	tl_stop(&fx.plain);
	if (fx.t.dir[0])
		tl_remove_tree(fx.t.dir);
	free(fx.bytes);
	fx.bytes = NULL;
	return 0;
}

static int setup_dirs(void)
{
	if (tl_tls_dir_make(&fx.t, "pw-fetch"))
		return -1;
	tl_textf(fx.root, sizeof fx.root, "%s/root", fx.t.dir);
	tl_textf(fx.dl, sizeof fx.dl, "%s/dl", fx.t.dir);
	tl_textf(fx.payload, sizeof fx.payload, "%s/payload.bin", fx.root);
	return mkdir(fx.root, 0755) == 0 && mkdir(fx.dl, 0755) == 0 ? 0 : -1;
}

static int group_setup(void **state)
{
	/* The machine's proxy settings must not send loopback requests away. */
	tl_unset_proxy_env();
	unsetenv("SSL_CERT_FILE");
	if (setup_dirs() || make_payload()) {
		fprintf(stderr, "# cannot make the temporary directory, certificates or payload\n");
		group_teardown(state);
		return -1;
	}
	tl_server *const both[] = { &fx.https, &fx.plain };
	int rc = start_server(&fx.https, false, "https") || start_server(&fx.plain, true, "plain")
			 ? -1
			 : tl_wait_ports(both, 2, PORT_WAIT_MS);
	if (rc == 1) {
		fprintf(stderr, "# no python3 to run httpsd.py: the server tests are skipped\n");
		fx.no_python = true;
		return 0;
	}
	if (rc != 0) {
		fprintf(stderr, "# httpsd.py did not start within %d ms\n", PORT_WAIT_MS);
		group_teardown(state);
	}
	return rc;
}

/* ---------------------------------------------------------------- digest */

static void assert_sha(const char *data, size_t len, const char *want)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, data, len);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	assert_null(h);
	assert_string_equal(hex, want);
}

static void test_digest_vectors(void **state)
{
	(void)state;
	assert_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	assert_sha(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	/* In pieces, including empty ones: the same as in one go. */
	char hex[PW_SHA256_HEX_LEN + 1];
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, "a", 1);
	pw_sha256_update(h, "", 0);
	pw_sha256_update(h, "bc", 2);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	char *million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	assert_sha(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
	pw_sha256_free(NULL);
}

static void test_digest_file(void **state)
{
	(void)state;
	char path[PATH_MAX], hex[PW_SHA256_HEX_LEN + 1];
	int64_t size = -1;
	tl_textf(path, sizeof path, "%s/abc.txt", fx.t.dir);
	assert_int_equal(write_file(path, "abc", 3), 0);
	assert_ok(pw_sha256_file(path, hex, &size));
	assert_int_equal(size, 3);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	/* A prefix, then the rest from memory: what resuming does. */
	pw_sha256 *h = pw_sha256_new();
	assert_ok(pw_sha256_update_file(h, path, 2));
	pw_sha256_update(h, "c", 1);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	/* More than the file holds is an error, not a hash of fewer bytes. */
	h = pw_sha256_new();
	pw_err *e = pw_sha256_update_file(h, path, 10);
	assert_err(e, PW_ERR_IO);
	pw_err_free(e);
	pw_sha256_free(&h);

	tl_textf(path, sizeof path, "%s/missing", fx.t.dir);
	e = pw_sha256_file(path, hex, NULL);
	assert_err(e, PW_ERR_IO);
	assert_msg_has(e, path);
	pw_err_free(e);

	/* Many 64 KiB reads agree with one pass over memory. */
	assert_payload_at(fx.payload);
}

/* ---------------------------------------------------------------- downloads */

static void test_download(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "plain.bin");
	part_for(part, sizeof part, dest);
	progress_log pl = { 0 };
	pw_events ev = { .progress = on_progress, .ud = &pl };
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	o.events = &ev;
	pw_fetch_result r;
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_string_equal(r.sha256, fx.sha);
	assert_int_equal(r.bytes, PAYLOAD_SIZE);
	assert_int_equal(r.resumed_from, 0);
	assert_int_equal(r.http_status, 200);
	assert_string_equal(r.effective_url, url);
	assert_payload_at(dest);
	assert_int_equal(file_size(part), -1);
	assert_logged(mark, "GET /payload.bin 200\n");

	assert_true(pl.events >= 1);
	assert_true(pl.saw_full_total);
	assert_int_equal(pl.last_done, PAYLOAD_SIZE);
	assert_int_equal(pl.last_total, PAYLOAD_SIZE);
	assert_false(pl.went_back);
	assert_false(pl.wrong_stage);
}

static void test_redirect(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, "redirect/payload.bin");
	dest_for(dest, sizeof dest, "redirected.bin");
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_null(strstr(r.effective_url, "redirect"));
	assert_non_null(strstr(r.effective_url, "/payload.bin"));
	assert_payload_at(dest);
	assert_logged(mark, "GET /redirect/payload.bin 302\nGET /payload.bin 200\n");
}

static void expect_status(const char *path, const char *status)
{
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, path);
	dest_for(dest, sizeof dest, "status.bin");
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, status);
	assert_msg_has(e, url);
	assert_non_null(pw_err_hint(e));
	pw_err_free(e);
	assert_gone(dest);
}

static void test_http_status(void **state)
{
	(void)state;
	need_server();
	expect_status("status/404/payload.bin", "HTTP 404");
	expect_status("status/500/payload.bin", "HTTP 500");
	expect_status("no-such-file", "HTTP 404");
}

/* Credentials in a URL never reach a message or a result: the userinfo
 * becomes "***", the rest stays as written. */
static void test_url_shown(void **state)
{
	(void)state;
	const char *cases[][2] = {
		{ "https://user:secret@host:8443/p/a.tar.gz?x=1#f", "https://***@host:8443/p/a.tar.gz?x=1#f" },
		{ "https://user@host/p", "https://***@host/p" },
		{ "https://a:b@c@host/x", "https://***@host/x" },
		{ "HTTP://U:P@[::1]:80/", "HTTP://***@[::1]:80/" },
		{ "--mirror=https://u:p@mirror.example/releases", "--mirror=https://***@mirror.example/releases" },
		{ "https://host/path@version", "https://host/path@version" },
		{ "https://host?q=a@b", "https://host?q=a@b" },
		{ "https://host:8443/x", "https://host:8443/x" },
		{ "/srv/archives/user@host.tar.gz", "/srv/archives/user@host.tar.gz" },
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *shown = pw_fetch_url_shown(cases[i][0]);
		assert_string_equal(shown, cases[i][1]);
		free(shown);
	}
	char *none = pw_fetch_url_shown(NULL);
	assert_string_equal(none, "");
	free(none);
}

/* A failing download from a URL with credentials: its error and its result
 * show the place, never the password, also after a redirect. */
static void test_url_credentials_hidden(void **state)
{
	(void)state;
	need_server();
	const char *paths[] = { "status/404/payload.bin", "redirect/no-such-file" };
	for (size_t i = 0; i < 2; i++) {
		char url[256], shown[256], dest[PATH_MAX];
		tl_textf(url, sizeof url, "https://pwuser:s3cret-pass@localhost:%d/%s", fx.https.port, paths[i]);
		tl_textf(shown, sizeof shown, "https://***@localhost:%d/%s", fx.https.port, paths[i]);
		dest_for(dest, sizeof dest, "creds.bin");
		pw_fetch_opts o = opts_for(url, dest);
		pw_fetch_result r;
		pw_err *e = pw_fetch(&o, &r);
		assert_err(e, PW_ERR_NETWORK);
		assert_msg_has(e, "HTTP 404");
		assert_msg_has(e, shown);
		assert_null(strstr(pw_err_message(e), "s3cret"));
		assert_null(strstr(pw_err_message(e), "pwuser"));
		assert_null(strstr(pw_err_hint(e), "s3cret"));
		assert_null(strstr(r.effective_url, "s3cret"));
		pw_err_free(e);
		assert_gone(dest);
	}
}

static void test_untrusted(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "untrusted.bin");
	pw_fetch_opts o = opts_for(url, dest);
	o.ca_file = fx.t.other_ca;
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "not trusted");
	assert_msg_has(e, fx.t.other_ca);
	assert_hint_has(e, "--cacert");
	assert_hint_has(e, "SSL_CERT_FILE");
	pw_err_free(e);
	assert_gone(dest);
}

static void test_ssl_cert_file(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "env-ca.bin");
	pw_fetch_opts o = opts_for(url, dest);
	o.ca_file = NULL;
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;

	setenv("SSL_CERT_FILE", fx.t.other_ca, 1);
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "not trusted");
	pw_err_free(e);

	setenv("SSL_CERT_FILE", fx.t.ca, 1);
	e = pw_fetch(&o, &r);
	unsetenv("SSL_CERT_FILE");
	assert_ok(e);
	assert_payload_at(dest);
}

static void test_wrong_hash(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	const char *zeros = "0000000000000000000000000000000000000000000000000000000000000000";
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "wrong.bin");
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = zeros;
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_CORRUPT);
	assert_msg_has(e, zeros);
	assert_msg_has(e, fx.sha);
	assert_msg_has(e, url);
	assert_hint_has(e, "does not match the pinned hash; nothing was installed");
	pw_err_free(e);
	assert_gone(dest);

	/* Not a SHA256 at all: refused before any request. */
	long mark = log_mark();
	o.expected_sha256 = "abc";
	e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_USAGE);
	pw_err_free(e);
	assert_int_equal(log_mark(), mark);
}

static void test_cut_then_resume(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	tl_textf(url, sizeof url, "https://localhost:%d/cut/%d/payload.bin", fx.https.port, CUT_AT);
	dest_for(dest, sizeof dest, "resumed.bin");
	part_for(part, sizeof part, dest);
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "cut after 500000 bytes");
	assert_hint_has(e, "resume");
	pw_err_free(e);
	assert_int_equal(file_size(part), CUT_AT);
	assert_int_equal(file_size(dest), -1);

	url_for(url, sizeof url, "payload.bin");
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.resumed_from, CUT_AT);
	assert_int_equal(r.restarts, 0); /* resumed, not started again */
	assert_int_equal(r.bytes, PAYLOAD_SIZE);
	assert_int_equal(r.http_status, 206);
	assert_string_equal(r.sha256, fx.sha);
	assert_logged(mark, "GET /payload.bin 206 Range: bytes=500000-\n");
	assert_payload_at(dest);
	assert_int_equal(file_size(part), -1);
}

static void test_norange_restarts(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "norange/payload.bin");
	dest_for(dest, sizeof dest, "norange.bin");
	part_for(part, sizeof part, dest);
	assert_int_equal(write_file(part, fx.bytes, 1000), 0);
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.resumed_from, 0);
	/* the .part was emptied once: runtime install's stream check counts on it */
	assert_int_equal(r.restarts, 1);
	assert_int_equal(r.http_status, 200);
	assert_logged(mark, "GET /norange/payload.bin 200 Range: bytes=1000-\n");
	assert_payload_at(dest);
	assert_int_equal(file_size(part), -1);
}

/* 416: a .part that is already whole is kept and verified; one longer than
 * the file is thrown away and the download starts over. */
static void test_range_not_satisfiable(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX], line[128];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "complete.bin");
	part_for(part, sizeof part, dest);
	assert_int_equal(write_file(part, fx.bytes, PAYLOAD_SIZE), 0);
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.resumed_from, PAYLOAD_SIZE);
	tl_textf(line, sizeof line, "GET /payload.bin 416 Range: bytes=%d-\n", PAYLOAD_SIZE);
	assert_logged(mark, line);
	assert_payload_at(dest);

	dest_for(dest, sizeof dest, "toolong.bin");
	part_for(part, sizeof part, dest);
	FILE *f = fopen(part, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(fx.bytes, 1, PAYLOAD_SIZE, f), PAYLOAD_SIZE);
	assert_int_equal(fwrite("0123456789", 1, 10, f), 10);
	assert_int_equal(fclose(f), 0);
	o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.resumed_from, 0);
	tl_textf(line, sizeof line, "GET /payload.bin 416 Range: bytes=%d-\nGET /payload.bin 200\n",
		 PAYLOAD_SIZE + 10);
	assert_logged(mark, line);
	assert_payload_at(dest);
}

static void test_stall(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "stall/payload.bin");
	dest_for(dest, sizeof dest, "stall.bin");
	part_for(part, sizeof part, dest);
	pw_fetch_opts o = opts_for(url, dest);
	o.low_speed_time_s = 2;
	pw_fetch_result r;
	int64_t t0 = pw_clock_mono_ms();
	pw_err *e = pw_fetch(&o, &r);
	int64_t took = pw_clock_mono_ms() - t0;
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "stalled (no data for 2 s)");
	pw_err_free(e);
	assert_true(took >= 1900);
	assert_true(took < 6000);
	assert_int_equal(file_size(part), STALL_SENT); /* kept for a resume */
	unlink(part);
}

static void test_deadline(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "stall/payload.bin");
	dest_for(dest, sizeof dest, "deadline.bin");
	part_for(part, sizeof part, dest);
	pw_fetch_opts o = opts_for(url, dest);
	o.deadline_ms = pw_clock_deadline_after(1.0);
	pw_fetch_result r;
	int64_t t0 = pw_clock_mono_ms();
	pw_err *e = pw_fetch(&o, &r);
	int64_t took = pw_clock_mono_ms() - t0;
	assert_err(e, PW_ERR_TIMEOUT);
	assert_hint_has(e, "kept");
	pw_err_free(e);
	assert_true(took < 4000);
	assert_int_equal(file_size(part), STALL_SENT);
	unlink(part);

	/* A deadline already past: no request at all. */
	long mark = log_mark();
	o.deadline_ms = pw_clock_mono_ms() - 1;
	e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_TIMEOUT);
	pw_err_free(e);
	assert_int_equal(log_mark(), mark);
}

static void test_cancel(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "cancel.bin");
	part_for(part, sizeof part, dest);
	pw_cancel *c = pw_cancel_new();
	progress_log pl = { .cancel = c };
	pw_events ev = { .progress = on_progress, .ud = &pl };
	pw_fetch_opts o = opts_for(url, dest);
	o.cancel = c;
	o.events = &ev;
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_CANCELLED);
	assert_hint_has(e, "resume");
	pw_err_free(e);
	assert_int_equal(pl.events, 1);
	long long kept = file_size(part);
	assert_true(kept > 0 && kept < PAYLOAD_SIZE);
	assert_int_equal(file_size(dest), -1);

	/* Raised before the start: nothing is asked of the server. */
	long mark = log_mark();
	e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_CANCELLED);
	pw_err_free(e);
	assert_int_equal(log_mark(), mark);
	assert_int_equal(file_size(part), kept);
	unlink(part);
	pw_cancel_free(&c);
}

static void test_refused(void **state)
{
	(void)state;
	char url[256], dest[PATH_MAX], where[64];
	int port = tl_dead_port();
	tl_textf(url, sizeof url, "https://127.0.0.1:%d/payload.bin", port);
	tl_textf(where, sizeof where, "127.0.0.1:%d", port);
	dest_for(dest, sizeof dest, "refused.bin");
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "connection refused by");
	assert_msg_has(e, where);
	assert_non_null(pw_err_hint(e));
	pw_err_free(e);
	assert_gone(dest);
}

static void test_unresolvable(void **state)
{
	(void)state;
	char dest[PATH_MAX];
	dest_for(dest, sizeof dest, "nohost.bin");
	pw_fetch_opts o = opts_for("https://nonexistent.invalid/x", dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "nonexistent.invalid");
	assert_hint_has(e, "--mirror");
	pw_err_free(e);
	assert_gone(dest);
}

static void test_cached(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "cached.bin");
	assert_int_equal(write_file(dest, fx.bytes, PAYLOAD_SIZE), 0);
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	long mark = log_mark();
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(log_mark(), mark);
	assert_int_equal(r.bytes, PAYLOAD_SIZE);
	assert_int_equal(r.resumed_from, PAYLOAD_SIZE);
	assert_string_equal(r.sha256, fx.sha);

	/* A damaged cached copy is downloaded again and replaced. */
	assert_int_equal(write_file(dest, "junk", 4), 0);
	assert_ok(pw_fetch(&o, &r));
	assert_logged(mark, "GET /payload.bin 200\n");
	assert_payload_at(dest);
}

static void test_probe_size(void **state)
{
	(void)state;
	need_server();
	char url[256];
	int64_t size = 0;
	long mark = log_mark();
	url_for(url, sizeof url, "payload.bin");
	assert_ok(pw_fetch_probe_size(url, fx.t.ca, 5, &size));
	assert_int_equal(size, PAYLOAD_SIZE);
	assert_logged(mark, "HEAD /payload.bin 200\n");

	url_for(url, sizeof url, "redirect/payload.bin");
	size = 0;
	assert_ok(pw_fetch_probe_size(url, fx.t.ca, 5, &size));
	assert_int_equal(size, PAYLOAD_SIZE);

	/* HEAD refused: one ranged byte tells the size. */
	mark = log_mark();
	url_for(url, sizeof url, "nohead/payload.bin");
	size = 0;
	assert_ok(pw_fetch_probe_size(url, fx.t.ca, 5, &size));
	assert_int_equal(size, PAYLOAD_SIZE);
	assert_logged(mark, "HEAD /nohead/payload.bin 405\nGET /nohead/payload.bin 206 Range: bytes=0-0\n");

	url_for(url, sizeof url, "status/404/payload.bin");
	pw_err *e = pw_fetch_probe_size(url, fx.t.ca, 5, &size);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "HTTP 404");
	pw_err_free(e);
	assert_int_equal(size, -1);

	url_for(url, sizeof url, "payload.bin");
	e = pw_fetch_probe_size(url, fx.t.other_ca, 5, &size);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "not trusted");
	pw_err_free(e);
}

static void test_proxy_refused(void **state)
{
	(void)state;
	char url[256], dest[PATH_MAX], proxy[128], where[64];
	int port = tl_dead_port();
	tl_textf(proxy, sizeof proxy, "http://user:secret@127.0.0.1:%d", port);
	tl_textf(where, sizeof where, "127.0.0.1:%d", port);
	tl_textf(url, sizeof url, "https://localhost:%d/payload.bin", fx.https.port);
	dest_for(dest, sizeof dest, "proxy.bin");
	setenv("https_proxy", proxy, 1);
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	unsetenv("https_proxy");
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "proxy");
	assert_msg_has(e, "refused");
	assert_msg_has(e, where);
	assert_msg_has(e, "$https_proxy");
	assert_null(strstr(pw_err_message(e), "secret"));
	assert_hint_has(e, "no_proxy");
	pw_err_free(e);
	assert_gone(dest);
}

static void test_proxy_wants_credentials(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], proxy[128];
	tl_textf(proxy, sizeof proxy, "http://127.0.0.1:%d", fx.plain.port);
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "proxy407.bin");
	setenv("https_proxy", proxy, 1);
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "proxy");
	assert_msg_has(e, "407");
	assert_hint_has(e, "credentials");
	pw_err_free(e);
	assert_gone(dest);

	/* no_proxy is honoured: the same download goes direct. */
	setenv("no_proxy", "localhost", 1);
	o.expected_sha256 = fx.sha;
	e = pw_fetch(&o, &r);
	unsetenv("https_proxy");
	unsetenv("no_proxy");
	assert_ok(e);
	assert_payload_at(dest);
}

static void test_plain_http(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	tl_textf(url, sizeof url, "http://127.0.0.1:%d/payload.bin", fx.plain.port);
	dest_for(dest, sizeof dest, "http.bin");
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.http_status, 200);
	assert_payload_at(dest);
}

static void test_file_url(void **state)
{
	(void)state;
	char url[PATH_MAX + 16], dest[PATH_MAX], part[PATH_MAX];
	tl_textf(url, sizeof url, "file://%s", fx.payload);
	dest_for(dest, sizeof dest, "local.bin");
	part_for(part, sizeof part, dest);
	assert_int_equal(write_file(part, "stale", 5), 0); /* never resumed from */
	pw_fetch_opts o = opts_for(url, dest);
	o.expected_sha256 = fx.sha;
	pw_fetch_result r;
	assert_ok(pw_fetch(&o, &r));
	assert_int_equal(r.http_status, 0);
	assert_int_equal(r.resumed_from, 0);
	assert_payload_at(dest);
}

static void test_redirect_to_file_refused(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX];
	url_for(url, sizeof url, "redirect-file/payload.bin");
	dest_for(dest, sizeof dest, "tofile.bin");
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_NETWORK);
	assert_msg_has(e, "protocol");
	pw_err_free(e);
	assert_gone(dest);
}

/* A write that fails (here: past RLIMIT_FSIZE) is a disk error; what was
 * written is kept for the next run. */
static void test_write_error(void **state)
{
	(void)state;
	need_server();
	char url[256], dest[PATH_MAX], part[PATH_MAX];
	url_for(url, sizeof url, "payload.bin");
	dest_for(dest, sizeof dest, "toobig.bin");
	part_for(part, sizeof part, dest);
	struct rlimit old, small;
	struct sigaction ign = { .sa_handler = SIG_IGN }, was;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 100000;
	assert_int_equal(sigaction(SIGXFSZ, &ign, &was), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	pw_fetch_opts o = opts_for(url, dest);
	pw_fetch_result r;
	pw_err *e = pw_fetch(&o, &r);
	setrlimit(RLIMIT_FSIZE, &old);
	sigaction(SIGXFSZ, &was, NULL);
	assert_err(e, PW_ERR_IO);
	assert_msg_has(e, part);
	pw_err_free(e);
	assert_int_equal(file_size(part), 100000);
	assert_int_equal(file_size(dest), -1);
	unlink(part);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	pw_fetch_result r;
	pw_fetch_opts o = { 0 };
	pw_err *e = pw_fetch(&o, &r);
	assert_err(e, PW_ERR_USAGE);
	pw_err_free(e);
	e = pw_fetch(NULL, &r);
	assert_err(e, PW_ERR_USAGE);
	pw_err_free(e);
	e = pw_fetch_probe_size(NULL, NULL, 0, NULL);
	assert_err(e, PW_ERR_USAGE);
	pw_err_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest_vectors),
		cmocka_unit_test(test_digest_file),
		cmocka_unit_test(test_url_shown),
		cmocka_unit_test(test_url_credentials_hidden),
		cmocka_unit_test(test_download),
		cmocka_unit_test(test_redirect),
		cmocka_unit_test(test_http_status),
		cmocka_unit_test(test_untrusted),
		cmocka_unit_test(test_ssl_cert_file),
		cmocka_unit_test(test_wrong_hash),
		cmocka_unit_test(test_cut_then_resume),
		cmocka_unit_test(test_norange_restarts),
		cmocka_unit_test(test_range_not_satisfiable),
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_unresolvable),
		cmocka_unit_test(test_cached),
		cmocka_unit_test(test_probe_size),
		cmocka_unit_test(test_proxy_refused),
		cmocka_unit_test(test_proxy_wants_credentials),
		cmocka_unit_test(test_plain_http),
		cmocka_unit_test(test_file_url),
		cmocka_unit_test(test_redirect_to_file_refused),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
