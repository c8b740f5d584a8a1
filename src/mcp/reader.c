/* Bounded line reader: see reader.h. */
#include "config.h"

#include "mcp/reader.h"

#include "xalloc.h"

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

struct pw_mcp_reader {
	int fd, wake_fd;
	size_t max_line;
	char *buf;          /* [start, end) unread bytes; a line is handed out from start */
	size_t cap, start, end;
	size_t scanned;     /* bytes from start known to hold no newline */
	bool skipping;      /* inside an over-long line: bytes are dropped until '\n' */
	size_t skipped;
	bool eof;
	bool nowait_unsupported; /* the fd refused RWF_NOWAIT once: never asked again */
};

pw_mcp_reader *pw_mcp_reader_new(int fd, int wake_fd, size_t max_line)
{
	pw_mcp_reader *r = xcalloc(1, sizeof *r);
	r->fd = fd;
	r->wake_fd = wake_fd;
	r->max_line = max_line;
	r->cap = CHUNK + 1;
	r->buf = xmalloc(r->cap);
	return r;
}

void pw_mcp_reader_free(pw_mcp_reader **r)
{
	if (!*r)
		return;
	free((*r)->buf);
	free(*r);
	*r = NULL;
}

/* Room for one more chunk after end: slide the unread bytes to the front,
 * then grow, but never past what a line of max_line needs plus a chunk. */
static void make_room(pw_mcp_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end >= CHUNK + 1)
		return;
	size_t want = r->end + CHUNK + 1;
	r->cap = want > r->cap * 2 ? want : r->cap * 2;
	r->buf = xrealloc(r->buf, r->cap);
}

/* One read: 1 bytes came, 0 end of input, -1 error. */
static int read_once(pw_mcp_reader *r)
{
	make_room(r);
	ssize_t got;
	do
		got = read(r->fd, r->buf + r->end, CHUNK);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	if (got == 0)
		return 0;
	r->end += (size_t)got;
	return 1;
}

/* 1 bytes came, 0 end of input, -1 error, 2 woken. */
static int fill(pw_mcp_reader *r)
{
	struct pollfd p[2] = { { .fd = r->fd, .events = POLLIN }, { .fd = r->wake_fd, .events = POLLIN } };
	for (;;) {
		int n = poll(p, r->wake_fd >= 0 ? 2 : 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (r->wake_fd >= 0 && (p[1].revents & POLLIN))
			return 2;
		if (p[0].revents)
			break;
	}
	return read_once(r);
}

static const char *take_line(pw_mcp_reader *r, size_t nl, size_t *len)
{
	size_t n = nl - r->start;
	char *line = r->buf + r->start;
	if (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	r->start = nl < r->end ? nl + 1 : r->end; /* at end of input there is no newline to step over */
	r->scanned = 0;
	*len = n;
	return line;
}

/* Drop buffered bytes of an over-long line; true once its newline passed. */
static bool skip_buffered(pw_mcp_reader *r)
{
	char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
	size_t upto = nl ? (size_t)(nl - r->buf) : r->end;
	r->skipped += upto - r->start;
	r->start = nl ? upto + 1 : r->end;
	r->scanned = 0;
	if (!nl)
		return false;
	r->skipping = false;
	return true;
}

/* may_read NULL: wait for fd (poll) as often as a line needs; else read
 * it once, only when *may_read, and then say PW_MCP_READ_AGAIN. */
static pw_mcp_read_status next(pw_mcp_reader *r, bool *may_read, const char **line, size_t *len)
{
	for (;;) {
		if (r->skipping) {
			if (skip_buffered(r)) {
				*len = r->skipped;
				return PW_MCP_READ_TOO_LONG;
			}
		} else {
			char *from = r->buf + r->start + r->scanned;
			char *nl = memchr(from, '\n', r->end - r->start - r->scanned);
			if (nl && (size_t)(nl - (r->buf + r->start)) > r->max_line) {
				r->skipping = true;
				r->skipped = 0;
				continue;
			}
			if (nl) {
				*line = take_line(r, (size_t)(nl - r->buf), len);
				return PW_MCP_READ_LINE;
			}
			r->scanned = r->end - r->start;
			if (r->scanned > r->max_line) {
				r->skipping = true;
				r->skipped = 0;
				continue;
			}
		}
		if (r->eof) {
			if (r->skipping) {
				r->skipping = false;
				*len = r->skipped;
				return PW_MCP_READ_TOO_LONG;
			}
			if (r->end == r->start)
				return PW_MCP_READ_EOF;
			*line = take_line(r, r->end, len); /* the unterminated last line */
			return PW_MCP_READ_LINE;
		}
		if (may_read && !*may_read)
			return PW_MCP_READ_AGAIN;
		if (may_read)
			*may_read = false;
		int f = may_read ? read_once(r) : fill(r);
		if (f == 2)
			return PW_MCP_READ_WAKE;
		if (f < 0)
			return PW_MCP_READ_ERROR;
		if (f == 0)
			r->eof = true;
	}
}

pw_mcp_read_status pw_mcp_reader_next(pw_mcp_reader *r, const char **line, size_t *len)
{
	return next(r, NULL, line, len);
}

pw_mcp_read_status pw_mcp_reader_next_ready(pw_mcp_reader *r, bool *may_read, const char **line, size_t *len)
{
	return next(r, may_read, line, len);
}

pw_mcp_nowait pw_mcp_reader_read_nowait(pw_mcp_reader *r)
{
	if (r->eof)
		return PW_MCP_NOWAIT_READ;
	if (r->nowait_unsupported)
		return PW_MCP_NOWAIT_EMPTY;
	make_room(r);
	struct iovec v = { .iov_base = r->buf + r->end, .iov_len = CHUNK };
	ssize_t got;
	do
		got = preadv2(r->fd, &v, 1, -1, RWF_NOWAIT);
	while (got < 0 && errno == EINTR);
	if (got < 0 && errno == EAGAIN)
		return PW_MCP_NOWAIT_EMPTY;
	if (got < 0 && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL || errno == ESPIPE)) {
		r->nowait_unsupported = true; /* a terminal, an older kernel: epoll says when */
		return PW_MCP_NOWAIT_EMPTY;
	}
	if (got < 0)
		return PW_MCP_NOWAIT_ERROR;
	if (got == 0)
		r->eof = true;
	r->end += (size_t)got;
	return PW_MCP_NOWAIT_READ;
}

bool pw_mcp_reader_holds_bytes(const pw_mcp_reader *r)
{
	return r->end > r->start;
}
