/*
 * What a hop between two tasks costs on this machine, for bench/README.md
 * ("Fifth pass"): a one-byte pipe ping-pong, 50,000 round trips, between
 * two processes and between two threads of one process, on one CPU and
 * on two (sched_setaffinity). Prints the mean round trip of each.
 *   cc -O2 -pthread bench/pingpong.c -o pingpong && ./pingpong
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 50000 };
static int ping[2], pong[2];
static int echo_cpu;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static void *echo(void *unused)
{
	(void)unused;
	pin(echo_cpu);
	char c;
	for (int i = 0; i < ROUNDS; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

/* Mean round trip in microseconds; -1 when the pipes or the echo failed. */
static double round_trip(int as_process, int cpu, int other_cpu)
{
	if (pipe(ping) || pipe(pong))
		return -1;
	echo_cpu = other_cpu;
	pid_t pid = 0;
	pthread_t thread;
	if (as_process) {
		if ((pid = fork()) == 0) {
			echo(NULL);
			_exit(0);
		}
	} else if (pthread_create(&thread, NULL, echo, NULL) != 0) {
		return -1;
	}
	pin(cpu);
	char c = 'x';
	long long start = now_ns();
	int done = 0;
	for (; done < ROUNDS; done++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
	long long took = now_ns() - start;
	if (as_process)
		waitpid(pid, NULL, 0);
	else
		pthread_join(thread, NULL);
	close(ping[0]);
	close(ping[1]);
	close(pong[0]);
	close(pong[1]);
	return done == ROUNDS ? took / 1000.0 / ROUNDS : -1;
}

int main(void)
{
	printf("two processes, one CPU:  %6.2f us\n", round_trip(1, 0, 0));
	printf("two threads, one CPU:    %6.2f us\n", round_trip(0, 0, 0));
	printf("two processes, two CPUs: %6.2f us\n", round_trip(1, 0, 1));
	printf("two threads, two CPUs:   %6.2f us\n", round_trip(0, 0, 1));
	return 0;
}
