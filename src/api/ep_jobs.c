/* /api/jobs: the server's jobs, their Server-Sent Events, cancel. */
#include "config.h"

#include "api/endpoints.h"
#include "api/jobs.h"
#include "api/reply.h"

#include <stdlib.h>

static enum MHD_Result no_job(pw_api_request *r)
{
	return pw_api_send_error(r->conn, MHD_HTTP_NOT_FOUND, "not-found", "no such job",
				 "GET /api/jobs lists the jobs this server keeps", NULL);
}

enum MHD_Result pw_api_jobs_list(pw_api_request *r)
{
	return pw_api_send_json(r->conn, MHD_HTTP_OK, json_pack("{s:o}", "jobs", pw_api_jobs_all(r->srv->jobs)), NULL);
}

enum MHD_Result pw_api_job_get(pw_api_request *r)
{
	json_t *j = pw_api_jobs_json(r->srv->jobs, r->id);
	return j ? pw_api_send_json(r->conn, MHD_HTTP_OK, j, NULL) : no_job(r);
}

/* Last-Event-ID (a reconnecting EventSource sends it) or ?after=N. */
static int64_t resume_after(pw_api_request *r)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Last-Event-ID");
	if (!v)
		v = pw_api_arg(r, "after");
	long long n = v ? strtoll(v, NULL, 10) : 0;
	return n > 0 ? n : 0;
}

enum MHD_Result pw_api_job_events(pw_api_request *r)
{
	struct MHD_Response *res = pw_api_jobs_events(r->srv->jobs, r->id, resume_after(r));
	if (!res)
		return no_job(r);
	enum MHD_Result ok = MHD_queue_response(r->conn, MHD_HTTP_OK, res);
	MHD_destroy_response(res);
	return ok;
}

enum MHD_Result pw_api_job_cancel(pw_api_request *r)
{
	if (!pw_api_jobs_cancel(r->srv->jobs, r->id, r->actor.user)) {
		/* Ended (here or under an earlier server), or another server's:
		 * nothing to stop here, and 202 would say something will. */
		json_t *j = pw_api_jobs_json(r->srv->jobs, r->id);
		if (!j)
			return no_job(r);
		return pw_api_send_error(r->conn, MHD_HTTP_CONFLICT, "not-running-here",
					 "this server does not run that job: it ended, or another server runs it",
					 "GET /api/jobs/ID says its state", j);
	}
	return pw_api_send_json(r->conn, MHD_HTTP_ACCEPTED, pw_api_jobs_json(r->srv->jobs, r->id), NULL);
}
