/*
 * Round-trip timer for bench/mcp.sh: a plain C client of `pyward mcp` over
 * its stdio pipes (no SDK in the measured loop). It starts the server,
 * times the first answer (initialize), then M tools/list and N `python`
 * calls of 1+1 (the first one, which starts the session, timed apart).
 *   mcp_rtt PYWARD WORKSPACE VENV N M
 * Prints "init_us first_call_us list_median_us median_us p99_us".
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static FILE *from_server;
static int to_server;
static char *line;
static size_t line_cap;

/* Send one request and read lines until its answer (by id) arrives. */
static const char *roundtrip(const char *req, int id)
{
	size_t n = strlen(req);
	if (write(to_server, req, n) != (ssize_t)n)
		return NULL;
	char want[32];
	snprintf(want, sizeof want, "\"id\":%d,", id);
	while (getline(&line, &line_cap, from_server) > 0)
		if (strstr(line, want))
			return line;
	return NULL;
}

static void fail(const char *what, const char *got)
{
	fprintf(stderr, "mcp_rtt: %s: %.300s\n", what, got ? got : "(no answer)");
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: mcp_rtt PYWARD WORKSPACE VENV N M\n");
		return 2;
	}
	const char *pyward = argv[1], *ws = argv[2], *venv = argv[3];
	int n = atoi(argv[4]), m = atoi(argv[5]);
	int to[2], from[2];
	if (pipe(to) || pipe(from))
		return 1;
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(pyward, pyward, "-C", ws, "mcp", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	to_server = to[1];
	from_server = fdopen(from[0], "r");
	const char *r = roundtrip("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
				  "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp_rtt\",\"version\":\"1\"}}}\n", 1);
	long long init = now_ns() - t0;
	if (!r || !strstr(r, "\"protocolVersion\":\"2025-11-25\""))
		fail("initialize", r);
	static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
	if (write(to_server, inited, sizeof inited - 1) < 0)
		return 1;
	long long *t = calloc((size_t)(n > m ? n : m), sizeof *t);
	int id = 2;
	for (int i = 0; i < m; i++, id++) {
		char req[128];
		snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}\n", id);
		long long s = now_ns();
		r = roundtrip(req, id);
		t[i] = now_ns() - s;
		if (!r || !strstr(r, "\"name\":\"python\""))
			fail("tools/list", r);
	}
	qsort(t, (size_t)m, sizeof *t, cmp_ll);
	long long list_med = m ? t[m / 2] : 0;
	long long first = 0;
	for (int i = -1; i < n; i++, id++) {
		char req[1024];
		snprintf(req, sizeof req,
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"python\","
			 "\"arguments\":{\"code\":\"1+1\",\"venv\":\"%s\"}}}\n", id, venv);
		long long s = now_ns();
		r = roundtrip(req, id);
		long long d = now_ns() - s;
		if (!r || !strstr(r, "\"value\":\"2\""))
			fail("tools/call python", r);
		if (i < 0)
			first = d;
		else
			t[i] = d;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_ll);
	printf("%lld %lld %lld %lld %lld\n", init / 1000, first / 1000, list_med / 1000, t[n / 2] / 1000,
	       t[(n * 99) / 100] / 1000);
	close(to_server);
	int st;
	waitpid(pid, &st, 0);
	free(t);
	return 0;
}
