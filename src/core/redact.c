/* Redaction of userinfo in URL-like and proxy values (see redact.h). */
#include "config.h"

#include "redact.h"
#include "xalloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#define HIDDEN "***"

typedef struct outbuf {
	char *buf;
	size_t len, cap;
} outbuf;

static void put(outbuf *o, const char *p, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		while (o->len + n + 1 > o->cap)
			o->cap = o->cap ? o->cap * 2 : 64;
		o->buf = xrealloc(o->buf, o->cap);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* Tokens end at white space, quotes, angle brackets and commas (lists of
 * mirrors are comma-separated). */
static bool delimiter(char c)
{
	return isspace((unsigned char)c) || (c && strchr("\"'<>,`", c));
}

static const char *find(const char *p, const char *e, const char *needle)
{
	size_t n = strlen(needle);
	for (; p + n <= e; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

static const char *last_at(const char *p, const char *e)
{
	const char *at = NULL;
	for (; p < e; p++)
		if (*p == '@')
			at = p;
	return at;
}

/* After "scheme://" at u: where the userinfo ends (its '@'), or NULL. The
 * authority ends at the first '/', '?' or '#'; when it holds no '@' but a
 * ':' that starts no port ("user:pa/ss@host"), the password went on past a
 * '/', '?' or '#' and ends at the next '@'. An all-digit part after ':' is
 * read as a port, so "https://host:8443/p@v" keeps its path. */
static const char *scheme_userinfo_end(const char *u, const char *e)
{
	const char *a = u;
	while (a < e && !strchr("/?#", *a))
		a++;
	const char *at = last_at(u, a);
	if (at || a == e || *u == '[')
		return at;
	const char *colon = memchr(u, ':', (size_t)(a - u));
	if (!colon)
		return NULL;
	bool port = colon + 1 < a;
	for (const char *q = colon + 1; q < a; q++)
		if (!isdigit((unsigned char)*q))
			port = false;
	return port ? NULL : memchr(a, '@', (size_t)(e - a));
}

/* "NAME=" or "--option=" before a value. */
static bool option_name(const char *s, const char *eq)
{
	if (s == eq)
		return false;
	for (; s < eq; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* A token without "://": "user:pass@host[:port]", perhaps after NAME=. */
static void schemeless(outbuf *o, const char *s, const char *e, bool strict)
{
	const char *v = s, *eq = memchr(s, '=', (size_t)(e - s));
	if (eq && option_name(s, eq))
		v = eq + 1;
	const char *at = last_at(v, e);
	bool hide = at && at > v && at + 1 < e && !strchr("/.~", *v);
	if (hide && !strict) {
		const char *colon = memchr(v, ':', (size_t)(at - v));
		hide = colon && !memchr(v, '/', (size_t)(colon - v));
	}
	if (!hide) {
		put(o, s, (size_t)(e - s));
		return;
	}
	put(o, s, (size_t)(v - s));
	put(o, HIDDEN, strlen(HIDDEN));
	put(o, at, (size_t)(e - at));
}

static void token(outbuf *o, const char *s, const char *e, bool strict)
{
	const char *p = s, *sep = find(s, e, "://");
	if (!sep) {
		schemeless(o, s, e, strict);
		return;
	}
	/* Every URL in the token: "--mirror=https://a@b?next=https://c@d". */
	for (; sep; sep = find(p, e, "://")) {
		const char *u = sep + 3, *at = scheme_userinfo_end(u, e);
		put(o, p, (size_t)(u - p));
		if (at)
			put(o, HIDDEN, strlen(HIDDEN));
		p = at ? at : u;
	}
	put(o, p, (size_t)(e - p));
}

static char *redact(const char *text, bool one_value)
{
	outbuf o = { NULL, 0, 0 };
	put(&o, "", 0);
	if (!text)
		return o.buf;
	if (one_value) {
		token(&o, text, text + strlen(text), true);
		return o.buf;
	}
	for (const char *p = text; *p;) {
		const char *s = p;
		while (*p && delimiter(*p))
			p++;
		put(&o, s, (size_t)(p - s));
		s = p;
		while (*p && !delimiter(*p))
			p++;
		if (p > s)
			token(&o, s, p, false);
	}
	return o.buf;
}

char *pw_redact_text(const char *text)
{
	return redact(text, false);
}

char *pw_redact_url(const char *value)
{
	return redact(value, true);
}
