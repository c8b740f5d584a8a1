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
	bool off;  /* the process ignores SIGPIPE for good: nothing to hold off */
} pw_sigpipe_guard;

void pw_sigpipe_block(pw_sigpipe_guard *g);
void pw_sigpipe_unblock(const pw_sigpipe_guard *g);
/* For a process that owns its signals and ignores SIGPIPE from now on (the
 * MCP server): SIG_IGN, and the guards do nothing, since a write to a peer
 * that has gone then fails with EPIPE and raises nothing. Saves the four
 * system calls of a guard (a python call through the MCP server makes
 * one guarded write). Call it before starting threads. */
void pw_sigpipe_ignore_for_good(void);

#endif
