/*
 * Answers of the HTTP API: JSON bodies, the one error shape
 * {"schema", "error": {"code", "message", "hint", "exit_status"}, "data"?}
 * (pw_json_error_member's, as the CLI's --json and the MCP server's) with
 * the status that fits, and the
 * headers every answer carries (no caching, no content sniffing).
 */
#ifndef PW_API_REPLY_H
#define PW_API_REPLY_H

#include "api/mhd.h"

#include "err.h"

#include <jansson.h>

#include <stdbool.h>

/* The version of the answers' JSON shapes: every JSON answer of the API,
 * errors included, carries it as "schema", like the CLI's --json. */
#define PW_API_SCHEMA 1
/* body (stolen; NULL: {}) with "schema" first when it is an object without
 * one. */
json_t *pw_api_with_schema(json_t *body);
/* Queue body (stolen; NULL: {}, "schema" added) with status; location may be NULL. */
enum MHD_Result pw_api_send_json(struct MHD_Connection *c, unsigned status, json_t *body, const char *location);
/* Queue text with a content type (copied). */
enum MHD_Result pw_api_send_text(struct MHD_Connection *c, unsigned status, const char *type, const char *text,
				 size_t len);
/* The error shape. code: a stable ASCII name; hint may be NULL; data (stolen,
 * may be NULL) goes beside "error" as "data". */
enum MHD_Result pw_api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
				  const char *message, const char *hint, json_t *data);
/* The same with one more header (WWW-Authenticate, Allow). */
enum MHD_Result pw_api_send_error_header(struct MHD_Connection *c, unsigned status, const char *code,
					 const char *message, const char *hint, const char *header, const char *value);
/* The error shape written straight to a plain (not TLS) socket, with
 * Connection: close, and the socket's sending side shut; then what the
 * client still sends is read and dropped for up to linger_ms (a close with
 * unread bytes would reset the connection, and the client could lose the
 * answer). For an answer libmicrohttpd cannot queue: once a request's body
 * is being read it takes none until the whole body is in (server.c). */
bool pw_api_write_error_now(int fd, unsigned status, const char *reason, const char *code, const char *message,
			    const char *hint, int linger_ms);
/* An operation's error with the status that fits its code. */
enum MHD_Result pw_api_send_err(struct MHD_Connection *c, const pw_err *e);
/* The status an operation's error maps to (REFUSED 403, USAGE 400, ...). */
unsigned pw_api_status_of(const pw_err *e);

#endif
