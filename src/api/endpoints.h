/*
 * The endpoints, one handler each (routes.c maps paths to them). Each
 * calls an operation of src/ops and answers with that operation's JSON.
 */
#ifndef PW_API_ENDPOINTS_H
#define PW_API_ENDPOINTS_H

#include "api/server.h"

/* 403 in read-only mode, with the policy's message (what: the change). */
enum MHD_Result pw_api_refuse_read_only(pw_api_request *r, const char *what);

enum MHD_Result pw_api_runtime_status(pw_api_request *r);
enum MHD_Result pw_api_runtime_install(pw_api_request *r);
enum MHD_Result pw_api_runtime_verify(pw_api_request *r);
enum MHD_Result pw_api_runtime_rollback(pw_api_request *r);
enum MHD_Result pw_api_runtime_remove(pw_api_request *r);

enum MHD_Result pw_api_jobs_list(pw_api_request *r);
enum MHD_Result pw_api_job_get(pw_api_request *r);
enum MHD_Result pw_api_job_events(pw_api_request *r);
enum MHD_Result pw_api_job_cancel(pw_api_request *r);

enum MHD_Result pw_api_venvs_discover(pw_api_request *r);
enum MHD_Result pw_api_venv_create(pw_api_request *r);
enum MHD_Result pw_api_venv_install(pw_api_request *r);
enum MHD_Result pw_api_venv_uninstall(pw_api_request *r);
enum MHD_Result pw_api_venv_remove(pw_api_request *r);

enum MHD_Result pw_api_history_list(pw_api_request *r);
enum MHD_Result pw_api_history_show(pw_api_request *r);

/* Shared by the endpoint files (ep_common.c). */

/* The operations context for this request: the server's, with the caller
 * (peer uid or token name) and the request as the catalog's args. Lives
 * in *c as long as the strings it points at (held in the request). */
struct pw_ops_ctx;
void pw_api_request_ctx(pw_api_request *r, struct pw_ops_ctx *c);
/* Answer 202 with the job object and Location: /api/jobs/ID, or 409 (a
 * job of the same area runs) or 429 (too many jobs). */
enum MHD_Result pw_api_answer_started(pw_api_request *r, int started, int64_t id, pw_err *e);
/* A body's member: a string (NULL when absent) / a bool (dflt when
 * absent); false after answering 400 itself. */
bool pw_api_member_str(pw_api_request *r, json_t *body, const char *key, const char **out, enum MHD_Result *res);
bool pw_api_member_bool(pw_api_request *r, json_t *body, const char *key, bool dflt, bool *out, enum MHD_Result *res);
/* Refuse members other than those listed (NULL-terminated); false after answering 400. */
bool pw_api_members_known(pw_api_request *r, json_t *body, const char *const *known, enum MHD_Result *res);

#endif
