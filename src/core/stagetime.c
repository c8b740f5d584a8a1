/* Stage timings for the benches (see stagetime.h). */
#include "config.h"

#include "stagetime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_MARKS 256

struct mark {
	const char *name;
	long us;
	long thread;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_bool enabled;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct mark marks[MAX_MARKS];
static size_t count;
static struct timespec origin;

static void dump(void)
{
	const char *path = getenv("PYWARD_STAGE_TIMES");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	pthread_mutex_lock(&mu);
	long main_thread = (long)getpid();
	for (size_t i = 0; i < count; i++)
		fprintf(f, "%8.1f %s %s\n", marks[i].us / 1000.0,
			marks[i].thread == main_thread ? "main" : "thread", marks[i].name);
	fputc('\n', f);
	pthread_mutex_unlock(&mu);
	fclose(f);
}

static void init(void)
{
	const char *path = getenv("PYWARD_STAGE_TIMES");
	if (!path || !*path)
		return;
	clock_gettime(CLOCK_MONOTONIC, &origin);
	atomic_store(&enabled, true);
	atexit(dump);
}

void pw_stage_mark(const char *name)
{
	pthread_once(&once, init);
	if (!atomic_load_explicit(&enabled, memory_order_relaxed))
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long us = (now.tv_sec - origin.tv_sec) * 1000000L + (now.tv_nsec - origin.tv_nsec) / 1000;
	pthread_mutex_lock(&mu);
	if (count < MAX_MARKS)
		marks[count++] = (struct mark){ name, us, (long)syscall(SYS_gettid) };
	pthread_mutex_unlock(&mu);
}
