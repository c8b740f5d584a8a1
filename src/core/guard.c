/*
 * Path confinement.
 *
 * A path is resolved in three steps. (1) Walk it from "/" one component at
 * a time with lstat() until the first entry that does not exist; on the
 * way, a symlink whose target does not exist is refused, because whoever
 * controls the target could create it later anywhere, outside the roots
 * too. (2) realpath() the existing part: the kernel's own view, symlinks
 * and ".." included. (3) Append the components that do not exist yet; no
 * symlink can hide among them, but ".." could climb back out of a root, so
 * it is refused there ("." is dropped). The result is then checked against
 * the roots by whole components, so /work/ab is not inside /work/a.
 *
 * This is a check, not a lock: a directory swapped for a symlink after the
 * check wins the race. Callers that write where others can write should
 * also open with O_NOFOLLOW or openat().
 */
#include "config.h"

#include "guard.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NAME_MAX_LEN 64

static const char root_hint[] = N_("pass --root DIR to allow another directory");
static const char dir_hint[] = N_("an allowed root must be an existing directory");

struct pw_guard {
	char **roots;   /* realpath'd; roots[0] is the workspace */
	size_t n;
};

/* A path split into its non-empty components (pointers into buf). */
struct comps {
	char *buf;
	char **v;
	size_t n;
};

pw_guard *pw_guard_new(void)
{
	return xcalloc(1, sizeof(pw_guard));
}

void pw_guard_free(pw_guard **g)
{
	if (!g || !*g)
		return;
	for (size_t i = 0; i < (*g)->n; i++)
		free((*g)->roots[i]);
	free((*g)->roots);
	free(*g);
	*g = NULL;
}

size_t pw_guard_root_count(const pw_guard *g)
{
	return g ? g->n : 0;
}

const char *pw_guard_root(const pw_guard *g, size_t i)
{
	return g && i < g->n ? g->roots[i] : NULL;
}

/* ----------------------------------------------------------------- text */

/* s with control characters escaped, so messages cannot forge lines or
 * drive a terminal. */
static char *printable(const char *s)
{
	char *out = xmalloc(strlen(s) * 4 + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n')
			o += sprintf(o, "\\n");
		else if (*p == '\r')
			o += sprintf(o, "\\r");
		else if (*p < 0x20 || *p == 0x7f)
			o += sprintf(o, "\\x%02x", *p);
		else
			*o++ = (char)*p;
	}
	*o = '\0';
	return out;
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* "ROOT, ROOT, ..." for messages. */
static char *roots_list(const pw_guard *g)
{
	size_t len = 1;
	for (size_t i = 0; i < g->n; i++)
		len += strlen(g->roots[i]) + 2;
	char *out = xmalloc(len);
	out[0] = '\0';
	for (size_t i = 0; i < g->n; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, g->roots[i]);
	}
	return out;
}

/* PW_ERR_REFUSED for path (as given), with why and the allowed roots. */
static pw_err *refuse(const pw_guard *g, const char *path, const char *why)
{
	char *p = printable(path), *roots = g && g->n ? roots_list(g) : xstrdup(_("none"));
	pw_err *err = pw_err_new(PW_ERR_REFUSED, _(root_hint),
		_("refusing %s: %s (allowed: %s)"), p, why, roots);
	free(p);
	free(roots);
	return err;
}

/* ---------------------------------------------------------------- roots */

static bool inside_root(const char *root, const char *abs)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return abs[0] == '/';
	return strncmp(abs, root, n) == 0 && (abs[n] == '\0' || abs[n] == '/');
}

/* A "resolved" path with "." or ".." in it was not resolved: do not let a
 * caller's slip turn /ws/../etc into a pass. */
static bool has_dot_component(const char *abs)
{
	for (const char *p = abs; (p = strchr(p, '/')); p++) {
		size_t n = strcspn(p + 1, "/");
		if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return true;
	}
	return false;
}

bool pw_guard_contains(const pw_guard *g, const char *abs)
{
	if (!g || !abs || abs[0] != '/' || has_dot_component(abs))
		return false;
	for (size_t i = 0; i < g->n; i++)
		if (inside_root(g->roots[i], abs))
			return true;
	return false;
}

/* Roots appear in every refusal message, so none may hold a control
 * character, not even behind a symlink. */
static pw_err *bad_root(const char *dir, int errnum)
{
	char *p = printable(dir);
	pw_err *err = errnum ? pw_err_errno(PW_ERR_USAGE, errnum, _(dir_hint), _("cannot allow %s"), p)
		: pw_err_new(PW_ERR_USAGE, _(dir_hint), _("cannot allow %s: its name has a control character"), p);
	free(p);
	return err;
}

static bool root_known(const pw_guard *g, const char *real)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->roots[i], real) == 0)
			return true;
	return false;
}

pw_err *pw_guard_add_root(pw_guard *g, const char *dir)
{
	struct stat st;
	if (!dir || !*dir)
		return pw_err_new(PW_ERR_USAGE, _(dir_hint), _("an allowed root cannot be empty"));
	if (has_control(dir))
		return bad_root(dir, 0);
	char *real = realpath(dir, NULL);
	if (!real)
		return bad_root(dir, errno);
	int errnum = -1;        /* -1: fine; 0: control character; else errno */
	if (has_control(real))
		errnum = 0;
	else if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		errnum = ENOTDIR;
	if (errnum >= 0 || root_known(g, real)) {
		free(real);     /* a known root keeps its first position */
		return errnum >= 0 ? bad_root(dir, errnum) : NULL;
	}
	g->roots = xrealloc(g->roots, (g->n + 1) * sizeof *g->roots);
	g->roots[g->n++] = real;
	return NULL;
}

