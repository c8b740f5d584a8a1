/* Background jobs: their catalog rows, their processes, their logs. */
#include "config.h"

#include "jobs.h"

#include "clock.h"
#include "catalog.h"
#include "i18n.h"
#include "joblog.h"
#include "proc.h"
#include "redact.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LIMIT 50
#define TAIL_BYTES (64 * 1024)

extern char **environ;

/* ---------------------------------------------------------------- statements */

static pw_err *db_error(sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db);
	pw_errcode pc = (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) ? PW_ERR_CORRUPT : PW_ERR_IO;
	return pw_err_new(pc, pw_catalog_damage_hint(code), _("catalog: %s: %s"), what, sqlite3_errmsg(db));
}

static pw_err *prep(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return NULL;
	*st = NULL;
	return db_error(db, _("reading jobs"));
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Command lines and reasons: stored without any URL's password. */
static void bind_redacted(sqlite3_stmt *st, int i, const char *s)
{
	char *r = s ? pw_redact_text(s) : NULL;
	bind_text(st, i, r);
	free(r);
}

/* Run a prepared statement that returns no rows, then finalize it. */
static pw_err *run_done(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? NULL : db_error(db, what);
}

static pw_err *exec_sql(sqlite3 *db, const char *sql, const char *what)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? NULL : db_error(db, what);
}

static pw_err *tx_end(sqlite3 *db, pw_err *e)
{
	if (!e)
		e = exec_sql(db, "COMMIT", _("committing"));
	if (e && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return e;
}

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

/* ---------------------------------------------------------------- writing */

static pw_err *insert_job(sqlite3 *db, const pw_job_start *s, const char *now, int64_t *id)
{
	pw_actor a;
	pw_catalog_actor_current(&a);
	if (s->actor) { /* who asked; the host is where the job runs */
		snprintf(a.user, sizeof a.user, "%s", s->actor->user);
		a.uid = s->actor->uid;
	}
	sqlite3_stmt *st;
	pw_err *e = prep(db, "INSERT INTO jobs(kind, target, args, workspace, log_path, budget_s, user, uid, host,"
			     " started_at) VALUES(?1, ?2, ?3, ?4, '', ?5, ?6, ?7, ?8, ?9)", &st);
	if (e)
		return e;
	bind_text(st, 1, s->kind);
	bind_text(st, 2, s->target);
	bind_redacted(st, 3, s->args ? s->args : "");
	bind_text(st, 4, s->workspace);
	sqlite3_bind_double(st, 5, s->budget_s);
	bind_text(st, 6, a.user);
	sqlite3_bind_int64(st, 7, (int64_t)a.uid);
	bind_text(st, 8, a.host);
	bind_text(st, 9, now);
	e = run_done(db, st, _("recording a job"));
	if (!e)
		*id = sqlite3_last_insert_rowid(db);
	return e;
}

static pw_err *set_log_path(sqlite3 *db, int64_t id, const char *log_dir)
{
	sqlite3_stmt *st;
	pw_err *e = prep(db, "UPDATE jobs SET log_path = ?2 WHERE id = ?1", &st);
	if (e)
		return e;
	char *path = xasprintf("%s/%lld.log", log_dir, (long long)id);
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, path);
	free(path);
	return run_done(db, st, _("recording a job"));
}

pw_err *pw_jobs_begin(pw_catalog *c, const pw_job_start *s, int64_t *id)
{
	if (!s || !s->kind || !s->workspace || !s->log_dir)
		return pw_err_new(PW_ERR_USAGE, NULL, _("a job needs a kind, a workspace and a log folder"));
	sqlite3 *db = pw_catalog_db(c);
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	pw_err *e = exec_sql(db, "BEGIN IMMEDIATE", _("recording a job"));
	if (!e)
		e = insert_job(db, s, now, id);
	if (!e)
		e = set_log_path(db, *id, s->log_dir);
	return tx_end(db, e);
}

pw_err *pw_jobs_attach(pw_catalog *c, int64_t id, pid_t pid, int64_t proc_start)
{
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "UPDATE jobs SET pid = ?2, proc_start = ?3 WHERE id = ?1", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, (int64_t)pid);
	sqlite3_bind_int64(st, 3, proc_start);
	return run_done(db, st, _("recording a job's process"));
}

