/* Unit tests: terminal-safe text (issue 13 item 24). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "visible.h"

#include <stdlib.h>
#include <string.h>

static void expect(const char *in, const char *out, bool lines)
{
	char *got = lines ? pw_visible_lines(in) : pw_visible(in);
	assert_string_equal(got, out);
	free(got);
}

static void test_plain_text_is_kept(void **state)
{
	(void)state;
	expect("/home/ann/proj/.venv", "/home/ann/proj/.venv", false);
	expect("naïve-Ünïcode 日本 ✓ 🐍", "naïve-Ünïcode 日本 ✓ 🐍", false);
	expect("back\\slash", "back\\slash", false);
	expect("", "", false);
	assert_null(pw_visible(NULL));
	assert_true(pw_visible_clean("ok name"));
	assert_false(pw_visible_clean("bad\x1bname"));
}

static void test_c0_esc_newline_del(void **state)
{
	(void)state;
	/* The workspace folder of the issue: a title and a screen clear. */
	expect("env\x1b]0;TITLE\x07\x1b[2J", "env\\e]0;TITLE\\x07\\e[2J", false);
	expect("a\nmodified bin/python3", "a\\nmodified bin/python3", false);
	expect("x\r\ty\x7f\x01", "x\\r\\ty\\x7f\\x01", false);
	expect("up\x1b[1A\x1b[2K", "up\\e[1A\\e[2K", false);
}

static void test_c1_and_invalid_bytes(void **state)
{
	(void)state;
	expect("a\xc2\x9b" "31mred", "a\\u009b31mred", false); /* C1 CSI as UTF-8 */
	expect("a\xc2\x85" "b\xc2\x80", "a\\u0085b\\u0080", false);
	expect("a\x9b" "31m", "a\\x9b31m", false); /* a raw 8-bit CSI byte */
	expect("\xff\xfe", "\\xff\\xfe", false);
	expect("\xc0\xaf", "\\xc0\\xaf", false); /* overlong '/' */
	expect("\xc2\xa0nbsp", "\xc2\xa0nbsp", false); /* U+00A0 is text */
	expect("abc\xe2\x80\xae" "fdp.exe", "abc\\u202efdp.exe", false); /* a bidi override */
}

static void test_lines_keep_newline_and_tab(void **state)
{
	(void)state;
	expect("Collecting x\n\tdone\n", "Collecting x\n\tdone\n", true);
	expect("line\x1b[2J\r\n", "line\\e[2J\\r\n", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_is_kept),
		cmocka_unit_test(test_c0_esc_newline_del),
		cmocka_unit_test(test_c1_and_invalid_bytes),
		cmocka_unit_test(test_lines_keep_newline_and_tab),
	};
	return cmocka_run_group_tests_name("visible", tests, NULL, NULL);
}
