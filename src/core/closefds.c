/* Closing inherited descriptors between fork and exec. */
#define _GNU_SOURCE 1 /* close_range */
#include "config.h"

#include "closefds.h"

#include <sys/resource.h>
#include <unistd.h>

static void close_between(unsigned first, unsigned last)
{
	if (first > last)
		return;
	if (close_range(first, last, 0) == 0)
		return;
	/* A kernel before 5.9: one by one, up to the descriptor limit. */
	struct rlimit rl;
	unsigned top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536
			       ? (unsigned)rl.rlim_cur
			       : 65536;
	for (unsigned fd = first; fd <= last && fd < top; fd++)
		close((int)fd);
}

void pw_close_fds_from(int first, int keep)
{
	if (keep >= first) {
		close_between((unsigned)first, (unsigned)keep - 1);
		close_between((unsigned)keep + 1, ~0U);
	} else {
		close_between((unsigned)first, ~0U);
	}
}
