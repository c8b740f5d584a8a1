/*
 * The extractor alone, and what making its tree durable costs: for each
 * run, every mode extracts the archive into a fresh folder (the modes'
 * order rotating), then
 *   seq:    no writer threads (every file made by the reading thread), then syncfs;
 *   pool:   the writer threads, then syncfs (what runtime install did until
 *           the morning of 2026-12-04);
 *   fsync:  every file fdatasynced by the writers' flusher threads (inline on
 *           tmpfs), every folder fsynced (in parallel),
 *           no syncfs (what runtime install does);
 * with sync(2) before each, so no mode pays for another's dirty pages.
 * Prints every run's extract and flush times (ms) and the medians.
 * Built and run by bench/extract.sh.
 * Usage: extract_flush ARCHIVE DIR RUNS [WRITERS]
 */
#include "config.h"

#include "extract.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MODES 3
#define MAX_RUNS 64

static const char *const names[MODES] = { "seq", "pool", "fsync" };

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double s[MAX_RUNS];
	memcpy(s, v, (size_t)n * sizeof *v);
	qsort(s, (size_t)n, sizeof *s, by_value);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* One extraction in mode m; the two phases' times in ms, or -1. */
static int once(const char *archive, const char *dest, int m, int writers, double *ext, double *flush)
{
	pw_extract_opts o = { .archive = archive, .dest = dest, .writers = m == 0 ? -1 : writers,
			      .flush = m == 2 };
	pw_manifest man = { 0 };
	o.manifest = &man;
	sync();
	double t0 = now_ms();
	pw_err *e = pw_extract(&o, NULL);
	double t1 = now_ms();
	pw_manifest_clear(&man);
	if (e) {
		fprintf(stderr, "%s: %s\n", names[m], pw_err_message(e));
		pw_err_free(e);
		return -1;
	}
	if (m != 2) {
		int fd = open(dest, O_RDONLY | O_DIRECTORY);
		if (fd < 0 || syncfs(fd) != 0)
			return -1;
		close(fd);
	}
	*ext = t1 - t0;
	*flush = now_ms() - t1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s ARCHIVE DIR RUNS [WRITERS]\n", argv[0]);
		return 2;
	}
	int runs = atoi(argv[3]), writers = argc > 4 ? atoi(argv[4]) : 0;
	if (runs < 1 || runs > MAX_RUNS)
		return 2;
	double ext[MODES][MAX_RUNS], fl[MODES][MAX_RUNS];
	for (int r = 0; r < runs; r++)
		for (int k = 0; k < MODES; k++) {
			int m = (r + k) % MODES;
			char dest[4096];
			snprintf(dest, sizeof dest, "%s/%s-%d", argv[2], names[m], r);
			if (once(argv[1], dest, m, writers, &ext[m][r], &fl[m][r]) != 0)
				return 1;
		}
	for (int m = 0; m < MODES; m++) {
		printf("  %-5s extract+flush (ms):", names[m]);
		for (int r = 0; r < runs; r++)
			printf(" %.0f+%.0f", ext[m][r], fl[m][r]);
		double tot[MAX_RUNS];
		for (int r = 0; r < runs; r++)
			tot[r] = ext[m][r] + fl[m][r];
		printf("\n  %-5s medians: extract %.1f ms, flush %.1f ms, both %.1f ms\n", names[m],
		       median(ext[m], runs), median(fl[m], runs), median(tot, runs));
	}
	return 0;
}
