/*
 * SIGPIPE held off in this thread around writes to a peer that may have
 * gone (curl with CURLOPT_NOSIGNAL, whose TLS writes can raise it; a
 * scratchpad worker's request pipe). A SIGPIPE raised meanwhile is taken
 * back, so a dropped peer is an error to report, not the death of the
 * process; one that was pending before is left alone.
 */
#ifndef PW_SIGPIPE_H
#define PW_SIGPIPE_H

#include <signal.h>
#include <stdbool.h>

typedef struct pw_sigpipe_guard {
	sigset_t old;
	bool was_pending;
} pw_sigpipe_guard;

void pw_sigpipe_block(pw_sigpipe_guard *g);
void pw_sigpipe_unblock(const pw_sigpipe_guard *g);

#endif
