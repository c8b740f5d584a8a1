/*
 * Bounded line reader for the stdio transport: one JSON-RPC message per
 * line. A line longer than the limit is skipped to its newline as it
 * streams by, never held whole in memory, and reported as too long.
 */
#ifndef PW_MCP_READER_H
#define PW_MCP_READER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pw_mcp_reader pw_mcp_reader;

typedef enum pw_mcp_read_status {
	PW_MCP_READ_LINE,     /* *line holds a complete line */
	PW_MCP_READ_TOO_LONG, /* a line over the limit was skipped; *len = its length */
	PW_MCP_READ_WAKE,     /* the wake fd became readable (a signal, shutdown) */
	PW_MCP_READ_EOF,
	PW_MCP_READ_ERROR,
	PW_MCP_READ_AGAIN,    /* pw_mcp_reader_next_ready: a line needs another read */
} pw_mcp_read_status;

/* Reads fd; wake_fd (-1: none) is polled beside it. max_line counts the
 * bytes of a line without its newline. */
pw_mcp_reader *pw_mcp_reader_new(int fd, int wake_fd, size_t max_line);
void pw_mcp_reader_free(pw_mcp_reader **r);

/* The next line, its '\n' (and a '\r' before it) stripped, NUL-terminated;
 * valid until the next call. At end of input an unterminated last line is
 * still returned. */
pw_mcp_read_status pw_mcp_reader_next(pw_mcp_reader *r, const char **line, size_t *len);

/* The same for a caller that waits for fd itself (epoll): fd is read at
 * most once, and only when *may_read (fd was reported readable; cleared
 * when used); PW_MCP_READ_AGAIN when no complete line is left without
 * another read. The wake fd is not looked at. */
pw_mcp_read_status pw_mcp_reader_next_ready(pw_mcp_reader *r, bool *may_read, const char **line, size_t *len);
/* One read that does not wait (preadv2 with RWF_NOWAIT), for the thread
 * that holds the input after a call: READ when bytes (or the end of
 * input) came, to be taken with pw_mcp_reader_next_ready and *may_read
 * false; EMPTY when nothing is there or the fd cannot be read so (then
 * never tried again): wait for it. */
typedef enum pw_mcp_nowait { PW_MCP_NOWAIT_READ, PW_MCP_NOWAIT_EMPTY, PW_MCP_NOWAIT_ERROR } pw_mcp_nowait;
pw_mcp_nowait pw_mcp_reader_read_nowait(pw_mcp_reader *r);
/* True while bytes that were read wait in the buffer (part of a line, or lines). */
bool pw_mcp_reader_holds_bytes(const pw_mcp_reader *r);

#endif
