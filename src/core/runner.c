/*
 * Process runner. fork+exec rather than posix_spawn: the child needs its own
 * process group, a working directory and exact exec errors, and a CLOEXEC
 * report pipe tells the parent which step failed and why. Everything the
 * child needs is prepared before fork, and between fork and exec the child
 * makes only async-signal-safe calls, because pw_run may be called from a
 * worker thread of a multi-threaded process.
 *
 * Output is read from two non-blocking pipes with poll(). The poll timeout
 * is at most TICK_MS, so the deadline, the cancel token and the child's exit
 * are noticed promptly without a SIGCHLD handler: we install no signal
 * handlers and keep no global state.
 */
#include "config.h"

#include "runner.h"
#include "cgroup.h"
#include "clock.h"
#include "i18n.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	TICK_MS = 100,          /* longest poll: how often deadline and cancel are checked */
	QUIET_MS = 200,         /* see run_drain_done() */
	DEFAULT_GRACE_MS = 2000,
	LINE_PIECE = 64 * 1024, /* longest piece handed to on_line */
	READ_CHUNK = 64 * 1024,
};
#define DEFAULT_CAP ((size_t)1 << 20)
/* Used to find argv[0] when the child's environment has no PATH. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- environment */

static const char *const keep_names[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR",
	/* The XDG base directories only: XDG_SESSION_COOKIE and the like
	 * identify the login session and are no child's business. */
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
};
static const char *const keep_prefixes[] = { "LC_" };
/* Compared without case: both spellings are in use (curl reads only the
 * lower-case http_proxy, pip and most others read either). */
static const char *const proxy_names[] = {
	"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy",
};
static const char *const secret_words[] = {
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "CREDENTIAL",
	"PRIVATE_KEY", "AUTH", "SESSION_KEY",
};
static const char *const secret_prefixes[] = {
	"AWS_", "AZURE_", "GCP_", "GOOGLE_APPLICATION_CREDENTIALS", "GITHUB_TOKEN",
	"NPM_TOKEN",
};

/* Names are passed as (pointer, length) so "NAME=VALUE" entries need no copy. */
static bool name_equals(const char *name, size_t len, const char *s, bool nocase)
{
	if (strlen(s) != len)
		return false;
	return (nocase ? strncasecmp(name, s, len) : strncmp(name, s, len)) == 0;
}

static bool name_has_prefix(const char *name, size_t len, const char *pre, bool nocase)
{
	size_t n = strlen(pre);
	return len >= n && (nocase ? strncasecmp(name, pre, n) : strncmp(name, pre, n)) == 0;
}

static bool name_contains(const char *name, size_t len, const char *word)
{
	size_t n = strlen(word);
	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(name + i, word, n) == 0)
			return true;
	return false;
}

static bool secret_name(const char *name, size_t len)
{
	for (size_t i = 0; i < COUNT(secret_words); i++)
		if (name_contains(name, len, secret_words[i]))
			return true;
	for (size_t i = 0; i < COUNT(secret_prefixes); i++)
		if (name_has_prefix(name, len, secret_prefixes[i], true))
			return true;
	return false;
}

bool pw_runner_name_is_secret(const char *name)
{
	return name && secret_name(name, strlen(name));
}

/* keep: exact names, or prefixes written with a final '*'. */
static bool asked_for(const char *name, size_t len, const char *const *keep)
{
	for (; keep && *keep; keep++) {
		size_t n = strlen(*keep);
		bool prefix = n && (*keep)[n - 1] == '*';
		if (prefix ? len >= n - 1 && strncmp(name, *keep, n - 1) == 0 : name_equals(name, len, *keep, false))
			return true;
	}
	return false;
}

static bool kept_name(const char *name, size_t len)
{
	for (size_t i = 0; i < COUNT(keep_names); i++)
		if (name_equals(name, len, keep_names[i], false))
			return true;
	for (size_t i = 0; i < COUNT(keep_prefixes); i++)
		if (name_has_prefix(name, len, keep_prefixes[i], false))
			return true;
	for (size_t i = 0; i < COUNT(proxy_names); i++)
		if (name_equals(name, len, proxy_names[i], true))
			return true;
	return false;
}

/* A NULL-terminated, growing array of malloc'd "NAME=VALUE" strings. */
struct envlist {
	char **v;
	size_t n, cap;
};

