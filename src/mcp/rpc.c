/* JSON-RPC builders: see rpc.h. */
#include "config.h"

#include "mcp/rpc.h"

#include "jsontext.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static json_t *envelope(const json_t *id)
{
	json_t *m = json_object();
	json_object_set_new(m, "jsonrpc", json_string("2.0"));
	json_object_set_new(m, "id", id ? json_deep_copy(id) : json_null());
	return m;
}

json_t *pw_rpc_error(const json_t *id, int code, const char *message, json_t *data)
{
	json_t *m = envelope(id);
	json_t *e = json_object();
	json_object_set_new(e, "code", json_integer(code));
	json_object_set_new(e, "message", json_string(message));
	if (data)
		json_object_set_new(e, "data", data);
	json_object_set_new(m, "error", e);
	return m;
}

json_t *pw_rpc_errorf(const json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	json_t *m = pw_rpc_error(id, code, msg, NULL);
	free(msg);
	return m;
}

json_t *pw_rpc_result(const json_t *id, json_t *result)
{
	json_t *m = envelope(id);
	json_object_set_new(m, "result", result);
	return m;
}

char *pw_rpc_result_head(const json_t *id)
{
	if (!json_is_string(id) && !json_is_integer(id))
		return NULL;
	pw_jsontext t = { 0 };
	PW_JSONTEXT_LIT(&t, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (json_is_string(id))
		pw_jsontext_str(&t, json_string_value(id));
	else
		pw_jsontext_int(&t, (int64_t)json_integer_value(id));
	PW_JSONTEXT_LIT(&t, ",\"result\":{}}");
	return pw_jsontext_take(&t, NULL);
}

json_t *pw_rpc_message(const json_t *id, const char *method, json_t *params)
{
	json_t *m = json_object();
	json_object_set_new(m, "jsonrpc", json_string("2.0"));
	if (id)
		json_object_set_new(m, "id", json_deep_copy(id));
	json_object_set_new(m, "method", json_string(method));
	if (params)
		json_object_set_new(m, "params", params);
	return m;
}

bool pw_rpc_id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id) || json_is_real(id);
}

bool pw_rpc_id_equal(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return a && b && json_equal(a, b);
}