/* ------------------------------------------------------------ resolving */

static void comps_split(struct comps *c, const char *abs)
{
	c->buf = xstrdup(abs);
	c->v = xmalloc((strlen(abs) / 2 + 1) * sizeof *c->v);
	c->n = 0;
	char *save = NULL;
	/* strtok_r: core may run on several threads. */
	for (char *tok = strtok_r(c->buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		c->v[c->n++] = tok;
}

static void comps_free(struct comps *c)
{
	free(c->buf);
	free(c->v);
}

/* "/" + the first k components. */
static char *comps_prefix(const struct comps *c, size_t k)
{
	size_t len = 2;
	for (size_t i = 0; i < k; i++)
		len += strlen(c->v[i]) + 1;
	char *out = xmalloc(len), *o = out;
	*o = '\0';
	for (size_t i = 0; i < k; i++)
		o += sprintf(o, "/%s", c->v[i]);
	if (!k)
		strcpy(out, "/");
	return out;
}

/* Look at one prefix: does it exist? A symlink there must lead somewhere
 * that exists; an entry we may not inspect is an error, not a guess. */
static pw_err *probe(const pw_guard *g, const char *path, const char *pre, bool *exists)
{
	struct stat st;
	*exists = false;
	if (lstat(pre, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return NULL;
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), pre);
	}
	*exists = true;
	if (!S_ISLNK(st.st_mode) || stat(pre, &st) == 0)
		return NULL;
	if (errno == ENOENT || errno == ENOTDIR)
		return refuse(g, path, _("it goes through a symbolic link whose target does not exist"));
	if (errno == ELOOP)
		return refuse(g, path, _("it goes through a symbolic link loop"));
	return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), pre);
}

/* Step 1: how many leading components exist. */
static pw_err *existing_count(const pw_guard *g, const char *path,
	const struct comps *c, size_t *count)
{
	size_t k;
	for (k = 0; k < c->n; k++) {
		bool exists;
		char *pre = comps_prefix(c, k + 1);
		pw_err *err = probe(g, path, pre, &exists);
		free(pre);
		if (err)
			return err;
		if (!exists)
			break;
	}
	*count = k;
	return NULL;
}

/* Steps 2 and 3: realpath the first k components, append the rest. */
static pw_err *build_resolved(const pw_guard *g, const char *path,
	const struct comps *c, size_t k, char **out)
{
	char *pre = comps_prefix(c, k);
	char *real = realpath(pre, NULL);
	if (!real) {
		pw_err *err = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot resolve %s"), pre);
		free(pre);
		return err;
	}
	free(pre);
	for (size_t i = k; i < c->n; i++) {
		const char *name = c->v[i];
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			free(real);
			return refuse(g, path, _("\"..\" after a directory that does not exist"));
		}
		char *next = xasprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", name);
		free(real);
		real = next;
	}
	*out = real;
	return NULL;
}

static pw_err *check_input(const pw_guard *g, const char *path)
{
	if (!path || !*path)
		return pw_err_new(PW_ERR_USAGE, NULL, _("empty path"));
	if (has_control(path))
		return refuse(g, path, _("it contains a control character"));
	if (!g || !g->n)
		return refuse(g, path, _("no directory is allowed"));
	return NULL;
}

pw_err *pw_guard_resolve(const pw_guard *g, const char *path, char **out)
{
	struct comps c;
	size_t k;
	char *res = NULL;
	*out = NULL;
	pw_err *err = check_input(g, path);
	if (err)
		return err;
	char *abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", g->roots[0], path);
	comps_split(&c, abs);
	free(abs);
	err = existing_count(g, path, &c, &k);
	if (!err)
		err = build_resolved(g, path, &c, k, &res);
	comps_free(&c);
	/* A symlink may lead to a name no path we accept could spell. */
	if (!err && has_control(res))
		err = refuse(g, path, _("it resolves to a name with a control character"));
	else if (!err && !pw_guard_contains(g, res)) {
		char *why = xasprintf(_("it resolves to %s, outside the allowed directories"), res);
		err = refuse(g, path, why);
		free(why);
	}
	if (err)
		free(res);
	else
		*out = res;
	return err;
}

/* ---------------------------------------------------------------- names */

static bool name_char_ok(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
}

pw_err *pw_guard_check_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	bool ok = n >= 1 && n <= NAME_MAX_LEN && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = name_char_ok(name[i]);
	if (ok)
		return NULL;
	char *p = printable(name ? name : "");
	pw_err *err = pw_err_new(PW_ERR_USAGE, _("e.g. dev, py3.12, my_env-2"),
		_("invalid name \"%s\": a name is 1 to 64 of A-Z a-z 0-9 . _ - and not \".\" or \"..\""), p);
	free(p);
	return err;
}

/* The name must be a real entry of dir: a symlink there could point at
 * something else inside the roots (the user's sources), and callers
 * delete venvs by name. */
pw_err *pw_guard_join_name(const pw_guard *g, const char *dir, const char *name, char **out)
{
	char *rdir = NULL, *res = NULL;
	*out = NULL;
	pw_err *err = pw_guard_check_name(name);
	if (!err)
		err = pw_guard_resolve(g, dir, &rdir);
	if (err)
		return err;
	char *want = xasprintf("%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", name);
	err = pw_guard_resolve(g, want, &res);
	if (!err && strcmp(res, want) != 0) {
		free(res);
		res = NULL;
		err = refuse(g, want, _("the name is a symbolic link"));
	}
	free(rdir);
	free(want);
	*out = res;
	return err;
}