static void envlist_push(struct envlist *l, const char *entry)
{
	if (l->n + 2 > l->cap) {
		l->cap = l->cap ? l->cap * 2 : 32;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = xstrdup(entry);
	l->v[l->n] = NULL;
}

/* Index of the entry named name[0..len), or l->n when there is none. */
static size_t envlist_find(const struct envlist *l, const char *name, size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], name, len) == 0 && l->v[i][len] == '=')
			return i;
	return l->n;
}

static void envlist_remove(struct envlist *l, size_t i)
{
	free(l->v[i]);
	/* Moves the NULL terminator down too. */
	memmove(&l->v[i], &l->v[i + 1], (l->n - i) * sizeof *l->v);
	l->n--;
}

/* Length of the name in "NAME=VALUE", or 0 when the entry is malformed. */
static size_t entry_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : 0;
}

char **pw_runner_build_env(const char *const *envp, const char *const *add)
{
	return pw_runner_build_env_keeping(envp, NULL, add);
}

char **pw_runner_build_env_keeping(const char *const *envp, const char *const *keep, const char *const *add)
{
	struct envlist l = { NULL, 0, 0 };
	l.cap = 32;
	l.v = xmalloc(l.cap * sizeof *l.v);
	l.v[0] = NULL;
	for (; envp && *envp; envp++) {
		size_t len = entry_name_len(*envp);
		/* The first of duplicate names wins, as with getenv(). */
		if (len && (kept_name(*envp, len) || asked_for(*envp, len, keep)) && !secret_name(*envp, len) &&
		    envlist_find(&l, *envp, len) == l.n)
			envlist_push(&l, *envp);
	}
	/* The caller chose these, so they are not scrubbed. */
	for (; add && *add; add++) {
		size_t len = entry_name_len(*add);
		if (!len)
			continue;
		size_t i = envlist_find(&l, *add, len);
		if (i < l.n)
			envlist_remove(&l, i);
		envlist_push(&l, *add);
	}
	return l.v;
}

char **pw_runner_build_env_python(const char *const *envp)
{
	/* TERMINFO_DIRS: the managed runtime's bundled terminfo, which the
	 * scratchpad operation sets for a $TERM the system does not know. */
	static const char *const keep[] = { "VIRTUAL_ENV", "PYTHONPATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
					    "TERMINFO_DIRS", NULL };
	return pw_runner_build_env_keeping(envp, keep, NULL);
}

void pw_runner_env_free(char **env)
{
	if (!env)
		return;
	for (char **p = env; *p; p++)
		free(*p);
	free(env);
}

