/* Scratchpad client: find or start the host, send one request, read its answer. */
#include "config.h"

#include "scratch_client.h"

#include "closefds.h"
#include "digest.h"
#include "i18n.h"
#include "runner.h"
#include "scratch_direct.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define START_WAIT_MS 10000

struct pw_scratch_client {
	int fd;
	pw_scratch_linebuf *in;
	bool started_host;
	char *env_sent_for;   /* the host keeps a session's environment: send it once */
	pw_scratch_direct *direct; /* the session's worker, while leased */
};

/* ---------------------------------------------------------------- names */

pw_err *pw_scratch_dir(char **out)
{
	*out = NULL;
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char *dir = rt && rt[0] == '/' ? xasprintf("%s/pyward", rt) : xasprintf("/tmp/pyward-%ld", (long)getuid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		pw_err *e = pw_err_errno(PW_ERR_IO, errno, _("set XDG_RUNTIME_DIR to a private writable folder"),
					 _("cannot create the scratchpad folder %s"), dir);
		free(dir);
		return e;
	}
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0777) != 0700) {
		pw_err *e = pw_err_new(PW_ERR_REFUSED, _("remove it, or set XDG_RUNTIME_DIR to a private folder"),
				       _("%s is not a private folder of this user (it must be ours, with mode 0700)"),
				       dir);
		free(dir);
		return e;
	}
	*out = dir;
	return NULL;
}

char *pw_scratch_default_session(const char *workspace)
{
	const char *base = strrchr(workspace, '/');
	base = base && base[1] ? base + 1 : workspace;
	char clean[33];
	size_t k = 0;
	for (const char *p = base; *p && k < sizeof clean - 1; p++)
		clean[k++] = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", *p) ? *p : '_';
	clean[k] = '\0';
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, workspace, strlen(workspace));
	char hex[PW_SHA256_HEX_LEN + 1];
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	hex[8] = '\0';
	return xasprintf("%s-%s", k ? clean : "root", hex);
}

/* ---------------------------------------------------------------- connect */

