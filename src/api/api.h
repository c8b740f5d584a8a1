/*
 * The HTTP API front end (`pyward serve`): JSON over HTTP for operators and
 * fleets, on libmicrohttpd. Every endpoint calls an operation of src/ops
 * and answers with its JSON, the same objects as the CLI's --json.
 */
#ifndef PW_API_H
#define PW_API_H

#include <stddef.h>

/* Limits and their defaults (pyward(1) documents them). */
#define PW_API_MAX_BODY_DEFAULT (64 * 1024)
#define PW_API_MAX_HEADER_DEFAULT (32 * 1024)
#define PW_API_MAX_CONNECTIONS_DEFAULT 64
#define PW_API_REQUEST_TIMEOUT_DEFAULT 30

typedef struct pw_api_config {
	const char **listen;       /* "unix:PATH", "HOST:PORT"; none: BOX/api.sock */
	size_t listen_count;
	const char *token_file;    /* bearer tokens for TCP */
	const char *tls_cert, *tls_key;
	const char **allow_hosts;  /* more Host names accepted on TCP */
	size_t allow_host_count;
	size_t max_body;           /* bytes; 0: default */
	size_t max_header;         /* bytes; 0: default */
	unsigned max_connections;  /* 0: default */
	unsigned request_timeout;  /* seconds; 0: default */
	/* The options of `runtime install` that API installs use. */
	const char *pins, *mirror, *cacert, *requirements;
} pw_api_config;

/* Forward declaration: the operations context (ops/ctx.h). */
struct pw_ops_ctx;

/* Serve until SIGINT or SIGTERM; returns the exit status. Prints one
 * "listening on ..." line per listener on stderr once they are ready. */
int pw_api_serve(struct pw_ops_ctx *ctx, const pw_api_config *cfg);

#endif
