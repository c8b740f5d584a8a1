/* The hot path's request scanner: see fastcall.h. Every "no" below is a
 * line jansson reads instead (or refuses, with its own message). */
#include "config.h"

#include "mcp/fastcall.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

typedef struct scan {
	const unsigned char *p, *end;
	char *out;  /* next free byte of the store */
} scan;

static void skip_ws(scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool take(scan *s, char c)
{
	skip_ws(s);
	if (s->p < s->end && *s->p == (unsigned char)c) {
		s->p++;
		return true;
	}
	return false;
}

/* Length of the UTF-8 sequence at p (before end) when jansson accepts it
 * (shortest form, no surrogates, at most U+10FFFF), else 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	uint32_t cp;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return n;
}

static int hex4(const unsigned char *p, const unsigned char *end)
{
	if (end - p < 4)
		return -1;
	int v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static void put_utf8(scan *s, uint32_t cp)
{
	if (cp < 0x80) {
		*s->out++ = (char)cp;
	} else if (cp < 0x800) {
		*s->out++ = (char)(0xC0 | (cp >> 6));
		*s->out++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*s->out++ = (char)(0xE0 | (cp >> 12));
		*s->out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*s->out++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*s->out++ = (char)(0xF0 | (cp >> 18));
		*s->out++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*s->out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*s->out++ = (char)(0x80 | (cp & 0x3F));
	}
}

/* One escape after its backslash (a \u escape with its pair); false
 * where jansson refuses it, and for \u0000 (refused without
 * JSON_ALLOW_NUL). An escape never decodes to more bytes than it takes. */
static bool unescape(scan *s)
{
	if (s->p >= s->end)
		return false;
	unsigned char c = *s->p++;
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k = c ? strchr(from, c) : NULL;
	if (k) {
		*s->out++ = to[k - from];
		return true;
	}
	if (c != 'u')
		return false;
	int v = hex4(s->p, s->end);
	if (v <= 0 || (v >= 0xDC00 && v <= 0xDFFF))
		return false;
	s->p += 4;
	uint32_t cp = (uint32_t)v;
	if (v >= 0xD800 && v <= 0xDBFF) {
		if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u')
			return false;
		int lo = hex4(s->p + 2, s->end);
		if (lo < 0xDC00 || lo > 0xDFFF)
			return false;
		s->p += 6;
		cp = 0x10000 + (((uint32_t)v - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
	}
	put_utf8(s, cp);
	return true;
}

/* A string, decoded into the store (NUL-terminated); NULL where jansson
 * would refuse it (or keep a NUL in it). *n: its decoded length. */
static const char *string(scan *s, size_t *n)
{
	skip_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return NULL;
	s->p++;
	char *start = s->out;
	while (s->p < s->end) {
		const unsigned char *run = s->p;
		while (s->p < s->end && *s->p >= 0x20 && *s->p < 0x80 && *s->p != '"' && *s->p != '\\')
			s->p++;
		memcpy(s->out, run, (size_t)(s->p - run));
		s->out += s->p - run;
		if (s->p >= s->end)
			break;
		unsigned char c = *s->p;
		if (c == '"') {
			s->p++;
			*n = (size_t)(s->out - start);
			*s->out++ = '\0';
			return start;
		}
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			s->p++;
			if (!unescape(s))
				return NULL;
			continue;
		}
		size_t k = utf8_len(s->p, s->end);
		if (!k)
			return NULL;
		memcpy(s->out, s->p, k);
		s->out += k;
		s->p += k;
	}
	return NULL;
}

/* A key: compared, then dropped from the store. -1 when not one of names. */
static int key(scan *s, const char *const *names, int count)
{
	char *mark = s->out;
	size_t n;
	const char *k = string(s, &n);
	s->out = mark;
	if (!k || !take(s, ':'))
		return -1;
	for (int i = 0; i < count; i++)
		if (strcmp(k, names[i]) == 0)
			return i;
	return -1;
}

/* An integer id as jansson reads one into a json_int_t: -?(0|[1-9][0-9]*),
 * not followed by a fraction or an exponent; at most 18 digits, so it
 * always fits (longer ones go to jansson). */
static bool integer(scan *s, int64_t *v)
{
	skip_ws(s);
	bool neg = s->p < s->end && *s->p == '-';
	if (neg)
		s->p++;
	const unsigned char *digits = s->p;
	int64_t x = 0;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9' && s->p - digits < 18)
		x = x * 10 + (*s->p++ - '0');
	size_t nd = (size_t)(s->p - digits);
	if (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		return false;
	if (nd == 0 || nd > 18 || (digits[0] == '0' && nd > 1))
		return false;
	if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
		return false;
	*v = neg ? -x : x;
	return true;
}

/* The end of an object's member: true and *more for a comma, true for '}'. */
static bool next_member(scan *s, bool *more)
{
	*more = take(s, ',');
	return *more || take(s, '}');
}

static bool arguments(scan *s, pw_mcp_fastcall *f)
{
	static const char *const names[] = { "code", "venv", "session", "reset" };
	unsigned seen = 0;
	if (!take(s, '{'))
		return false;
	bool more = !take(s, '}');
	while (more) {
		int k = key(s, names, 4);
		if (k < 0 || (seen & (1u << k)))
			return false;
		seen |= 1u << k;
		size_t n;
		if (k == 0 && !(f->code = string(s, &n)))
			return false;
		if (k == 1 && !(f->venv = string(s, &n)))
			return false;
		if (k == 2 && (!(f->session = string(s, &n)) || n < 1 || n > 64)) /* the schema's bounds, in bytes as argcheck counts */
			return false;
		if (k == 3) {
			skip_ws(s);
			size_t left = (size_t)(s->end - s->p);
			if (left >= 4 && memcmp(s->p, "true", 4) == 0)
				f->reset = true, s->p += 4;
			else if (left >= 5 && memcmp(s->p, "false", 5) == 0)
				f->reset = false, s->p += 5;
			else
				return false;
		}
		if (!next_member(s, &more))
			return false;
	}
	return f->code != NULL;
}

static bool params(scan *s, pw_mcp_fastcall *f)
{
	static const char *const names[] = { "name", "arguments" };
	unsigned seen = 0;
	if (!take(s, '{'))
		return false;
	bool more = true;
	while (more) {
		int k = key(s, names, 2);
		if (k < 0 || (seen & (1u << k)))
			return false;
		seen |= 1u << k;
		size_t n;
		const char *v;
		if (k == 0 && (!(v = string(s, &n)) || strcmp(v, "python") != 0))
			return false;
		if (k == 1 && !arguments(s, f))
			return false;
		if (!next_member(s, &more))
			return false;
	}
	return seen == 3;
}

static bool message(scan *s, pw_mcp_fastcall *f)
{
	static const char *const names[] = { "jsonrpc", "id", "method", "params" };
	unsigned seen = 0;
	if (!take(s, '{'))
		return false;
	bool more = true;
	while (more) {
		int k = key(s, names, 4);
		if (k < 0 || (seen & (1u << k)))
			return false;
		seen |= 1u << k;
		size_t n;
		const char *v;
		if (k == 0 && (!(v = string(s, &n)) || strcmp(v, "2.0") != 0))
			return false;
		if (k == 1) {
			skip_ws(s);
			if (s->p < s->end && *s->p == '"') {
				f->id_is_string = true;
				if (!(f->id_text = string(s, &n)))
					return false;
			} else if (!integer(s, &f->id_int)) {
				return false;
			}
		}
		if (k == 2 && (!(v = string(s, &n)) || strcmp(v, "tools/call") != 0))
			return false;
		if (k == 3 && !params(s, f))
			return false;
		if (!next_member(s, &more))
			return false;
	}
	skip_ws(s);
	return seen == 15 && s->p == s->end;
}

bool pw_mcp_fastcall_scan(const char *line, size_t len, pw_mcp_fastcall *f)
{
	memset(f, 0, sizeof *f);
	/* decoded text is never longer than its quoted source, and each
	 * string's NUL takes the place of a quote */
	f->store = xmalloc(len + 1);
	scan s = { .p = (const unsigned char *)line, .end = (const unsigned char *)line + len, .out = f->store };
	if (message(&s, f))
		return true;
	pw_mcp_fastcall_clear(f);
	return false;
}

void pw_mcp_fastcall_clear(pw_mcp_fastcall *f)
{
	free(f->store);
	memset(f, 0, sizeof *f);
}
