/* Helpers shared by the unit tests; see testlib.h. */
#include "config.h"

#include "testlib.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define STOP_GRACE_MS 2000
#define POLL_MS 20

/* ---------------------------------------------------------------- text */

void tl_textf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n)
		abort();
}

const char *tl_path(const char *dir, const char *rel)
{
	static char buf[8][PATH_MAX];
	static int next;
	char *b = buf[next++ % 8];
	snprintf(b, PATH_MAX, "%s/%s", dir, rel);
	return b;
}

/* ---------------------------------------------------------------- time */

void tl_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long long tl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- environment */

static const char *const proxy_vars[] = {
	"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", NULL,
};

const char *tl_top_srcdir(void)
{
	const char *top = getenv("TOP_SRCDIR");
	return top && *top ? top : NULL;
}

const char *tl_python(void)
{
	const char *py = getenv("PYTHON3");
	return py && *py ? py : "python3";
}

void tl_unset_proxy_env(void)
{
	for (const char *const *v = proxy_vars; *v; v++)
		unsetenv(*v);
}

void tl_fixture_path(char *buf, size_t n, const char *name)
{
	const char *top = tl_top_srcdir();
	const char *me = __FILE__;
	const char *slash = strrchr(me, '/');
	if (top)
		tl_textf(buf, n, "%s/tests/fixtures/%s", top, name);
	else if (slash) /* __FILE__ is .../tests/unit/testlib.c */
		tl_textf(buf, n, "%.*s/../fixtures/%s", (int)(slash - me), me, name);
	else
		tl_textf(buf, n, "../fixtures/%s", name);
}

/* ---------------------------------------------------------------- files */

bool tl_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

void expect_err(pw_err *e, pw_errcode code)
{
	if (!e)
		fail_msg("expected error %s, got success", pw_err_code_name(code));
	if (pw_err_code(e) != code)
		fail_msg("expected %s, got %s: %s", pw_err_code_name(code), pw_err_code_name(pw_err_code(e)),
			 pw_err_message(e));
	pw_err_free(e);
}

void tl_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

int tl_make_temp_dir(char *buf, size_t n, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	tl_textf(buf, n, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(buf)) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

void tl_remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------------------------------------------------------------- children */

/* execvp's argv is char *const[] for history's sake: it never writes to
 * the strings, so dropping const here is safe (a union, not a cast, keeps
 * -Wcast-qual quiet). */
static void exec_argv(const char *const argv[])
{
	union {
		const char *const *in;
		char *const *out;
	} v = { .in = argv };
	execvp(argv[0], v.out);
	_exit(127);
}

int tl_wait_child(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int tl_run(const char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		exec_argv(argv);
	return tl_wait_child(pid);
}

/* ---------------------------------------------------------------- servers */

int tl_dead_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	close(s);
	return ntohs(a.sin_port);
}

void tl_server_files(tl_server *s, const char *dir, const char *name)
{
	tl_textf(s->portfile, sizeof s->portfile, "%s/%s.port", dir, name);
	tl_textf(s->log, sizeof s->log, "%s/%s.log", dir, name);
}

int tl_spawn(tl_server *s, const char *const argv[])
{
	pid_t parent = getpid();
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid > 0)
		return 0;
#ifdef __linux__
	/* If the test dies, its servers go too. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
#endif
	(void)parent;
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0)
		dup2(null, 0);
	exec_argv(argv);
	return -1; /* not reached */
}

static int read_port(const char *portfile)
{
	FILE *f = fopen(portfile, "r");
	int port = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%d", &port) != 1)
		port = 0;
	fclose(f);
	return port;
}

int tl_poll_port(tl_server *s)
{
	int status;
	if ((s->port = read_port(s->portfile)) > 0)
		return s->port;
	if (waitpid(s->pid, &status, WNOHANG) != s->pid)
		return 0;
	s->pid = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? TL_NOEXEC : TL_GONE;
}

int tl_wait_port(tl_server *s, int wait_ms)
{
	return tl_wait_ports(&s, 1, wait_ms);
}

int tl_wait_ports(tl_server *const servers[], size_t n, int wait_ms)
{
	for (long long end = tl_now_ms() + wait_ms; tl_now_ms() < end; tl_sleep_ms(POLL_MS)) {
		size_t up = 0;
		for (size_t i = 0; i < n; i++) {
			int got = servers[i]->port > 0 ? servers[i]->port : tl_poll_port(servers[i]);
			if (got < 0)
				return got == TL_NOEXEC ? 1 : -1;
			up += got > 0;
		}
		if (up == n)
			return 0;
	}
	return -1;
}

int tl_tls_dir_make(tl_tls_dir *t, const char *name)
{
	if (tl_make_temp_dir(t->dir, sizeof t->dir, name))
		return -1;
	tl_textf(t->tls, sizeof t->tls, "%s/tls", t->dir);
	tl_textf(t->ca, sizeof t->ca, "%s/ca.pem", t->tls);
	tl_textf(t->other_ca, sizeof t->other_ca, "%s/other-ca.pem", t->tls);
	tl_textf(t->cert, sizeof t->cert, "%s/server.pem", t->tls);
	tl_textf(t->key, sizeof t->key, "%s/server.key", t->tls);
	char script[PATH_MAX];
	tl_fixture_path(script, sizeof script, "make_ca.sh");
	const char *argv[] = { "/bin/sh", script, t->tls, NULL };
	return tl_run(argv) == 0 ? 0 : -1;
}

void tl_stop(tl_server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	for (int waited = 0; waited < STOP_GRACE_MS; waited += POLL_MS) {
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			return;
		}
		tl_sleep_ms(POLL_MS);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
}
