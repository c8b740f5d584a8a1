/* What the endpoint files share: the request's context, 202 answers, body members. */
#include "config.h"

#include "api/endpoints.h"
#include "api/jobs.h"
#include "api/reply.h"

#include "ops/ctx.h"

#include "i18n.h"

#include <stdio.h>
#include <string.h>

void pw_api_request_ctx(pw_api_request *r, struct pw_ops_ctx *c)
{
	*c = *r->srv->ctx;
	c->who = (pw_ops_who){ .front_end = "api", .args = r->args, .actor = &r->actor };
}

enum MHD_Result pw_api_refuse_read_only(pw_api_request *r, const char *what)
{
	pw_err *e = pw_ops_require_write(r->srv->ctx, what);
	/* The policy's own hint ("run again with --mode ...") is for a command
	 * line; an HTTP client cannot change the server's mode. */
	enum MHD_Result res = pw_api_send_error(r->conn, MHD_HTTP_FORBIDDEN, "refused",
		e ? pw_err_message(e) : what,
		_("this server runs read-only: its operator allows changes by starting 'pyward serve' with "
		  "--mode workspace-write (or 'mode = workspace-write' in its settings)"),
		NULL);
	pw_err_free(e);
	return res;
}

enum MHD_Result pw_api_answer_started(pw_api_request *r, int started, int64_t id, pw_err *e)
{
	char msg[160];
	if (started == PW_API_JOB_NOT_RECORDED) {
		enum MHD_Result res = pw_api_send_error(r->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "not-recorded",
			e ? pw_err_message(e) : "the catalog could not record the job",
			"every job is recorded in the box's catalog before it runs; check that the server may write it",
			NULL);
		pw_err_free(e);
		return res;
	}
	pw_err_free(e);
	if (started == PW_API_JOB_CONFLICT) {
		if (id > 0)
			snprintf(msg, sizeof msg, "job %lld holds what this would change", (long long)id);
		else
			snprintf(msg, sizeof msg, "another request is changing it right now");
		json_t *data = json_pack("{s:I}", "job", (json_int_t)id);
		return pw_api_send_error(r->conn, MHD_HTTP_CONFLICT, "locked", msg,
					 "wait for that job (GET /api/jobs/ID) or cancel it (DELETE /api/jobs/ID)", data);
	}
	if (started != PW_API_JOB_STARTED)
		return pw_api_send_error(r->conn, MHD_HTTP_TOO_MANY_REQUESTS, "too-many-jobs",
					 "the server runs as many jobs as it keeps", "try again when one has finished", NULL);
	char location[64];
	snprintf(location, sizeof location, "/api/jobs/%lld", (long long)id);
	return pw_api_send_json(r->conn, MHD_HTTP_ACCEPTED, pw_api_jobs_json(r->srv->jobs, id), location);
}

static enum MHD_Result bad_member(pw_api_request *r, const char *key, const char *want)
{
	char msg[160];
	snprintf(msg, sizeof msg, "\"%s\" must be %s", key, want);
	return pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request", msg, "see pyward(1), HTTP API", NULL);
}

bool pw_api_member_str(pw_api_request *r, json_t *body, const char *key, const char **out, enum MHD_Result *res)
{
	json_t *v = json_object_get(body, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v) || memchr(json_string_value(v), '\0', json_string_length(v))) {
		*res = bad_member(r, key, "a string");
		return false;
	}
	*out = json_string_value(v);
	return true;
}

bool pw_api_member_bool(pw_api_request *r, json_t *body, const char *key, bool dflt, bool *out, enum MHD_Result *res)
{
	json_t *v = json_object_get(body, key);
	*out = dflt;
	if (!v)
		return true;
	if (!json_is_boolean(v)) {
		*res = bad_member(r, key, "true or false");
		return false;
	}
	*out = json_is_true(v);
	return true;
}

bool pw_api_members_known(pw_api_request *r, json_t *body, const char *const *known, enum MHD_Result *res)
{
	const char *key;
	json_t *v;
	json_object_foreach(body, key, v) {
		bool ok = false;
		for (size_t i = 0; known[i] && !ok; i++)
			ok = strcmp(known[i], key) == 0;
		if (!ok) {
			char msg[200];
			snprintf(msg, sizeof msg, "unknown member \"%.100s\"", key);
			*res = pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request", msg,
						 "see pyward(1), HTTP API, for what each endpoint takes", NULL);
			return false;
		}
	}
	return true;
}
