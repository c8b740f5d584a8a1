/* Scratchpad host: socket, sessions, workers, one poll() loop. */
#define _GNU_SOURCE 1 /* struct ucred */
#include "config.h"

#include "scratch_host.h"

#include "cgroup.h"
#include "closefds.h"
#include "clock.h"
#include "i18n.h"
#include "runner.h"
#include "scratch_proto.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_EVERY_MS 1000
#define DISCARDED N_("fresh scratchpad: the session was discarded (pyward python --discard)")

/* Bytes waiting to be written to a non-blocking descriptor. */
typedef struct outq {
	char *buf;
	size_t len, off;
} outq;

typedef struct client {
	int fd;
	pw_scratch_linebuf *in;
	outq out;
	bool dead;
	bool refused;     /* another uid: told so, its input discarded until it closes */
	struct client *next;
} client;

typedef struct call {
	client *from;         /* NULL once that client went away */
	pw_scratch_request req;
	int64_t started_ms, deadline_ms;
	bool timed_out, counted;
	bool sent;            /* the cell went to the worker (after its hello) */
	struct call *next;
} call;

typedef struct worker {
	pid_t pid;
	int to_fd, from_fd, out_fd, err_fd;
	outq to;
	pw_scratch_linebuf *from;
	pw_scratch_interp *interp; /* from its hello */
	bool hello;                /* it said hello: its SIGINT handler is in place */
	bool announced;
	char *python, *venv;
	pw_scratch_capture *out, *err;
	int64_t interrupt_ms;      /* when the running cell was sent SIGINT */
	bool sigint_owed;          /* its interrupt line waits in `to`: SIGINT once it is out */
	bool reaped;               /* waitpid() already collected it */
	pw_cgroup *cg;             /* its own cgroup, or NULL where none can be made */
} worker;

typedef struct session {
	char *name;
	char *project_dir;
	worker *w;
	call *queue;          /* the head runs while running is set */
	bool running;
	int64_t generation, executions;
	int64_t last_use_ms;
	char last_use[32];
	pw_scratch_result pending; /* only its notices are used */
	char **env;           /* the caller's environment for its next worker */
	client *lease;        /* holds the worker's pipes (direct mode); we keep off them */
	bool lease_discarded; /* discarded meanwhile: killed, told when it comes back */
	bool syncing;         /* a lease ended without a count: asked the worker for it */
	struct session *next;
} session;

typedef struct host {
	pw_scratch_host_opts o;
	pid_t pid;
	int listen_fd;
	char *sock_path, *record_path, *pid_path;
	client *clients;
	session *sessions;
	int workers;
	int64_t last_activity;
	int64_t next_check;
	bool record_dirty;
	int64_t accept_paused_until; /* at the descriptor limit: the listen socket rests */
} host;

extern char **environ;

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* ---------------------------------------------------------------- output queues */

static void outq_push(outq *q, const char *data, size_t len)
{
	if (q->off == q->len)
		q->off = q->len = 0;
	q->buf = xrealloc(q->buf, q->len + len);
	memcpy(q->buf + q->len, data, len);
	q->len += len;
}

/* Write what the (non-blocking) descriptor takes now; false when it is
 * broken (SIGPIPE is ignored in the host). */
static bool outq_flush(outq *q, int fd)
{
	while (q->off < q->len) {
		ssize_t n = write(fd, q->buf + q->off, q->len - q->off);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0)
			return false;
		q->off += (size_t)n;
	}
	return true;
}

static void send_json(client *c, json_t *j)
{
	if (!c || c->dead) {
		json_decref(j);
		return;
	}
	size_t len;
	char *line = pw_scratch_dump_line(j, &len);
	json_decref(j);
	outq_push(&c->out, line, len);
	free(line);
	if (!outq_flush(&c->out, c->fd))
		c->dead = true;
}

static void send_error(client *c, pw_err *e)
{
	send_json(c, pw_scratch_error_encode(e));
	pw_err_free(e);
}

/* ---------------------------------------------------------------- sessions */