static const char *env_lookup(char *const *env, const char *name)
{
	size_t len = strlen(name);
	for (; *env; env++)
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

/* ---------------------------------------------------------------- capture */

/* One output stream: its pipe, the kept head and tail, the spill file and
 * the line being assembled for the callback. */
struct stream {
	pw_stream id;
	int fd;
	size_t head_cap, tail_cap;
	char *head;                /* grows up to head_cap */
	size_t head_len, head_alloc;
	char *tail;                /* ring of tail_cap bytes, made when the head is full */
	size_t tail_start, tail_len;
	size_t total;
	const char *spill_dir;
	char *spill_path;
	int spill_fd;
	bool spill_tried;
	char *line;                /* LINE_PIECE + 1 bytes, only with a callback */
	size_t line_len;
};

static void stream_init(struct stream *s, pw_stream id, int fd, size_t cap,
	const pw_run_opts *o)
{
	memset(s, 0, sizeof *s);
	s->id = id;
	s->fd = fd;
	s->head_cap = cap / 2;
	s->tail_cap = cap - s->head_cap;
	s->spill_dir = o->spill_dir;
	s->spill_fd = -1;
	if (o->on_line)
		s->line = xmalloc(LINE_PIECE + 1);
}

static void head_put(struct stream *s, const char *p, size_t n)
{
	if (s->head_len + n > s->head_alloc) {
		size_t a = s->head_alloc ? s->head_alloc : 4096;
		while (a < s->head_len + n)
			a *= 2;
		if (a > s->head_cap)
			a = s->head_cap;
		s->head = xrealloc(s->head, a);
		s->head_alloc = a;
	}
	memcpy(s->head + s->head_len, p, n);
	s->head_len += n;
}

/* Append to the ring, overwriting the oldest bytes once it is full. */
static void tail_put(struct stream *s, const char *p, size_t n)
{
	size_t cap = s->tail_cap;
	if (!s->tail)
		s->tail = xmalloc(cap);
	if (n >= cap) {
		memcpy(s->tail, p + n - cap, cap);
		s->tail_start = 0;
		s->tail_len = cap;
		return;
	}
	size_t w = (s->tail_start + s->tail_len) % cap;
	size_t first = cap - w < n ? cap - w : n;
	memcpy(s->tail + w, p, first);
	memcpy(s->tail, p + first, n - first);
	if (s->tail_len + n > cap) {
		s->tail_start = (s->tail_start + s->tail_len + n - cap) % cap;
		s->tail_len = cap;
	} else {
		s->tail_len += n;
	}
}

/* The ring's contents in order, as up to two pieces. */
static void tail_parts(const struct stream *s, const char **p1, size_t *n1,
	const char **p2, size_t *n2)
{
	size_t to_end = s->tail_cap - s->tail_start;
	*p1 = *p2 = s->tail;
	*n1 = *n2 = 0;
	if (!s->tail)
		return;
	*p1 = s->tail + s->tail_start;
	*n1 = s->tail_len < to_end ? s->tail_len : to_end;
	*n2 = s->tail_len - *n1;
}

static void capture_put(struct stream *s, const char *p, size_t n)
{
	size_t h = s->head_cap - s->head_len;
	if (h > n)
		h = n;
	if (h)
		head_put(s, p, h);
	if (n > h)
		tail_put(s, p + h, n - h);
}

/* A spill file missing bytes would pass for the whole stream, so on any
 * write failure (disk full) it is removed rather than kept. */
static void spill_abandon(struct stream *s)
{
	close(s->spill_fd);
	s->spill_fd = -1;
	unlink(s->spill_path);
	free(s->spill_path);
	s->spill_path = NULL;
}

/* Called once, when the stream first outgrows its cap. Nothing has been
 * dropped yet, so head and tail together are everything so far and the file
 * ends up holding the whole stream; output within the cap makes no file.
 * mkstemp's 0600 mode matters: output can contain secrets. */
static void spill_open(struct stream *s)
{
	const char *p1, *p2;
	size_t n1, n2;
	s->spill_tried = true;
	s->spill_path = xasprintf("%s/pyward-%s-XXXXXX.log", s->spill_dir,
		s->id == PW_STREAM_STDOUT ? "stdout" : "stderr");
	s->spill_fd = mkostemps(s->spill_path, 4, O_CLOEXEC);
	if (s->spill_fd < 0) {
		free(s->spill_path);
		s->spill_path = NULL;
		return;
	}
	tail_parts(s, &p1, &n1, &p2, &n2);
	if (pw_write_all(s->spill_fd, s->head, s->head_len) != 0 ||
	    pw_write_all(s->spill_fd, p1, n1) != 0 || pw_write_all(s->spill_fd, p2, n2) != 0)
		spill_abandon(s);
}

/* ---------------------------------------------------------------- lines */

static void line_emit(struct stream *s, const pw_run_opts *o)
{
	/* NUL-terminated as a courtesy; the length is what counts. */
	s->line[s->line_len] = '\0';
	o->on_line(o->ud, s->id, s->line, s->line_len);
	s->line_len = 0;
}

/* Split into lines. A full piece is held back until the next byte is seen,
 * so a line of exactly LINE_PIECE bytes is one piece, not a piece and an
 * empty line. */
static void line_feed(struct stream *s, const char *p, size_t n, const pw_run_opts *o)
{
	while (n > 0) {
		if (s->line_len == LINE_PIECE) {
			line_emit(s, o);
			if (*p == '\n') {
				p++, n--;
				continue;
			}
		}
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		if (take > LINE_PIECE - s->line_len)
			take = LINE_PIECE - s->line_len;
		memcpy(s->line + s->line_len, p, take);
		s->line_len += take;
		p += take, n -= take;
		if (nl && p == nl) {
			line_emit(s, o);
			p++, n--;
		}
	}
}

static void stream_feed(struct stream *s, const char *p, size_t n, const pw_run_opts *o)
{
	if (s->spill_dir && !s->spill_tried && s->total + n > s->head_cap + s->tail_cap)
		spill_open(s);
	if (s->spill_fd >= 0 && pw_write_all(s->spill_fd, p, n) != 0)
		spill_abandon(s);
	capture_put(s, p, n);
	s->total += n;
	if (s->line)
		line_feed(s, p, n, o);
}

/* Stop reading; the final unterminated line goes to the callback. */
static void stream_close(struct stream *s, const pw_run_opts *o)
{
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	if (s->line && s->line_len)
		line_emit(s, o);
}

/* One read; true when bytes arrived. End of file, or a read error (which on
 * a pipe means the same), closes the stream. */
static bool stream_read(struct stream *s, char *buf, const pw_run_opts *o)
{
	ssize_t n = read(s->fd, buf, READ_CHUNK);
	if (n > 0) {
		stream_feed(s, buf, (size_t)n, o);
		return true;
	}
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		stream_close(s, o);
	return false;
}

/* ---------------------------------------------------------------- result */

struct out_stream {
	char *text;
	size_t total, dropped;
	char *spill_path;
};

struct pw_run_result {
	pw_run_status status;
	int exit_code, signal;
	int64_t duration_ms;
	struct out_stream out[2];
	char *describe;
};

/* Head, the marker when bytes were dropped, tail. */
static void stream_finish(struct stream *s, struct out_stream *out)
{
	const char *p1, *p2;
	size_t n1, n2;
	char *marker = NULL;
	tail_parts(s, &p1, &n1, &p2, &n2);
	out->total = s->total;
	out->dropped = s->total - s->head_len - s->tail_len;
	if (out->dropped)
		marker = xasprintf("\n[... %zu bytes dropped ...]\n", out->dropped);
	size_t m = marker ? strlen(marker) : 0;
	char *t = out->text = xmalloc(s->head_len + m + n1 + n2 + 1);
	if (s->head_len)
		memcpy(t, s->head, s->head_len);
	t += s->head_len;
	if (m)
		memcpy(t, marker, m);
	t += m;
	if (n1)
		memcpy(t, p1, n1);
	if (n2)
		memcpy(t + n1, p2, n2);
	t[n1 + n2] = '\0';
	free(marker);
	if (s->spill_fd >= 0)
		close(s->spill_fd);
	out->spill_path = s->spill_path;
	free(s->head);
	free(s->tail);
	free(s->line);
}

static char *describe(const pw_run_result *r)
{
	switch (r->status) {
	case PW_RUN_EXITED: return xasprintf(_("exited %d"), r->exit_code);
	case PW_RUN_SIGNALLED: return xasprintf(_("killed by signal %d"), r->signal);
	case PW_RUN_TIMED_OUT: return xstrdup(_("timed out"));
	case PW_RUN_CANCELLED: return xstrdup(_("cancelled"));
	}
	return xstrdup("?");
}

static const struct out_stream *result_stream(const pw_run_result *r, pw_stream s)
{
	if (!r || (s != PW_STREAM_STDOUT && s != PW_STREAM_STDERR))
		return NULL;
	return &r->out[s - 1];
}

pw_run_status pw_run_result_status(const pw_run_result *r)
{
	return r ? r->status : PW_RUN_EXITED;
}

int pw_run_result_exit_code(const pw_run_result *r)
{
	return r ? r->exit_code : -1;
}

int pw_run_result_signal(const pw_run_result *r)
{
	return r ? r->signal : 0;
}

int64_t pw_run_result_duration_ms(const pw_run_result *r)
{
	return r ? r->duration_ms : 0;
}

const char *pw_run_result_output(const pw_run_result *r, pw_stream s)
{
	const struct out_stream *o = result_stream(r, s);
	return o ? o->text : "";
}

size_t pw_run_result_total_bytes(const pw_run_result *r, pw_stream s)
{
	const struct out_stream *o = result_stream(r, s);
	return o ? o->total : 0;
}

size_t pw_run_result_dropped_bytes(const pw_run_result *r, pw_stream s)
{
	const struct out_stream *o = result_stream(r, s);
	return o ? o->dropped : 0;
}

const char *pw_run_result_spill_path(const pw_run_result *r, pw_stream s)
{
	const struct out_stream *o = result_stream(r, s);
	return o ? o->spill_path : NULL;
}

const char *pw_run_result_describe(const pw_run_result *r)
{
	return r ? r->describe : "";
}

void pw_run_result_free(pw_run_result **r)
{
	if (!r || !*r)
		return;
	for (int i = 0; i < 2; i++) {
		free((*r)->out[i].text);
		free((*r)->out[i].spill_path);
	}
	free((*r)->describe);
	free(*r);
	*r = NULL;
}

/* ---------------------------------------------------------------- supervision */

struct run {
	const pw_run_opts *o;
	pid_t pid;              /* also the process group id */
	struct stream s[2];
	char *buf;
	int64_t start, now, last_io, reaped_at, term_at;
	int grace_ms, idle_ms;
	int wstatus;
	bool reaped, stopping, killed;
	pw_run_status stop_reason;
};

/* Only called while the child is unreaped (perhaps a zombie), so the group
 * id cannot have been reused. The fallback covers a child whose setpgid
 * somehow failed. */
static void signal_group(const struct run *r, int sig)
{
	if (kill(-r->pid, sig) < 0 && errno == ESRCH)
		kill(r->pid, sig);
}

static void run_reap(struct run *r)
{
	while (waitpid(r->pid, &r->wstatus, 0) < 0) {
		if (errno != EINTR) {
			/* The application ignores SIGCHLD, so the kernel reaped it
			 * and how it ended is lost: report a failure, not success. */
			r->wstatus = W_EXITCODE(255, 0);
			break;
		}
	}
	r->reaped = true;
	r->reaped_at = r->now;
}

/* Notice the exit without reaping (WNOWAIT): while the child is a zombie its
 * pid, and so our group id, stays reserved, which makes the final SIGKILL to
 * the group safe. That SIGKILL removes grandchildren that ignored SIGTERM. */
static void run_check_exit(struct run *r)
{
	siginfo_t si;
	if (r->reaped)
		return;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
		if (errno == EINTR)
			return;
		si.si_pid = r->pid; /* ECHILD: already reaped for us */
	}
	if (si.si_pid == 0)
		return;
	if (r->stopping)
		kill(-r->pid, SIGKILL);
	run_reap(r);
}

