/*
 * The base interpreter, shared by the two ways of creating an environment
 * (see venv_base.h).
 */
#include "config.h"

#include "venv_base.h"

#include "clock.h"
#include "durable.h"
#include "i18n.h"
#include "xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
	TAIL_LIMIT = 400,       /* bytes of a child's output quoted in an error */
	MIN_MINOR = 8,          /* Python 3.8 or newer */
};
#define DEBIAN_WHEELS "/usr/share/python-wheels"

char *pw_venv_printable(const char *s, size_t n, char repl)
{
	char *out = xstrndup(s, n);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = repl;
	return out;
}

/* The end of what a child said (stderr, else stdout), on one line, for an
 * error message: the last lines are where Python puts the reason. */
static char *output_tail(const pw_run_result *r)
{
	const char *s = pw_run_result_output(r, PW_STREAM_STDERR);
	if (!*s)
		s = pw_run_result_output(r, PW_STREAM_STDOUT);
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	size_t from = n > TAIL_LIMIT ? n - TAIL_LIMIT : 0;
	const char *nl = from ? memchr(s + from, '\n', n - from) : NULL;
	if (nl)
		from = (size_t)(nl + 1 - s);
	while (from < n && isspace((unsigned char)s[from]))
		from++;
	return pw_venv_printable(s + from, n - from, ' ');
}

/* The caller's variables plus ours: user site-packages and pip's version
 * check would make results depend on the account and the network. Later
 * entries win in pw_runner_build_env, so ours come last. */
static const char **child_env(const char *const *add)
{
	size_t n = 0;
	while (add && add[n])
		n++;
	const char **env = xcalloc(n + 3, sizeof *env);
	for (size_t i = 0; i < n; i++)
		env[i] = add[i];
	env[n] = "PYTHONNOUSERSITE=1";
	env[n + 1] = "PIP_DISABLE_PIP_VERSION_CHECK=1";
	return env;
}

int64_t pw_venv_step_deadline(int64_t overall, double seconds)
{
	int64_t step = pw_clock_deadline_after(seconds);
	return overall > 0 && overall < step ? overall : step;
}

static pw_err *child_failed(const pw_run_result *r, const char *what)
{
	pw_run_status st = pw_run_result_status(r);
	if (st == PW_RUN_TIMED_OUT)
		return pw_err_new(PW_ERR_TIMEOUT, _("allow more time, or find out what makes it slow"),
				  _("%s timed out"), what);
	if (st == PW_RUN_CANCELLED)
		return pw_err_new(PW_ERR_CANCELLED, NULL, _("%s was cancelled"), what);
	char *tail = output_tail(r);
	pw_err *e = pw_err_new(PW_ERR_FAILED, NULL, _("%s failed (%s): %s"), what,
			       pw_run_result_describe(r), *tail ? tail : _("no output"));
	free(tail);
	return e;
}

pw_err *pw_venv_run(const char *const *argv, const pw_venv_job *j, double seconds, size_t cap, const char *what,
		    pw_run_result **res)
{
	const char **env = child_env(j->env_add);
	pw_run_opts ro = { .argv = argv, .env_add = env,
			   .deadline_ms = pw_venv_step_deadline(j->deadline_ms, seconds),
			   .cancel = j->cancel, .cap_bytes = cap };
	*res = NULL;
	pw_err *e = pw_run(&ro, res);
	free(env);
	if (!e && (pw_run_result_status(*res) != PW_RUN_EXITED || pw_run_result_exit_code(*res) != 0))
		e = child_failed(*res, what);
	return e;
}

bool pw_venv_version_parts(const char *v, long *major, long *minor)
{
	char *end;
	if (!v || !isdigit((unsigned char)v[0]))
		return false;
	*major = strtol(v, &end, 10);
	if (end[0] != '.' || !isdigit((unsigned char)end[1]))
		return false;
	*minor = strtol(end + 1, &end, 10);
	return true;
}

bool pw_venv_new_enough(const char *v)
{
	long major, minor;
	return pw_venv_version_parts(v, &major, &minor) && (major > 3 || (major == 3 && minor >= MIN_MINOR));
}

/* Dotted numbers compared part by part ("23.0.1" < "23.10"); a missing
 * part sorts first, and anything after the numbers is ignored. */
static int version_cmp(const char *a, const char *b)
{
	for (;;) {
		bool da = isdigit((unsigned char)*a), db = isdigit((unsigned char)*b);
		if (!da && !db)
			return 0;
		char *ea = NULL, *eb = NULL;
		long x = da ? strtol(a, &ea, 10) : -1, y = db ? strtol(b, &eb, 10) : -1;
		if (x != y)
			return x < y ? -1 : 1;
		a = ea + (*ea == '.');
		b = eb + (*eb == '.');
	}
}

/* The highest pip-VERSION-*.whl in dir, or NULL. */
static char *best_wheel_in(const char *dir)
{
	DIR *d = opendir(dir);
	char *best = NULL;
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		if (strncmp(n, "pip-", 4) != 0 || len < 8 || strcmp(n + len - 4, ".whl") != 0 ||
		    !isdigit((unsigned char)n[4]))
			continue;
		if (!best || version_cmp(n + 4, best + 4) > 0) {
			free(best);
			best = xstrdup(n);
		}
	}
	if (d)
		closedir(d);
	char *path = best ? xasprintf("%s/%s", dir, best) : NULL;
	free(best);
	return path;
}

char *pw_venv_bundled_wheel(const char *stdlib)
{
	char *wheel = NULL;
	if (stdlib && *stdlib) {
		char *bundled = xasprintf("%s/ensurepip/_bundled", stdlib);
		wheel = best_wheel_in(bundled);
		free(bundled);
	}
	return wheel ? wheel : best_wheel_in(DEBIAN_WHEELS);
}

char *pw_venv_first_missing(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		return NULL;
	char *buf = xstrdup(path), *made = xstrdup(path);
	for (char *slash; (slash = strrchr(buf, '/')) && slash != buf;) {
		*slash = '\0';
		if (lstat(buf, &st) == 0)
			break;
		free(made);
		made = xstrdup(buf);
	}
	free(buf);
	return made;
}

pw_err *pw_venv_not_flushed(pw_err *f, const char *target)
{
	if (!f)
		return NULL;
	pw_err *e = pw_err_new(PW_ERR_IO, pw_err_hint(f),
			       _("the new environment could not be flushed to disk, so %s was not created (%s)"),
			       target, pw_err_message(f));
	pw_err_free(f);
	return e;
}

pw_err *pw_venv_sync_names(const char *target, const char *made)
{
	char *top = NULL;
	if (made) {
		top = xstrdup(made);
		char *slash = strrchr(top, '/');
		if (slash)
			slash[slash == top ? 1 : 0] = '\0';
	}
	pw_err *e = pw_durable_sync_parents(target, top);
	free(top);
	return pw_venv_not_flushed(e, target);
}
