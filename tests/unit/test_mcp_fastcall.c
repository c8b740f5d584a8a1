/* Unit tests: the MCP server's fast path for python calls (src/mcp/fastcall.c):
 * what it reads, what it leaves to jansson, and that whatever it reads
 * jansson and the schema check read the same way (fuzz/fastcall_oracle.h,
 * also the fuzz target's oracle). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fastcall_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_agrees(const char *line, size_t len, bool want_scanned)
{
	bool scanned;
	const char *why = fastcall_disagreement(line, len, &scanned);
	if (why || scanned != want_scanned)
		fail_msg("%s: %.*s", why ? why : want_scanned ? "not read" : "read", (int)len, line);
}

static void test_reads_what_clients_send(void **state)
{
	(void)state;
	static const char *const lines[] = {
		/* the shape of bench/mcp_rtt.c and of the TypeScript SDK (method, params, jsonrpc, id) */
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1+1\",\"venv\":\".venv\"}}}",
		"{\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"x\"}},\"jsonrpc\":\"2.0\",\"id\":3}",
		" { \"jsonrpc\" : \"2.0\" ,\t\"id\" : -12 , \"method\" : \"tools/call\" , \"params\" : { \"arguments\" : "
		"{ \"session\" : \"s-1.x_y\" , \"code\" : \"\" , \"reset\" : true } , \"name\" : \"python\" } }\r ",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\u00e9\",\"method\":\"tools/call\",\"params\":{\"name\":\"python\","
		"\"arguments\":{\"code\":\"print(\\\"h\\u00e9\\\\n\\/\\b\\f\\r\\t\\ud83d\\ude00\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\\\")\",\"reset\":false}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"tools/call\",\"params\":{\"name\":\"pyth\\u006fn\",\"arguments\":{\"c\\u006fde\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":999999999999999999,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\",\"session\":\"0123456789012345678901234567890123456789012345678901234567890123\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"tools/call\",\"params\":{\"arguments\":{\"code\":\"1\"},\"name\":\"python\"}}",
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		assert_agrees(lines[i], strlen(lines[i]), true);

	pw_mcp_fastcall f;
	const char *l = lines[3];
	assert_true(pw_mcp_fastcall_scan(l, strlen(l), &f));
	assert_true(f.id_is_string);
	assert_string_equal(f.id_text, "a\"b\xc3\xa9");
	assert_string_equal(f.code, "print(\"h\xc3\xa9\\n/\b\f\r\t\xf0\x9f\x98\x80\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\")");
	assert_null(f.venv);
	assert_null(f.session);
	assert_false(f.reset);
	pw_mcp_fastcall_clear(&f);
	l = lines[2];
	assert_true(pw_mcp_fastcall_scan(l, strlen(l), &f));
	assert_false(f.id_is_string);
	assert_int_equal(f.id_int, -12);
	assert_string_equal(f.code, "");
	assert_string_equal(f.session, "s-1.x_y");
	assert_true(f.reset);
	pw_mcp_fastcall_clear(&f);
}