static bool run_should_stop(const struct run *r, pw_run_status *why)
{
	if (r->o->deadline_ms > 0 && r->now >= r->o->deadline_ms) {
		*why = PW_RUN_TIMED_OUT;
		return true;
	}
	if (pw_cancel_raised(r->o->cancel)) {
		*why = PW_RUN_CANCELLED;
		return true;
	}
	return false;
}

/* SIGTERM first, then SIGKILL after the grace period. SIGCONT wakes a
 * stopped group, which would otherwise never act on SIGTERM. */
static void run_check_stop(struct run *r)
{
	pw_run_status why;
	if (r->reaped)
		return;
	if (!r->stopping && run_should_stop(r, &why)) {
		r->stopping = true;
		r->stop_reason = why;
		r->term_at = r->now;
		signal_group(r, SIGTERM);
		signal_group(r, SIGCONT);
	} else if (r->stopping && !r->killed && r->now - r->term_at >= r->grace_ms) {
		signal_group(r, SIGKILL);
		r->killed = true;
	}
}

/*
 * When to stop reading. Normally at end of file on both pipes, once the
 * child is reaped. But a background grandchild ("cmd &", a daemon) can hold
 * the pipes open long after the child exited, and waiting for it could take
 * forever. So after the reap we read only while output keeps coming: after
 * QUIET_MS without a byte we close our ends (a grandchild still writing then
 * gets EPIPE or SIGPIPE). Output that never pauses is cut grace_ms after the
 * reap, or QUIET_MS after it when the run was stopped or its deadline or
 * cancel has come; those bounds leave time to read what is already buffered
 * in the pipes. A deadline after the reap does not change the result: the
 * child ended on its own.
 */