static session *session_find(host *h, const char *name)
{
	for (session *s = h->sessions; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static session *session_get(host *h, const char *name)
{
	session *s = session_find(h, name);
	if (s)
		return s;
	s = xcalloc(1, sizeof *s);
	s->name = xstrdup(name);
	s->next = h->sessions;
	h->sessions = s;
	return s;
}

static void note_loss(host *h, session *s, const char *kind, const char *message)
{
	pw_scratch_result_add_notice(&s->pending, kind, message);
	h->record_dirty = true;
}

static void touch(session *s)
{
	s->last_use_ms = pw_clock_mono_ms();
	pw_clock_iso_now(s->last_use, sizeof s->last_use);
}

/* ---------------------------------------------------------------- workers */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void drain_fd(int *fd, pw_scratch_capture *cap)
{
	char buf[65536];
	while (*fd >= 0) {
		ssize_t n = read(*fd, buf, sizeof buf);
		if (n > 0) {
			pw_scratch_capture_add(cap, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close_fd(fd);
	}
}

/* "exit status N" / "killed by signal N" for a reaped worker. */
static char *describe_status(int status)
{
	if (WIFEXITED(status))
		return xasprintf(_("exit status %d"), WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return xasprintf(_("killed by signal %d"), WTERMSIG(status));
	return xstrdup(_("ended"));
}

/* How a worker whose protocol pipe closed ended: reaped within 100 ms, or
 * NULL when it still runs (it closed the pipe itself). */
static char *worker_reap(worker *w)
{
	int status = 0;
	pid_t got = waitpid(w->pid, &status, WNOHANG);
	for (int i = 0; got == 0 && i < 20; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		got = waitpid(w->pid, &status, WNOHANG);
	}
	if (got != w->pid)
		return NULL;
	w->reaped = true;
	return describe_status(status);
}

/* Kill a worker and all it started: its cgroup (a cell's grandchild that
 * called setsid left the process group, never the cgroup), else its
 * process group. */
static void worker_kill(worker *w)
{
	kill(-w->pid, SIGKILL);
	pw_cgroup_kill(w->cg);
}

/* Stop a worker for good (its cgroup or process group, which also ends
 * what the user's code started), reap it and remove its cgroup. */
static void worker_destroy(host *h, worker *w)
{
	worker_kill(w);
	if (!w->reaped)
		waitpid(w->pid, NULL, 0);
	pw_cgroup_free(&w->cg);
	close_fd(&w->to_fd);
	close_fd(&w->from_fd);
	close_fd(&w->out_fd);
	close_fd(&w->err_fd);
	free(w->to.buf);
	pw_scratch_linebuf_free(&w->from);
	pw_scratch_capture_free(&w->out);
	pw_scratch_capture_free(&w->err);
	if (w->interp) {
		free(w->interp->version);
		free(w->interp->implementation);
		free(w->interp->build);
		free(w->interp->executable);
		free(w->interp->project_dir);
		free(w->interp);
	}
	free(w->python);
	free(w->venv);
	free(w);
	h->workers--;
	h->record_dirty = true;
	h->accept_paused_until = 0; /* descriptors came free */
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* In the child: put the five descriptors in place, then exec. Sources are
 * first moved above 9 so that no dup2 clobbers another source. */
static void __attribute__((noreturn)) worker_exec(const host *h, const pw_scratch_request *req, char **env,
						   const char *cg_procs, int fds[5], int report_fd)
{
	setpgid(0, 0);
	pw_cgroup_enter(cg_procs); /* before exec: nothing the cell forks escapes it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != h->pid) /* the host died before the line above */
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int high[5];
	for (int i = 0; i < 5; i++)
		high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
	report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 10);
	for (int i = 0; i < 5; i++)
		if (high[i] < 0 || dup2(high[i], i) < 0)
			goto fail;
	/* The worker holds its five and nothing of the host's: no log, no
	 * socket, no other session's pipes (the report pipe closes at exec). */
	pw_close_fds_from(5, report_fd);
	if (chdir(req->project_dir) != 0)
		goto fail;
	char *argv[] = { req->python, xstrdup("-u"), xstrdup(h->o.worker_script), xstrdup("3"), xstrdup("4"), NULL };
	execve(req->python, argv, env);
fail:;
	int err = errno;
	if (write(report_fd, &err, sizeof err) < 0)
		_exit(126);
	_exit(127);
}

static pw_err *spawn_failed(int err, const pw_scratch_request *req)
{
	if (err == ENOENT && access(req->project_dir, X_OK) != 0)
		return pw_err_errno(PW_ERR_NOTFOUND, err, NULL, _("the project folder %s"), req->project_dir);
	return pw_err_errno(PW_ERR_FAILED, err, _("pass --python PATH or --venv DIR with a working interpreter"),
			    _("cannot start the scratchpad worker %s"), req->python);
}

static pw_err *worker_spawn(host *h, const pw_scratch_request *req, char **caller_env, worker **out)
{
	/* Made before fork; the caller's variables scrubbed as for any child. */
	char **env = pw_runner_build_env_python((const char *const *)(caller_env ? caller_env : environ));
	int to[2], from[2], o[2], e[2], rep[2];
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC) || pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC) ||
	    pipe2(rep, O_CLOEXEC)) {
		pw_runner_env_free(env);
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("making pipes for a scratchpad worker"));
	}
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pw_cgroup *cg = pw_cgroup_new(); /* NULL here: process groups only */
	pid_t pid = fork();
	if (pid == 0) {
		int fds[5] = { null, o[1], e[1], to[0], from[1] };
		worker_exec(h, req, env, pw_cgroup_procs_path(cg), fds, rep[1]);
	}
	int saved = errno;
	pw_runner_env_free(env);
	close(null);
	close(to[0]);
	close(from[1]);
	close(o[1]);
	close(e[1]);
	close(rep[1]);
	int child_err = 0;
	ssize_t n = pid > 0 ? read(rep[0], &child_err, sizeof child_err) : -1;
	close(rep[0]);
	if (pid < 0 || n > 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		close(to[1]);
		close(from[0]);
		close(o[0]);
		close(e[0]);
		pw_cgroup_free(&cg);
		return pid < 0 ? pw_err_errno(PW_ERR_IO, saved, NULL, _("starting a scratchpad worker"))
			       : spawn_failed(child_err, req);
	}
	worker *w = xcalloc(1, sizeof *w);
	w->pid = pid;
	w->cg = cg;
	w->to_fd = to[1];
	w->from_fd = from[0];
	w->out_fd = o[0];
	w->err_fd = e[0];
	set_nonblock(w->to_fd);
	set_nonblock(w->from_fd);
	set_nonblock(w->out_fd);
	set_nonblock(w->err_fd);
	w->from = pw_scratch_linebuf_new();
	w->out = pw_scratch_capture_new(req->max_output);
	w->err = pw_scratch_capture_new(req->max_output);
	w->python = xstrdup(req->python);
	w->venv = req->venv ? xstrdup(req->venv) : NULL;
	h->workers++;
	h->record_dirty = true;
	*out = w;
	return NULL;
}

/* ---------------------------------------------------------------- results */

static void take_notices(session *s, pw_scratch_result *r)
{
	r->notices = s->pending.notices;
	r->notice_count = s->pending.notice_count;
	s->pending.notices = NULL;
	s->pending.notice_count = 0;
}

static pw_scratch_interp *copy_interp(const pw_scratch_interp *in)
{
	pw_scratch_interp *c = xcalloc(1, sizeof *c);
	c->version = in->version ? xstrdup(in->version) : NULL;
	c->implementation = in->implementation ? xstrdup(in->implementation) : NULL;
	c->build = in->build ? xstrdup(in->build) : NULL;
	c->executable = in->executable ? xstrdup(in->executable) : NULL;
	c->project_dir = in->project_dir ? xstrdup(in->project_dir) : NULL;
	return c;
}

/* What the captures hold (see ps_dispatch_output for why nothing is left
 * in the pipes); they start again at the default bound: output between
 * cells (background tasks) goes into the next result. */
static void take_output(worker *w, pw_scratch_result *r)
{
	r->out = pw_scratch_capture_text(w->out);
	r->err = pw_scratch_capture_text(w->err);
	r->out_dropped = pw_scratch_capture_dropped(w->out);
	r->err_dropped = pw_scratch_capture_dropped(w->err);
	pw_scratch_capture_reset(w->out, 0);
	pw_scratch_capture_reset(w->err, 0);
}

/* Answer the session's running call and move on to the next one. */
static void finish_call(host *h, session *s, const char *status, const json_t *reply)
{
	call *c = s->queue;
	pw_scratch_result r = { 0 };
	r.session = xstrdup(s->name);
	r.status = xstrdup(status);
	r.execution = c->counted ? s->executions : 0;
	r.generation = s->generation;
	if (reply) {
		const char *v = json_string_value(json_object_get(reply, "value"));
		const char *tb = json_string_value(json_object_get(reply, "traceback"));
		r.value = v ? xstrdup(v) : NULL;
		r.traceback = tb ? xstrdup(tb) : NULL;
	}
	take_notices(s, &r);
	if (s->w) {
		take_output(s->w, &r);
		if (!s->w->announced && s->w->interp) {
			r.interp = copy_interp(s->w->interp);
			s->w->announced = true;
		}
		s->w->interrupt_ms = 0;
		s->w->sigint_owed = false;
	}
	r.duration_ms = c->started_ms ? pw_clock_mono_ms() - c->started_ms : 0;
	if (r.notice_count) /* the record need not carry those any more */
		h->record_dirty = true;
	send_json(c->from, pw_scratch_result_encode(&r));
	pw_scratch_result *rp = xmalloc(sizeof *rp);
	*rp = r;
	pw_scratch_result_free(&rp);
	s->queue = c->next;
	pw_scratch_request_clear(&c->req);
	free(c);
	s->running = false;
	touch(s);
	h->last_activity = pw_clock_mono_ms();
}

/* Refuse the call at the head of the queue with e. */
static void fail_call(session *s, pw_err *e)
{
	call *c = s->queue;
	send_error(c->from, e);
	s->queue = c->next;
	pw_scratch_request_clear(&c->req);
	free(c);
}

/* ---------------------------------------------------------------- capacity */

static worker *detach_worker(session *s)
{
	worker *w = s->w;
	s->w = NULL;
	return w;
}

/* Kill a session's worker and queue the notice for its next result. When a
 * cell was running, that call is answered (status) with the notice. */
static void lose_worker(host *h, session *s, const char *kind, const char *message, const char *status)
{
	if (!s->w)
		return;
	s->syncing = false; /* nothing left to count */
	note_loss(h, s, kind, message);
	if (s->running) {
		drain_fd(&s->w->out_fd, s->w->out);
		drain_fd(&s->w->err_fd, s->w->err);
		finish_call(h, s, status, NULL);
		note_loss(h, s, kind, message); /* and again for the next result */
	}
	worker_destroy(h, detach_worker(s));
}

static bool evictable(const session *s, const session *asking)
{
	return s != asking && s->w && !s->running && !s->queue && !s->lease && !s->syncing;
}

static session *lru_idle(host *h, const session *asking)
{
	session *best = NULL;
	for (session *s = h->sessions; s; s = s->next)
		if (evictable(s, asking) && (!best || s->last_use_ms < best->last_use_ms))
			best = s;
	return best;
}

static pw_err *all_busy(host *h)
{
	char *names = xstrdup("");
	int64_t now = pw_clock_mono_ms();
	for (session *s = h->sessions; s; s = s->next) {
		if (!s->w)
			continue;
		int64_t secs = s->running && s->queue ? (now - s->queue->started_ms) / 1000 : 0;
		char *more = xasprintf(_("%s%s%s (running a cell for %lld s)"), names, *names ? ", " : "", s->name,
				       (long long)secs);
		free(names);
		names = more;
	}
	pw_err *e = pw_err_new(PW_ERR_FAILED,
			       _("wait for one to finish, interrupt one with 'pyward python --interrupt -s NAME', "
				 "or raise python_max_workers"),
			       _("all %d scratchpad workers are running cells: %s"), h->o.max_workers, names);
	free(names);
	return e;
}

/* A worker for s, evicting the least recently used idle one when full. */
static pw_err *ensure_worker(host *h, session *s, const pw_scratch_request *req)
{
	if (s->w) {
		if (req->python_explicit && strcmp(s->w->python, req->python) != 0)
			return pw_err_new(PW_ERR_REFUSED,
					  _("discard it first ('pyward python --discard -s NAME') or use another -s NAME"),
					  _("session %s runs %s, not %s"), s->name, s->w->python, req->python);
		return NULL;
	}
	if (h->workers >= h->o.max_workers) {
		session *victim = lru_idle(h, s);
		if (!victim)
			return all_busy(h);
		char *msg = xasprintf(_("fresh scratchpad: the worker was evicted to make room for session %s "
					"(at most %d workers; this one was the least recently used idle one)"),
				      s->name, h->o.max_workers);
		lose_worker(h, victim, "evicted", msg, "lost");
		free(msg);
	}
	pw_err *e = worker_spawn(h, req, s->env, &s->w);
	if (e)
		return e;
	s->generation++;
	s->executions = 0;
	free(s->project_dir);
	s->project_dir = xstrdup(req->project_dir);
	return NULL;
}

/* ---------------------------------------------------------------- running calls */

static void pump(host *h, session *s);

/* Hand the running call's cell to the worker, once it said hello: before
 * that a SIGINT would meet Python's default handler (or none at all) and
 * kill the worker instead of interrupting a cell. */
static void send_cell(session *s)
{
	call *c = s->queue;
	c->sent = true;
	c->counted = c->req.code != NULL;
	if (pw_scratch_capture_total(s->w->out) == 0 && pw_scratch_capture_total(s->w->err) == 0) {
		pw_scratch_capture_reset(s->w->out, c->req.max_output);
		pw_scratch_capture_reset(s->w->err, c->req.max_output);
	}
	if (c->counted)
		s->executions++;
	size_t len;
	char *line = pw_scratch_cell_line(s->executions, c->req.code ? c->req.code : "", &len);
	outq_push(&s->w->to, line, len);
	free(line);
	outq_flush(&s->w->to, s->w->to_fd);
}

static void start_cell(session *s)
{
	call *c = s->queue;
	c->started_ms = pw_clock_mono_ms(); /* the budget counts the worker's start too */
	c->deadline_ms = c->req.timeout_ms > 0 ? c->started_ms + c->req.timeout_ms : 0;
	s->running = true;
	touch(s);
	if (s->w->hello)
		send_cell(s);
}

/* A call whose cell never reached the worker ends with status, and
 * nothing of the worker is lost: it goes on starting for the next call. */
static void cancel_unsent(host *h, session *s, const char *status)
{
	json_t *reply = json_pack("{s:s}", "traceback", pw_scratch_unstarted_traceback());
	finish_call(h, s, status, strcmp(status, "interrupted") == 0 ? reply : NULL);
	json_decref(reply);
	pump(h, s);
}

/* A reset without code: the state goes, and no worker starts for it (the
 * next call starts one and its result carries the notice). */
static void answer_reset(host *h, session *s)
{
	pw_scratch_result kept = s->pending;
	s->pending.notices = NULL;
	s->pending.notice_count = 0;
	finish_call(h, s, "reset", NULL);
	s->pending = kept;
}

static void pump(host *h, session *s)
{
	while (s->queue && !s->running && !s->lease && !s->syncing) {
		call *c = s->queue;
		if (c->req.reset && s->w)
			lose_worker(h, s, "reset", _("fresh scratchpad: --reset asked for it"), "lost");
		else if (c->req.reset && s->generation > 0)
			note_loss(h, s, "reset", _("fresh scratchpad: --reset asked for it"));
		c->req.reset = false;
		if (!c->req.code) {
			answer_reset(h, s);
			continue;
		}
		pw_err *e = ensure_worker(h, s, &c->req);
		if (e) {
			fail_call(s, e);
			continue;
		}
		start_cell(s);
	}
}

/* ---------------------------------------------------------------- requests */

/* Interrupt the cell the worker was sent: first the line that names it,
 * then SIGINT (once that line is in the pipe), so that a worker that has
 * not read the cell yet answers it interrupted instead of running it. */
static void interrupt_worker(session *s, int64_t now)
{
	worker *w = s->w;
	char line[64];
	size_t len = pw_scratch_interrupt_line(line, sizeof line, s->executions);
	outq_push(&w->to, line, len);
	if (outq_flush(&w->to, w->to_fd) && w->to.off == w->to.len)
		kill(w->pid, SIGINT);
	else
		w->sigint_owed = true;
	w->interrupt_ms = now;
}

static void handle_interrupt(host *h, client *c, const char *name)
{
	session *s = session_find(h, name);
	if (s && s->lease && s->w) { /* the leaseholder sees the interrupted result */
		kill(s->w->pid, SIGINT);
		send_json(c, json_pack("{s:s}", "ack", "interrupt"));
		return;
	}
	if (!s || !s->running) {
		send_error(c, pw_err_new(PW_ERR_NOTFOUND, NULL, _("session %s is not running a cell"), name));
		return;
	}
	if (!s->queue->sent) { /* the worker is still starting: the cell is cancelled, the worker kept */
		send_json(c, json_pack("{s:s}", "ack", "interrupt"));
		cancel_unsent(h, s, "interrupted");
		return;
	}
	if (!s->w->interrupt_ms)
		interrupt_worker(s, pw_clock_mono_ms());
	send_json(c, json_pack("{s:s}", "ack", "interrupt"));
}

static void handle_discard(host *h, client *c, const char *name)
{
	session *s = session_find(h, name);
	if (!s || (!s->w && !s->queue)) {
		send_error(c, pw_err_new(PW_ERR_NOTFOUND, _("'pyward python --list' shows the sessions"),
					 _("session %s has no worker"), name));
		return;
	}
	const char *msg = _(DISCARDED);
	if (s->lease && s->w) {
		/* The leaseholder finds the worker gone: wait for the death
		 * (its pipes closed) but do not reap it, so that its pid stays
		 * the worker's while the lease lasts; the loss is told, and the
		 * worker reaped, once the pipes come back. */
		worker_kill(s->w);
		siginfo_t si;
		while (waitid(P_PID, (id_t)s->w->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
		}
		s->lease_discarded = true;
	} else {
		lose_worker(h, s, "discarded", msg, "lost");
	}
	while (s->queue)
		fail_call(s, pw_err_new(PW_ERR_FAILED, NULL, "%s", msg));
	send_json(c, json_pack("{s:s}", "ack", "discard"));
}

static const char *state_of(const session *s)
{
	if (s->lease)
		return "leased";
	if (s->running)
		return "running";
	if (s->w)
		return "idle";
	return "no worker";
}

static void handle_list(host *h, client *c)
{
	pw_scratch_list l = { .host_pid = getpid(), .workers = h->workers, .max_workers = h->o.max_workers };
	for (session *s = h->sessions; s; s = s->next)
		l.count++;
	l.sessions = xcalloc(l.count + 1, sizeof *l.sessions);
	size_t i = 0;
	for (session *s = h->sessions; s; s = s->next, i++) {
		pw_scratch_session_info *si = &l.sessions[i];
		si->name = xstrdup(s->name);
		si->state = xstrdup(state_of(s));
		si->python = s->w ? xstrdup(s->w->python) : NULL;
		si->last_use = s->last_use[0] ? xstrdup(s->last_use) : NULL;
		si->executions = s->executions;
		si->generation = s->generation;
		si->pid = s->w ? s->w->pid : 0;
	}
	send_json(c, pw_scratch_list_encode(&l));
	pw_scratch_list *lp = xmalloc(sizeof *lp);
	*lp = l;
	pw_scratch_list_free(&lp);
}

static void free_env(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
}

static void handle_run(host *h, client *c, pw_scratch_request *req)
{
	session *s = session_get(h, req->session);
	if (req->env) {
		free_env(s->env);
		s->env = req->env;
		req->env = NULL;
	}
	call *k = xcalloc(1, sizeof *k);
	k->from = c;
	k->req = *req;
	memset(req, 0, sizeof *req);
	call **tail = &s->queue;
	while (*tail)
		tail = &(*tail)->next;
	*tail = k;
	pump(h, s);
}

static void worker_died(host *h, session *s);

/* Lend c the session's worker: its four pipes go over the socket with the
 * lease. Only an idle worker with nothing owed to its next result (no
 * notice, no output between cells, no first-result interpreter line). */
static void handle_lease(host *h, client *c, const char *name)
{
	session *s = session_find(h, name);
	if (!s || !s->w) {
		send_error(c, pw_err_new(PW_ERR_NOTFOUND, _("run a call in the session first"),
					 _("session %s has no worker to lend"), name));
		return;
	}
	worker *w = s->w;
	if (s->running || s->queue || s->lease || s->syncing || w->to.off < w->to.len || !w->announced ||
	    s->pending.notice_count || pw_scratch_capture_total(w->out) || pw_scratch_capture_total(w->err) ||
	    c->out.off < c->out.len) {
		send_error(c, pw_err_new(PW_ERR_FAILED, _("run a call through the host, then ask again"),
					 _("session %s is busy or has a result to finish"), name));
		return;
	}
	pw_scratch_lease_info l = { .session = s->name, .pid = w->pid, .generation = s->generation,
				    .executions = s->executions, .grace_ms = h->o.grace_ms };
	json_t *j = pw_scratch_lease_encode(&l);
	size_t len;
	char *line = pw_scratch_dump_line(j, &len);
	json_decref(j);
	int fds[4] = { w->to_fd, w->from_fd, w->out_fd, w->err_fd };
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof fds)];
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = { .iov_base = line, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
			    .msg_controllen = sizeof ctl.space };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
	if (n > 0 && (size_t)n < len) /* the descriptors went with the first byte */
		outq_push(&c->out, line + n, len - (size_t)n);
	free(line);
	if (n <= 0) {
		c->dead = true;
		return;
	}
	s->lease = c;
	touch(s);
}

