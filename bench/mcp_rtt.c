/*
 * Round-trip timer for bench/mcp.sh: a plain C client of `pyward mcp` over
 * its stdio pipes (no SDK in the measured loop). It starts the server,
 * times the first answer (initialize), then M tools/list and N `python`
 * calls of 1+1 (the first one, which starts the session, timed apart),
 * and the server's CPU time over those N calls (all its threads, from
 * /proc/PID/task/<tid>/schedstat: nanoseconds on a CPU).
 *   mcp_rtt PYWARD WORKSPACE VENV N M
 * Prints "init_us first_call_us list_median_us median_us p99_us cpu_us_per_call".
 */
#include "rtt_client.h"

#include <dirent.h>
#include <sys/wait.h>

/* Nanoseconds the process pid has run on a CPU, summed over its threads. */
static long long cpu_ns(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%ld/task", (long)pid);
	DIR *d = opendir(dir);
	long long sum = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[384];
		snprintf(path, sizeof path, "%s/%s/schedstat", dir, e->d_name);
		FILE *f = fopen(path, "r");
		long long ns = 0;
		if (f && fscanf(f, "%lld", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

static FILE *from_server;
static int to_server;
static char *line;
static size_t line_cap;

/* Send one request and read lines until its answer (by id) arrives. */
static const char *roundtrip(const char *req, int id)
{
	if (!rtt_send(to_server, req, strlen(req)))
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
	char *server_argv[] = { (char *)pyward, (char *)"-C", (char *)ws, (char *)"mcp", NULL };
	long long t0 = rtt_now_ns();
	pid_t pid = rtt_spawn(server_argv, &to_server, &from_server);
	if (pid < 0)
		return 1;
	const char *r = roundtrip("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
				  "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp_rtt\",\"version\":\"1\"}}}\n", 1);
	long long init = rtt_now_ns() - t0;
	if (!r || !strstr(r, "\"protocolVersion\":\"2025-11-25\""))
		fail("initialize", r);
	static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
	if (!rtt_send(to_server, inited, sizeof inited - 1))
		return 1;
	long long *t = calloc((size_t)(n > m ? n : m), sizeof *t);
	int id = 2;
	for (int i = 0; i < m; i++, id++) {
		char req[128];
		snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}\n", id);
		long long s = rtt_now_ns();
		r = roundtrip(req, id);
		t[i] = rtt_now_ns() - s;
		if (!r || !strstr(r, "\"name\":\"python\""))
			fail("tools/list", r);
	}
	long long list_med, list_p99;
	rtt_summary(t, m, &list_med, &list_p99);
	long long first = 0, cpu0 = 0;
	for (int i = -1; i < n; i++, id++) {
		if (i == 0)
			cpu0 = cpu_ns(pid);
		char req[1024];
		snprintf(req, sizeof req,
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"python\","
			 "\"arguments\":{\"code\":\"1+1\",\"venv\":\"%s\"}}}\n", id, venv);
		long long s = rtt_now_ns();
		r = roundtrip(req, id);
		long long d = rtt_now_ns() - s;
		if (!r || !strstr(r, "\"value\":\"2\""))
			fail("tools/call python", r);
		if (i < 0)
			first = d;
		else
			t[i] = d;
	}
	double cpu = n > 0 ? (double)(cpu_ns(pid) - cpu0) / n / 1000 : 0;
	long long med, p99;
	rtt_summary(t, n, &med, &p99);
	printf("%lld %lld %lld %lld %lld %.1f\n", init / 1000, first / 1000, list_med, med, p99, cpu);
	close(to_server);
	int st;
	waitpid(pid, &st, 0);
	free(t);
	return 0;
}