static bool run_drain_done(const struct run *r)
{
	pw_run_status why;
	if (!r->reaped)
		return false;
	if (r->s[0].fd < 0 && r->s[1].fd < 0)
		return true;
	int64_t since = r->last_io > r->reaped_at ? r->last_io : r->reaped_at;
	if (r->now - since >= QUIET_MS)
		return true;
	int64_t limit = r->stopping || run_should_stop(r, &why) ? QUIET_MS : r->grace_ms;
	return r->now - r->reaped_at >= limit;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int run_timeout(struct run *r)
{
	int64_t t = TICK_MS;
	if (r->o->deadline_ms > 0 && !r->stopping && !r->reaped)
		t = min64(t, r->o->deadline_ms - r->now);
	if (r->stopping && !r->killed && !r->reaped)
		t = min64(t, r->term_at + r->grace_ms - r->now);
	if (r->reaped)
		t = min64(t, (r->last_io > r->reaped_at ? r->last_io : r->reaped_at) +
			QUIET_MS - r->now);
	if (!r->reaped && r->s[0].fd < 0 && r->s[1].fd < 0) {
		/* Pipes closed: the exit is usually a moment away, so look again
		 * soon, then less often for a child that closed them and lives on. */
		t = min64(t, r->idle_ms);
		r->idle_ms = (int)min64(2 * (int64_t)r->idle_ms, TICK_MS);
	}
	return t < 0 ? 0 : (int)t;
}

static void run_loop(struct run *r)
{
	struct pollfd pfd[2];
	for (;;) {
		r->now = pw_clock_mono_ms();
		run_check_exit(r);
		run_check_stop(r);
		if (run_drain_done(r))
			break;
		for (int i = 0; i < 2; i++) {
			pfd[i].fd = r->s[i].fd; /* poll skips negative descriptors */
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, 2, run_timeout(r)) <= 0)
			continue;
		r->now = pw_clock_mono_ms();
		for (int i = 0; i < 2; i++)
			if (pfd[i].revents && stream_read(&r->s[i], r->buf, r->o))
				r->last_io = r->now;
	}
	for (int i = 0; i < 2; i++)
		stream_close(&r->s[i], r->o);
}