/* The pipes come back: take the count, and any loss the client saw. */
static void end_lease(host *h, session *s, int64_t executions, const char *lost_kind, const char *lost_message)
{
	s->lease = NULL;
	if (executions > s->executions)
		s->executions = executions;
	touch(s);
	if (s->lease_discarded) {
		s->lease_discarded = false;
		lose_worker(h, s, "discarded", _(DISCARDED),
			    "lost");
	} else if (lost_kind) {
		lose_worker(h, s, lost_kind, lost_message, "lost");
	}
	pump(h, s);
}

static void handle_release(host *h, client *c, const pw_scratch_request *req)
{
	session *s = session_find(h, req->session);
	if (!s || s->lease != c) {
		send_error(c, pw_err_new(PW_ERR_NOTFOUND, NULL, _("this client holds no lease on session %s"),
					 req->session));
		return;
	}
	end_lease(h, s, req->executions, req->lost_kind, req->lost_message);
	send_json(c, json_pack("{s:s}", "ack", "release"));
}

/* The leaseholder went away without a word: the worker may be running its
 * last cell. Ask the worker how many cells it was given, after that cell's
 * reply (which nobody awaits); queued calls start once it answers. */
static void lease_abandoned(host *h, session *s)
{
	s->lease = NULL;
	if (s->lease_discarded || !s->w) {
		end_lease(h, s, 0, NULL, NULL);
		return;
	}
	s->syncing = true;
	static const char sync[] = "{\"sync\":true}\n";
	outq_push(&s->w->to, sync, sizeof sync - 1);
	if (!outq_flush(&s->w->to, s->w->to_fd))
		worker_died(h, s);
}

