/*
 * /api/venvs: the workspace's environments (the server's -C), with the
 * CLI's confinement and rules: discover, create, remove answered at once;
 * install and uninstall as jobs (202), as they may take minutes.
 */
#include "config.h"

#include "api/endpoints.h"
#include "api/jobs.h"
#include "api/reply.h"

#include "ops/ctx.h"
#include "ops/op_venv.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_SPECS = 64 };

static enum MHD_Result answer(pw_api_request *r, pw_err *e, json_t *j)
{
	if (!e)
		return pw_api_send_json(r->conn, MHD_HTTP_OK, j, NULL);
	enum MHD_Result res = pw_api_send_error(r->conn, pw_api_status_of(e), pw_err_code_name(pw_err_code(e)),
						pw_err_message(e), pw_err_hint(e), j);
	pw_err_free(e);
	return res;
}

enum MHD_Result pw_api_venvs_discover(pw_api_request *r)
{
	const char *depth = pw_api_arg(r, "depth");
	int d = depth ? atoi(depth) : 0;
	if (depth && (d < 1 || d > 8))
		return pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request", "depth must be from 1 to 8",
					 NULL, NULL);
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_op_venv_discover_result l;
	pw_err *e = pw_op_venv_discover(&c, pw_api_arg(r, "root"), d, &l);
	json_t *j = e ? NULL : pw_op_venv_discover_json(&l);
	pw_op_venv_discover_clear(&l);
	return answer(r, e, j);
}

enum MHD_Result pw_api_venv_create(pw_api_request *r)
{
	/* No "python": an interpreter of the caller's choosing would run as the
	 * server's user. The managed runtime (else python3) it is. */
	static const char *const known[] = { "path", "seed", NULL };
	enum MHD_Result res = MHD_NO;
	pw_op_venv_create_request rq = { 0 };
	json_t *body = pw_api_body(r, &res);
	if (!body)
		return res;
	if (!pw_api_members_known(r, body, known, &res) || !pw_api_member_str(r, body, "path", &rq.name, &res) ||
	    !pw_api_member_str(r, body, "seed", &rq.seed, &res)) {
		json_decref(body);
		return res;
	}
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_created made;
	pw_err *e = pw_op_venv_create(&c, &rq, &(pw_op_io){ 0 }, &made);
	json_decref(body);
	json_t *j = e ? NULL : pw_op_venv_create_json(&made);
	pw_created_clear(&made);
	return answer(r, e, j);
}

/* The environment a request means, as the job conflicts compare it: the
 * resolved, confined path, so "e1", "./e1" and its absolute path are one
 * (the install's own choice when none is named); as given when it does not
 * resolve (the operation then refuses it). */
static char *venv_key(pw_api_request *r, const char *venv)
{
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	char *out = NULL;
	pw_err *e = pw_op_venv_find(&c, venv, &out, true);
	if (e || !out) {
		free(out);
		out = venv ? xstrdup(venv) : xasprintf("%s/.venv", c.workspace);
	}
	pw_err_free(e);
	return out;
}

enum MHD_Result pw_api_venv_remove(pw_api_request *r)
{
	const char *path = pw_api_arg(r, "path");
	if (!path || !*path)
		return pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request", "name the environment: ?path=NAME|PATH",
					 NULL, NULL);
	/* Not under a running install or uninstall into it (pip would run on
	 * in a folder being deleted); nor may one start while it goes. */
	int64_t by = 0;
	char *key = venv_key(r, path);
	pw_api_job_started held = pw_api_jobs_hold(r->srv->jobs, "venv.remove", key, &by);
	if (held != PW_API_JOB_STARTED) {
		free(key);
		return pw_api_answer_started(r, held, by, NULL);
	}
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	char *removed = NULL;
	pw_err *e = pw_op_venv_remove(&c, path, &removed);
	pw_api_jobs_release(r->srv->jobs, "venv.remove", key);
	free(key);
	json_t *j = e ? NULL : pw_op_venv_remove_json(removed);
	free(removed);
	return answer(r, e, j);
}