static int connect_once(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, PW_SCRATCH_SOCKET);
	if (n < 0 || (size_t)n >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* The last "error: ..." line the host wrote into its log, or NULL. */
static char *last_logged_error(const char *dir)
{
	char *path = xasprintf("%s/%s", dir, PW_SCRATCH_LOG);
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return NULL;
	char line[1024], *found = NULL;
	while (fgets(line, sizeof line, f)) {
		char *at = strstr(line, "error: ");
		if (!at)
			continue;
		at[strcspn(at, "\n")] = '\0';
		free(found);
		found = xstrdup(at + strlen("error: "));
	}
	fclose(f);
	return found;
}

extern char **environ;

/* The host's environment: ours scrubbed, with the ready pipe and the folder. */
static char **host_environment(int ready_fd, const char *dir)
{
	/* Scrubbed as every child is (runner.h); pyward's own settings stay,
	 * so the host finds the same box, config and worker script. */
	static const char *const keep[] = { "PYWARD_*", NULL };
	char *add[] = { xasprintf("PYWARD_SCRATCH_READY_FD=%d", ready_fd), xasprintf("PYWARD_SCRATCH_DIR=%s", dir),
			NULL };
	char **env = pw_runner_build_env_keeping((const char *const *)environ, keep, (const char *const *)add);
	free(add[0]);
	free(add[1]);
	return env;
}

static void free_host_environment(char **env)
{
	pw_runner_env_free(env);
}

static char **copy_argv(const char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **av = xcalloc(n + 1, sizeof *av);
	for (size_t i = 0; i < n; i++)
		av[i] = xstrdup(argv[i]);
	return av;
}

static void free_argv(char **av)
{
	for (char **a = av; *a; a++)
		free(*a);
	free(av);
}

/* In the forked child: only async-signal-safe calls, because the caller
 * (the TUI) may have other threads. The host is a grandchild in its own
 * session: it outlives the client and never becomes its zombie. */
static void __attribute__((noreturn)) host_child(const char *exe, char **av, char **env, int ready_fd,
						  const char *log)
{
	/* The host must not inherit the caller's signal state: a TUI job
	 * thread blocks every signal, and an ignored signal stays ignored
	 * across execve, so a host started from there would not stop on TERM. */
	static const int reset[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM };
	for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
		signal(reset[i], SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (fork() != 0)
		_exit(0);
	fcntl(ready_fd, F_SETFD, 0); /* the host inherits the write end */
	int null = open("/dev/null", O_RDWR);
	int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	dup2(null, 0);
	dup2(null, 1);
	dup2(logfd >= 0 ? logfd : null, 2);
	/* Nothing else of the caller's: a pipe it holds (a `| cat`, fd 3 of
	 * a shell) would stay open until the host's idle exit. */
	pw_close_fds_from(3, ready_fd);
	if (chdir("/") == 0)
		execve(exe, av, env);
	_exit(127);
}

/* Start the host and wait for the one byte it writes once it listens. */
static pw_err *spawn_host(const pw_scratch_connect_opts *o, const char *dir)
{
	static const char *const default_argv[] = { "pyward", "python", "--host", NULL };
	const char *exe = o->host_exe ? o->host_exe : "/proc/self/exe";
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("starting the scratchpad host"));
	char **av = copy_argv(o->host_argv ? o->host_argv : default_argv);
	char **env = host_environment(ready[1], dir);
	char *log = xasprintf("%s/%s", dir, PW_SCRATCH_LOG);
	pid_t pid = fork();
	if (pid == 0)
		host_child(exe, av, env, ready[1], log);
	int saved = errno;
	close(ready[1]);
	free_argv(av);
	free_host_environment(env);
	free(log);
	if (pid < 0) {
		close(ready[0]);
		return pw_err_errno(PW_ERR_IO, saved, NULL, _("starting the scratchpad host"));
	}
	waitpid(pid, NULL, 0);
	struct pollfd p = { .fd = ready[0], .events = POLLIN };
	char byte = 0;
	int rc = poll(&p, 1, START_WAIT_MS);
	ssize_t got = rc > 0 ? read(ready[0], &byte, 1) : -1;
	close(ready[0]);
	if (got == 1 && byte == 'R')
		return NULL;
	char *hint = xasprintf(_("its log is %s/%s"), dir, PW_SCRATCH_LOG);
	char *why = last_logged_error(dir);
	pw_err *e = pw_err_new(PW_ERR_FAILED, hint, _("the scratchpad host did not start (%s): %s"), exe,
			       why ? why : _("no reason logged"));
	free(why);
	free(hint);
	return e;
}

static pw_err *connect_or_start(const pw_scratch_connect_opts *o, const char *dir, int *fd, bool *started)
{
	*fd = connect_once(dir);
	if (*fd >= 0)
		return NULL;
	if (errno != ENOENT && errno != ECONNREFUSED)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("connecting to the scratchpad host in %s"), dir);
	if (!o->autostart)
		return pw_err_new(PW_ERR_NOTFOUND, _("a 'pyward python' call starts it"),
				  _("no scratchpad host is running"));
	/* One starter at a time: the others wait here, then find it running. */
	char *lock = xasprintf("%s/%s", dir, PW_SCRATCH_LOCK);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock);
	if (lfd < 0 || flock(lfd, LOCK_EX) != 0) {
		if (lfd >= 0)
			close(lfd);
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("locking the scratchpad folder %s"), dir);
	}
	pw_err *e = NULL;
	*fd = connect_once(dir);
	if (*fd < 0) {
		e = spawn_host(o, dir);
		*started = e == NULL;
		if (!e && (*fd = connect_once(dir)) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("connecting to the new scratchpad host"));
	}
	close(lfd);
	return e;
}

pw_err *pw_scratch_connect(const pw_scratch_connect_opts *o, pw_scratch_client **out)
{
	*out = NULL;
	pw_scratch_connect_opts defaults = { .autostart = true };
	if (!o)
		o = &defaults;
	char *dir = o->dir ? xstrdup(o->dir) : NULL;
	pw_err *e = dir ? NULL : pw_scratch_dir(&dir);
	int fd = -1;
	bool started = false;
	if (!e)
		e = connect_or_start(o, dir, &fd, &started);
	free(dir);
	if (e)
		return e;
	pw_scratch_client *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->in = pw_scratch_linebuf_new();
	c->started_host = started;
	*out = c;
	return NULL;
}

void pw_scratch_close(pw_scratch_client **c)
{
	if (!c || !*c)
		return;
	pw_err_free(pw_scratch_release(*c)); /* a host that is gone takes it back anyway */
	close((*c)->fd);
	pw_scratch_linebuf_free(&(*c)->in);
	free((*c)->env_sent_for);
	free(*c);
	*c = NULL;
}

bool pw_scratch_started_host(const pw_scratch_client *c)
{
	return c->started_host;
}

/* ---------------------------------------------------------------- exchange */

static pw_err *lost_host(int errnum)
{
	pw_err *e = errnum ? pw_err_errno(PW_ERR_FAILED, errnum, NULL, _("talking to the scratchpad host"))
			   : pw_err_new(PW_ERR_FAILED, NULL, _("the scratchpad host closed the connection"));
	return pw_err_set_hint(e, _("run the call again: a new host starts, and the result says the state was lost"));
}

static pw_err *send_json(pw_scratch_client *c, json_t *j)
{
	size_t len;
	char *line = pw_scratch_dump_line(j, &len);
	json_decref(j);
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = errno;
			free(line);
			return lost_host(saved);
		}
		off += (size_t)n;
	}
	free(line);
	return NULL;
}