static void handle_line(host *h, client *c, const char *line)
{
	pw_scratch_request req;
	pw_err *e = pw_scratch_request_parse(line, &req);
	h->last_activity = pw_clock_mono_ms();
	if (e) {
		send_error(c, e);
		return;
	}
	switch (req.op) {
	case PW_SCRATCH_OP_RUN: handle_run(h, c, &req); break;
	case PW_SCRATCH_OP_INTERRUPT: handle_interrupt(h, c, req.session); break;
	case PW_SCRATCH_OP_DISCARD: handle_discard(h, c, req.session); break;
	case PW_SCRATCH_OP_LIST: handle_list(h, c); break;
	case PW_SCRATCH_OP_LEASE: handle_lease(h, c, req.session); break;
	case PW_SCRATCH_OP_RELEASE: handle_release(h, c, &req); break;
	}
	pw_scratch_request_clear(&req);
}

/* ---------------------------------------------------------------- clients */

static bool peer_allowed(const host *h, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return false;
	return cred.uid == h->o.owner_uid;
}

static void accept_client(host *h)
{
	int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		/* Out of descriptors, the connection stays queued and poll()
		 * would report it again at once: stop listening until one of
		 * ours closes, or for a second at most (anything else freed). */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			h->accept_paused_until = pw_clock_mono_ms() + CHECK_EVERY_MS;
		return;
	}
	client *c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->in = pw_scratch_linebuf_new();
	if (!peer_allowed(h, fd)) {
		send_error(c, pw_err_new(PW_ERR_REFUSED, _("every user has a scratchpad host of their own"),
					 _("the scratchpad host serves only its owner (uid %ld)"),
					 (long)h->o.owner_uid));
		shutdown(fd, SHUT_WR);
		c->refused = true;
	}
	c->next = h->clients;
	h->clients = c;
	h->last_activity = pw_clock_mono_ms();
}