/* ---------------------------------------------------------------- pip jobs */

/* What a pip job owns: its context, caller and request strings. */
typedef struct pip_job {
	pw_ops_ctx ctx;
	pw_actor actor;
	char *args;
	char *venv;
	char *specs[MAX_SPECS];
	size_t spec_count;
	bool install, upgrade;
} pip_job;

static void pip_job_free(void *ud)
{
	pip_job *j = ud;
	for (size_t i = 0; i < j->spec_count; i++)
		free(j->specs[i]);
	free(j->args);
	free(j->venv);
	free(j);
}

static json_t *pip_run(void *ud, const pw_events *ev, const pw_cancel *cancel, pw_err **err)
{
	pip_job *j = ud;
	pw_op_venv_pip_request rq = { .install = j->install, .venv = j->venv, .specs = (const char *const *)j->specs,
				      .spec_count = j->spec_count, .upgrade = j->upgrade,
				      .lock_note = j->args };
	pw_op_venv_pip_result res;
	*err = pw_op_venv_pip(&j->ctx, &rq, &(pw_op_io){ .events = ev, .cancel = cancel }, &res);
	json_t *out = res.operation ? pw_op_venv_pip_json(&res, *err) : NULL;
	pw_op_venv_pip_clear(&res);
	return out;
}

/* "packages": an array of 1 to 64 strings, each kept. */
static bool take_packages(pw_api_request *r, json_t *body, pip_job *j, enum MHD_Result *res)
{
	json_t *a = json_object_get(body, "packages");
	size_t i;
	json_t *v;
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_SPECS) {
		*res = pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request",
					 "\"packages\" must be an array of 1 to 64 package specs", NULL, NULL);
		return false;
	}
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
			*res = pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "bad-request",
						 "each package spec must be a string", NULL, NULL);
			return false;
		}
		j->specs[j->spec_count++] = xstrdup(json_string_value(v));
	}
	return true;
}

static enum MHD_Result start_pip(pw_api_request *r, bool install)
{
	/* No "index": the box's settings name the indexes its installs use. */
	static const char *const known_install[] = { "venv", "packages", "upgrade", NULL };
	static const char *const known_uninstall[] = { "venv", "packages", NULL };
	enum MHD_Result res = MHD_NO;
	json_t *body = pw_api_body(r, &res);
	if (!body)
		return res;
	pip_job *j = xcalloc(1, sizeof *j);
	const char *venv = NULL;
	bool ok = pw_api_members_known(r, body, install ? known_install : known_uninstall, &res) &&
		  pw_api_member_str(r, body, "venv", &venv, &res) &&
		  pw_api_member_bool(r, body, "upgrade", false, &j->upgrade, &res) && take_packages(r, body, j, &res);
	j->venv = venv ? xstrdup(venv) : NULL;
	json_decref(body);
	if (!ok) {
		pip_job_free(j);
		return res;
	}
	j->install = install;
	j->actor = r->actor;
	j->args = xstrdup(r->args);
	pw_api_request_ctx(r, &j->ctx);
	j->ctx.who.args = j->args;
	j->ctx.who.actor = &j->actor;
	char *key = venv_key(r, j->venv);
	pw_api_job_spec spec = { .kind = install ? "venv.install" : "venv.uninstall",
				 .target = key, .user = r->actor.user, .args = r->args, .run = pip_run,
				 .free_ud = pip_job_free, .ud = j };
	int64_t id = 0;
	pw_err *e = NULL;
	pw_api_job_started started = pw_api_jobs_start(r->srv->jobs, &spec, &id, &e);
	free(key);
	return pw_api_answer_started(r, started, id, e);
}

enum MHD_Result pw_api_venv_install(pw_api_request *r)
{
	return start_pip(r, true);
}

enum MHD_Result pw_api_venv_uninstall(pw_api_request *r)
{
	return start_pip(r, false);
}