static void test_leaves_the_rest_to_jansson(void **state)
{
	(void)state;
#define CALL(args) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":" args "}}"
	static const char *const lines[] = {
		CALL("{\"code\":\"1\"},\"_meta\":{\"progressToken\":1}"),  /* _meta: progress, or the stateless revision */
		CALL("{\"code\":\"1\",\"timeout\":5}"),                     /* an argument the schema refuses */
		CALL("{\"code\":\"1\",\"code\":\"2\"}"),                    /* duplicate key: jansson's error */
		CALL("{\"code\":\"\\u0000\"}"),                             /* NUL: refused by jansson */
		CALL("{\"code\":\"\\ud800\"}"),                             /* lone surrogates */
		CALL("{\"code\":\"\\udc00\"}"),
		CALL("{\"code\":\"\\ud800\\u0041\"}"),
		CALL("{\"code\":\"\xc3\"}"),                                /* invalid UTF-8 */
		CALL("{\"code\":\"\xc0\xaf\"}"),                            /* overlong */
		CALL("{\"code\":\"\xed\xa0\x80\"}"),                        /* an encoded surrogate */
		CALL("{\"code\":\"\xf4\x90\x80\x80\"}"),                    /* past U+10FFFF */
		CALL("{\"code\":\"a\tb\"}"),                                /* a raw control character */
		CALL("{\"code\":\"\\x41\"}"),                               /* no such escape */
		CALL("{\"code\":\"\\u12\"}"),
		CALL("{\"code\":1}"),                                       /* wrong types */
		CALL("{\"code\":\"1\",\"reset\":1}"),
		CALL("{\"code\":\"1\",\"reset\":null}"),
		CALL("{\"code\":\"1\",\"venv\":null}"),
		CALL("{\"code\":\"1\",\"session\":\"\"}"),                  /* the schema's length bounds */
		CALL("{\"code\":\"1\",\"session\":\"01234567890123456789012345678901234567890123456789012345678901234\"}"),
		CALL("{\"reset\":true}"),                                   /* code missing */
		CALL("{\"code\":\"1\",}"),                                  /* trailing comma */
		CALL("[]"),
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pyenv_discover\",\"arguments\":{}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1000000000000000000,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}},\"x\":0}",
		CALL("{\"code\":\"1\"}") " x",                              /* trailing bytes */
		CALL("{\"code\":\"1\"}") "\n{}",
		"\xef\xbb\xbf" CALL("{\"code\":\"1\"}"),                      /* a byte-order mark */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}",
	};
#undef CALL
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		assert_agrees(lines[i], strlen(lines[i]), false);
	/* a NUL byte in the line itself */
	static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":\"a\0b\"}}}";
	assert_agrees(nul, sizeof nul - 1, false);
}

/* Random edits of calls the scanner reads: every edited line must get
 * the same reading from both, and many must still be read. */
static void test_random_edits_agree_with_jansson(void **state)
{
	(void)state;
	static const char *const seeds[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":"
		"\"import os\\nfor i in range(10):\\n    print(i, os.getcwd(), 'abcdefghijklmnopqrstuvwxyz')\\n_\",\"venv\":\".venv\"}}}",
		"{\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":{\"code\":"
		"\"a\\\"\\u00e9\\ud83d\\ude00 = [1, 2, 3]; print(sum(a), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ \\t 0123456789')\","
		"\"reset\":false,\"session\":\"s\"}},\"jsonrpc\":\"2.0\",\"id\":\"x\"}",
	};
	static const char alphabet[] = "{}[]:,\" \\/u0123456789abcdefABCDEF-+.eEtruefalsnl\t\r\n\x01\x7f\xc3\xa9\xed\xa0\x80\xf4\x90";
	srand(15);
	char buf[512];
	int scanned_count = 0, total = 60000;
	for (int i = 0; i < total; i++) {
		const char *seed = seeds[i % 2];
		size_t len = strlen(seed);
		memcpy(buf, seed, len);
		for (int edits = 1 + rand() % 3; edits > 0; edits--) {
			size_t at = (size_t)rand() % (len + 1);
			char c = alphabet[rand() % (int)(sizeof alphabet - 1)];
			switch (rand() % 3) {
			case 0: /* replace */
				if (at < len)
					buf[at] = c;
				break;
			case 1: /* insert */
				if (len + 1 < sizeof buf) {
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = c;
					len++;
				}
				break;
			default: /* delete */
				if (at < len) {
					memmove(buf + at, buf + at + 1, len - at - 1);
					len--;
				}
			}
		}
		bool scanned;
		const char *why = fastcall_disagreement(buf, len, &scanned);
		if (why)
			fail_msg("%s: %.*s", why, (int)len, buf);
		scanned_count += scanned;
	}
	/* edits inside the code, the id or the whitespace keep a line readable */
	assert_true(scanned_count > total / 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_what_clients_send),
		cmocka_unit_test(test_leaves_the_rest_to_jansson),
		cmocka_unit_test(test_random_edits_agree_with_jansson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
