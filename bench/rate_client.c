/*
 * A constant-rate HTTP/1.1 load generator for bench/api.sh (the wrk2 idea;
 * wrk2 is not in Debian): CONNS threads, each with one keep-alive TCP
 * connection, together send RATE requests a second, request k of thread i
 * due at start + (k * CONNS + i) / RATE. A request's latency is counted from
 * the moment it was due, not from when it was sent, so a slow answer that
 * holds back the requests behind it shows in their latency too (no
 * "coordinated omission"). The first WARMUP seconds are not counted.
 *
 * Usage: rate_client HOST PORT PATH RATE SECONDS CONNS WARMUP [HEADER]...
 * Prints one line:
 *   sent ok non2xx errors rate p50_ms p90_ms p99_ms p999_ms max_ms late_ms_p99 svc_p50_ms svc_p99_ms
 * where rate is the answered requests a second over the counted time,
 * late_ms_p99 the 99th percentile of how late the client itself sent (its own
 * scheduling delay, included in the latencies) and svc_* the time from the
 * actual send to the whole answer (what the server and the loopback took,
 * without the client's lateness and without queueing behind a stall).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct worker {
	int index;
	int fd;
	int64_t *lat_us, *late_us, *svc_us;
	size_t n;
	long sent, ok, non2xx, errors;
} worker;

static const char *host;
static int port, conns;
static double rate, seconds, warmup;
static char request[8192];
static size_t request_len;
static int64_t start_ns;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int connect_once(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, host, &a.sin_addr);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One answer: its status, or -1 when the connection failed or closed. */
static int read_answer(int fd)
{
	static __thread char buf[65536];
	size_t have = 0;
	char *end = NULL;
	while (!end) {
		if (have == sizeof buf - 1)
			return -1;
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			return -1;
		have += (size_t)n;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	int status = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	long length = -1;
	for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n"))
		if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
			length = strtol(line + 17, NULL, 10);
	if (length < 0)
		return -1;  /* both servers send a length; chunked is not expected */
	size_t body = have - (size_t)(end + 4 - buf);
	while ((long)body < length) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return -1;
		body += (size_t)n;
	}
	return status;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *run(void *arg)
{
	worker *w = arg;
	double per = 1e9 / rate;
	int64_t end = start_ns + (int64_t)(seconds * 1e9);
	int64_t count_from = start_ns + (int64_t)(warmup * 1e9);
	for (long k = 0;; k++) {
		int64_t due = start_ns + (int64_t)((double)(k * conns + w->index) * per);
		if (due >= end)
			break;
		sleep_until(due);
		int64_t sent = now_ns();
		int status = -1;
		for (int attempt = 0; attempt < 2 && status < 0; attempt++) {
			if (w->fd < 0)
				w->fd = connect_once();
			if (w->fd >= 0 && write(w->fd, request, request_len) == (ssize_t)request_len)
				status = read_answer(w->fd);
			if (status < 0 && w->fd >= 0) {
				/* the server closed a kept-alive connection: once more on a new one */
				close(w->fd);
				w->fd = -1;
			}
		}
		int64_t done = now_ns();
		if (due < count_from)
			continue;
		w->sent++;
		if (status < 0) {
			w->errors++;
			continue;
		}
		if (status >= 200 && status < 300)
			w->ok++;
		else
			w->non2xx++;
		w->lat_us[w->n] = (done - due) / 1000;
		w->late_us[w->n] = (sent - due) / 1000;
		w->svc_us[w->n] = (done - sent) / 1000;
		w->n++;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, size_t n, double p)
{
	if (n == 0)
		return -1;
	size_t i = (size_t)(p * (double)n);
	return (double)v[i >= n ? n - 1 : i] / 1000.0;
}

int main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "usage: rate_client HOST PORT PATH RATE SECONDS CONNS WARMUP [HEADER]...\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	rate = atof(argv[4]);
	seconds = atof(argv[5]);
	conns = atoi(argv[6]);
	warmup = atof(argv[7]);
	if (rate <= 0 || seconds <= warmup || conns <= 0 || conns > 256)
		return 2;
	int n = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n", argv[3], host, port);
	for (int i = 8; i < argc && n > 0 && (size_t)n < sizeof request; i++)
		n += snprintf(request + n, sizeof request - (size_t)n, "%s\r\n", argv[i]);
	if (n <= 0 || (size_t)n + 3 > sizeof request)
		return 2;
	n += snprintf(request + n, sizeof request - (size_t)n, "\r\n");
	request_len = (size_t)n;

	size_t per_worker = (size_t)(rate * seconds / conns) + 16;
	worker *w = calloc((size_t)conns, sizeof *w);
	pthread_t *t = calloc((size_t)conns, sizeof *t);
	for (int i = 0; i < conns; i++) {
		w[i] = (worker){ .index = i, .fd = connect_once() };
		w[i].lat_us = calloc(per_worker, sizeof(int64_t));
		w[i].late_us = calloc(per_worker, sizeof(int64_t));
		w[i].svc_us = calloc(per_worker, sizeof(int64_t));
		if (w[i].fd < 0 || !w[i].lat_us || !w[i].late_us || !w[i].svc_us) {
			fprintf(stderr, "rate_client: cannot connect to %s:%d\n", host, port);
			return 1;
		}
	}
	start_ns = now_ns() + 20 * 1000000;
	for (int i = 0; i < conns; i++)
		pthread_create(&t[i], NULL, run, &w[i]);
	long sent = 0, ok = 0, non2xx = 0, errors = 0;
	size_t total = 0;
	for (int i = 0; i < conns; i++) {
		pthread_join(t[i], NULL);
		sent += w[i].sent, ok += w[i].ok, non2xx += w[i].non2xx, errors += w[i].errors;
		total += w[i].n;
	}
	int64_t *lat = malloc((total + 1) * sizeof *lat), *late = malloc((total + 1) * sizeof *late),
		*svc = malloc((total + 1) * sizeof *svc);
	size_t k = 0;
	for (int i = 0; i < conns; i++) {
		memcpy(lat + k, w[i].lat_us, w[i].n * sizeof *lat);
		memcpy(late + k, w[i].late_us, w[i].n * sizeof *late);
		memcpy(svc + k, w[i].svc_us, w[i].n * sizeof *svc);
		k += w[i].n;
	}
	qsort(lat, total, sizeof *lat, cmp);
	qsort(late, total, sizeof *late, cmp);
	qsort(svc, total, sizeof *svc, cmp);
	printf("%ld %ld %ld %ld %.0f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", sent, ok, non2xx, errors,
	       (double)total / (seconds - warmup), pct(lat, total, 0.50), pct(lat, total, 0.90), pct(lat, total, 0.99),
	       pct(lat, total, 0.999), total ? (double)lat[total - 1] / 1000.0 : -1, pct(late, total, 0.99),
	       pct(svc, total, 0.50), pct(svc, total, 0.99));
	return errors ? 1 : 0;
}
