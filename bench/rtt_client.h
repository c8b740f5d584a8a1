/*
 * What the round-trip timers (mcp_rtt.c, scratch_rtt.c) share: the clock,
 * a child started on a pair of pipes, whole writes, and the summary of a
 * run (the first, cold figure, then median and p99 of the timed ones), so
 * that the contestants differ only in what they talk to.
 */
#ifndef BENCH_RTT_CLIENT_H
#define BENCH_RTT_CLIENT_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline long long rtt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int rtt_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Sorts t; its median and p99 in microseconds. */
static inline void rtt_summary(long long *t, int n, long long *median_us, long long *p99_us)
{
	qsort(t, (size_t)n, sizeof *t, rtt_cmp);
	*median_us = n ? t[n / 2] / 1000 : 0;
	*p99_us = n ? t[(n * 99) / 100] / 1000 : 0;
}

/* argv[0] (a path) started with its stdin and stdout on pipes: *to is
 * its stdin, *from its stdout. -1 when it could not be started. */
static inline pid_t rtt_spawn(char *const argv[], int *to, FILE **from)
{
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	*to = in[1];
	*from = fdopen(out[0], "r");
	return pid;
}

static inline bool rtt_send(int fd, const char *msg, size_t len)
{
	while (len > 0) {
		ssize_t k = write(fd, msg, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		msg += k;
		len -= (size_t)k;
	}
	return true;
}

#endif
