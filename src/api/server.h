/*
 * The server's shared state and one request as the endpoints see it.
 * Internal to src/api.
 */
#ifndef PW_API_SERVER_H
#define PW_API_SERVER_H

#include "api/api.h"
#include "api/auth.h"
#include "api/mhd.h"

#include "catalog.h"

#include <jansson.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct pw_api_jobs pw_api_jobs;
typedef struct pw_api_status_cache pw_api_status_cache;
typedef struct pw_api_catalog_pool pw_api_catalog_pool;
typedef struct pw_api_deadlines pw_api_deadlines;

typedef struct pw_api_server {
	const pw_api_config *cfg;
	struct pw_ops_ctx *ctx;     /* prepared; read-only while serving */
	const char *box_root;
	bool read_only;
	pw_api_tokens *tokens;
	pw_api_jobs *jobs;
	pw_api_status_cache *status; /* GET /api/runtime/python's copy */
	pw_api_catalog_pool *catalogs; /* read connections for GET /api/jobs[/ID] */
	pw_api_deadlines *deadlines;   /* the time to send a whole request */
	time_t started;
	pw_actor self;              /* this process's user, host and pid, read once */
	atomic_bool stopping;
	struct MHD_Daemon *daemons[16]; /* one per listener, for their connection counts */
	size_t daemon_count;
	atomic_uint_fast64_t requests, refused_limits, refused_auth;
} pw_api_server;

typedef struct pw_api_request {
	pw_api_server *srv;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	int64_t id;               /* the number in the path, when the route has one */
	const char *body;         /* NUL-terminated; "" when none */
	size_t body_len;
	pw_actor actor;           /* the caller: peer uid or token name */
	char *args;               /* "METHOD PATH BODY": the catalog's record of the request */
} pw_api_request;

/* A query-string argument, or NULL. */
const char *pw_api_arg(const pw_api_request *r, const char *name);
/* The request body as a JSON object (an empty body reads as {}); NULL
 * after answering 400 itself. */
json_t *pw_api_body(pw_api_request *r, enum MHD_Result *answered);

/* Open connections over all listeners. */
unsigned pw_api_connections(const pw_api_server *srv);

/* Route one authorised request (routes.c). */
enum MHD_Result pw_api_route(pw_api_request *r);

#endif
