/* /api/history: the catalog's operations, and one with its attempts. */
#include "config.h"

#include "api/endpoints.h"
#include "api/reply.h"

#include "ops/ctx.h"
#include "ops/op_history.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_LIMIT = 1000 };

/* "2026-12-04" or "2026-12-04T05:06:07Z"-like: digits and the separators of ISO 8601. */
static bool iso_like(const char *s)
{
	size_t n = strlen(s);
	if (n < 10 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789-:T.Z+", s[i]))
			return false;
	return s[4] == '-' && s[7] == '-';
}

static enum MHD_Result bad_query(pw_api_request *r, const char *msg)
{
	return pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request", msg,
				 "kind=KIND (a prefix when it ends in '.'), outcome=OUTCOME, since=YYYY-MM-DD[THH:MM:SSZ], limit=1..1000",
				 NULL);
}

/* A filter's value; an empty one ("limit=", as the man page's template
 * shows them) is the same as none: the default. */
static const char *given(const pw_api_request *r, const char *name)
{
	const char *v = pw_api_arg(r, name);
	return v && *v ? v : NULL;
}

enum MHD_Result pw_api_history_list(pw_api_request *r)
{
	pw_op_filter f = { .kind = given(r, "kind"), .outcome = given(r, "outcome"),
			   .since = given(r, "since"), .target = given(r, "target") };
	const char *limit = given(r, "limit");
	if (limit) {
		char *end = NULL;
		long v = strtol(limit, &end, 10);
		if (*limit < '0' || *limit > '9' || *end || v < 1 || v > MAX_LIMIT)
			return bad_query(r, "limit must be a whole number from 1 to 1000");
		f.limit = (int)v;
	}
	if (f.since && !iso_like(f.since))
		return bad_query(r, "since must be an ISO 8601 date or date-time (UTC)");
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_op_list ops = { 0 };
	pw_err *e = pw_op_history_list(&c, &f, &ops);
	if (e) {
		enum MHD_Result res = pw_api_send_err(r->conn, e);
		pw_err_free(e);
		return res;
	}
	/* The document of history --json, from the same function. */
	json_t *body = pw_op_history_list_json(&ops);
	pw_op_list_clear(&ops);
	return pw_api_send_json(r->conn, MHD_HTTP_OK, body, NULL);
}

enum MHD_Result pw_api_history_show(pw_api_request *r)
{
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_op_history_show_result res;
	pw_err *e = pw_op_history_show(&c, r->id, &res);
	if (e) {
		enum MHD_Result a = pw_api_send_err(r->conn, e);
		pw_err_free(e);
		return a;
	}
	json_t *out = pw_op_history_show_json(&res);
	pw_op_history_show_clear(&res);
	return pw_api_send_json(r->conn, MHD_HTTP_OK, out, NULL);
}
