/* Unit tests: the worker reply scanner (src/core/scratch_reply.c): what it
 * takes, what it leaves to jansson, and that the result text written from
 * what it took is the text written from jansson's reading
 * (fuzz/reply_oracle.h, also the fuzz target's oracle). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "reply_oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_agrees(const char *line, bool want_scanned)
{
	bool scanned;
	const char *why = reply_disagreement(line, strlen(line), &scanned);
	if (why || scanned != want_scanned)
		fail_msg("%s: %s", why ? why : want_scanned ? "not taken" : "taken", line);
}

static void test_takes_plain_replies(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"{\"id\": 5, \"status\": \"ok\", \"value\": \"2\", \"traceback\": null}",
		"{\"id\": 1, \"status\": \"ok\", \"value\": null, \"traceback\": null}",
		"{\"id\": 99, \"status\": \"ok\", \"value\": \"'q\\\"\\\\\\\\\\\\t'\", \"traceback\": null}",
		"{\"id\": 123456789012345, \"status\": \"error\", \"value\": null, \"traceback\": "
		"\"Traceback (most recent call last):\\n  File \\\"<cell 3>\\\", line 1\\n\\t\\b\\f\\r~^~ \\\\ /\"}",
		"{\"id\": 7, \"status\": \"ok\", \"value\": \"\", \"traceback\": \"\"}",
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		assert_agrees(lines[i], true);
}

static void test_leaves_the_rest_to_jansson(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"{\"id\": 4, \"status\": \"ok\", \"value\": \"'\\u00e9'\", \"traceback\": null}", /* \u: decoded */
		"{\"id\": 4, \"status\": \"ok\", \"value\": \"a\\/b\", \"traceback\": null}",       /* jansson writes / */
		"{\"id\": 4, \"status\": \"ok\", \"value\": \"\x7f\", \"traceback\": null}",
		"{\"id\": 4, \"status\": \"ok\", \"value\": \"\xc3\xa9\", \"traceback\": null}",
		"{\"id\": 4, \"status\": \"ok\", \"value\": \"a\tb\", \"traceback\": null}",
		"{\"id\": 3, \"status\": \"interrupted\", \"value\": null, \"traceback\": \"KeyboardInterrupt\\n\"}",
		"{\"id\": 3, \"status\": \"interrupted\", \"value\": null, \"traceback\": \"K\\n\", \"started\": false}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": null, \"traceback\": null, \"started\": false}",
		"{\"status\": \"ok\", \"id\": 3, \"value\": null, \"traceback\": null}",
		"{\"id\":3,\"status\":\"ok\",\"value\":null,\"traceback\":null}",
		"{\"id\": 03, \"status\": \"ok\", \"value\": null, \"traceback\": null}",
		"{\"id\": 0, \"status\": \"ok\", \"value\": null, \"traceback\": null}",
		"{\"id\": -3, \"status\": \"ok\", \"value\": null, \"traceback\": null}",
		"{\"id\": 1234567890123456, \"status\": \"ok\", \"value\": null, \"traceback\": null}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": 2, \"traceback\": null}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": \"2\", \"traceback\": null} ",
		"{\"id\": 3, \"status\": \"ok\", \"value\": \"2, \"traceback\": null}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": \"2\\\", \"traceback\": null}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": \"\\x\", \"traceback\": null}",
		"{\"id\": 3, \"status\": \"okay\", \"value\": null, \"traceback\": null}",
		"{\"id\": 3, \"status\": \"ok\", \"value\": null, \"traceback\": nul}",
		"{\"hello\": {\"pid\": 3}}",
		"{\"sync\": 3}",
		"",
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		assert_agrees(lines[i], false);
	/* cut anywhere, a plain reply is not taken */
	static const char plain[] = "{\"id\": 5, \"status\": \"ok\", \"value\": \"2\", \"traceback\": null}";
	for (size_t n = 0; n < sizeof plain - 1; n++) {
		bool scanned;
		if (reply_disagreement(plain, n, &scanned) || scanned)
			fail_msg("cut at %zu: taken", n);
	}
}

/* Python's json.encoder.encode_basestring_ascii, as the worker writes a
 * string (lower-case hex, surrogate pairs past U+FFFF). */
static void python_ascii_string(char *out, const unsigned char *s, size_t n)
{
	char *d = out;
	*d++ = '"';
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		uint32_t cp = c;
		size_t len = 1;
		if (c >= 0xF0)
			cp = c & 7, len = 4;
		else if (c >= 0xE0)
			cp = c & 15, len = 3;
		else if (c >= 0xC0)
			cp = c & 31, len = 2;
		for (size_t k = 1; k < len; k++)
			cp = (cp << 6) | (s[i + k] & 63);
		i += len;
		const char *named = cp == '"' ? "\\\"" : cp == '\\' ? "\\\\" : cp == '\n' ? "\\n" : cp == '\r' ? "\\r"
				  : cp == '\t' ? "\\t" : cp == '\b' ? "\\b" : cp == '\f' ? "\\f" : NULL;
		if (named) {
			d += sprintf(d, "%s", named);
		} else if (cp >= 0x20 && cp < 0x7F) {
			*d++ = (char)cp;
		} else if (cp > 0xFFFF) {
			cp -= 0x10000;
			d += sprintf(d, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
		} else {
			d += sprintf(d, "\\u%04x", cp);
		}
	}
	*d++ = '"';
	*d = '\0';
}

/* Random texts as the worker writes them: taken exactly when they need no
 * \u escape, and then the same result text as jansson's reading gives. */
static void test_random_replies_agree(void **state)
{
	(void)state;
	static const char *const pieces[] = { "a", "Z", " ", "~", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "/",
					      "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "<cell 1>" };
	srand(20261205);
	int taken = 0, left = 0;
	for (int round = 0; round < 4000; round++) {
		unsigned char text[2][64];
		size_t tl[2] = { 0, 0 };
		for (int f = 0; f < 2; f++) {
			int parts = rand() % 8;
			for (int p = 0; p < parts; p++) {
				const char *piece = pieces[rand() % (int)(sizeof pieces / sizeof *pieces)];
				size_t pl = strlen(piece);
				if (tl[f] + pl >= sizeof text[f])
					break;
				memcpy(text[f] + tl[f], piece, pl);
				tl[f] += pl;
			}
		}
		char enc[2][64 * 12 + 8];
		for (int f = 0; f < 2; f++)
			python_ascii_string(enc[f], text[f], tl[f]);
		char line[2048];
		snprintf(line, sizeof line, "{\"id\": %d, \"status\": \"%s\", \"value\": %s, \"traceback\": %s}", round + 1,
			 round % 3 ? "ok" : "error", round % 5 ? enc[0] : "null", round % 7 ? "null" : enc[1]);
		bool want = !((round % 5 && strstr(enc[0], "\\u")) || (!(round % 7) && strstr(enc[1], "\\u")));
		assert_agrees(line, want);
		if (want)
			taken++;
		else
			left++;
	}
	/* both sides were exercised */
	assert_true(taken > 500);
	assert_true(left > 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_takes_plain_replies),
		cmocka_unit_test(test_leaves_the_rest_to_jansson),
		cmocka_unit_test(test_random_replies_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