static void client_read(host *h, client *c)
{
	char buf[65536];
	ssize_t n = read(c->fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || c->refused || !pw_scratch_linebuf_feed(c->in, buf, (size_t)n)) {
		c->dead = n <= 0 || !c->refused;
		return;
	}
	char *line;
	while (!c->dead && (line = pw_scratch_linebuf_take(c->in))) {
		handle_line(h, c, line);
		free(line);
	}
}

/* Forget a closed client: its queued calls are dropped, a running one
 * finishes with nobody to answer. */
static void client_gone(host *h, client *c)
{
	for (session *s = h->sessions; s; s = s->next)
		if (s->lease == c)
			lease_abandoned(h, s);
	for (session *s = h->sessions; s; s = s->next) {
		call **pp = &s->queue;
		while (*pp) {
			call *k = *pp;
			if (k->from == c && !(k == s->queue && s->running)) {
				*pp = k->next;
				pw_scratch_request_clear(&k->req);
				free(k);
				continue;
			}
			if (k->from == c)
				k->from = NULL;
			pp = &k->next;
		}
	}
	close(c->fd);
	pw_scratch_linebuf_free(&c->in);
	free(c->out.buf);
	free(c);
}

static void reap_clients(host *h)
{
	client **pp = &h->clients;
	while (*pp) {
		client *c = *pp;
		bool flushed = c->out.off == c->out.len;
		if (c->dead && (flushed || !outq_flush(&c->out, c->fd) || c->out.off == c->out.len)) {
			*pp = c->next;
			client_gone(h, c);
			h->accept_paused_until = 0;
			continue;
		}
		pp = &c->next;
	}
}

