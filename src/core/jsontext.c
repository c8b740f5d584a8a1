/* JSON text as jansson's compact dump writes it: see jsontext.h. */
#include "config.h"

#include "jsontext.h"

#include "xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pw_jsontext_raw(pw_jsontext *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2 + 256;
		t->buf = xrealloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* Length of the UTF-8 sequence at p when it is one jansson accepts
 * (shortest form, no surrogates, at most U+10FFFF), else 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return n;
}

bool pw_jsontext_utf8_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

void pw_jsontext_str(pw_jsontext *t, const char *s)
{
	if (!s) {
		PW_JSONTEXT_LIT(t, "null");
		return;
	}
	PW_JSONTEXT_LIT(t, "\"");
	const unsigned char *run = (const unsigned char *)s, *p = run;
	for (;;) {
		unsigned char c = *p;
		if (c >= 0x20 && c != '"' && c != '\\') {
			size_t n = c < 0x80 ? 1 : utf8_len(p);
			if (!n) {
				t->bad = true;
				return;
			}
			p += n;
			continue;
		}
		pw_jsontext_raw(t, (const char *)run, (size_t)(p - run));
		if (!c)
			break;
		char e[8];
		switch (c) {
		case '"': PW_JSONTEXT_LIT(t, "\\\""); break;
		case '\\': PW_JSONTEXT_LIT(t, "\\\\"); break;
		case '\b': PW_JSONTEXT_LIT(t, "\\b"); break;
		case '\f': PW_JSONTEXT_LIT(t, "\\f"); break;
		case '\n': PW_JSONTEXT_LIT(t, "\\n"); break;
		case '\r': PW_JSONTEXT_LIT(t, "\\r"); break;
		case '\t': PW_JSONTEXT_LIT(t, "\\t"); break;
		default:
			snprintf(e, sizeof e, "\\u%04X", (unsigned)c);
			pw_jsontext_raw(t, e, 6);
		}
		run = ++p;
	}
	PW_JSONTEXT_LIT(t, "\"");
}

void pw_jsontext_int(pw_jsontext *t, int64_t v)
{
	char d[24];
	char *e = d + sizeof d, *p = e;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	pw_jsontext_raw(t, p, (size_t)(e - p));
}

char *pw_jsontext_take(pw_jsontext *t, size_t *len)
{
	char *text = NULL;
	if (!t->bad) {
		pw_jsontext_raw(t, "", 0); /* room for the NUL, even when empty */
		t->buf[t->len] = '\0';
		text = t->buf;
		if (len)
			*len = t->len;
	} else {
		free(t->buf);
	}
	memset(t, 0, sizeof *t);
	return text;
}
