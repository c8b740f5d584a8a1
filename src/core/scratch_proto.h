/*
 * Scratchpad protocol pieces shared by the host and its clients: JSON-lines
 * framing, the bounded output capture (head and tail kept, the middle
 * counted), and the messages (requests, results, session lists, errors)
 * encoded to and decoded from one JSON object per line.
 */
#ifndef PW_SCRATCH_PROTO_H
#define PW_SCRATCH_PROTO_H

#include "err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Files in the socket folder: the socket, the host's pid, its log, the
 * start lock, and the non-state record of sessions (names, generations)
 * that lets a restarted host announce the loss. */
#define PW_SCRATCH_SOCKET "host.sock"
#define PW_SCRATCH_PIDFILE "host.pid"
#define PW_SCRATCH_LOG "host.log"
#define PW_SCRATCH_LOCK "start.lock"
#define PW_SCRATCH_RECORD "sessions"

#define PW_SCRATCH_DEFAULT_MAX_OUTPUT (64 * 1024)
/* One line of the protocol may not exceed this (a cell's code, a result). */
#define PW_SCRATCH_MAX_LINE (64 * 1024 * 1024)

/* True when name is a valid session name (1-64 of A-Z a-z 0-9 . _ -). */
bool pw_scratch_session_name_ok(const char *name);

/* ---- line framing: bytes in, complete lines out */
typedef struct pw_scratch_linebuf pw_scratch_linebuf;

pw_scratch_linebuf *pw_scratch_linebuf_new(void);
void pw_scratch_linebuf_free(pw_scratch_linebuf **lb);
/* Append bytes; false when the pending line grew past PW_SCRATCH_MAX_LINE. */
bool pw_scratch_linebuf_feed(pw_scratch_linebuf *lb, const char *data, size_t len);
/* The next complete line (newline stripped, NUL-terminated) as a malloc'd
 * string, or NULL when none is complete yet. */
char *pw_scratch_linebuf_take(pw_scratch_linebuf *lb);

/* ---- bounded capture of one output stream */
typedef struct pw_scratch_capture pw_scratch_capture;

/* Keeps at most limit bytes: the first limit/2 and the last limit - limit/2. */
pw_scratch_capture *pw_scratch_capture_new(size_t limit);
void pw_scratch_capture_free(pw_scratch_capture **c);
void pw_scratch_capture_add(pw_scratch_capture *c, const char *data, size_t len);
/* Head and tail joined (a marker line naming the dropped count in between
 * when bytes were dropped), made valid UTF-8 (see pw_scratch_utf8_clean);
 * malloc'd. */
char *pw_scratch_capture_text(const pw_scratch_capture *c);
size_t pw_scratch_capture_dropped(const pw_scratch_capture *c);
size_t pw_scratch_capture_total(const pw_scratch_capture *c);
void pw_scratch_capture_reset(pw_scratch_capture *c, size_t limit);

/* A malloc'd copy of len bytes with every byte that is not part of a valid
 * UTF-8 sequence (and every NUL) replaced by U+FFFD: JSON strings must be
 * text, program output need not be. */
char *pw_scratch_utf8_clean(const char *s, size_t len);

/* A caller that needs a cell's result only as JSON text (the MCP server,
 * whose answer is that text) can be handed the text as soon as the
 * worker's reply is read, before the result is decoded: text is
 * pw_scratch_result_dump's bytes for the result (len of them), error
 * whether its status is "error" (else "ok"). Only a plain reply is handed
 * over this way (scratch_reply.h). It returns whether it answered with
 * the text; the result then says answered. */
typedef bool (*pw_scratch_answer_fn)(void *arg, const char *text, size_t len, bool error);

/* A caller that reads its own input on the thread that runs the cell (the
 * MCP server) names that input (watch_fd) and a hand-over: while a cell
 * runs in direct mode, the wait for the worker watches the input too and
 * calls hand_over when it becomes readable; any other wait (the host, a
 * long cell line) calls it first. The caller then lets another thread read
 * its input meanwhile. It may be called more than once: the caller makes
 * a second call harmless. */
typedef void (*pw_scratch_hand_over_fn)(void *arg);

