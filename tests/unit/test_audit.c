/*
 * Unit tests for the audit events: the RFC 5424 text, a real datagram
 * socket bound by the test standing in for syslog, the catalog's hook
 * (every finished operation sends one event), and a failure to send
 * counted, never failing the operation.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "audit.h"
#include "catalog.h"
#include "err.h"
#include "testlib.h"
#include "xalloc.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MUT(s) ((char *)(uintptr_t)(s))

typedef struct fixture {
	char dir[128];
	char sock[160];
	int fd;
} fixture;

static int setup(void **state)
{
	fixture *f = xcalloc(1, sizeof *f);
	if (tl_make_temp_dir(f->dir, sizeof f->dir, "pyward-audit") != 0)
		return -1;
	tl_textf(f->sock, sizeof f->sock, "%s/log.sock", f->dir);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, f->sock);
	f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	close(f->fd);
	tl_remove_tree(f->dir);
	free(f);
	pw_err_free(pw_audit_configure(NULL, NULL));
	return 0;
}

/* The next datagram on the test's socket, or "" after a second. */
static char *receive(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	static char buf[8192];
	buf[0] = '\0';
	if (poll(&p, 1, 1000) == 1) {
		ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
	}
	return buf;
}

static pw_op_rec sample_op(void)
{
	pw_op_rec op = {
		.id = 42, .kind = MUT("venv.install"), .target = MUT("/w/.venv \"x\" ]"), .outcome = MUT("failed"),
		.stop_reason = MUT("network down"), .user = MUT("alice"), .uid = 1000, .attempt_count = 3,
		.duration_ms = 1500,
	};
	return op;
}

static void test_syslog_text(void **state)
{
	(void)state;
	pw_op_rec op = sample_op();
	char *t = pw_audit_syslog_text(&op);
	assert_non_null(t);
	/* facility user, severity warning (a failed operation): <12>, version 1 */
	assert_memory_equal(t, "<12>1 ", 6);
	assert_non_null(strstr(t, " pyward "));
	assert_non_null(strstr(t, " venv.install [pyward@32473 operation_id=\"42\" kind=\"venv.install\""));
	/* '"', '\' and ']' inside a value are escaped (RFC 5424 6.3.3) */
	assert_non_null(strstr(t, "target=\"/w/.venv \\\"x\\\" \\]\""));
	assert_non_null(strstr(t, "user=\"alice\" uid=\"1000\" attempts=\"3\" duration_ms=\"1500\""));
	assert_non_null(strstr(t, "stop_reason=\"network down\"]"));
	assert_non_null(strstr(t, "\xEF\xBB\xBFpyward venv.install failed: operation 42"));
	free(t);
	op.outcome = MUT("ok");
	t = pw_audit_syslog_text(&op);
	assert_memory_equal(t, "<13>1 ", 6);
	free(t);
}

static void test_syslog_socket(void **state)
{
	fixture *f = *state;
	assert_null(pw_audit_configure("syslog", f->sock));
	uint64_t sent = pw_audit_sent();
	pw_op_rec op = sample_op();
	pw_audit_operation(&op);
	char *got = receive(f->fd);
	assert_non_null(strstr(got, "[pyward@32473 operation_id=\"42\""));
	assert_int_equal(pw_audit_sent(), sent + 1);
	assert_string_equal(pw_audit_last_target(), "syslog");
}

static void test_failure_counted(void **state)
{
	fixture *f = *state;
	char gone[200];
	tl_textf(gone, sizeof gone, "%s/nobody-listens", f->dir);
	assert_null(pw_audit_configure("syslog", gone));
	uint64_t failed = pw_audit_failures();
	pw_op_rec op = sample_op();
	pw_audit_operation(&op);
	assert_int_equal(pw_audit_failures(), failed + 1);
}

static void test_none_and_bad_setting(void **state)
{
	fixture *f = *state;
	assert_null(pw_audit_configure("none", f->sock));
	uint64_t sent = pw_audit_sent(), failed = pw_audit_failures();
	pw_op_rec op = sample_op();
	pw_audit_operation(&op);
	assert_int_equal(pw_audit_sent(), sent);
	assert_int_equal(pw_audit_failures(), failed);
	assert_string_equal(receive(f->fd), "");
	pw_err *e = pw_audit_configure("files", NULL);
	assert_non_null(e);
	assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
	pw_err_free(e);
}

/* The catalog sends the event when an operation finishes: every front end's
 * operations pass there. A logging failure leaves the operation recorded. */
static void test_catalog_hook(void **state)
{
	fixture *f = *state;
	assert_null(pw_audit_configure("syslog", f->sock));
	pw_catalog *c = NULL;
	assert_null(pw_catalog_open(tl_path(f->dir, "catalog.sqlite3"), PW_CATALOG_READ_WRITE, &c));
	pw_op_start s = { .kind = "runtime.verify", .target = "/box/runtime" };
	int64_t id = 0;
	assert_null(pw_catalog_op_begin(c, &s, &id));
	assert_string_equal(receive(f->fd), ""); /* nothing while it runs */
	assert_null(pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL));
	char *got = receive(f->fd);
	char want[64];
	tl_textf(want, sizeof want, "operation_id=\"%lld\" kind=\"runtime.verify\" outcome=\"ok\"", (long long)id);
	assert_non_null(strstr(got, want));

	char gone[200];
	tl_textf(gone, sizeof gone, "%s/nobody-listens", f->dir);
	assert_null(pw_audit_configure("syslog", gone));
	uint64_t failed = pw_audit_failures();
	assert_null(pw_catalog_op_begin(c, &s, &id));
	assert_null(pw_catalog_op_finish(c, id, PW_OUTCOME_FAILED, "broken"));
	assert_int_equal(pw_audit_failures(), failed + 1);
	pw_op_rec op;
	assert_null(pw_catalog_op_get(c, id, &op, NULL));
	assert_string_equal(op.outcome, "failed");
	pw_op_rec_clear(&op);
	pw_catalog_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syslog_text),
		cmocka_unit_test_setup_teardown(test_syslog_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none_and_bad_setting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog_hook, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
