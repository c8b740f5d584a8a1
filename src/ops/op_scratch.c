/* The scratchpad operations: see op_scratch.h. */
#include "config.h"

#include "ops/op_scratch.h"

#include "ops/venvops.h"

#include "clock.h"
#include "filestamp.h"
#include "i18n.h"
#include "jsontext.h"
#include "paths.h"
#include "runtime.h"
#include "runtime_fixup.h"
#include "scratch_client.h"
#include "scratch_host.h"
#include "venv.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* An environment checked by a connection's last call, remembered with
 * stamps (filestamp.h) of what the check read: the folder (not followed: a
 * folder swapped for a link is not the folder), its pyvenv.cfg, its
 * bin/python link and the file that leads to. While all four are the same,
 * and for at most VENV_RECHECK_MS, a call naming the same environment
 * skips the check: the guard's walk of the path, the interpreter's
 * realpath and the pyvenv.cfg read cost more than a leased cell
 * (bench/mcp.sh). The bound also covers what a stamp cannot see (a file
 * rewritten in place within one clock tick, a change made while the check
 * ran).
 * The folder is held open (O_PATH) from the check on, so that once its own
 * stamp says the path still names that folder (the same inode, which the
 * open descriptor keeps from being reused), the other three are taken
 * relative to it, without walking the folder's path again.
 * While the connection holds the session's lease (its worker runs, and a
 * cell for it starts no interpreter), the stamps are looked at at most
 * every VENV_STAMP_MS: four path lookups were a sixth of the MCP server's
 * time per python call. Such a call goes only to the leased worker; one
 * that would go through the host (which may start an interpreter) looks
 * at the stamps first. */
#define VENV_RECHECK_MS 1000
#define VENV_STAMP_MS 10
enum { VF_DIR, VF_CFG, VF_LINK, VF_TARGET, VF_COUNT };

typedef struct venv_memo {
	char *arg, *workspace, *box_root;  /* what was named, and where */
	char *dir, *python;                /* what the check found */
	char *paths[VF_COUNT];
	pw_filestamp stamps[VF_COUNT];
	int64_t checked_ms, stamped_ms;
	bool held;                         /* dirfd is the folder, rel[] the paths inside it */
	int dirfd;
	const char *rel[VF_COUNT];
} venv_memo;

struct pw_op_scratch_conn {
	pw_scratch_client *client;
	char *env_for;          /* the session this connection sent the environment for */
	char *session, *python; /* its last call's: an interpreter named again needs no check */
	venv_memo venv;         /* its last call's environment, as checked */
};

static void venv_memo_clear(venv_memo *m)
{
	free(m->arg);
	free(m->workspace);
	free(m->box_root);
	free(m->dir);
	free(m->python);
	for (int i = 0; i < VF_COUNT; i++)
		free(m->paths[i]);
	if (m->held)
		close(m->dirfd);
	memset(m, 0, sizeof *m);
}

