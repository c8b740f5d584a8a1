/* bench/packages.sh's timer: read an environment's installed distributions
 * with pyward's dist-info reader N times, printing each read's wall and
 * CPU microseconds (the first read, with a cold dentry cache, first): on a
 * shared, busy machine the CPU time says what the read itself costs.
 * Built with -DDISTINFO_REREAD, each line also has the wall and CPU time
 * of the read an operation makes after pip ran (pw_distinfo_reread, given
 * the read before; nothing changed in between).
 * Usage: distinfo_read ENV N */
#include "config.h"

#include "distinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_us(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void fail(pw_err *e)
{
	fprintf(stderr, "distinfo_read: %s\n", pw_err_message(e));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: distinfo_read ENV N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	size_t count = 0;
	for (int i = 0; i < n; i++) {
		pw_distset s;
		long long t0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_PROCESS_CPUTIME_ID);
		pw_err *e = pw_distinfo_read(argv[1], &s);
		long long t1 = now_us(CLOCK_MONOTONIC), c1 = now_us(CLOCK_PROCESS_CPUTIME_ID);
		if (e)
			fail(e);
		count = s.count;
		printf("%lld %lld", t1 - t0, c1 - c0);
#ifdef DISTINFO_REREAD
		pw_distset again;
		t0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_PROCESS_CPUTIME_ID);
		e = pw_distinfo_reread(argv[1], &s, &again);
		t1 = now_us(CLOCK_MONOTONIC), c1 = now_us(CLOCK_PROCESS_CPUTIME_ID);
		if (e)
			fail(e);
		if (again.count != s.count) {
			fprintf(stderr, "distinfo_read: the second read found %zu, the first %zu\n", again.count, s.count);
			return 1;
		}
		pw_distset_clear(&again);
		printf(" %lld %lld", t1 - t0, c1 - c0);
#endif
		printf("\n");
		pw_distset_clear(&s);
	}
	fprintf(stderr, "%zu distributions\n", count);
	return 0;
}
