/*
 * JSON text written directly, byte for byte as jansson's compact dump
 * (json_dumps with JSON_COMPACT) writes the same values, for the few
 * objects sent on a hot path (a scratchpad cell's result: building a
 * jansson tree only to serialise it cost more than the cell, see
 * DESIGN.md "Speed (bench/mcp.sh)"). A string that is not valid UTF-8
 * (which jansson refuses) marks the text bad, so that the caller falls
 * back to jansson and its handling.
 */
#ifndef PW_JSONTEXT_H
#define PW_JSONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_jsontext {
	char *buf;
	size_t len, cap;
	bool bad;  /* a string jansson would refuse was given */
} pw_jsontext;

/* n bytes as they are (punctuation, keys known to need no escaping). */
void pw_jsontext_raw(pw_jsontext *t, const char *s, size_t n);
#define PW_JSONTEXT_LIT(t, lit) pw_jsontext_raw((t), "" lit, sizeof(lit) - 1) /* lit: a string literal only */
/* s as a JSON string (quoted, escaped as jansson does), or null for NULL. */
void pw_jsontext_str(pw_jsontext *t, const char *s);
void pw_jsontext_int(pw_jsontext *t, int64_t v);
/* True when s is UTF-8 that jansson takes (json_string would not refuse
 * it), without making a string of it. */
bool pw_jsontext_utf8_ok(const char *s);
/* The text (NUL-terminated; the caller frees it), or NULL when bad; t is
 * emptied either way. */
char *pw_jsontext_take(pw_jsontext *t, size_t *len);

#endif