static bool same_text(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* VENV_STAMP_MS, or PYWARD_TEST_SCRATCH_STAMP_MS (the tests': a long one
 * shows what a leased call skips, and stretches VENV_RECHECK_MS with it so
 * that a slow machine does not check the environment afresh meanwhile). */
static int64_t stamp_interval;
static pthread_once_t stamp_interval_once = PTHREAD_ONCE_INIT;

static void read_stamp_interval(void)
{
	const char *v = getenv("PYWARD_TEST_SCRATCH_STAMP_MS");
	stamp_interval = v && *v ? strtoll(v, NULL, 10) : VENV_STAMP_MS;
}

static int64_t stamp_interval_ms(void)
{
	pthread_once(&stamp_interval_once, read_stamp_interval); /* read once: getenv was 2% of a call */
	return stamp_interval;
}

static bool venv_stamps_same(const venv_memo *m)
{
	if (!pw_filestamp_same(m->paths[VF_DIR], false, &m->stamps[VF_DIR]))
		return false;
	for (int i = VF_CFG; i < VF_COUNT; i++) {
		bool follow = i == VF_CFG || i == VF_TARGET;
		if (!(m->held ? pw_filestamp_same_at(m->dirfd, m->rel[i], follow, &m->stamps[i])
			      : pw_filestamp_same(m->paths[i], follow, &m->stamps[i])))
			return false;
	}
	return true;
}

/* The environment remembered for this name, when nothing it was checked
 * from has changed: dir and python copied out. leased: the call may go
 * to the session's leased worker alone (else the stamps are always looked
 * at); *unstamped: they were not (they were less than VENV_STAMP_MS ago),
 * so the call must go to that worker or come back (run). */
static bool venv_memo_get(venv_memo *m, const pw_ops_ctx *ctx, const char *arg, bool leased, char **dir,
			  char **python, bool *unstamped)
{
	int64_t now = pw_clock_mono_ms(), interval = stamp_interval_ms();
	*unstamped = false;
	if (!same_text(m->arg, arg) || !same_text(m->workspace, ctx->workspace) || !same_text(m->box_root, ctx->box_root) ||
	    now - m->checked_ms >= (interval > VENV_RECHECK_MS ? interval : VENV_RECHECK_MS))
		return false;
	if (leased && now - m->stamped_ms < interval) {
		*unstamped = true;
	} else {
		if (!venv_stamps_same(m))
			return false;
		m->stamped_ms = now;
	}
	*dir = xstrdup(m->dir);
	*python = xstrdup(m->python);
	return true;
}

static void venv_memo_put(venv_memo *m, const pw_ops_ctx *ctx, const char *arg, const char *dir, const char *python)
{
	venv_memo_clear(m);
	m->arg = xstrdup(arg);
	m->workspace = ctx->workspace ? xstrdup(ctx->workspace) : NULL;
	m->box_root = ctx->box_root ? xstrdup(ctx->box_root) : NULL;
	m->dir = xstrdup(dir);
	m->python = xstrdup(python);
	m->paths[VF_DIR] = xstrdup(dir);
	m->paths[VF_CFG] = xasprintf("%s/pyvenv.cfg", dir);
	m->paths[VF_LINK] = xstrdup(python);
	m->paths[VF_TARGET] = xstrdup(python);
	for (int i = 0; i < VF_COUNT; i++)
		pw_filestamp_take(m->paths[i], i == VF_CFG || i == VF_TARGET, &m->stamps[i]);
	m->checked_ms = m->stamped_ms = pw_clock_mono_ms();
	/* held only when it is the folder stamped, and the interpreter lies inside it */
	size_t n = strlen(dir);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && m->stamps[VF_DIR].exists && (uint64_t)st.st_dev == m->stamps[VF_DIR].dev &&
	    (uint64_t)st.st_ino == m->stamps[VF_DIR].ino && strncmp(python, dir, n) == 0 && python[n] == '/') {
		m->held = true;
		m->dirfd = fd;
		for (int i = VF_CFG; i < VF_COUNT; i++)
			m->rel[i] = m->paths[i] + n + 1;
	} else if (fd >= 0) {
		close(fd);
	}
}

static void conn_reset(pw_op_scratch_conn *c)
{
	pw_scratch_close(&c->client);
	free(c->env_for);
	c->env_for = NULL;
}

void pw_op_scratch_conn_close(pw_op_scratch_conn **c)
{
	if (!c || !*c)
		return;
	conn_reset(*c);
	free((*c)->session);
	free((*c)->python);
	venv_memo_clear(&(*c)->venv);
	free(*c);
	*c = NULL;
}

bool pw_op_scratch_session_ok(const char *name)
{
	return pw_scratch_session_name_ok(name);
}

char *pw_op_scratch_default_session(const char *workspace)
{
	return pw_scratch_default_session(workspace);
}

double pw_op_scratch_budget(const pw_ops_ctx *ctx)
{
	const char *v = ctx->settings ? pw_settings_get(ctx->settings, "timeout") : NULL;
	return ctx->timeout > 0 ? ctx->timeout : v ? strtod(v, NULL) : 0;
}

/* ---------------------------------------------------------------- the interpreter */

/* A member of the front end's hints, or NULL. */
#define HINT(rq, m) ((rq)->hints ? (rq)->hints->m : NULL)