static pw_run_result *run_result(struct run *r)
{
	pw_run_result *res = xcalloc(1, sizeof *res);
	res->exit_code = -1;
	if (WIFSIGNALED(r->wstatus))
		res->signal = WTERMSIG(r->wstatus);
	if (r->stopping) {
		res->status = r->stop_reason;
	} else if (WIFSIGNALED(r->wstatus)) {
		res->status = PW_RUN_SIGNALLED;
	} else {
		res->status = PW_RUN_EXITED;
		res->exit_code = WEXITSTATUS(r->wstatus);
	}
	res->duration_ms = r->reaped_at - r->start;
	for (int i = 0; i < 2; i++)
		stream_finish(&r->s[i], &res->out[i]);
	res->describe = describe(res);
	return res;
}

/* Takes ownership of the two read ends. */
static pw_run_result *run_child(const pw_run_opts *o, pid_t pid, int64_t start,
	int out_fd, int err_fd)
{
	struct run r;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.pid = pid;
	r.start = r.now = r.last_io = start;
	r.grace_ms = o->grace_ms > 0 ? o->grace_ms : DEFAULT_GRACE_MS;
	r.idle_ms = 1;
	size_t cap = o->cap_bytes ? o->cap_bytes : DEFAULT_CAP;
	stream_init(&r.s[0], PW_STREAM_STDOUT, out_fd, cap, o);
	stream_init(&r.s[1], PW_STREAM_STDERR, err_fd, cap, o);
	r.buf = xmalloc(READ_CHUNK);
	run_loop(&r);
	free(r.buf);
	return run_result(&r);
}

/* ---------------------------------------------------------------- spawning */

enum { INHERIT_MAX = 4 };
/* Per thread: the CLI's main thread and each TUI worker lock and run their
 * own children, and one must not pin another's lock. */
static _Thread_local int inherit_fds[INHERIT_MAX] = { -1, -1, -1, -1 };

void pw_runner_inherit_fd(int fd)
{
	for (int i = 0; i < INHERIT_MAX && fd >= 0; i++)
		if (inherit_fds[i] < 0) {
			inherit_fds[i] = fd;
			return;
		}
}

void pw_runner_inherit_fd_drop(int fd)
{
	for (int i = 0; i < INHERIT_MAX; i++)
		if (inherit_fds[i] == fd)
			inherit_fds[i] = -1;
}

/* Everything the child needs, made before fork: after fork the child may not
 * allocate, since another thread may have held the malloc lock. */
struct spawn {
	char *path;
	char **argv;
	char **envp;
	const char *cwd;
	int in_fd;
	int out[2], err[2], rep[2];
	pid_t parent;
	int keep[INHERIT_MAX];
	pw_cgroup *cg;          /* NULL where no cgroup can be made */
	const char *cg_procs;
};

