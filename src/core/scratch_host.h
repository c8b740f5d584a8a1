/*
 * Scratchpad host: the long-lived process behind `pyward python`, like a
 * tmux server. One poll() loop serves clients on a UNIX socket (peers of
 * another uid refused through SO_PEERCRED) and drives one CPython worker
 * per session, speaking JSON lines with it on dedicated pipes while the
 * worker's fd 1 and 2 are captured separately. Calls of a session run in
 * order, one at a time; at most max_workers workers live, the least
 * recently used idle one of another session is evicted for a new one.
 * Every loss of state is queued as a notice for the session's next result.
 * Nothing of the Python state is ever written to disk; the record file
 * holds only session names and generation numbers.
 */
#ifndef PW_SCRATCH_HOST_H
#define PW_SCRATCH_HOST_H

#include "err.h"

#include <sys/types.h>

typedef struct pw_scratch_host_opts {
	const char *dir;            /* the socket folder (pw_scratch_dir) */
	const char *worker_script;  /* pyward_worker.py */
	int idle_timeout_s;         /* exit after this long without clients or cells; 0: 900 */
	int max_workers;            /* 0: 4 */
	int grace_ms;               /* interrupt -> kill; 0: 2000 */
	int ready_fd;               /* one 'R' written here once listening, then closed; -1: none */
	uid_t owner_uid;            /* peers of any other uid are refused */
} pw_scratch_host_opts;

/* Serve until idle; NULL after an idle exit, an error when the socket could
 * not be set up (another host is running, the folder is not usable). */
pw_err *pw_scratch_host_run(const pw_scratch_host_opts *o);

#endif
