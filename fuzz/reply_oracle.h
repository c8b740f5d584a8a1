/*
 * Oracle for the worker reply scanner (src/core/scratch_reply.c), shared
 * by its unit test and fuzz target: whatever the scanner takes, jansson
 * reads the same way, and the result text written with the scanned
 * pieces is, byte for byte, the text written from jansson's reading.
 */
#ifndef PW_REPLY_ORACLE_H
#define PW_REPLY_ORACLE_H

#include "scratch_proto.h"
#include "scratch_reply.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* NULL when they agree (or the scanner did not take the line: *scanned
 * false), else what differed. */
static inline const char *reply_disagreement(const char *line, size_t len, bool *scanned)
{
	pw_scratch_reply_view v;
	*scanned = pw_scratch_reply_scan(line, len, &v);
	if (!*scanned)
		return NULL;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *why = NULL;
	json_t *id = json_object_get(j, "id"), *status = json_object_get(j, "status");
	json_t *value = json_object_get(j, "value"), *tb = json_object_get(j, "traceback");
	if (!j || json_object_size(j) != 4)
		why = "jansson does not read four members";
	else if (!json_is_integer(id) || json_integer_value(id) != v.id)
		why = "a different id";
	else if (!json_is_string(status) || strcmp(json_string_value(status), v.error ? "error" : "ok") != 0)
		why = "a different status";
	else if (!(json_is_null(value) || json_is_string(value)) || !(json_is_null(tb) || json_is_string(tb)))
		why = "a value or traceback that is neither a string nor null";
	if (!why) {
		char session[] = "s-1", out[] = "printed \"x\"\n", err[] = "", ok[] = "ok", error[] = "error";
		pw_scratch_result r = { .session = session, .execution = v.id, .generation = 2,
					.status = v.error ? error : ok, .out = out, .err = err,
					.out_dropped = 3, .duration_ms = 12 };
		r.value = json_is_string(value) ? strdup(json_string_value(value)) : NULL;
		r.traceback = json_is_string(tb) ? strdup(json_string_value(tb)) : NULL;
		char *want = pw_scratch_result_dump(&r, NULL);
		char *got = pw_scratch_result_dump_with(&r, v.value, v.value_len, v.traceback, v.traceback_len, NULL);
		if (!want || !got || strcmp(want, got) != 0)
			why = "the result text differs from the decoded reply's";
		free(want);
		free(got);
		free(r.value);
		free(r.traceback);
	}
	json_decref(j);
	return why;
}

#endif
