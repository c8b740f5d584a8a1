/*
 * Round-trip timer for bench/scratchpad.sh, one C client for both sides so
 * that only the server differs:
 *   scratch_rtt pyward PYWARD_BINARY PYTHON N   cells through the scratchpad host
 *   scratch_rtt direct PYWARD_BINARY PYTHON N   the same, in direct mode (pw_scratch_lease
 *                                               after the first cell: the host lends the
 *                                               worker's pipes and steps out of the path)
 *   scratch_rtt floor PYTHON N                  cells through a minimal JSON-lines loop on pipes
 *   scratch_rtt relay RELAY PYTHON N            the same loop behind bench/relay.c (one hop, no work)
 * Prints "cold_us median_us p99_us" (cold: the first cell of a fresh session
 * or process, including its start).
 */
#include "rtt_client.h"

#include "scratch_client.h"

extern char **environ;

static void report(long long cold, long long *t, int n)
{
	long long med, p99;
	rtt_summary(t, n, &med, &p99);
	printf("%lld %lld %lld\n", cold / 1000, med, p99);
}

static int bench_pyward(const char *exe, const char *python, int n, int direct)
{
	const char *argv[] = { "pyward", "python", "--host", NULL };
	pw_scratch_connect_opts o = { .autostart = true, .host_exe = exe, .host_argv = argv };
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return 1;
	long long t0 = rtt_now_ns();
	pw_scratch_client *c = NULL;
	pw_err *e = pw_scratch_connect(&o, &c);
	char session[64];
	snprintf(session, sizeof session, "bench-%d", (int)getpid());
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .session = session, .code = (char *)"1+1",
				   .python = (char *)python, .project_dir = cwd, .env = environ };
	long long *t = calloc((size_t)n, sizeof *t);
	long long cold = 0;
	for (int i = -1; !e && i < n; i++) {
		long long s = i < 0 ? t0 : rtt_now_ns();
		pw_scratch_result *r = NULL;
		e = pw_scratch_run(c, &req, NULL, &r);
		if (!e && (!r->value || strcmp(r->value, "2") != 0)) {
			fprintf(stderr, "unexpected result\n");
			return 1;
		}
		pw_scratch_result_free(&r);
		if (i < 0)
			cold = rtt_now_ns() - s;
		else
			t[i] = rtt_now_ns() - s;
		if (i < 0 && direct) /* once per run of calls, not timed */
			e = pw_scratch_lease(c, session);
	}
	if (e) {
		fprintf(stderr, "pyward: %s\n", pw_err_message(e));
		return 1;
	}
	pw_scratch_discard(c, session);
	pw_scratch_close(&c);
	report(cold, t, n);
	free(t);
	return 0;
}

static const char floor_loop[] =
	"import sys, json\n"
	"for line in sys.stdin:\n"
	"    req = json.loads(line)\n"
	"    value = eval(compile(req['code'], '<cell>', 'eval'))\n"
	"    sys.stdout.write(json.dumps({'value': repr(value)}) + '\\n')\n"
	"    sys.stdout.flush()\n";

/* relay NULL: the client talks to the Python loop itself; else to the
 * relay (bench/relay.c) in front of it. */
static int bench_floor(const char *relay, const char *python, int n)
{
	char *direct_argv[] = { (char *)python, (char *)"-c", (char *)floor_loop, NULL };
	char *relay_argv[] = { (char *)relay, (char *)python, (char *)"-c", (char *)floor_loop, NULL };
	char **argv = relay ? relay_argv : direct_argv;
	int to;
	FILE *in;
	long long t0 = rtt_now_ns();
	if (rtt_spawn(argv, &to, &in) < 0)
		return 1;
	long long *t = calloc((size_t)n, sizeof *t);
	long long cold = 0;
	char line[256];
	static const char req[] = "{\"code\": \"1+1\"}\n";
	for (int i = -1; i < n; i++) {
		long long s = i < 0 ? t0 : rtt_now_ns();
		if (!rtt_send(to, req, sizeof req - 1) || !fgets(line, sizeof line, in))
			return 1;
		if (i < 0)
			cold = rtt_now_ns() - s;
		else
			t[i] = rtt_now_ns() - s;
	}
	close(to);
	fclose(in);
	report(cold, t, n);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "pyward") == 0)
		return bench_pyward(argv[2], argv[3], atoi(argv[4]), 0);
	if (argc == 5 && strcmp(argv[1], "direct") == 0)
		return bench_pyward(argv[2], argv[3], atoi(argv[4]), 1);
	if (argc == 4 && strcmp(argv[1], "floor") == 0)
		return bench_floor(NULL, argv[2], atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "relay") == 0)
		return bench_floor(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: scratch_rtt pyward|direct PYWARD PYTHON N | floor PYTHON N | relay RELAY PYTHON N\n");
	return 2;
}