static pw_err *venv_python(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, char **dir, char **python)
{
	char *abs = NULL, *py = NULL, *managed = xasprintf("%s/runtime", ctx->box_root);
	/* Inside the allowed roots, and its interpreter where the environment says. */
	pw_err *bad = pw_ops_resolve_venv(ctx, rq->venv, &abs);
	if (!bad && access(abs, F_OK) == 0)
		bad = pw_venv_interpreter(abs, managed, &py);
	free(managed);
	if (bad && (!abs || pw_err_code(bad) == PW_ERR_REFUSED)) {
		free(abs);
		return bad;
	}
	pw_err_free(bad);
	if (!py || access(py, X_OK) != 0) {
		const char *hint = HINT(rq, not_venv);
		pw_err *e = pw_err_new(PW_ERR_USAGE,
				       hint ? hint : _("create one with 'pyward venv create', or pass --python PATH"),
				       _("%s is not a virtual environment (no bin/python)"), abs);
		free(abs);
		free(py);
		return e;
	}
	*dir = abs;
	*python = py;
	return NULL;
}

static char *find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = xstrdup(path ? path : "/usr/bin:/bin");
	char *found = NULL, *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", name);
		if (access(p, X_OK) == 0)
			found = pw_paths_absolute(p);
		free(p);
	}
	free(copy);
	return found;
}

/* The workspace's environment when it has exactly one (relative to the
 * workspace, as a user would type it), else NULL. */
static char *only_environment(const pw_ops_ctx *ctx)
{
	pw_venv_list l = { 0 };
	if (!ctx->guard || !ctx->workspace)
		return NULL;
	pw_err *e = pw_venv_discover(ctx->guard, ctx->workspace, 2, 2000, pw_clock_mono_ms() + 500, &l);
	char *only = NULL;
	if (!e && l.count == 1) {
		const char *p = l.items[0].path;
		size_t n = strlen(ctx->workspace);
		only = xstrdup(strncmp(p, ctx->workspace, n) == 0 && p[n] == '/' ? p + n + 1 : p);
	}
	pw_err_free(e);
	pw_venv_list_clear(&l);
	return only;
}

static char *cli_one_env_hint(const char *name)
{
	return xasprintf(_("pass --venv %s (the workspace's one environment), or install the managed runtime with "
			   "'pyward runtime install'"),
			 name);
}

static pw_err *no_python(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, pw_err *why)
{
	const char *plain = HINT(rq, no_python);
	char *(*one)(const char *) = HINT(rq, no_python_one_env);
	if (!rq->hints) {
		plain = _("install the managed runtime with 'pyward runtime install', or pass --venv DIR or "
			  "--python PATH");
		one = cli_one_env_hint;
	}
	/* The one environment is named, not taken: a session outlives this call
	 * and is shared with the other front ends, so its interpreter is chosen
	 * on purpose (see the man page). */
	char *only = one ? only_environment(ctx) : NULL;
	char *hint = only ? one(only) : xstrdup(plain ? plain : "");
	pw_err *r = pw_err_new(PW_ERR_REFUSED, *hint ? hint : NULL, _("no interpreter for the scratchpad: %s"),
			       pw_err_message(why));
	free(hint);
	free(only);
	pw_err_free(why);
	return r;
}

/* The environment, else the interpreter named, else the managed runtime,
 * else the fallback, else a refusal. c: the kept connection (or NULL),
 * whose remembered environment is taken when still the same; *checked: an
 * environment was checked now (for the caller to remember); leased, and
 * *unstamped: as for venv_memo_get. */
static pw_err *choose_python(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, pw_op_scratch_conn *c,
			     bool leased, pw_scratch_request *req, bool *checked, bool *unstamped)
{
	*checked = false;
	*unstamped = false;
	if (rq->venv) {
		req->python_explicit = true;
		if (c && venv_memo_get(&c->venv, ctx, rq->venv, leased, &req->venv, &req->python, unstamped))
			return NULL;
		*checked = true;
		return venv_python(ctx, rq, &req->venv, &req->python);
	}
	if (rq->python) {
		req->python_explicit = true;
		req->python = strchr(rq->python, '/') ? pw_paths_absolute(rq->python) : find_on_path(rq->python);
		if (!req->python || access(req->python, X_OK) != 0)
			return pw_err_new(PW_ERR_USAGE, _("pass the path of a Python interpreter"),
					  _("--python %s: no such executable"), rq->python);
		return NULL;
	}
	pw_err *e = pw_runtime_python(ctx->box_root, &req->python);
	if (!e)
		return NULL;
	if (rq->fallback_python) {
		pw_err_free(e);
		req->python = xstrdup(rq->fallback_python);
		return NULL;
	}
	return no_python(ctx, rq, e);
}

