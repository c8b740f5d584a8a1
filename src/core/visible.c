/* Terminal-safe text: every control character made visible. */
#include "config.h"

#include "visible.h"

#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes) and its code
 * point; 0 when the bytes there are not valid UTF-8. */
static size_t utf8_at(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t len = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
		   : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	uint32_t c = s[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

static bool needs_escape(uint32_t c, bool keep_lines)
{
	if (keep_lines && (c == '\n' || c == '\t'))
		return false;
	return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) ||
	       (c >= 0x2066 && c <= 0x2069);
}

/* The escape for a code point (or, with raw, for one invalid byte). */
static void escape_one(uint32_t c, bool raw, char out[8])
{
	static const char hex[] = "0123456789abcdef";
	if (!raw && c == '\n') {
		strcpy(out, "\\n");
	} else if (!raw && c == '\t') {
		strcpy(out, "\\t");
	} else if (!raw && c == '\r') {
		strcpy(out, "\\r");
	} else if (!raw && c == 0x1B) {
		strcpy(out, "\\e");
	} else if (raw || c < 0x80) {
		out[0] = '\\';
		out[1] = 'x';
		out[2] = hex[(c >> 4) & 0xF];
		out[3] = hex[c & 0xF];
		out[4] = '\0';
	} else {
		out[0] = '\\';
		out[1] = 'u';
		out[2] = hex[(c >> 12) & 0xF];
		out[3] = hex[(c >> 8) & 0xF];
		out[4] = hex[(c >> 4) & 0xF];
		out[5] = hex[c & 0xF];
		out[6] = '\0';
	}
}

static char *escape(const char *s, bool keep_lines)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *out = xmalloc(n * 6 + 1); /* at most \u0085 (6) for a 2-byte sequence, \xHH (4) for 1 byte */
	size_t k = 0;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		uint32_t c = 0;
		size_t len = utf8_at(u + i, n - i, &c);
		char esc[8];
		if (len == 0) {
			escape_one(u[i], true, esc);
			len = 1;
		} else if (needs_escape(c, keep_lines)) {
			escape_one(c, false, esc);
		} else {
			memcpy(out + k, s + i, len);
			k += len;
			i += len;
			continue;
		}
		size_t e = strlen(esc);
		memcpy(out + k, esc, e);
		k += e;
		i += len;
	}
	out[k] = '\0';
	return out;
}

char *pw_visible(const char *s)
{
	return escape(s, false);
}

char *pw_visible_lines(const char *s)
{
	return escape(s, true);
}

bool pw_visible_clean(const char *s)
{
	char *e = escape(s, false);
	bool same = !s || strcmp(e, s) == 0;
	free(e);
	return same;
}

void pw_visible_fputs(const char *s, bool keep_lines, FILE *f)
{
	char *e = escape(s, keep_lines);
	if (e)
		fputs(e, f);
	free(e);
}
