/* JSON pieces every result shares, built once for every front end. */
#include "config.h"

#include "ops/json.h"

#include "pipclass.h"
#include "scratch_proto.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

json_t *pw_json_result(const char *key, json_t *value)
{
	return json_pack("{s:i,s:o}", "schema", 1, key, value);
}

json_t *pw_json_result_of(json_t *members)
{
	json_t *j = json_pack("{s:i}", "schema", 1);
	json_object_update(j, members);
	json_decref(members);
	return j;
}

json_t *pw_json_error_member(const char *code, const char *message, const char *hint, int exit_status)
{
	return json_pack("{s:s, s:o, s:o, s:i}", "code", code, "message", pw_json_str(message ? message : ""),
			 "hint", pw_json_str(hint), "exit_status", exit_status);
}

json_t *pw_json_error(const pw_err *e)
{
	return json_pack("{s:i, s:o}", "schema", 1, "error",
			 pw_json_error_member(pw_err_code_name(pw_err_code(e)), pw_err_message(e), pw_err_hint(e),
					      pw_err_exit_status(e)));
}

/* Invalid UTF-8 (a path, a child's output, a message cut at a byte count)
 * keeps its valid text: only the bytes that are not UTF-8 become U+FFFD,
 * rather than no JSON at all. */
json_t *pw_json_str(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *clean = pw_scratch_utf8_clean(s, strlen(s));
	j = json_string(clean);
	free(clean);
	return j ? j : json_null();
}

json_t *pw_json_attempt_rec(const pw_attempt_rec *a, bool older_names)
{
	json_t *j = json_object();
	json_object_set_new(j, "seq", json_integer(a->seq));
	json_object_set_new(j, "index_url", pw_json_str(a->index_url));
	json_object_set_new(j, "proxy", pw_json_str(a->proxy));
	json_object_set_new(j, "command", pw_json_str(a->argv));
	json_object_set_new(j, "exit_code", json_integer(a->exit_code));
	json_object_set_new(j, "class", pw_json_str(a->klass));
	json_object_set_new(j, "started_at", pw_json_str(a->started_at));
	json_object_set_new(j, "duration_ms", json_integer(a->duration_ms));
	json_object_set_new(j, "output_tail", pw_json_str(a->output_tail));
	if (older_names) {
		json_object_set_new(j, "index", pw_json_str(a->index_url));
		json_object_set_new(j, "argv", pw_json_str(a->argv));
	}
	return j;
}

json_t *pw_json_attempts(const pw_pip_result *res)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < res->count; i++) {
		const pw_pip_attempt *a = &res->attempts[i];
		/* index and argv: the older names of index_url and command (json.h) */
		json_array_append_new(arr, json_pack("{s:i,s:o,s:o,s:o,s:s,s:s,s:i,s:s,s:o,s:I,s:o,s:o}", "seq",
						     (int)(i + 1), "index_url",
						     pw_json_str(a->index), "index", pw_json_str(a->index),
						     "proxy", pw_json_str(a->proxy), "command", a->argv, "argv",
						     a->argv, "exit_code", a->exit_code, "class",
						     a->stopped ? "stopped" : pw_pipclass_name(a->klass), "reason",
						     pw_json_str(a->reason), "duration_ms", (json_int_t)a->duration_ms,
						     "probe", pw_json_str(a->probe), "output_tail",
						     pw_json_str(a->output_tail)));
	}
	return arr;
}
