/*
 * A worker's reply to a cell, read without jansson in the one shape a
 * plain cell's reply has, for a caller that wants the result as JSON text
 * at once (the MCP server answers before the result is decoded: see
 * pw_scratch_answer_fn in scratch_proto.h).
 *
 * The worker writes {"id": N, "status": "ok"|"error", "value": V,
 * "traceback": T} with Python's ensure_ascii encoder, V and T strings or
 * null. A string of printable ASCII whose only escapes are \" \\ \b \f
 * \n \r \t is, byte for byte, what jansson's compact dump writes for the
 * same text, so it is copied as it is. Anything else (another member or
 * order, "started", a \u escape, other bytes) is not taken here and goes
 * through jansson as before.
 */
#ifndef PW_SCRATCH_REPLY_H
#define PW_SCRATCH_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_scratch_reply_view {
	int64_t id;
	bool error;                 /* "error", else "ok" */
	const char *value;          /* the JSON text of the value (a string or null), in the line */
	size_t value_len;
	const char *traceback;      /* the same for the traceback */
	size_t traceback_len;
} pw_scratch_reply_view;

/* True when line (len bytes, no newline) has exactly that shape; v then
 * points into it. */
bool pw_scratch_reply_scan(const char *line, size_t len, pw_scratch_reply_view *v);

#endif