/* ---------------------------------------------------------------- worker events */

static void worker_message(host *h, session *s, const char *line)
{
	json_t *j = json_loads(line, 0, NULL);
	if (!j) { /* the worker script is not ours, or broken: it cannot be trusted */
		worker_kill(s->w);
		return;
	}
	json_t *hello = json_object_get(j, "hello");
	json_t *sync = json_object_get(j, "sync");
	if (sync && s->syncing) {
		/* Output until now belonged to the abandoned lease's cells. */
		if (json_integer_value(sync) > s->executions)
			s->executions = json_integer_value(sync);
		pw_scratch_capture_reset(s->w->out, 0);
		pw_scratch_capture_reset(s->w->err, 0);
		s->syncing = false;
		pump(h, s);
	} else if (hello && !s->w->hello) {
		s->w->hello = true;
		json_t *wrap = json_pack("{s:s, s:O}", "status", "ok", "interpreter", hello);
		pw_scratch_result *r = NULL;
		if (!pw_scratch_result_decode(wrap, &r) && r->interp) {
			s->w->interp = r->interp;
			r->interp = NULL;
		}
		pw_scratch_result_free(&r);
		json_decref(wrap);
		if (s->running && !s->queue->sent)
			send_cell(s);
	} else if (s->running && s->queue->sent) {
		const char *status = pw_scratch_reply_status(j, s->queue->timed_out);
		if (!s->queue->counted && strcmp(status, "ok") == 0)
			status = "reset";
		if (s->queue->counted && pw_scratch_reply_unstarted(j)) {
			/* nothing ran: the number goes to the next cell */
			s->queue->counted = false;
			s->executions--;
			json_object_set_new(j, "traceback", json_string(pw_scratch_unstarted_traceback()));
		}
		finish_call(h, s, status, j);
		pump(h, s);
	}
	json_decref(j);
}

static void worker_died(host *h, session *s)
{
	char *how = worker_reap(s->w);
	char *msg = xasprintf(_("fresh scratchpad: the worker process ended (%s)%s"),
			      how ? how : _("it closed its protocol pipe"), s->running ? _(" while running a cell") : "");
	free(how);
	lose_worker(h, s, "worker_crashed", msg, "lost");
	free(msg);
	pump(h, s);
}

static void worker_readable(host *h, session *s)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(s->w->from_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0 || !pw_scratch_linebuf_feed(s->w->from, buf, (size_t)n)) {
			worker_died(h, s);
			return;
		}
		char *line;
		while (s->w && (line = pw_scratch_linebuf_take(s->w->from))) {
			worker_message(h, s, line);
			free(line);
		}
		if (!s->w || (size_t)n < sizeof buf) /* a short read: the pipe is empty */
			return;
	}
}

/* ---------------------------------------------------------------- timers */

static void check_cell_timers(host *h, session *s, int64_t now)
{
	if (!s->running || !s->w)
		return;
	call *c = s->queue;
	worker *w = s->w;
	if (!c->sent) {
		if (c->deadline_ms && now >= c->deadline_ms) {
			c->timed_out = true;
			cancel_unsent(h, s, "timed_out");
		}
		return;
	}
	if (c->deadline_ms && now >= c->deadline_ms && !w->interrupt_ms) {
		c->timed_out = true;
		interrupt_worker(s, now);
	}
	if (w->interrupt_ms && now - w->interrupt_ms >= h->o.grace_ms) {
		char *msg = pw_scratch_kill_message(h->o.grace_ms, c->timed_out);
		lose_worker(h, s, c->timed_out ? "timeout_kill" : "interrupt_kill", msg,
			    c->timed_out ? "timed_out" : "interrupted");
		free(msg);
		pump(h, s);
	}
}

/* A worker that ended while something it started still holds its pipes
 * (a forked child inherits them) sends no end of file: look for its exit
 * too. Not while lent out: a discarded leased worker stays unreaped. */
