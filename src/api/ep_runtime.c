/*
 * /api/runtime/python: status, install (a job, after consent given in the
 * body), verify, rollback, remove. The runtime's options are the ones
 * `serve` was given (--pins, --mirror, --cacert, --requirements), so an
 * operator's pins table and mirror apply to API installs too.
 */
#include "config.h"

#include "api/endpoints.h"
#include "api/jobs.h"
#include "api/reply.h"
#include "api/status_cache.h"

#include "ops/ctx.h"
#include "ops/op_runtime.h"

#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static pw_runtime_request request_of(const pw_api_server *srv)
{
	const pw_api_config *cfg = srv->cfg;
	return (pw_runtime_request){
		.pins_file = cfg->pins,
		.mirror = cfg->mirror,
		.cacert = cfg->cacert,
		.requirements = cfg->requirements,
	};
}

static enum MHD_Result answer(pw_api_request *r, pw_err *e, json_t *j)
{
	enum MHD_Result res;
	if (e) {
		res = pw_api_send_error(r->conn, pw_api_status_of(e), pw_err_code_name(pw_err_code(e)),
					pw_err_message(e), pw_err_hint(e), j);
		pw_err_free(e);
	} else {
		res = pw_api_send_json(r->conn, MHD_HTTP_OK, j, NULL);
	}
	return res;
}

/* The status text, from the copy while nothing it was made from changed
 * (status_cache.h), else made again by the operation and kept. */
enum MHD_Result pw_api_runtime_status(pw_api_request *r)
{
	pw_api_status_cache *cache = r->srv->status;
	pw_api_status_stamp *stamp = pw_api_status_stamp_take(cache);
	char *text = pw_api_status_cache_get(cache, stamp);
	if (!text) {
		pw_ops_ctx c;
		pw_api_request_ctx(r, &c);
		pw_runtime_request rq = request_of(r->srv);
		pw_op_runtime_status_result res = { 0 };
		pw_err *e = pw_op_runtime_status(&c, &rq, &res);
		if (e) {
			pw_op_runtime_status_clear(&res);
			pw_api_status_stamp_free(stamp);
			return answer(r, e, NULL);
		}
		json_t *j = pw_op_runtime_status_json(&res);
		text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(j);
		if (text)
			pw_api_status_cache_put(cache, stamp, text, res.info.version);
		pw_op_runtime_status_clear(&res);
	}
	pw_api_status_stamp_free(stamp);
	if (!text)
		return MHD_NO;
	enum MHD_Result ok = pw_api_send_text(r->conn, MHD_HTTP_OK, "application/json", text, strlen(text));
	free(text);
	return ok;
}

/* ---------------------------------------------------------------- install */

/* What the job owns: its context (a copy, with its own strings) and request. */
typedef struct install_job {
	pw_ops_ctx ctx;
	pw_actor actor;
	char *args;
	char *version;
	pw_runtime_request rq;
} install_job;

static void install_job_free(void *ud)
{
	install_job *j = ud;
	free(j->args);
	free(j->version);
	free(j);
}

static pw_consent_answer consent_given(const pw_consent *what, void *ud)
{
	(void)what, (void)ud;
	return PW_CONSENT_YES;
}

static json_t *install_run(void *ud, const pw_events *ev, const pw_cancel *cancel, pw_err **err)
{
	install_job *j = ud;
	pw_op_io io = { .events = ev, .consent = consent_given, .cancel = cancel };
	pw_op_runtime_install_result res = { 0 };
	*err = pw_op_runtime_install(&j->ctx, &j->rq, &io, &res);
	/* an install not recorded (or not begun) answers with the error alone, as venv jobs do */
	json_t *out = !*err || res.operation ? pw_op_runtime_install_json(&j->rq, &res) : NULL;
	pw_op_runtime_install_clear(&res);
	return out;
}

/* No consent in the body: 400 with the statement the consent is for, as
 * data, from the same plan an install would make. */
static enum MHD_Result consent_required(pw_api_request *r, pw_ops_ctx *c, pw_runtime_request *rq)
{
	rq->dry_run = true;
	pw_op_runtime_install_result res = { 0 };
	pw_err *e = pw_op_runtime_install(c, rq, &(pw_op_io){ 0 }, &res);
	if (e) {
		pw_op_runtime_install_clear(&res);
		return answer(r, e, NULL);
	}
	char *lines[PW_OP_INSTALL_CONSENT_LINES] = { 0 };
	pw_consent what = { 0 };
	pw_op_runtime_install_consent(rq, &res.plan, lines, &what);
	json_t *text = json_array();
	for (size_t i = 0; i < what.line_count; i++)
		json_array_append_new(text, json_string(what.lines[i]));
	json_t *data = json_pack("{s:{s:s, s:s?, s:s?, s:s?, s:o}, s:o}", "consent", "kind", "runtime.install",
		"doing", what.doing, "question", what.question, "heading", what.heading, "lines", text, "plan",
		pw_op_runtime_install_json(rq, &res));
	for (size_t i = 0; i < what.line_count; i++)
		free(lines[i]);
	pw_op_runtime_install_clear(&res);
	return pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "consent-required",
				 "installing the runtime needs consent",
				 "read data.consent, then POST again with {\"consent\": true}", data);
}

