/* Tool arguments against their schema: see argcheck.h. */
#include "config.h"

#include "mcp/argcheck.h"

#include "xalloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static bool is_type(const json_t *v, const char *t)
{
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "integer") == 0)
		return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
	return strcmp(type_of(v), t) == 0;
}

static char *check_type(const json_t *schema, const json_t *v, const char *path)
{
	const json_t *t = json_object_get(schema, "type");
	if (json_is_string(t))
		return is_type(v, json_string_value(t)) ? NULL
			: xasprintf("%s: expected %s, got %s", path, json_string_value(t), type_of(v));
	if (!json_is_array(t))
		return NULL;
	size_t i;
	json_t *one;
	json_array_foreach(t, i, one)
		if (json_is_string(one) && is_type(v, json_string_value(one)))
			return NULL;
	return xasprintf("%s: %s is not one of the types allowed here", path, type_of(v));
}

static char *check_enum(const json_t *schema, const json_t *v, const char *path)
{
	const json_t *e = json_object_get(schema, "enum");
	if (!json_is_array(e))
		return NULL;
	size_t i;
	json_t *one;
	json_array_foreach(e, i, one)
		if (json_equal(one, v))
			return NULL;
	char *allowed = json_dumps(e, JSON_COMPACT);
	char *m = xasprintf("%s: must be one of %s", path, allowed ? allowed : "[]");
	free(allowed);
	return m;
}

static bool bound(const json_t *schema, const char *key, double *out)
{
	const json_t *b = json_object_get(schema, key);
	if (!json_is_number(b))
		return false;
	*out = json_number_value(b);
	return true;
}

/* minimum/maximum for numbers, the lengths for strings and arrays. */
static char *check_bounds(const json_t *schema, const json_t *v, const char *path)
{
	double b;
	if (json_is_number(v)) {
		double x = json_number_value(v);
		if (bound(schema, "minimum", &b) && x < b)
			return xasprintf("%s: must be at least %g", path, b);
		if (bound(schema, "maximum", &b) && x > b)
			return xasprintf("%s: must be at most %g", path, b);
	}
	double n = json_is_string(v) ? (double)json_string_length(v) : json_is_array(v) ? (double)json_array_size(v) : -1;
	const char *what = json_is_string(v) ? "characters" : "items";
	if (n >= 0 && (bound(schema, "minLength", &b) || bound(schema, "minItems", &b)) && n < b)
		return xasprintf("%s: needs at least %g %s", path, b, what);
	if (n >= 0 && (bound(schema, "maxLength", &b) || bound(schema, "maxItems", &b)) && n > b)
		return xasprintf("%s: takes at most %g %s", path, b, what);
	return NULL;
}

static char *check_object(const json_t *schema, json_t *v, const char *path)
{
	const json_t *props = json_object_get(schema, "properties");
	size_t i;
	json_t *req;
	json_array_foreach(json_object_get(schema, "required"), i, req)
		if (json_is_string(req) && !json_object_get(v, json_string_value(req)))
			return xasprintf("%s.%s: required", path, json_string_value(req));
	const char *key;
	json_t *val;
	json_object_foreach(v, key, val) {
		const json_t *sub = json_object_get(props, key);
		if (!sub) {
			if (json_is_false(json_object_get(schema, "additionalProperties")))
				return xasprintf("%s.%s: not an argument of this tool", path, key);
			continue;
		}
		char *sp = xasprintf("%s.%s", path, key);
		char *m = pw_mcp_argcheck(sub, val, sp);
		free(sp);
		if (m)
			return m;
	}
	return NULL;
}

static char *check_array(const json_t *schema, const json_t *v, const char *path)
{
	const json_t *items = json_object_get(schema, "items");
	if (!json_is_object(items))
		return NULL;
	size_t i;
	json_t *one;
	json_array_foreach(v, i, one) {
		char *sp = xasprintf("%s[%zu]", path, i);
		char *m = pw_mcp_argcheck(items, one, sp);
		free(sp);
		if (m)
			return m;
	}
	return NULL;
}

char *pw_mcp_argcheck(const json_t *schema, json_t *value, const char *path)
{
	char *m = check_type(schema, value, path);
	if (!m)
		m = check_enum(schema, value, path);
	if (!m)
		m = check_bounds(schema, value, path);
	if (!m && json_is_object(value))
		m = check_object(schema, value, path);
	if (!m && json_is_array(value))
		m = check_array(schema, value, path);
	return m;
}
