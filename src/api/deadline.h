/*
 * The time a client has to send a whole request. libmicrohttpd's connection
 * timeout closes a connection that is silent for that long, but a client
 * that sends one header byte every few seconds is never silent: it holds a
 * thread and a connection slot for as long as it likes, and max-connections
 * of them shut everyone else out before any token is checked. So every
 * connection is recorded here from when it opens (and again after each
 * answer, for the next request on a kept-alive connection) until its request
 * is complete; a watchdog thread answers 408 (not over TLS) and shuts down (shutdown(2), so the descriptor
 * stays the daemon's to close) any that has taken longer than the limit. A
 * request being answered (a long event stream too) is never cut.
 */
#ifndef PW_API_DEADLINE_H
#define PW_API_DEADLINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct pw_api_deadlines pw_api_deadlines;
typedef struct pw_api_conn pw_api_conn;

/* seconds: the limit; *cut counts the connections cut (may be NULL). */
pw_api_deadlines *pw_api_deadlines_start(unsigned seconds, atomic_uint_fast64_t *cut);
void pw_api_deadlines_stop(pw_api_deadlines **d);

/* A connection on fd opened: its request's time starts now. plain: not
 * TLS, so a connection cut is first answered 408 (the one error shape). */
pw_api_conn *pw_api_conn_opened(pw_api_deadlines *d, int fd, bool plain);
/* Closed (before the daemon closes fd). */
void pw_api_conn_closed(pw_api_deadlines *d, pw_api_conn *c);
/* Its request is complete and being answered: no deadline. */
void pw_api_conn_answering(pw_api_conn *c);
/* Answered; the next request's time starts now. */
void pw_api_conn_waiting(pw_api_conn *c);

#endif