pw_err *pw_jobs_claim(pw_catalog *c, int64_t id)
{
	pw_job_rec r;
	pw_err *e = pw_jobs_get(c, id, &r);
	if (e)
		return pw_err_set_hint(e, _("$PYWARD_JOB is set by 'pyward ... --background'; unset it"));
	pw_actor self;
	pw_catalog_actor_current(&self);
	bool mine = r.pid == (int64_t)getpid() && strcmp(r.host, self.host) == 0 && !r.finished_at &&
		    strcmp(r.state, PW_OUTCOME_RUNNING) == 0;
	if (!mine)
		e = pw_err_new(PW_ERR_REFUSED, _("$PYWARD_JOB is set by 'pyward ... --background'; unset it"),
			       _("job %lld is not run by this process"), (long long)id);
	pw_job_rec_clear(&r);
	return e;
}

static const char *outcome_for_status(int status)
{
	switch (status) {
	case 0: return PW_OUTCOME_OK;
	case 3: return PW_OUTCOME_REFUSED;
	case 4: return PW_OUTCOME_TIMED_OUT;
	case 130: return PW_OUTCOME_CANCELLED;
	default: return PW_OUTCOME_FAILED;
	}
}

/* The outcome and stop reason of the job's last operation, if it has one. */
static pw_err *last_operation(sqlite3 *db, int64_t id, char **outcome, char **reason)
{
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT outcome, stop_reason FROM operations WHERE job_id = ?1"
			     " ORDER BY id DESC LIMIT 1", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*outcome = col_str(st, 0);
		*reason = col_str(st, 1);
	} else if (rc != SQLITE_DONE) {
		e = db_error(db, _("reading a job's operations"));
	}
	sqlite3_finalize(st);
	return e;
}

static pw_err *store_end(sqlite3 *db, int64_t id, const char *outcome, int status, const char *reason)
{
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "UPDATE jobs SET finished_at = ?2, outcome = ?3, exit_status = ?4, stop_reason ="
			     " CASE WHEN ?3 = 'cancelled' AND cancel_requested_at IS NOT NULL"
			     " THEN printf(?6, cancelled_by, cancel_requested_at) || coalesce(char(10) || ?5, '')"
			     " ELSE ?5 END"
			     " WHERE id = ?1 AND outcome IS NULL", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, now);
	bind_text(st, 3, outcome);
	sqlite3_bind_int(st, 4, status);
	bind_redacted(st, 5, reason);
	bind_text(st, 6, _("cancelled by %s at %s ('pyward jobs cancel')"));
	return run_done(db, st, _("recording the end of a job"));
}

pw_err *pw_jobs_finish(pw_catalog *c, int64_t id, int exit_status)
{
	sqlite3 *db = pw_catalog_db(c);
	char *outcome = NULL, *reason = NULL;
	pw_err *e = last_operation(db, id, &outcome, &reason);
	if (!e && (!outcome || strcmp(outcome, PW_OUTCOME_RUNNING) == 0)) {
		free(outcome);
		outcome = xstrdup(outcome_for_status(exit_status));
	}
	if (!e && !reason && exit_status != 0)
		reason = xasprintf(_("pyward exited with status %d; the log says why"), exit_status);
	if (!e)
		e = store_end(db, id, outcome, exit_status, reason);
	free(outcome);
	free(reason);
	return e;
}

pw_err *pw_jobs_close_dead(pw_catalog *c, int64_t id, const char *outcome, int exit_status, const char *reason)
{
	return store_end(pw_catalog_db(c), id, outcome, exit_status, reason);
}

pw_err *pw_jobs_request_cancel(pw_catalog *c, int64_t id, const char *user)
{
	sqlite3 *db = pw_catalog_db(c);
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "UPDATE jobs SET cancel_requested_at = ?2, cancelled_by = ?3"
			     " WHERE id = ?1 AND outcome IS NULL", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, now);
	bind_text(st, 3, user);
	return run_done(db, st, _("recording a cancel request"));
}

/* ---------------------------------------------------------------- processes */