/* ---------------------------------------------------------------- the environment */

static bool is_terminfo_dirs(const char *entry)
{
	return strncmp(entry, "TERMINFO_DIRS=", 14) == 0;
}

/* The caller's environment for the session's next worker, with the
 * runtime's bundled terminfo when the system has none for $TERM (as exec
 * gives its child; a TERMINFO_DIRS of the caller's own is kept only
 * behind the bundled one, also as exec does). NULL-terminated, malloc'd. */
static char **worker_environment(const pw_ops_ctx *ctx)
{
	char *current = xasprintf("%s/runtime/python/current", ctx->box_root);
	char *terminfo = pw_runtime_terminfo_env(current, getenv("TERM"));
	free(current);
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = xcalloc(n + 2, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_terminfo_dirs(environ[i]))
			env[k++] = xstrdup(environ[i]);
	if (terminfo)
		env[k++] = terminfo;
	env[k] = NULL;
	return env;
}

static void free_environment(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* ---------------------------------------------------------------- run */

static pw_err *check_request(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq)
{
	bool has_code = rq->code && *rq->code;
	if (rq->session && !pw_scratch_session_name_ok(rq->session))
		return pw_err_new(PW_ERR_USAGE, _("use 1 to 64 of A-Z a-z 0-9 . _ -"), _("session name '%s'"),
				  rq->session);
	/* A cell can write anywhere the user can: no cells in read-only mode. */
	if (has_code) {
		/* the mode looked at first: the message is translated only for a
		 * refusal (gettext was 3% of an MCP python call's instructions) */
		pw_err *e = ctx->mode == PW_MODE_READ_ONLY ? pw_ops_require_write(ctx, _("running code in the scratchpad"))
							   : NULL;
		if (e)
			return e;
		if (!pw_jsontext_utf8_ok(rq->code)) /* what json_string takes, without the copy */
			return pw_err_new(PW_ERR_USAGE, _("save the code as UTF-8"), _("the code is not UTF-8 text"));
	}
	if (!has_code && !rq->reset)
		return pw_err_new(PW_ERR_USAGE, NULL, _("no code to run"));
	return NULL;
}

/* What pyward prints of a result carries the schema member, last (see
 * with_schema): the core's text (an object's JSON, len bytes) with it,
 * malloc'd, *out_len its length; NULL when the text is no object. */
static char *schema_text(const char *text, size_t len, size_t *out_len)
{
	static const char tail[] = ",\"schema\":1}";
	if (!text || len < 2 || text[len - 1] != '}')
		return NULL;
	char *out = xmalloc(len - 1 + sizeof tail);
	memcpy(out, text, len - 1);
	memcpy(out + len - 1, tail, sizeof tail); /* with its NUL */
	*out_len = len - 1 + sizeof tail - 1;
	return out;
}

static bool answer_with_schema(void *arg, const char *text, size_t len, bool error)
{
	const pw_op_scratch_request *rq = arg;
	size_t n = 0;
	char *full = schema_text(text, len, &n);
	bool answered = full && rq->answer(rq->answer_arg, full, n, error);
	free(full);
	return answered;
}

/* may_trust: the environment's stamps may go unlooked at while the
 * session is leased (venv_memo_get); the call then goes only to the leased
 * worker, and comes back here without when it cannot. */
static pw_err *run(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, const pw_op_io *io,
		   pw_op_scratch_conn **conn, pw_op_scratch_result *r, bool may_trust)
{
	r->cell = NULL;
	r->budget = pw_op_scratch_budget(ctx);
	pw_scratch_request req = { .op = PW_SCRATCH_OP_RUN, .reset = rq->reset, .max_output = rq->max_output };
	bool checked = false, unstamped = false;
	pw_op_scratch_conn *kept = conn ? *conn : NULL;
	bool leased = may_trust && kept && kept->client && rq->session && rq->code && *rq->code && !rq->reset &&
		      pw_scratch_leased(kept->client, rq->session);
	/* Only the leased worker's wait watches the caller's input: connecting,
	 * starting the host or a worker may take long. */
	if (rq->hand_over && !leased)
		rq->hand_over(rq->hand_over_arg);
	pw_err *e = check_request(ctx, rq);
	if (!e)
		e = choose_python(ctx, rq, kept, leased, &req, &checked, &unstamped);
	if (e) {
		pw_scratch_request_clear(&req);
		return e;
	}
	/* No slot: a connection for this call only. An empty slot: a new one, kept. */
	pw_op_scratch_conn *own = NULL, *c = conn && *conn ? *conn : xcalloc(1, sizeof *c);
	if (!conn)
		own = c;
	else if (checked)
		venv_memo_put(&c->venv, ctx, rq->venv, req.venv, req.python);
	req.session = rq->session ? xstrdup(rq->session) : pw_scratch_default_session(ctx->workspace);
	req.code = rq->code && *rq->code ? xstrdup(rq->code) : NULL;
	req.project_dir = xstrdup(ctx->workspace);
	req.timeout_ms = (int64_t)(r->budget * 1000);
	if (rq->answer) {
		req.answer = answer_with_schema;
		req.answer_arg = (void *)(uintptr_t)rq; /* read only: answer_with_schema */
	}
	if (leased) {
		req.hand_over = rq->hand_over;
		req.hand_over_arg = rq->hand_over_arg;
		req.watch_fd = rq->watch_fd;
	}
	/* An interpreter named again for a session that already runs it needs
	 * no check against the worker, and so may take the leased path. */
	if (req.python_explicit && !req.reset && c->session && c->python && strcmp(c->session, req.session) == 0 &&
	    strcmp(c->python, req.python) == 0)
		req.python_explicit = false;
	if (!c->client) {
		pw_scratch_connect_opts o = { .autostart = true };
		e = pw_scratch_connect(&o, &c->client);
	}
	/* The host keeps a session's environment: it goes once per connection. */
	if (!e && (!c->env_for || strcmp(c->env_for, req.session) != 0))
		req.env = worker_environment(ctx);
	if (!e && unstamped) {
		e = pw_scratch_run_leased(c->client, &req, io ? io->cancel : NULL, &r->cell);
		if (!e && !r->cell) { /* it must go through the host: the stamps first */
			free_environment(req.env);
			req.env = NULL;
			pw_scratch_request_clear(&req);
			return run(ctx, rq, io, conn, r, false);
		}
	} else if (!e) {
		e = pw_scratch_run(c->client, &req, io ? io->cancel : NULL, &r->cell);
	}
	if (!e && req.env) {
		free(c->env_for);
		c->env_for = xstrdup(req.session);
	}
	if (e && !r->cell) { /* the connection may be broken: the next call connects afresh */
		conn_reset(c);
	} else if (r->cell) {
		free(c->session);
		free(c->python);
		c->session = xstrdup(req.session);
		c->python = req.python ? xstrdup(req.python) : NULL;
		if (rq->lease && strcmp(r->cell->status, "lost") != 0)
			pw_err_free(pw_scratch_lease(c->client, req.session)); /* a refusal leaves the host path */
	}
	free_environment(req.env);
	req.env = NULL;
	pw_scratch_request_clear(&req);
	if (own)
		pw_op_scratch_conn_close(&own);
	else if (conn)
		*conn = c;
	return e;
}

pw_err *pw_op_scratch_run(const pw_ops_ctx *ctx, const pw_op_scratch_request *rq, const pw_op_io *io,
			  pw_op_scratch_conn **conn, pw_op_scratch_result *r)
{
	return run(ctx, rq, io, conn, r, true);
}

/* The host's protocol objects carry no schema member; what pyward prints
 * has it, as every other --json document, last: a python result's first
 * member stays its notices (a reader meets a state loss first). */
static json_t *with_schema(json_t *j)
{
	if (j)
		json_object_set_new(j, "schema", json_integer(1));
	return j;
}

json_t *pw_op_scratch_json(const pw_op_scratch_result *r)
{
	return with_schema(pw_scratch_result_encode(r->cell));
}

char *pw_op_scratch_json_text(const pw_op_scratch_result *r)
{
	size_t len = 0, n = 0;
	char *text = pw_scratch_result_dump(r->cell, &len);
	char *out = schema_text(text, len, &n);
	if (!out)
		return text;
	free(text);
	return out;
}

int pw_op_scratch_exit_status(const pw_op_scratch_result *r)
{
	return pw_scratch_result_exit_status(r->cell);
}

void pw_op_scratch_clear(pw_op_scratch_result *r)
{
	pw_scratch_result_free(&r->cell);
}

/* ---------------------------------------------------------------- admin */

static pw_err *connect_running(pw_scratch_client **c)
{
	pw_scratch_connect_opts o = { .autostart = false };
	return pw_scratch_connect(&o, c);
}

pw_err *pw_op_scratch_list(const pw_ops_ctx *ctx, pw_scratch_list **out)
{
	(void)ctx;
	*out = NULL;
	pw_scratch_client *c = NULL;
	pw_err *e = connect_running(&c);
	if (!e)
		e = pw_scratch_sessions(c, out);
	pw_scratch_close(&c);
	return e;
}

json_t *pw_op_scratch_list_json(const pw_scratch_list *l)
{
	pw_scratch_list empty = { 0 };
	return with_schema(pw_scratch_list_encode(l ? l : &empty));
}

static pw_err *admin(const char *session, bool discard)
{
	pw_scratch_client *c = NULL;
	pw_err *e = connect_running(&c);
	if (!e)
		e = discard ? pw_scratch_discard(c, session) : pw_scratch_interrupt(c, session);
	pw_scratch_close(&c);
	return e;
}

pw_err *pw_op_scratch_interrupt(const pw_ops_ctx *ctx, const char *session)
{
	(void)ctx;
	return admin(session, false);
}

pw_err *pw_op_scratch_discard(const pw_ops_ctx *ctx, const char *session)
{
	(void)ctx;
	return admin(session, true);
}

json_t *pw_op_scratch_done_json(const char *session, bool discarded)
{
	return json_pack("{s:s, s:s, s:i}", "session", session, "done", discarded ? "discarded" : "interrupted",
			 "schema", 1);
}

/* ---------------------------------------------------------------- the host */

static int setting_int(const pw_ops_ctx *ctx, const char *key, int fallback)
{
	const char *v = ctx->settings ? pw_settings_get(ctx->settings, key) : NULL;
	return v ? (int)strtod(v, NULL) : fallback;
}

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : fallback;
}

