/* SIGPIPE held off around writes to a peer that may have gone (sigpipe.h). */
#include "config.h"

#include "sigpipe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static atomic_bool ignored_for_good;

void pw_sigpipe_ignore_for_good(void)
{
	signal(SIGPIPE, SIG_IGN);
	atomic_store(&ignored_for_good, true);
}

static bool pipe_pending(void)
{
	sigset_t pending;
	sigemptyset(&pending);
	sigpending(&pending);
	return sigismember(&pending, SIGPIPE) == 1;
}

void pw_sigpipe_block(pw_sigpipe_guard *g)
{
	g->off = atomic_load(&ignored_for_good);
	if (g->off)
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	g->was_pending = pipe_pending();
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

void pw_sigpipe_unblock(const pw_sigpipe_guard *g)
{
	if (g->off)
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (!g->was_pending && pipe_pending()) {
		struct timespec now = { 0, 0 };
		sigtimedwait(&set, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}