/* ---- requests: client to host */
typedef enum pw_scratch_op {
	PW_SCRATCH_OP_RUN,
	PW_SCRATCH_OP_INTERRUPT,
	PW_SCRATCH_OP_DISCARD,
	PW_SCRATCH_OP_LIST,
	PW_SCRATCH_OP_LEASE,   /* lend this client the session's worker pipes */
	PW_SCRATCH_OP_RELEASE, /* hand them back */
} pw_scratch_op;

typedef struct pw_scratch_request {
	pw_scratch_op op;
	char *session;
	char *code;            /* RUN: may be NULL with reset */
	bool reset;            /* RUN: fresh worker first */
	char *python;          /* RUN: interpreter for a new worker */
	bool python_explicit;  /* given with --python/--venv: must match a running worker */
	char *venv;            /* the environment it belongs to, or NULL */
	char *project_dir;     /* RUN: the worker's directory */
	char **env;            /* RUN: NULL-terminated caller environment; NULL: the
				  one the session was given before (else the host's) */
	int64_t timeout_ms;    /* RUN: 0 = none */
	size_t max_output;     /* RUN: per stream; 0 = default */
	int64_t executions;    /* RELEASE: cells counted while the client held the worker */
	char *lost_kind;       /* RELEASE: the worker was lost meanwhile (a notice kind) */
	char *lost_message;    /* RELEASE: and how, for the next result's notice */
	/* RUN in direct mode, not sent anywhere: see pw_scratch_answer_fn */
	pw_scratch_answer_fn answer;
	void *answer_arg;
	/* RUN, not sent anywhere: see pw_scratch_hand_over_fn (NULL: none) */
	pw_scratch_hand_over_fn hand_over;
	void *hand_over_arg;
	int watch_fd;
} pw_scratch_request;

json_t *pw_scratch_request_encode(const pw_scratch_request *r);
/* Fill r from j (strings copied); a usage error for a malformed request. */
pw_err *pw_scratch_request_decode(const json_t *j, pw_scratch_request *r);
/* One line from a client (any bytes) into r: a usage error, with r
 * cleared, for anything that is not a well-formed request. */
pw_err *pw_scratch_request_parse(const char *line, pw_scratch_request *r);
void pw_scratch_request_clear(pw_scratch_request *r);

/* ---- results: host to client */
typedef struct pw_scratch_notice {
	char *kind;      /* host_restarted, worker_crashed, evicted, reset, discarded,
			    interrupt_kill, timeout_kill, env_removed, idle_exit */
	char *message;   /* for people */
} pw_scratch_notice;

typedef struct pw_scratch_interp {
	char *version, *implementation, *build, *executable, *project_dir;
} pw_scratch_interp;

typedef struct pw_scratch_result {
	char *session;
	int64_t execution;       /* 1, 2, ... within a generation; 0 when nothing ran */
	int64_t generation;      /* bumped whenever the state starts fresh */
	char *status;            /* ok, error, interrupted, timed_out, lost, reset */
	char *value;             /* repr of the last non-None expression, or NULL */
	char *traceback;         /* or NULL */
	char *out, *err;         /* captured stdout/stderr (never NULL after decode) */
	size_t out_dropped, err_dropped;  /* bytes cut from the middle */
	pw_scratch_notice *notices;       /* state loss first */
	size_t notice_count;
	pw_scratch_interp *interp;        /* set on a fresh worker's first result */
	int64_t duration_ms;
	bool answered;                    /* its text went to the request's answer
					     function: value and traceback left out */
} pw_scratch_result;

json_t *pw_scratch_result_encode(const pw_scratch_result *r);
/* json_dumps(pw_scratch_result_encode(r), JSON_COMPACT), the same bytes,
 * without building the tree (the MCP server's hot path); *len its length
 * when len is given. */
char *pw_scratch_result_dump(const pw_scratch_result *r, size_t *len);
/* The same with the value's and the traceback's JSON text given as it is
 * (value_len bytes at value: a JSON string or null, as jansson writes
 * it), in place of r's; NULL when r needs jansson's path. */