static void check_exited(host *h, session *s)
{
	if (!s->w || s->lease || s->w->reaped)
		return;
	siginfo_t si = { 0 };
	if (waitid(P_PID, (id_t)s->w->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != s->w->pid)
		return;
	worker_readable(h, s); /* a reply it wrote before it ended comes first */
	if (s->w)
		worker_died(h, s);
}

/* A session whose workspace or environment was removed loses its worker. */
static void check_places(host *h, session *s)
{
	if (!s->w || s->running || s->lease || s->syncing)
		return;
	struct stat st;
	const char *gone = NULL;
	if (stat(s->project_dir, &st) != 0)
		gone = s->project_dir;
	else if (s->w->venv && stat(s->w->venv, &st) != 0)
		gone = s->w->venv;
	else if (s->w->python && stat(s->w->python, &st) != 0)
		gone = s->w->python;
	if (!gone)
		return;
	char *msg = xasprintf(_("fresh scratchpad: %s was removed, so the session's worker was discarded"), gone);
	lose_worker(h, s, "env_removed", msg, "lost");
	free(msg);
}

static int64_t next_wake(host *h, int64_t now)
{
	int64_t wake = now + CHECK_EVERY_MS;
	if (h->accept_paused_until > now && h->accept_paused_until < wake)
		wake = h->accept_paused_until;
	for (session *s = h->sessions; s; s = s->next) {
		if (!s->running || !s->w)
			continue;
		if (s->queue->deadline_ms && !s->w->interrupt_ms && s->queue->deadline_ms < wake)
			wake = s->queue->deadline_ms;
		if (s->w->interrupt_ms && s->w->interrupt_ms + h->o.grace_ms < wake)
			wake = s->w->interrupt_ms + h->o.grace_ms;
	}
	return wake;
}

static bool is_idle(host *h, int64_t now)
{
	if (h->clients)
		return false;
	for (session *s = h->sessions; s; s = s->next)
		if (s->running || s->queue)
			return false;
	return now - h->last_activity >= (int64_t)h->o.idle_timeout_s * 1000;
}

/* ---------------------------------------------------------------- record */

/* The record: the previous host's end, then one line per session that
 * still owes its next result a notice (it had state, or a loss to tell). */
static void record_write(host *h, const char *end)
{
	char *tmp = xasprintf("%s.tmp", h->record_path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "pyward-scratch-record 1\nend %s %d\n", end, h->o.idle_timeout_s);
		for (session *s = h->sessions; s; s = s->next)
			if (s->w || s->pending.notice_count)
				fprintf(f, "session %s %lld\n", s->name, (long long)s->generation);
		if (fclose(f) == 0)
			rename(tmp, h->record_path);
	}
	free(tmp);
	h->record_dirty = false;
}

static char *restart_message(const char *end, int idle_s)
{
	if (strcmp(end, "idle") == 0)
		return xasprintf(_("fresh scratchpad: the scratchpad host exited after %d s without use and was "
				   "started again"), idle_s);
	if (strcmp(end, "terminated") == 0)
		return xstrdup(_("fresh scratchpad: the scratchpad host was stopped (SIGTERM) and started again"));
	return xstrdup(_("fresh scratchpad: the scratchpad host was killed or crashed and started again"));
}

static void record_read(host *h)
{
	FILE *f = fopen(h->record_path, "r");
	if (!f)
		return;
	char line[256], end[32] = "running";
	int idle_s = 0;
	char *msg = NULL;
	while (fgets(line, sizeof line, f)) {
		char name[128];
		long long gen;
		if (sscanf(line, "end %31s %d", end, &idle_s) == 2)
			continue;
		if (sscanf(line, "session %127s %lld", name, &gen) != 2 || !pw_scratch_session_name_ok(name))
			continue;
		if (!msg)
			msg = restart_message(end, idle_s);
		session *s = session_get(h, name);
		s->generation = gen;
		note_loss(h, s, "host_restarted", msg);
	}
	free(msg);
	fclose(f);
}

/* ---------------------------------------------------------------- setup */

static pw_err *listen_socket(host *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(h->sock_path) >= sizeof sa.sun_path)
		return pw_err_new(PW_ERR_USAGE, _("set XDG_RUNTIME_DIR to a shorter path"),
				  _("socket path too long: %s"), h->sock_path);
	strcpy(sa.sun_path, h->sock_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("making the scratchpad socket"));
	/* A live host answers connect(); only then is the socket file not stale. */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
		close(probe);
		close(fd);
		return pw_err_new(PW_ERR_REFUSED, NULL, _("a scratchpad host already listens on %s"), h->sock_path);
	}
	if (probe >= 0)
		close(probe);
	unlink(h->sock_path);
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc != 0 || listen(fd, 64) != 0) {
		pw_err *e = pw_err_errno(PW_ERR_IO, errno, NULL, _("listening on %s"), h->sock_path);
		close(fd);
		return e;
	}
	h->listen_fd = fd;
	return NULL;
}

static void write_pidfile(host *h)
{
	FILE *f = fopen(h->pid_path, "w");
	if (f) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, SIG_IGN); /* a Ctrl-C meant for a client never reaches us */
	signal(SIGPIPE, SIG_IGN);
}

/* ---------------------------------------------------------------- loop */

typedef enum { SLOT_LISTEN, SLOT_CLIENT, SLOT_FROM, SLOT_OUT, SLOT_ERR, SLOT_TO } slot_kind;

typedef struct slot {
	slot_kind kind;
	void *obj;
} slot;

typedef struct pollset {
	struct pollfd *fds; /* a worker's reply pipe comes before its output pipes */
	slot *slots;
	size_t n, cap;
} pollset;

static void ps_add(pollset *ps, int fd, short events, slot_kind kind, void *obj)
{
	if (fd < 0)
		return;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 16;
		ps->fds = xrealloc(ps->fds, ps->cap * sizeof *ps->fds);
		ps->slots = xrealloc(ps->slots, ps->cap * sizeof *ps->slots);
	}
	ps->fds[ps->n] = (struct pollfd){ .fd = fd, .events = events };
	ps->slots[ps->n] = (slot){ kind, obj };
	ps->n++;
}

static void ps_build(host *h, pollset *ps)
{
	ps->n = 0;
	if (h->accept_paused_until <= pw_clock_mono_ms())
		ps_add(ps, h->listen_fd, POLLIN, SLOT_LISTEN, NULL);
	for (client *c = h->clients; c; c = c->next)
		ps_add(ps, c->fd, (short)(POLLIN | (c->out.off < c->out.len ? POLLOUT : 0)), SLOT_CLIENT, c);
	for (session *s = h->sessions; s; s = s->next) {
		if (!s->w || s->lease)
			continue;
		ps_add(ps, s->w->from_fd, POLLIN, SLOT_FROM, s);
		ps_add(ps, s->w->out_fd, POLLIN, SLOT_OUT, s);
		ps_add(ps, s->w->err_fd, POLLIN, SLOT_ERR, s);
		if (s->w->to.off < s->w->to.len)
			ps_add(ps, s->w->to_fd, POLLOUT, SLOT_TO, s);
	}
}

