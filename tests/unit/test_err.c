/* Unit tests: error values, xalloc helpers, cancel token, clock. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cancel.h"
#include "clock.h"
#include "err.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void test_new_carries_code_message_hint(void **state)
{
	(void)state;
	pw_err *e = pw_err_new(PW_ERR_REFUSED, "pass --root DIR", "path %s is outside", "/etc");
	assert_int_equal(pw_err_code(e), PW_ERR_REFUSED);
	assert_string_equal(pw_err_message(e), "path /etc is outside");
	assert_string_equal(pw_err_hint(e), "pass --root DIR");
	assert_int_equal(pw_err_exit_status(e), 3);
	pw_err_free(e);
}

static void test_errno_appends_strerror(void **state)
{
	(void)state;
	pw_err *e = pw_err_errno(PW_ERR_IO, ENOENT, NULL, "opening %s", "x");
	assert_string_equal(pw_err_message(e), "opening x: No such file or directory");
	assert_null(pw_err_hint(e));
	pw_err_free(e);
}

static void test_prefix_and_hint_replacement(void **state)
{
	(void)state;
	pw_err *e = pw_err_new(PW_ERR_CORRUPT, "old", "bad header");
	assert_ptr_equal(pw_err_prefix(e, "reading %s", "cat.db"), e);
	assert_string_equal(pw_err_message(e), "reading cat.db: bad header");
	pw_err_set_hint(e, "move it aside");
	assert_string_equal(pw_err_hint(e), "move it aside");
	pw_err_set_hint(e, NULL);
	assert_null(pw_err_hint(e));
	assert_null(pw_err_prefix(NULL, "x"));
	pw_err_free(e);
}

static void test_exit_status_mapping(void **state)
{
	(void)state;
	static const struct { pw_errcode code; int status; const char *name; } table[] = {
		{ PW_ERR_FAILED, 1, "failed" }, { PW_ERR_USAGE, 2, "usage" },
		{ PW_ERR_REFUSED, 3, "refused" }, { PW_ERR_TIMEOUT, 4, "timeout" },
		{ PW_ERR_CANCELLED, 130, "cancelled" }, { PW_ERR_CORRUPT, 1, "corrupt" },
		{ PW_ERR_IO, 1, "io" }, { PW_ERR_NETWORK, 1, "network" },
		{ PW_ERR_NOTFOUND, 1, "not-found" },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		pw_err *e = pw_err_new(table[i].code, NULL, "x");
		assert_int_equal(pw_err_exit_status(e), table[i].status);
		assert_string_equal(pw_err_code_name(table[i].code), table[i].name);
		pw_err_free(e);
	}
	assert_int_equal(pw_err_exit_status(NULL), 0);
}

static void test_clear_nulls_pointer(void **state)
{
	(void)state;
	pw_err *e = pw_err_new(PW_ERR_FAILED, NULL, "x");
	pw_err_clear(&e);
	assert_null(e);
	pw_err_clear(&e);
}

static void test_xalloc_helpers(void **state)
{
	(void)state;
	char *s = xasprintf("%s-%d", "a", 42);
	assert_string_equal(s, "a-42");
	free(s);
	s = xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
	s = xstrndup("ab", 10);
	assert_string_equal(s, "ab");
	free(s);
}

static void test_cancel_token(void **state)
{
	(void)state;
	pw_cancel *c = pw_cancel_new();
	assert_false(pw_cancel_raised(c));
	pw_cancel_raise(c);
	assert_true(pw_cancel_raised(c));
	pw_cancel_reset(c);
	assert_false(pw_cancel_raised(c));
	assert_false(pw_cancel_raised(NULL));
	pw_cancel_free(&c);
	assert_null(c);
}

static void test_clock(void **state)
{
	(void)state;
	char buf[40];
	pw_clock_iso_now(buf, sizeof buf);
	assert_int_equal(strlen(buf), 24);
	assert_int_equal(buf[10], 'T');
	assert_int_equal(buf[23], 'Z');
	assert_int_equal(pw_clock_deadline_after(0), 0);
	int64_t now = pw_clock_mono_ms();
	int64_t d = pw_clock_deadline_after(2.5);
	assert_true(d >= now + 2500 && d < now + 3500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_carries_code_message_hint),
		cmocka_unit_test(test_errno_appends_strerror),
		cmocka_unit_test(test_prefix_and_hint_replacement),
		cmocka_unit_test(test_exit_status_mapping),
		cmocka_unit_test(test_clear_nulls_pointer),
		cmocka_unit_test(test_xalloc_helpers),
		cmocka_unit_test(test_cancel_token),
		cmocka_unit_test(test_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