static pw_err *send_simple(pw_scratch_client *c, pw_scratch_op op, const char *session)
{
	pw_scratch_request r = { .op = op, .session = session ? xstrdup(session) : NULL };
	pw_err *e = send_json(c, pw_scratch_request_encode(&r));
	free(r.session);
	return e;
}

/* One read from the host into the line buffer. Descriptors passed with the
 * bytes (only a lease carries them) go into fds, up to four, when fds is
 * given; any others are closed, so none can leak into this process. */
static pw_err *read_socket(pw_scratch_client *c, int fds[4], int *nfds)
{
	char buf[65536];
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
			    .msg_controllen = sizeof ctl.space };
	ssize_t n;
	while ((n = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
	}
	if (n <= 0)
		return lost_host(n < 0 ? errno : 0);
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[4];
		memcpy(got, CMSG_DATA(h), (k < 4 ? k : 4) * sizeof(int));
		for (size_t i = 0; i < k && i < 4; i++) {
			if (fds && *nfds < 4)
				fds[(*nfds)++] = got[i];
			else
				close(got[i]);
		}
	}
	if (!pw_scratch_linebuf_feed(c->in, buf, (size_t)n))
		return pw_err_new(PW_ERR_CORRUPT, NULL, _("the scratchpad host sent an over-long line"));
	return NULL;
}

/* Wait for the next message (skipping acknowledgements when skip_acks).
 * While waiting, a raised cancel token sends one interrupt for session.
 * fds and nfds: see read_socket (NULL for every answer but a lease). */
static pw_err *receive(pw_scratch_client *c, bool skip_acks, const pw_cancel *cancel, const char *session,
		       json_t **out, int fds[4], int *nfds)
{
	bool interrupted = false;
	for (;;) {
		char *line = pw_scratch_linebuf_take(c->in);
		if (line) {
			json_t *j = json_loads(line, 0, NULL);
			free(line);
			if (!j)
				return pw_err_new(PW_ERR_CORRUPT, NULL, _("the scratchpad host sent a line that is not JSON"));
			if (skip_acks && json_object_get(j, "ack")) {
				json_decref(j);
				continue;
			}
			*out = j;
			return NULL;
		}
		if (cancel && !interrupted && pw_cancel_raised(cancel)) {
			interrupted = true;
			pw_err *e = send_simple(c, PW_SCRATCH_OP_INTERRUPT, session);
			if (e)
				return e;
		}
		if (cancel) { /* wake up now and then to look at the token */
			struct pollfd p = { .fd = c->fd, .events = POLLIN };
			int rc = poll(&p, 1, 100);
			if (rc < 0 && errno != EINTR)
				return lost_host(errno);
			if (rc <= 0)
				continue;
		}
		pw_err *e = read_socket(c, fds, nfds);
		if (e)
			return e;
	}
}

static pw_err *expect_ack(pw_scratch_client *c)
{
	json_t *j = NULL;
	pw_err *e = receive(c, false, NULL, NULL, &j, NULL, NULL);
	if (!e)
		e = pw_scratch_error_decode(j);
	json_decref(j);
	return e;
}

/* ---------------------------------------------------------------- leases */

/* True when this client holds session's worker. */
static bool holds_lease(const pw_scratch_client *c, const char *session)
{
	return c->direct && session && strcmp(pw_scratch_direct_session(c->direct), session) == 0;
}

pw_err *pw_scratch_lease(pw_scratch_client *c, const char *session)
{
	if (holds_lease(c, session))
		return NULL;
	pw_err *e = pw_scratch_release(c);
	if (!e)
		e = send_simple(c, PW_SCRATCH_OP_LEASE, session);
	json_t *j = NULL;
	int fds[4], nfds = 0;
	if (!e)
		e = receive(c, false, NULL, NULL, &j, fds, &nfds);
	if (!e)
		e = pw_scratch_error_decode(j);
	pw_scratch_lease_info l = { 0 };
	if (!e)
		e = pw_scratch_lease_decode(j, &l);
	if (!e && (nfds != 4 || strcmp(l.session, session) != 0))
		e = pw_err_new(PW_ERR_CORRUPT, NULL, "%s", _("the scratchpad host sent a lease without the worker's pipes"));
	json_decref(j);
	if (e) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		pw_scratch_lease_clear(&l);
		return e;
	}
	c->direct = pw_scratch_direct_new(&l, fds);
	return NULL;
}