int pw_jobs_exit_status(const pw_job_rec *r)
{
	if (strcmp(r->state, PW_OUTCOME_RUNNING) == 0)
		return -1;
	if (r->exit_status >= 0)
		return r->exit_status;
	if (strcmp(r->state, PW_OUTCOME_INTERRUPTED) == 0 || strcmp(r->state, PW_OUTCOME_CANCELLED) == 0)
		return 130;
	return strcmp(r->state, PW_OUTCOME_OK) == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- reading */

#define JOB_COLUMNS \
	"id, kind, target, args, workspace, log_path, budget_s, user, uid, host, pid, proc_start," \
	" started_at, finished_at, outcome, exit_status, stop_reason, cancel_requested_at, cancelled_by," \
	" CAST(round((julianday(coalesce(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))" \
	" - julianday(started_at)) * 86400000.0) AS INTEGER)"

static char *col_str0(sqlite3_stmt *st, int i)
{
	char *s = col_str(st, i);
	return s ? s : xstrdup("");
}

static const char *derive_state(const pw_job_rec *r, const char *this_host)
{
	if (r->pid > 0 && strcmp(r->host, this_host) == 0 && pw_proc_alive(r->pid, r->proc_start))
		return PW_OUTCOME_RUNNING;
	return PW_OUTCOME_INTERRUPTED;
}

static void read_job(sqlite3_stmt *st, const char *this_host, pw_job_rec *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->kind = col_str0(st, 1);
	r->target = col_str(st, 2);
	r->args = col_str0(st, 3);
	r->workspace = col_str0(st, 4);
	r->log_path = col_str0(st, 5);
	r->budget_s = sqlite3_column_double(st, 6);
	r->user = col_str0(st, 7);
	r->uid = sqlite3_column_int64(st, 8);
	r->host = col_str0(st, 9);
	r->pid = sqlite3_column_int64(st, 10);
	r->proc_start = sqlite3_column_int64(st, 11);
	r->started_at = col_str0(st, 12);
	r->finished_at = col_str(st, 13);
	r->state = col_str(st, 14);
	r->exit_status = sqlite3_column_type(st, 15) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 15);
	r->stop_reason = col_str(st, 16);
	r->cancel_requested_at = col_str(st, 17);
	r->cancelled_by = col_str(st, 18);
	r->duration_ms = sqlite3_column_int64(st, 19);
	if (!r->state)
		r->state = xstrdup(derive_state(r, this_host));
}

pw_err *pw_jobs_list(pw_catalog *c, int limit, pw_job_list *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " JOB_COLUMNS " FROM jobs ORDER BY started_at DESC, id DESC LIMIT ?1", &st);
	if (e)
		return e;
	sqlite3_bind_int(st, 1, limit > 0 ? limit : DEFAULT_LIMIT);
	pw_actor self;
	pw_catalog_actor_current(&self);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (out->count == cap) {
			cap = cap ? 2 * cap : 16;
			out->items = xrealloc(out->items, cap * sizeof *out->items);
		}
		memset(&out->items[out->count], 0, sizeof *out->items);
		read_job(st, self.host, &out->items[out->count++]);
	}
	if (rc != SQLITE_DONE)
		e = db_error(db, _("reading jobs"));
	sqlite3_finalize(st);
	if (e)
		pw_job_list_clear(out);
	return e;
}

pw_err *pw_jobs_get(pw_catalog *c, int64_t id, pw_job_rec *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		pw_actor self;
		pw_catalog_actor_current(&self);
		read_job(st, self.host, out);
	} else if (rc == SQLITE_DONE) {
		e = pw_err_new(PW_ERR_NOTFOUND, _("'pyward jobs' lists the jobs"), _("no job %lld"), (long long)id);
	} else {
		e = db_error(db, _("reading jobs"));
	}
	sqlite3_finalize(st);
	return e;
}

