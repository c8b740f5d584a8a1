/* JSON answers and the one error shape (reply.h). */
#include "config.h"

#include "api/reply.h"

#include "ops/json.h"

#include "clock.h"
#include "xalloc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void common_headers(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
}

enum MHD_Result pw_api_send_text(struct MHD_Connection *c, unsigned status, const char *type, const char *text,
				 size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	common_headers(r, type);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

json_t *pw_api_with_schema(json_t *body)
{
	if (!body)
		body = json_object();
	if (!json_is_object(body) || json_object_get(body, "schema"))
		return body;
	json_t *out = json_pack("{s:i}", "schema", PW_API_SCHEMA);
	json_object_update(out, body);
	json_decref(body);
	return out;
}

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, json_t *body, const char *header,
				  const char *value)
{
	body = pw_api_with_schema(body);
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(body);
	if (!text)
		return MHD_NO;
	size_t len = strlen(text);
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	common_headers(r, "application/json");
	if (header && value)
		MHD_add_response_header(r, header, value);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

enum MHD_Result pw_api_send_json(struct MHD_Connection *c, unsigned status, json_t *body, const char *location)
{
	return send_body(c, status, body, "Location", location);
}

/* What 'pyward' on a command line would exit with for the same refusal,
 * so a script can treat the CLI's --json and the API alike. */
static int exit_status_of(unsigned status)
{
	switch (status) {
	case MHD_HTTP_BAD_REQUEST:
	case MHD_HTTP_METHOD_NOT_ALLOWED:
	case MHD_HTTP_CONTENT_TOO_LARGE:
	case MHD_HTTP_UNSUPPORTED_MEDIA_TYPE: return 2;
	case MHD_HTTP_UNAUTHORIZED:
	case MHD_HTTP_FORBIDDEN: return 3;
	case MHD_HTTP_GATEWAY_TIMEOUT: return 4;
	default: return 1;
	}
}

static json_t *error_body(unsigned status, const char *code, const char *message, const char *hint, int exit_status,
			  json_t *data)
{
	if (exit_status < 0)
		exit_status = exit_status_of(status);
	json_t *body = json_pack("{s:i, s:o}", "schema", PW_API_SCHEMA, "error",
				 pw_json_error_member(code, message, hint, exit_status));
	if (data)
		json_object_set_new(body, "data", data);
	return body;
}

enum MHD_Result pw_api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
				  const char *message, const char *hint, json_t *data)
{
	return send_body(c, status, error_body(status, code, message, hint, -1, data), NULL, NULL);
}

enum MHD_Result pw_api_send_error_header(struct MHD_Connection *c, unsigned status, const char *code,
					 const char *message, const char *hint, const char *header, const char *value)
{
	return send_body(c, status, error_body(status, code, message, hint, -1, NULL), header, value);
}

static bool send_all(int fd, const char *p, size_t n, int64_t until_ms)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return false;
		int64_t left = until_ms - pw_clock_mono_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
	}
	return true;
}

static void drain(int fd, int64_t until_ms)
{
	char buf[16384];
	for (;;) {
		int64_t left = until_ms - pw_clock_mono_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return;
		ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return;
	}
}

bool pw_api_write_error_now(int fd, unsigned status, const char *reason, const char *code, const char *message,
			    const char *hint, int linger_ms)
{
	json_t *body = error_body(status, code, message, hint, -1, NULL);
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(body);
	if (!text)
		return false;
	char *head = xasprintf(
			  "HTTP/1.1 %u %s\r\nConnection: close\r\nContent-Type: application/json\r\n"
			  "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n\r\n",
			  status, reason, strlen(text));
	int64_t until = pw_clock_mono_ms() + linger_ms;
	bool ok = send_all(fd, head, strlen(head), until) && send_all(fd, text, strlen(text), until);
	free(head);
	free(text);
	shutdown(fd, SHUT_WR);
	if (ok)
		drain(fd, until);
	return ok;
}

unsigned pw_api_status_of(const pw_err *e)
{
	switch (pw_err_code(e)) {
	case PW_ERR_USAGE: return MHD_HTTP_BAD_REQUEST;
	case PW_ERR_REFUSED: return MHD_HTTP_FORBIDDEN;
	case PW_ERR_NOTFOUND: return MHD_HTTP_NOT_FOUND;
	case PW_ERR_TIMEOUT: return MHD_HTTP_GATEWAY_TIMEOUT;
	case PW_ERR_CANCELLED: return MHD_HTTP_CONFLICT;
	case PW_ERR_NETWORK: return MHD_HTTP_BAD_GATEWAY;
	default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

enum MHD_Result pw_api_send_err(struct MHD_Connection *c, const pw_err *e)
{
	unsigned status = pw_api_status_of(e);
	return send_body(c, status, error_body(status, pw_err_code_name(pw_err_code(e)), pw_err_message(e),
					       pw_err_hint(e), pw_err_exit_status(e), NULL), NULL, NULL);
}
