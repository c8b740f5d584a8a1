/* A plain cell's reply read without jansson: see scratch_reply.h. */
#include "config.h"

#include "scratch_reply.h"

#include <string.h>

typedef struct cursor {
	const char *p, *end;
} cursor;

static bool literal(cursor *c, const char *s, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return false;
	c->p += n;
	return true;
}

#define LITERAL(c, s) literal((c), "" s, sizeof(s) - 1)

/* null, or a string of printable ASCII with the escapes that jansson
 * writes the same way (see scratch_reply.h). */
static bool value(cursor *c, const char **text, size_t *len)
{
	const char *start = c->p;
	if (!LITERAL(c, "null")) {
		if (c->p == c->end || *c->p != '"')
			return false;
		for (c->p++;; c->p++) {
			if (c->p == c->end)
				return false;
			unsigned char ch = (unsigned char)*c->p;
			if (ch == '"')
				break;
			if (ch == '\\') {
				if (++c->p == c->end || !strchr("\"\\bfnrt", *c->p) || !*c->p)
					return false;
			} else if (ch < 0x20 || ch > 0x7E) {
				return false;
			}
		}
		c->p++;
	}
	*text = start;
	*len = (size_t)(c->p - start);
	return true;
}

bool pw_scratch_reply_scan(const char *line, size_t len, pw_scratch_reply_view *v)
{
	cursor c = { line, line + len };
	memset(v, 0, sizeof *v);
	if (!LITERAL(&c, "{\"id\": "))
		return false;
	if (c.p == c.end || *c.p < '1' || *c.p > '9')
		return false;
	int digits = 0;
	for (; c.p < c.end && *c.p >= '0' && *c.p <= '9'; c.p++, digits++) {
		if (digits == 15) /* ids are cell counts: far below 10^15 */
			return false;
		v->id = v->id * 10 + (*c.p - '0');
	}
	if (!LITERAL(&c, ", \"status\": \""))
		return false;
	if (LITERAL(&c, "error"))
		v->error = true;
	else if (!LITERAL(&c, "ok"))
		return false;
	return LITERAL(&c, "\", \"value\": ") && value(&c, &v->value, &v->value_len) &&
	       LITERAL(&c, ", \"traceback\": ") && value(&c, &v->traceback, &v->traceback_len) &&
	       LITERAL(&c, "}") && c.p == c.end;
}