/* What the child writes to the report pipe when a step fails. */
struct report {
	int step;
	int errnum;
};
enum { STEP_SETUP = 1, STEP_CWD, STEP_EXEC };

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Our descriptors must not be 0, 1 or 2 (possible when the application closed
 * its standard streams), or the child's dup2() onto 0..2 would clobber them. */
static int fd_above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int saved = errno;
	close(fd);
	errno = saved;
	return hi;
}

/* CLOEXEC, so a child that another thread spawns at the same moment does not
 * inherit our ends (a write end held there would keep us from seeing EOF). */
static bool make_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	p[0] = fd_above_stdio(p[0]);
	p[1] = fd_above_stdio(p[1]);
	return p[0] >= 0 && p[1] >= 0;
}

/* Only the read end: the write end's file description is shared with the
 * child, which expects ordinary blocking writes. */
static bool set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

static bool is_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Look name up on the child's PATH (the caller may have replaced it with
 * env_add). Empty and relative entries are skipped: they would depend on the
 * current directory, and a program should not be picked up from there. */
static pw_err *resolve_program(const char *name, char *const *env, char **out)
{
	if (strchr(name, '/')) {
		*out = xstrdup(name);
		return NULL;
	}
	const char *path = env_lookup(env, "PATH");
	for (const char *p = path ? path : DEFAULT_PATH; *p;) {
		size_t n = strcspn(p, ":");
		if (n && p[0] == '/') {
			char *cand = xasprintf("%.*s/%s", (int)n, p, name);
			if (is_executable(cand)) {
				*out = cand;
				return NULL;
			}
			free(cand);
		}
		p += p[n] ? n + 1 : n;
	}
	return pw_err_new(PW_ERR_NOTFOUND, _("install it, or check PATH"),
		_("program not found: %s"), name);
}

static char **argv_copy(const char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **v = xmalloc((n + 1) * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(argv[i]);
	v[n] = NULL;
	return v;
}

static pw_err *spawn_prepare(struct spawn *sp, const pw_run_opts *o)
{
	sp->envp = pw_runner_build_env((const char *const *)environ, o->env_add);
	pw_err *e = resolve_program(o->argv[0], sp->envp, &sp->path);
	if (e)
		return e;
	sp->argv = argv_copy(o->argv);
	sp->parent = getpid();
	memcpy(sp->keep, inherit_fds, sizeof sp->keep);
	/* Its own cgroup: what it starts stays there, setsid or not. */
	sp->cg = pw_cgroup_new();
	sp->cg_procs = pw_cgroup_procs_path(sp->cg);
	const char *in = o->stdin_path ? o->stdin_path : "/dev/null";
	sp->in_fd = fd_above_stdio(open(in, O_RDONLY | O_CLOEXEC));
	if (sp->in_fd < 0)
		return pw_err_errno(errno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, errno, NULL,
			_("cannot open %s as input for %s"), in, o->argv[0]);
	if (!make_pipe(sp->out) || !make_pipe(sp->err) || !make_pipe(sp->rep) ||
	    !set_nonblock(sp->out[0]) || !set_nonblock(sp->err[0]))
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot make pipes for %s"),
			o->argv[0]);
	return NULL;
}

static void spawn_cleanup(struct spawn *sp)
{
	/* Whatever the child left behind, detached or not, goes with it. */
	pw_cgroup_free(&sp->cg);
	close_fd(&sp->in_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&sp->out[i]);
		close_fd(&sp->err[i]);
		close_fd(&sp->rep[i]);
	}
	free(sp->path);
	pw_runner_env_free(sp->argv);
	pw_runner_env_free(sp->envp);
}

__attribute__((noreturn)) static void child_fail(int fd, int step)
{
	struct report rp = { step, errno };
	ssize_t n = write(fd, &rp, sizeof rp);
	(void)n;
	_exit(127);
}