pw_err *pw_scratch_release(pw_scratch_client *c)
{
	if (!c->direct)
		return NULL;
	pw_scratch_direct *d = c->direct;
	c->direct = NULL;
	const char *kind = pw_scratch_direct_lost_kind(d);
	pw_scratch_request r = { .op = PW_SCRATCH_OP_RELEASE, .session = xstrdup(pw_scratch_direct_session(d)),
				 .executions = pw_scratch_direct_executions(d),
				 .lost_kind = kind ? xstrdup(kind) : NULL,
				 .lost_message = kind ? xstrdup(pw_scratch_direct_lost_message(d)) : NULL };
	pw_scratch_direct_free(&d);
	pw_err *e = send_json(c, pw_scratch_request_encode(&r));
	pw_scratch_request_clear(&r);
	return e ? e : expect_ack(c);
}

/* A call the leased worker can take in this process; anything else (a
 * reset, another interpreter asked for) goes through the host. */
static bool direct_call(const pw_scratch_client *c, const pw_scratch_request *req)
{
	return holds_lease(c, req->session) && req->code && !req->reset && !req->python_explicit &&
	       !pw_scratch_direct_lost_kind(c->direct);
}

bool pw_scratch_leased(const pw_scratch_client *c, const char *session)
{
	return holds_lease(c, session) && !pw_scratch_direct_lost_kind(c->direct);
}

static pw_err *run(pw_scratch_client *c, const pw_scratch_request *req, const pw_cancel *cancel, bool via_host,
		   pw_scratch_result **out)
{
	*out = NULL;
	if (!via_host && !direct_call(c, req))
		return NULL;
	if (direct_call(c, req)) {
		pw_err *e = pw_scratch_direct_run(c->direct, req, cancel, out);
		if (!pw_scratch_direct_lost_kind(c->direct))
			return e;
		/* A lost worker goes back at once, so that the host can tell the
		 * loss and start afresh, and nobody waits behind a dead lease. */
		pw_err *re = pw_scratch_release(c);
		if (re || !e) {
			pw_err_free(e);
			if (re)
				pw_scratch_result_free(out);
			return re;
		}
		/* It had gone before the cell was sent (discarded meanwhile):
		 * the call goes to the host, which says so and starts afresh. */
		pw_err_free(e);
		if (!via_host)
			return NULL;
	}
	/* Through the host: a leased session must be handed back first, or the
	 * call would wait behind our own lease. The wait is not watched. */
	if (req->hand_over)
		req->hand_over(req->hand_over_arg);
	if (holds_lease(c, req->session)) {
		pw_err *e = pw_scratch_release(c);
		if (e)
			return e;
	}
	pw_scratch_request r = *req;
	if (c->env_sent_for && req->session && strcmp(c->env_sent_for, req->session) == 0)
		r.env = NULL;
	/* Credentials never leave for the host (the worker scrubs again). */
	char **scrubbed = r.env ? pw_runner_build_env_python((const char *const *)r.env) : NULL;
	r.env = scrubbed ? scrubbed : r.env;
	pw_err *e = send_json(c, pw_scratch_request_encode(&r));
	pw_runner_env_free(scrubbed);
	if (!e && r.env) {
		free(c->env_sent_for);
		c->env_sent_for = xstrdup(req->session);
	}
	json_t *j = NULL;
	if (!e)
		e = receive(c, true, cancel, req->session, &j, NULL, NULL);
	if (!e)
		e = pw_scratch_error_decode(j);
	if (!e)
		e = pw_scratch_result_decode(j, out);
	json_decref(j);
	return e;
}

pw_err *pw_scratch_run(pw_scratch_client *c, const pw_scratch_request *req, const pw_cancel *cancel,
		       pw_scratch_result **out)
{
	return run(c, req, cancel, true, out);
}

pw_err *pw_scratch_run_leased(pw_scratch_client *c, const pw_scratch_request *req, const pw_cancel *cancel,
			      pw_scratch_result **out)
{
	return run(c, req, cancel, false, out);
}

pw_err *pw_scratch_interrupt(pw_scratch_client *c, const char *session)
{
	pw_err *e = send_simple(c, PW_SCRATCH_OP_INTERRUPT, session);
	return e ? e : expect_ack(c);
}

pw_err *pw_scratch_discard(pw_scratch_client *c, const char *session)
{
	pw_err *e = NULL;
	if (holds_lease(c, session))
		e = pw_scratch_release(c);
	if (!e)
		e = send_simple(c, PW_SCRATCH_OP_DISCARD, session);
	return e ? e : expect_ack(c);
}

pw_err *pw_scratch_sessions(pw_scratch_client *c, pw_scratch_list **out)
{
	*out = NULL;
	pw_err *e = send_simple(c, PW_SCRATCH_OP_LIST, NULL);
	json_t *j = NULL;
	if (!e)
		e = receive(c, false, NULL, NULL, &j, NULL, NULL);
	if (!e)
		e = pw_scratch_error_decode(j);
	if (!e)
		e = pw_scratch_list_decode(j, out);
	json_decref(j);
	return e;
}
