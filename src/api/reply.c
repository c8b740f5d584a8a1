/* JSON answers and the one error shape (reply.h). */
#include "config.h"

#include "api/reply.h"

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

enum MHD_Result pw_api_send_json(struct MHD_Connection *c, unsigned status, json_t *body, const char *location)
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
	if (location)
		MHD_add_response_header(r, "Location", location);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* A message as a JSON string. One built with a caller's text cut at a
 * byte count ("%.100s") may end inside a UTF-8 sequence, which jansson
 * refuses, and the whole error shape would go: the cut sequence is dropped. */
static json_t *text_value(const char *s)
{
	size_t n = strlen(s);
	for (int cut = 0; cut < 4 && n > 0; cut++, n--) {
		json_t *v = json_stringn(s, n);
		if (v)
			return v;
	}
	return json_string(n ? "(a message that is not UTF-8)" : "");
}

enum MHD_Result pw_api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
				  const char *message, const char *hint, json_t *data)
{
	json_t *err = json_pack("{s:s, s:o, s:s?}", "code", code, "message", text_value(message ? message : ""), "hint",
				hint);
	json_t *body = json_pack("{s:o}", "error", err);
	if (data)
		json_object_set_new(body, "data", data);
	return pw_api_send_json(c, status, body, NULL);
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
	json_t *body = json_pack("{s:i, s:{s:s, s:s, s:s?}}", "schema", PW_API_SCHEMA, "error", "code", code, "message",
				 message, "hint", hint);
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
	return pw_api_send_error(c, pw_api_status_of(e), pw_err_code_name(pw_err_code(e)), pw_err_message(e),
				 pw_err_hint(e), NULL);
}