char *pw_scratch_result_dump_with(const pw_scratch_result *r, const char *value, size_t value_len,
				  const char *traceback, size_t traceback_len, size_t *len);
pw_err *pw_scratch_result_decode(const json_t *j, pw_scratch_result **out);
void pw_scratch_result_add_notice(pw_scratch_result *r, const char *kind, const char *message);
void pw_scratch_result_free(pw_scratch_result **r);
/* Exit status a CLI should give this result: 0 ok, 1 error/lost, 4 timed
 * out, 130 interrupted. */
int pw_scratch_result_exit_status(const pw_scratch_result *r);
/* The status of a cell from the worker's reply: its "status" ("error"
 * when it has none), "timed_out" for an interrupt the time budget sent.
 * The host and direct mode read replies alike through this. */
const char *pw_scratch_reply_status(const json_t *reply, bool timed_out);
/* Interrupting cell ID: the sender writes this line (into buf, NUL-ended;
 * its length returned) to the worker before the SIGINT, so a worker that
 * gets the signal between cells can tell an interrupt for the cell it has
 * not read yet (the line follows that cell) from a late one for the cell
 * it has answered (the line came before, or nothing names the next). */
size_t pw_scratch_interrupt_line(char *buf, size_t n, int64_t id);
/* Did the worker answer that the interrupt came before the cell began
 * ("started": false)? Nothing of the cell ran. */
bool pw_scratch_reply_unstarted(const json_t *reply);
/* The traceback of a cell interrupted before any of it ran. */
const char *pw_scratch_unstarted_traceback(void);
/* The notice for a worker killed because a cell outlived the grace period
 * after its interrupt (allocated). */
char *pw_scratch_kill_message(int grace_ms, bool timed_out);

/* ---- session list */
typedef struct pw_scratch_session_info {
	char *name;
	char *state;        /* idle, running, queued, no worker */
	char *python;       /* interpreter of the worker, or NULL */
	char *last_use;     /* UTC ISO-8601, or NULL */
	int64_t executions; /* in this generation */
	int64_t generation;
	int64_t pid;        /* worker pid, 0 when none */
} pw_scratch_session_info;

typedef struct pw_scratch_list {
	pw_scratch_session_info *sessions;
	size_t count;
	int64_t host_pid;
	int64_t max_workers;
	int64_t workers;
} pw_scratch_list;

json_t *pw_scratch_list_encode(const pw_scratch_list *l);
pw_err *pw_scratch_list_decode(const json_t *j, pw_scratch_list **out);
void pw_scratch_list_free(pw_scratch_list **l);

/* ---- a lease: the host lends a client a session's worker (see scratch_direct.h).
 * On the wire {"lease": {...}}, with the worker's four pipes (requests,
 * replies, stdout, stderr, in that order) attached as SCM_RIGHTS. */
typedef struct pw_scratch_lease_info {
	char *session;
	int64_t pid;         /* the worker (its own process group) */
	int64_t generation;
	int64_t executions;  /* counted so far: the next cell is executions + 1 */
	int64_t grace_ms;    /* from an interrupt to the kill */
} pw_scratch_lease_info;

json_t *pw_scratch_lease_encode(const pw_scratch_lease_info *l);
/* A usage error when j is not a lease. */
pw_err *pw_scratch_lease_decode(const json_t *j, pw_scratch_lease_info *l);
void pw_scratch_lease_clear(pw_scratch_lease_info *l);

/* ---- errors on the wire: {"error": {code, message, hint}} */
json_t *pw_scratch_error_encode(const pw_err *e);
/* An error carried by j, or NULL when j is not an error message. */
pw_err *pw_scratch_error_decode(const json_t *j);

/* One line of JSON (compact, '\n'-terminated), malloc'd; *len its length. */
char *pw_scratch_dump_line(const json_t *j, size_t *len);
/* A cell for the worker, {"id": id, "code": code} as that line: the bytes
 * pw_scratch_dump_line writes for it, without a jansson tree when the code
 * is ASCII (the usual case; a tree cost more than 1+1 itself). */
char *pw_scratch_cell_line(int64_t id, const char *code, size_t *len);

#endif