/* An endpoint that takes no members still reads its body: bytes that are
 * not a JSON object (invalid UTF-8, nesting past the parser's depth) or a
 * member it does not know are refused 400, not ignored. */
static bool empty_body(pw_api_request *r, enum MHD_Result *res)
{
	static const char *const none[] = { NULL };
	json_t *body = pw_api_body(r, res);
	bool ok = body && pw_api_members_known(r, body, none, res);
	json_decref(body);
	return ok;
}

enum MHD_Result pw_api_runtime_install(pw_api_request *r)
{
	static const char *const known[] = { "consent", "version", NULL };
	enum MHD_Result res = MHD_NO;
	json_t *body = pw_api_body(r, &res);
	const char *version = NULL;
	bool consent = false;
	if (!body)
		return res;
	if (!pw_api_members_known(r, body, known, &res) || !pw_api_member_bool(r, body, "consent", false, &consent, &res) ||
	    !pw_api_member_str(r, body, "version", &version, &res)) {
		json_decref(body);
		return res;
	}
	install_job *j = xcalloc(1, sizeof *j);
	j->actor = r->actor;
	j->args = xstrdup(r->args);
	j->version = version ? xstrdup(version) : NULL;
	json_decref(body);
	j->rq = request_of(r->srv);
	j->rq.version = j->version;
	pw_api_request_ctx(r, &j->ctx);
	j->ctx.who.args = j->args;
	j->ctx.who.actor = &j->actor;
	if (!consent) {
		res = consent_required(r, &j->ctx, &j->rq);
		install_job_free(j);
		return res;
	}
	pw_api_job_spec spec = { .kind = "runtime.install", .target = "python", .user = r->actor.user, .args = r->args,
				 .run = install_run, .free_ud = install_job_free, .ud = j };
	int64_t id = 0;
	pw_err *e = NULL;
	pw_api_job_started started = pw_api_jobs_start(r->srv->jobs, &spec, &id, &e);
	return pw_api_answer_started(r, started, id, e);
}

/* ---------------------------------------------------------------- the others */

enum MHD_Result pw_api_runtime_verify(pw_api_request *r)
{
	enum MHD_Result refused = MHD_NO;
	if (!empty_body(r, &refused))
		return refused;
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_op_runtime_verify_result res = { 0 };
	pw_err *e = pw_op_runtime_verify(&c, &(pw_op_io){ 0 }, &res);
	json_t *j = e ? NULL : pw_op_runtime_verify_json(&res);
	pw_op_runtime_verify_clear(&res);
	return answer(r, e, j);
}

enum MHD_Result pw_api_runtime_rollback(pw_api_request *r)
{
	enum MHD_Result refused = MHD_NO;
	if (!empty_body(r, &refused))
		return refused;
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	pw_op_runtime_rollback_result res = { 0 };
	pw_err *e = pw_op_runtime_rollback(&c, &(pw_op_io){ 0 }, &res);
	json_t *j = e ? NULL : pw_op_runtime_rollback_json(&res);
	pw_op_runtime_rollback_clear(&res);
	return answer(r, e, j);
}

/* Removing every install asks consent: ?consent=true says it was given. */
static pw_consent_answer consent_from_query(const pw_consent *what, void *ud)
{
	(void)what;
	return *(bool *)ud ? PW_CONSENT_YES : PW_CONSENT_CANNOT_ASK;
}

enum MHD_Result pw_api_runtime_remove(pw_api_request *r)
{
	pw_ops_ctx c;
	pw_api_request_ctx(r, &c);
	const char *q = pw_api_arg(r, "consent");
	bool consent = q && strcmp(q, "true") == 0;
	pw_op_io io = { .consent = consent_from_query, .consent_ud = &consent };
	pw_op_runtime_remove_result res = { 0 };
	pw_err *e = pw_op_runtime_remove(&c, &io, &res);
	if (e && !consent && pw_err_code(e) == PW_ERR_REFUSED) {
		enum MHD_Result a = pw_api_send_error(r->conn, MHD_HTTP_BAD_REQUEST, "consent-required", pw_err_message(e),
			"removing the runtime removes it for every user of the box: DELETE again with ?consent=true", NULL);
		pw_err_free(e);
		return a;
	}
	return answer(r, e, e ? NULL : pw_op_runtime_remove_json(&res));
}