pw_err *pw_jobs_operations(pw_catalog *c, int64_t id, int64_t **ids, size_t *count)
{
	*ids = NULL;
	*count = 0;
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *st;
	pw_err *e = prep(db, "SELECT id FROM operations WHERE job_id = ?1 ORDER BY id", &st);
	if (e)
		return e;
	sqlite3_bind_int64(st, 1, id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*ids = xrealloc(*ids, (*count + 1) * sizeof **ids);
		(*ids)[(*count)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE)
		e = db_error(db, _("reading a job's operations"));
	sqlite3_finalize(st);
	return e;
}

void pw_job_rec_clear(pw_job_rec *r)
{
	free(r->kind);
	free(r->target);
	free(r->args);
	free(r->workspace);
	free(r->log_path);
	free(r->user);
	free(r->host);
	free(r->started_at);
	free(r->finished_at);
	free(r->state);
	free(r->stop_reason);
	free(r->cancel_requested_at);
	free(r->cancelled_by);
	memset(r, 0, sizeof *r);
}

void pw_job_list_clear(pw_job_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		pw_job_rec_clear(&l->items[i]);
	free(l->items);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- detaching */

/* environ plus env_add (which wins), built before fork. */
static char **job_environ(const char *const *add)
{
	size_t n = 0, k = 0, m = 0;
	while (environ[n])
		n++;
	while (add && add[m])
		m++;
	char **env = xcalloc(n + m + 1, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < m && !replaced; j++) {
			size_t len = strcspn(add[j], "=") + 1;
			replaced = strncmp(environ[i], add[j], len) == 0;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = (char *)(uintptr_t)add[j];
	return env;
}

static void close_other_fds(const int *keep, size_t nkeep)
{
	for (int fd = 3; fd < 1024; fd++) {
		bool kept = false;
		for (size_t i = 0; i < nkeep; i++)
			kept = kept || keep[i] == fd;
		if (!kept)
			close(fd);
	}
}

/* The job itself: waits for the go byte, then becomes argv. */
static void job_child(const pw_job_spawn *sp, char **env, int go_fd, int out_fd)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	setpgid(0, 0);
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(127);
	char go = 0;
	if (read(go_fd, &go, 1) != 1 || go != 'g')
		_exit(127);
	close(go_fd);
	close(out_fd);
	if (null > 2)
		close(null);
	execve(sp->exe, sp->argv, env);
	_exit(127);
}

static void note_end(int log_fd, int status)
{
	char note[128];
	int n = 0;
	if (WIFSIGNALED(status))
		n = snprintf(note, sizeof note, _("[pyward: the job process was killed by signal %d (%s)]\n"),
			     WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		n = snprintf(note, sizeof note, _("[pyward: the job did not start (exit 127)]\n"));
	if (n > 0)
		(void)!write(log_fd, note, (size_t)n < sizeof note ? (size_t)n : sizeof note - 1);
}

/* Our children other than the job: with the pump a subreaper, the job's
 * own children (pip, in its own process group) land here when the job is
 * killed. Signals their process groups; returns how many there were. */
static int signal_orphans(pid_t job, int sig)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *ent;
	while ((ent = readdir(d)) != NULL) {
		char *end = NULL;
		long pid = strtol(ent->d_name, &end, 10);
		if (*end || pid <= 0 || pid == job)
			continue;
		pw_proc_info info;
		if (pw_proc_info_read((pid_t)pid, &info) && info.ppid == (int64_t)getpid() && info.state != 'Z') {
			kill(-(pid_t)pid, sig);
			kill((pid_t)pid, sig);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* A killed job leaves its children running: stop them (TERM, then KILL). */
static void stop_orphans(pid_t job)
{
	for (int i = 0; i < 40 && signal_orphans(job, i == 0 ? SIGTERM : 0) > 0; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (signal_orphans(job, SIGKILL) > 0)
		while (waitpid(-1, NULL, 0) > 0)
			;
}

/* Copy what the pipe has into the log, until it is quiet for timeout_ms;
 * true at end of file. */
static bool drain(pw_joblog *log, int fd, int timeout_ms)
{
	char buf[8192];
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		pw_joblog_write(log, buf, (size_t)n);
	}
}

/* The pump: copies the job's output into the bounded log until the job
 * ends (its children may hold the pipe open after it: the end of the job
 * is its exit, not the end of file), reaps it, stops what it left behind.
 * Ignores the signals a cancel sends, so the log's tail is always written. */
static void pump(const pw_job_spawn *sp, pid_t job, int out_fd, int log_fd)
{
	pw_joblog *log = pw_joblog_new(log_fd, sp->head_cap, sp->tail_cap);
	int status = 0;
	bool reaped = false, eof = false;
	while (!eof && !reaped) {
		eof = drain(log, out_fd, 200);
		reaped = waitpid(job, &status, WNOHANG) == job;
	}
	while (!reaped && waitpid(job, &status, 0) < 0 && errno == EINTR)
		;
	if (!eof)
		drain(log, out_fd, 0);
	stop_orphans(job);
	if (!eof)
		drain(log, out_fd, 100);
	pw_joblog_close(&log);
	note_end(log_fd, status);
	_exit(0);
}

/* The first child: a new session; forks the job, reports its pid, pumps. */
static void session_child(const pw_job_spawn *sp, char **env, int report_fd, int go_fd, int log_fd)
{
	setsid();
#ifdef PR_SET_CHILD_SUBREAPER
	prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	int keep[] = { report_fd, go_fd, log_fd };
	close_other_fds(keep, 3);
	int out[2];
	if (pipe(out) != 0)
		_exit(1);
	pid_t job = fork();
	if (job < 0)
		_exit(1);
	if (job == 0) {
		close(out[0]);
		close(report_fd);
		close(log_fd);
		job_child(sp, env, go_fd, out[1]);
	}
	close(out[1]);
	close(go_fd);
	(void)!write(report_fd, &job, sizeof job);
	close(report_fd);
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) { /* the pump holds no terminal open */
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		if (null > 2)
			close(null);
	}
	pump(sp, job, out[0], log_fd);
}

static pw_err *read_job_pid(int report_fd, pid_t *pid)
{
	ssize_t n;
	while ((n = read(report_fd, pid, sizeof *pid)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof *pid || *pid <= 0)
		return pw_err_new(PW_ERR_FAILED, NULL, _("the background job could not be started"));
	return NULL;
}

pw_err *pw_jobs_detach(const pw_job_spawn *sp)
{
	int log_fd = open(sp->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (log_fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("job log %s"), sp->log_path);
	int report[2], go[2];
	if (pipe2(report, O_CLOEXEC) != 0) {
		close(log_fd);
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("starting a background job"));
	}
	if (pipe2(go, O_CLOEXEC) != 0) {
		close(log_fd), close(report[0]), close(report[1]);
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("starting a background job"));
	}
	char **env = job_environ(sp->env_add);
	fflush(NULL);
	pid_t first = fork();
	if (first == 0) {
		close(report[0]);
		close(go[1]);
		/* The pump is a grandchild, so a caller that lives on (the
		 * agent tool server) leaves no zombie behind per job. */
		pid_t pump = fork();
		if (pump != 0)
			_exit(pump < 0 ? 1 : 0);
		session_child(sp, env, report[1], go[0], log_fd);
	}
	int fork_errno = errno;
	free(env);
	close(report[1]);
	close(go[0]);
	close(log_fd);
	pid_t job = 0;
	pw_err *e = first < 0 ? pw_err_errno(PW_ERR_IO, fork_errno, NULL, _("starting a background job"))
			      : read_job_pid(report[0], &job);
	if (!e && sp->started)
		e = sp->started(sp->ud, job, pw_proc_start(job));
	if (!e && write(go[1], "g", 1) != 1)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("starting a background job"));
	close(report[0]);
	close(go[1]); /* without the go byte the job exits before running */
	while (first > 0 && waitpid(first, NULL, 0) < 0 && errno == EINTR)
		; /* it exits as soon as it has forked the pump */
	return e;
}

/* ---------------------------------------------------------------- logs */

pw_err *pw_jobs_log_tail(const char *path, int max_lines, char **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("job log %s"), path);
	struct stat sb;
	off_t from = fstat(fd, &sb) == 0 && sb.st_size > TAIL_BYTES ? sb.st_size - TAIL_BYTES : 0;
	char *buf = xmalloc(TAIL_BYTES + 1);
	ssize_t n = pread(fd, buf, TAIL_BYTES, from);
	close(fd);
	size_t len = n > 0 ? (size_t)n : 0;
	buf[len] = '\0';
	/* Count lines back from the end (a final newline ends the last line). */
	size_t start = len, end = len && buf[len - 1] == '\n' ? len - 1 : len;
	int lines = 0;
	for (size_t i = end; i > 0 && lines < max_lines; i--)
		if (buf[i - 1] == '\n' && ++lines == max_lines)
			start = i;
	if (lines < max_lines)
		start = 0;
	*out = xstrdup(buf + start);
	free(buf);
	return NULL;
}
