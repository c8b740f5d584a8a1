/*
 * The API's routes: one table of method, path pattern, handler and whether
 * it changes anything (refused with 403 in read-only mode before any work).
 * A path pattern's "#" is a positive number, handed over as request->id.
 */
#include "config.h"

#include "api/endpoints.h"
#include "api/metrics.h"
#include "api/reply.h"
#include "api/server.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct route {
	const char *method;
	const char *pattern;
	enum MHD_Result (*handle)(pw_api_request *r);
	const char *change;  /* NULL: reads only; else what the change is, for the refusal */
} route;

static const route routes[] = {
	{ "GET", "/metrics", pw_api_metrics, NULL },
	{ "GET", "/api/runtime/python", pw_api_runtime_status, NULL },
	{ "POST", "/api/runtime/python/install", pw_api_runtime_install, "installing the runtime" },
	{ "POST", "/api/runtime/python/verify", pw_api_runtime_verify, "verifying the runtime" },
	{ "POST", "/api/runtime/python/rollback", pw_api_runtime_rollback, "rolling the runtime back" },
	{ "DELETE", "/api/runtime/python", pw_api_runtime_remove, "removing the runtime" },
	{ "GET", "/api/jobs", pw_api_jobs_list, NULL },
	{ "GET", "/api/jobs/#", pw_api_job_get, NULL },
	{ "GET", "/api/jobs/#/events", pw_api_job_events, NULL },
	{ "DELETE", "/api/jobs/#", pw_api_job_cancel, NULL },
	{ "GET", "/api/venvs", pw_api_venvs_discover, NULL },
	{ "POST", "/api/venvs", pw_api_venv_create, "creating an environment" },
	{ "POST", "/api/venvs/install", pw_api_venv_install, "installing packages" },
	{ "POST", "/api/venvs/uninstall", pw_api_venv_uninstall, "uninstalling packages" },
	{ "DELETE", "/api/venvs", pw_api_venv_remove, "removing an environment" },
	{ "GET", "/api/history", pw_api_history_list, NULL },
	{ "GET", "/api/history/#", pw_api_history_show, NULL },
};

/* A positive decimal number of at most 18 digits. */
static bool number(const char *s, size_t n, int64_t *out)
{
	if (n == 0 || n > 18 || s[0] == '0')
		return false;
	int64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool matches(const char *pattern, const char *path, int64_t *id)
{
	while (*pattern && *path) {
		if (*pattern == '#') {
			size_t n = strcspn(path, "/");
			if (!number(path, n, id))
				return false;
			pattern++;
			path += n;
			continue;
		}
		if (*pattern++ != *path++)
			return false;
	}
	return *pattern == '\0' && (*path == '\0' || (path[0] == '/' && path[1] == '\0'));
}

static enum MHD_Result not_allowed(pw_api_request *r, const char *allow)
{
	return pw_api_send_error_header(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method-not-allowed",
					"this path does not take that method", allow, "Allow", allow);
}

enum MHD_Result pw_api_route(pw_api_request *r)
{
	char allow[64] = "";
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		const route *rt = &routes[i];
		int64_t id = 0;
		if (!matches(rt->pattern, r->path, &id))
			continue;
		if (strcmp(rt->method, r->method) != 0) {
			if (strlen(allow) + strlen(rt->method) + 3 < sizeof allow)
				snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s", *allow ? ", " : "",
					 rt->method);
			continue;
		}
		r->id = id;
		if (rt->change && r->srv->read_only)
			return pw_api_refuse_read_only(r, rt->change);
		return rt->handle(r);
	}
	if (*allow)
		return not_allowed(r, allow);
	return pw_api_send_error(r->conn, MHD_HTTP_NOT_FOUND, "not-found", "no such endpoint",
				 "see pyward(1), section HTTP API, for the endpoints", NULL);
}
