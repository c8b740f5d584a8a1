/* Unit tests: the Python pane's input (editing, the continuation rule the
 * Python prompt uses, history, layout), without a terminal. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/pane_python_input.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

static void type(pw_pyinput *in, const char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			pw_pyinput_newline(in);
		else
			pw_pyinput_insert(in, (wchar_t)(unsigned char)*s);
}

static void assert_text(const pw_pyinput *in, const char *want)
{
	char *t = pw_pyinput_text(in);
	assert_string_equal(t, want);
	free(t);
}

static bool incomplete(const char *code)
{
	pw_pyinput *in = pw_pyinput_new();
	pw_pyinput_set(in, code);
	bool r = pw_pyinput_incomplete(in);
	pw_pyinput_free(&in);
	return r;
}

static void test_continuation_rule(void **state)
{
	(void)state;
	assert_false(incomplete("x = 41"));
	assert_false(incomplete(""));
	assert_true(incomplete("def f(a):"));
	assert_true(incomplete("if x:   # why"));
	assert_true(incomplete("y = (1,"));
	assert_true(incomplete("d = {'a': [1,"));
	assert_false(incomplete("d = {'a': [1, 2]}"));
	assert_false(incomplete("s = '(:'"));	 /* brackets and ':' in a string */
	assert_false(incomplete("x = 1  # (:")); /* and in a comment */
	assert_true(incomplete("s = '''one"));	 /* an open triple-quoted string */
	assert_false(incomplete("s = '''one\ntwo'''"));
	assert_true(incomplete("x = 1 + \\"));
	assert_true(incomplete("def f():\n    return 1")); /* indented block: a blank line ends it */
	assert_false(incomplete("def f():\n    return 1\n"));
	assert_false(incomplete("x = 1\ny = 2")); /* lines added with Ctrl-J */
	assert_false(incomplete("s = 'it\\'s'"));
}

static void test_editing_and_indent(void **state)
{
	(void)state;
	pw_pyinput *in = pw_pyinput_new();
	type(in, "def f(a):\nreturn a");
	assert_text(in, "def f(a):\n    return a");
	assert_true(pw_pyinput_multiline(in));
	pw_pyinput_newline(in);	  /* keeps the block's indent */
	pw_pyinput_backspace(in); /* one indent step back */
	type(in, "#");
	assert_text(in, "def f(a):\n    return a\n#");
	pw_pyinput_backspace(in);
	assert_text(in, "def f(a):\n    return a"); /* trailing blank lines are not sent */
	pw_pyinput_clear(in);
	type(in, "abc");
	pw_pyinput_move_cursor(in, PW_PYIN_HOME);
	pw_pyinput_delete(in);
	pw_pyinput_insert(in, L'x');
	pw_pyinput_move_cursor(in, PW_PYIN_END);
	pw_pyinput_insert(in, L'!');
	assert_text(in, "xbc!");
	pw_pyinput_move_cursor(in, PW_PYIN_LEFT);
	pw_pyinput_kill_to_end(in);
	assert_text(in, "xbc");
	pw_pyinput_kill_to_start(in);
	assert_true(pw_pyinput_empty(in));
	pw_pyinput_set(in, "caf\xc3\xa9 = 1"); /* UTF-8 in and out */
	assert_text(in, "caf\xc3\xa9 = 1");
	pw_pyinput_free(&in);
}

static void test_history(void **state)
{
	(void)state;
	pw_pyinput *in = pw_pyinput_new();
	assert_false(pw_pyinput_recall(in, -1));
	const char *cells[] = {"a = 1", "b = 2", "b = 2"};
	for (int i = 0; i < 3; i++) {
		pw_pyinput_set(in, cells[i]);
		pw_pyinput_remember(in);
		pw_pyinput_clear(in);
	}
	type(in, "draft");
	assert_true(pw_pyinput_recall(in, -1));
	assert_text(in, "b = 2");
	assert_true(pw_pyinput_recall(in, -1));
	assert_text(in, "a = 1"); /* the repeat was kept once */
	assert_false(pw_pyinput_recall(in, -1));
	assert_true(pw_pyinput_recall(in, +1));
	assert_true(pw_pyinput_recall(in, +1));
	assert_text(in, "draft"); /* past the newest: what was typed */
	assert_false(pw_pyinput_recall(in, +1));
	pw_pyinput_free(&in);
}

static void test_layout(void **state)
{
	(void)state;
	pw_pyinput *in = pw_pyinput_new();
	pw_pyinput_row *rows = NULL;
	size_t crow;
	int ccol;
	assert_int_equal(pw_pyinput_layout(in, 10, &rows, &crow, &ccol), 1);
	assert_int_equal(crow, 0);
	assert_int_equal(ccol, 0);
	free(rows);
	pw_pyinput_set(in, "0123456789abc\nxy");
	size_t n = pw_pyinput_layout(in, 10, &rows, &crow, &ccol);
	assert_int_equal(n, 3); /* a line of 13 wraps at 10, then "xy" */
	assert_int_equal(rows[0].to, 10);
	assert_true(rows[0].first);
	assert_false(rows[1].first);
	assert_true(rows[2].first);
	assert_int_equal(crow, 2);
	assert_int_equal(ccol, 2);
	free(rows);
	pw_pyinput_set(in, "0123456789"); /* the cursor after a full row gets a row of its own */
	n = pw_pyinput_layout(in, 10, &rows, &crow, &ccol);
	assert_int_equal(n, 2);
	assert_int_equal(crow, 1);
	assert_int_equal(ccol, 0);
	free(rows);
	pw_pyinput_free(&in);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_continuation_rule),
	    cmocka_unit_test(test_editing_and_indent),
	    cmocka_unit_test(test_history),
	    cmocka_unit_test(test_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