/* Is the object behind a slot still alive after earlier slots' handlers? */
static bool session_has_worker(host *h, session *s)
{
	for (session *t = h->sessions; t; t = t->next)
		if (t == s)
			return s->w != NULL;
	return false;
}

/* Output first: a worker writes its cell's output before its reply, and
 * the reply pipe is polled before the output pipes, so a poll that sees a
 * reply also sees the output before it; reading the output first puts it
 * into that reply's result without another read. */
static void ps_dispatch_output(host *h, pollset *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		session *s = ps->slots[i].obj;
		slot_kind k = ps->slots[i].kind;
		if (!ps->fds[i].revents || (k != SLOT_OUT && k != SLOT_ERR) || !session_has_worker(h, s))
			continue;
		if (k == SLOT_OUT && ps->fds[i].fd == s->w->out_fd)
			drain_fd(&s->w->out_fd, s->w->out);
		else if (k == SLOT_ERR && ps->fds[i].fd == s->w->err_fd)
			drain_fd(&s->w->err_fd, s->w->err);
	}
}

static void ps_dispatch(host *h, pollset *ps)
{
	ps_dispatch_output(h, ps);
	for (size_t i = 0; i < ps->n; i++) {
		short re = ps->fds[i].revents;
		if (!re)
			continue;
		slot *sl = &ps->slots[i];
		session *s = sl->obj;
		if (sl->kind == SLOT_LISTEN) {
			accept_client(h);
		} else if (sl->kind == SLOT_CLIENT) {
			client *c = sl->obj;
			if (re & POLLOUT && !outq_flush(&c->out, c->fd))
				c->dead = true;
			if (!c->dead && re & (POLLIN | POLLHUP | POLLERR))
				client_read(h, c);
		} else if (!session_has_worker(h, s) || ps->fds[i].fd < 0) {
			continue;
		} else if (sl->kind == SLOT_FROM && ps->fds[i].fd == s->w->from_fd) {
			worker_readable(h, s);
		} else if (sl->kind == SLOT_TO && ps->fds[i].fd == s->w->to_fd) {
			if (!outq_flush(&s->w->to, s->w->to_fd)) {
				worker_died(h, s);
			} else if (s->w->sigint_owed && s->w->to.off == s->w->to.len) {
				s->w->sigint_owed = false;
				kill(s->w->pid, SIGINT);
			}
		}
	}
}

static void run_timers(host *h, int64_t now)
{
	for (session *s = h->sessions; s; s = s->next)
		check_cell_timers(h, s, now);
	if (now >= h->next_check) {
		for (session *s = h->sessions; s; s = s->next) {
			check_exited(h, s);
			check_places(h, s);
		}
		h->next_check = now + CHECK_EVERY_MS;
	}
}

static void shutdown_host(host *h, const char *end)
{
	record_write(h, end); /* while the workers still count as state to announce */
	for (session *s = h->sessions; s; s = s->next) {
		if (s->w)
			worker_destroy(h, detach_worker(s));
		while (s->queue)
			fail_call(s, pw_err_new(PW_ERR_FAILED, NULL, _("the scratchpad host is stopping")));
	}
	while (h->clients) {
		client *c = h->clients;
		h->clients = c->next;
		client_gone(h, c);
	}
	unlink(h->sock_path);
	unlink(h->pid_path);
	close(h->listen_fd);
}

static void free_host(host *h)
{
	while (h->sessions) {
		session *s = h->sessions;
		h->sessions = s->next;
		for (size_t i = 0; i < s->pending.notice_count; i++) {
			free(s->pending.notices[i].kind);
			free(s->pending.notices[i].message);
		}
		free(s->pending.notices);
		free(s->name);
		free(s->project_dir);
		free_env(s->env);
		free(s);
	}
	free(h->sock_path);
	free(h->record_path);
	free(h->pid_path);
}

static void serve(host *h)
{
	pollset ps = { 0 };
	const char *end = "idle";
	for (;;) {
		if (stop_signal) {
			end = "terminated";
			break;
		}
		int64_t now = pw_clock_mono_ms();
		if (is_idle(h, now))
			break;
		ps_build(h, &ps);
		int64_t wait = next_wake(h, now) - now;
		int rc = poll(ps.fds, ps.n, wait < 0 ? 0 : (int)wait);
		if (rc > 0)
			ps_dispatch(h, &ps);
		run_timers(h, pw_clock_mono_ms());
		reap_clients(h);
		if (h->record_dirty)
			record_write(h, "running");
	}
	free(ps.fds);
	free(ps.slots);
	shutdown_host(h, end);
}

pw_err *pw_scratch_host_run(const pw_scratch_host_opts *o)
{
	host h = { .o = *o, .listen_fd = -1, .pid = getpid() };
	if (h.o.idle_timeout_s <= 0)
		h.o.idle_timeout_s = 900;
	if (h.o.max_workers <= 0)
		h.o.max_workers = 4;
	if (h.o.grace_ms <= 0)
		h.o.grace_ms = 2000;
	h.sock_path = xasprintf("%s/%s", o->dir, PW_SCRATCH_SOCKET);
	h.record_path = xasprintf("%s/%s", o->dir, PW_SCRATCH_RECORD);
	h.pid_path = xasprintf("%s/%s", o->dir, PW_SCRATCH_PIDFILE);
	install_signals();
	pw_err *e = listen_socket(&h);
	if (e) {
		free_host(&h);
		return e;
	}
	write_pidfile(&h);
	record_read(&h);
	record_write(&h, "running");
	if (o->ready_fd >= 0) {
		if (write(o->ready_fd, "R", 1) != 1) { /* the starter gave up: serve anyway */
		}
		close(o->ready_fd);
	}
	h.last_activity = pw_clock_mono_ms();
	h.next_check = h.last_activity + CHECK_EVERY_MS;
	serve(&h);
	free_host(&h);
	return NULL;
}