/* In the child: async-signal-safe calls only. */
__attribute__((noreturn)) static void child_exec(const struct spawn *sp)
{
	sigset_t none;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&none);
	/* Dies with us: a pip left running after pyward was killed would go on
	 * changing an environment nobody holds the lock of. The parent may have
	 * died before the request was made: then it is init (or a subreaper). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != sp->parent)
		_exit(127);
	pw_cgroup_enter(sp->cg_procs);
	/* Its own group, so a deadline stops the child and all it started. */
	setpgid(0, 0);
	/* A worker thread often blocks signals, and many programs ignore SIGPIPE;
	 * both would survive exec and confuse the child. */
	sigprocmask(SIG_SETMASK, &none, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	if (dup2(sp->in_fd, 0) < 0 || dup2(sp->out[1], 1) < 0 || dup2(sp->err[1], 2) < 0)
		child_fail(sp->rep[1], STEP_SETUP);
	if (sp->cwd && chdir(sp->cwd) < 0)
		child_fail(sp->rep[1], STEP_CWD);
#ifdef CLOSE_RANGE_CLOEXEC
	/* Descriptors the application opened without O_CLOEXEC must not leak
	 * into the child; failure (an old kernel) only loses this hardening. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
	for (int i = 0; i < INHERIT_MAX; i++)
		if (sp->keep[i] > 2)
			fcntl(sp->keep[i], F_SETFD, 0);
	execve(sp->path, sp->argv, sp->envp);
	child_fail(sp->rep[1], STEP_EXEC);
}

static const char *exec_hint(int errnum)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
		return _("check that it is an executable file (chmod +x) on a filesystem "
			"that allows running programs");
	case ENOEXEC:
		return _("it is not a program this system can run; a script needs a #! line");
	default:
		return _("check that it is a program for this system");
	}
}

static pw_err *report_err(const struct report *rp, const pw_run_opts *o)
{
	const char *prog = o->argv[0];
	bool missing = rp->errnum == ENOENT || rp->errnum == ENOTDIR;
	switch (rp->step) {
	case STEP_CWD:
		return pw_err_errno(missing ? PW_ERR_NOTFOUND : PW_ERR_IO, rp->errnum, NULL,
			_("cannot run %s in %s"), prog, o->cwd);
	case STEP_EXEC:
		if (missing)
			return pw_err_errno(PW_ERR_NOTFOUND, rp->errnum,
				_("check the path, and the interpreter named on its #! line"),
				_("cannot run %s"), prog);
		return pw_err_errno(PW_ERR_FAILED, rp->errnum, exec_hint(rp->errnum),
			_("cannot run %s"), prog);
	default:
		return pw_err_errno(PW_ERR_IO, rp->errnum, NULL,
			_("cannot set up standard streams for %s"), prog);
	}
}

/* True when the child reported a failure; end of file means exec succeeded. */
static bool read_report(int fd, struct report *rp)
{
	ssize_t n;
	while ((n = read(fd, rp, sizeof *rp)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof *rp;
}

static pw_err *spawn_start(struct spawn *sp, const pw_run_opts *o, pid_t *pid)
{
	struct report rp;
	*pid = fork();
	if (*pid < 0)
		return pw_err_errno(PW_ERR_FAILED, errno,
			_("the system may be short of memory or processes"),
			_("cannot start %s"), o->argv[0]);
	if (*pid == 0)
		child_exec(sp);
	/* Here too: whichever of us runs first, the group exists before we
	 * could signal it. Failure means the child already did it and exec'd. */
	setpgid(*pid, *pid);
	close_fd(&sp->in_fd);
	close_fd(&sp->out[1]);
	close_fd(&sp->err[1]);
	close_fd(&sp->rep[1]);
	if (!read_report(sp->rep[0], &rp))
		return NULL;
	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	return report_err(&rp, o);
}

pw_err *pw_run(const pw_run_opts *opts, pw_run_result **out)
{
	if (!out)
		return pw_err_new(PW_ERR_USAGE, NULL,
			_("pw_run needs somewhere to put the result"));
	*out = NULL;
	if (!opts || !opts->argv || !opts->argv[0] || !opts->argv[0][0])
		return pw_err_new(PW_ERR_USAGE, NULL, _("no program to run"));
	struct spawn sp = { .cwd = opts->cwd, .in_fd = -1, .out = { -1, -1 },
		.err = { -1, -1 }, .rep = { -1, -1 } };
	pid_t pid = -1;
	int64_t start = pw_clock_mono_ms();
	pw_err *e = spawn_prepare(&sp, opts);
	if (!e)
		e = spawn_start(&sp, opts, &pid);
	if (!e) {
		*out = run_child(opts, pid, start, sp.out[0], sp.err[0]);
		sp.out[0] = sp.err[0] = -1;
	}
	spawn_cleanup(&sp);
	return e;
}