pw_err *pw_op_scratch_serve(const pw_ops_ctx *ctx, pw_err *setup, int *ready_fd)
{
	*ready_fd = env_int("PYWARD_SCRATCH_READY_FD", -1);
	unsetenv("PYWARD_SCRATCH_READY_FD");
	char *dir = NULL;
	pw_err *e = setup;
	const char *env_dir = getenv("PYWARD_SCRATCH_DIR"); /* set by the client that starts us */
	if (env_dir && *env_dir)
		dir = xstrdup(env_dir);
	else if (!e)
		e = pw_scratch_dir(&dir);
	const char *wenv = getenv("PYWARD_WORKER");
	char *worker = wenv && *wenv ? xstrdup(wenv) : pw_ops_data_file("pyward_worker.py");
	pw_scratch_host_opts o = {
		.dir = dir,
		.worker_script = worker,
		.idle_timeout_s = setting_int(ctx, "python_idle_timeout", 900),
		.max_workers = setting_int(ctx, "python_max_workers", 4),
		.grace_ms = env_int("PYWARD_SCRATCH_GRACE_MS", 2000),
		.ready_fd = *ready_fd,
		/* the tests' stand-in for a second user: the host believes it belongs to another uid */
		.owner_uid = (uid_t)env_int("PYWARD_SCRATCH_TEST_OWNER_UID", (int)getuid()),
	};
	if (!e && access(worker, R_OK) != 0)
		e = pw_err_errno(PW_ERR_NOTFOUND, errno, _("reinstall pyward, or point PYWARD_WORKER at pyward_worker.py"),
				 _("the scratchpad worker script %s"), worker);
	if (!e)
		e = pw_scratch_host_run(&o);
	if (!e)
		*ready_fd = -1; /* the host wrote to it and closed it */
	free(dir);
	free(worker);
	return e;
}
