/*
 * Virtual environments.
 *
 * Discovery reads directory listings and pyvenv.cfg, nothing else in the
 * common case: one readdir per directory tells both whether it is an
 * environment (pyvenv.cfg, conda-meta/, a conventional name with bin/) and
 * which subdirectories to queue, so a scan costs about one getdents per
 * directory plus a few stats per environment. Symlinks are never followed
 * (d_type, or lstat when the file system leaves it unknown), so a scan
 * cannot leave its roots or loop.
 *
 * Fast seeding: `-m venv --without-pip` takes tens of milliseconds, while
 * ensurepip starts pip to install pip and takes seconds. A wheel is only a
 * zip plus a RECORD, so the interpreter's own bundled pip wheel is unpacked
 * into a staging folder inside site-packages, the console scripts and a new
 * RECORD (every file with its sha256 and size, so pip can later upgrade or
 * uninstall itself) are written, and the top-level folders are renamed
 * into place. Any failure before that rename falls back to ensurepip; a pip
 * that does not run at the end fails the creation, which removes what it
 * made.
 */
#include "config.h"

#include "venv.h"
#include "venv_base.h"
#include "venv_fast.h"
#include "durable.h"
#include "clock.h"
#include "digest.h"
#include "extract.h"
#include "i18n.h"
#include "libload.h"
#include "paths.h"
#include "runner.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
	DEFAULT_DEPTH = 2,
	DEFAULT_MAX_DIRS = 256,
	MAX_PROBES = 16,        /* interpreters started per discovery, at most */
	CFG_LIMIT = 64 * 1024,  /* a pyvenv.cfg is a few hundred bytes */
	PROBE_CAP = 64 * 1024,
	RUN_CAP = 256 * 1024,
	HOLDER_LIMIT = 200,
	LOCK_NAP_MS = 100,
	ZIP_BLOCK = 64 * 1024,
	ZIP_PATH_LIMIT = 1024,
	ZIP_NAME_LIMIT = 255,
	ZIP_MAX_ENTRIES = 20000,
	B64_LEN = 43,           /* 32 bytes in unpadded base64 */
	LAUNCHERS = 3,
};
#define ZIP_MAX_BYTES ((int64_t)256 << 20)
#define DISCOVER_PROBE_S 2.0
#define BASE_PROBE_S 10.0
#define VENV_S 300.0
#define PIP_CHECK_S 60.0
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define STAGING ".pyward-seed"
#define INCOMPLETE ".pyward-incomplete"
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char base_hint[] =
	N_("pass --python with a Python 3.8 or newer, or install one: pyward runtime install");

/* ----------------------------------------------------------------- text */

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_dots(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	return xasprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* --------------------------------------------------------------- versions */

/* The leading "X.Y.Z" of a version ("3.11.2.final.0" in virtualenv's
 * version_info); NULL when it does not start with a number. */
static char *short_version(const char *v)
{
	size_t n = 0;
	int dots = 0;
	while (isdigit((unsigned char)v[n]) || (v[n] == '.' && ++dots < 3))
		n++;
	while (n && v[n - 1] == '.')
		n--;
	return n ? xstrndup(v, n) : NULL;
}

/* ---------------------------------------------------------------- files */

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static void sha256_hex(const void *data, size_t len, char hex[PW_SHA256_HEX_LEN + 1])
{
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, data, len);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
}

/* Create path (it must not exist) holding data, with exactly mode. */
static pw_err *write_new_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), path);
	/* fchmod: the umask must not take the launchers' execute bits. */
	bool ok = pw_write_all(fd, data, len) == 0 && fchmod(fd, mode) == 0;
	int saved = errno;
	if (close(fd) < 0 && ok) {
		ok = false;
		saved = errno;
	}
	return ok ? NULL : pw_err_errno(PW_ERR_IO, saved, NULL, _("cannot write %s"), path);
}

/* The names in dir except "." and "..", for loops that change dir. */
static char **list_names(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t n = 0;
	for (struct dirent *de; d && (de = readdir(d));) {
		if (is_dots(de->d_name))
			continue;
		v = xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = xstrdup(de->d_name);
	}
	if (d)
		closedir(d);
	*count = n;
	return v;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ------------------------------------------------------------- children */

/* Debian splits venv's ensurepip (and pip's wheel) into python3-venv. */
static bool lacks_venv(const pw_run_result *r)
{
	static const char *const signs[] = {
		"ensurepip is not", "No module named venv", "No module named ensurepip",
		"No module named 'venv'", "No module named 'ensurepip'",
	};
	for (size_t i = 0; i < COUNT(signs); i++)
		if (strstr(pw_run_result_output(r, PW_STREAM_STDOUT), signs[i]) ||
		    strstr(pw_run_result_output(r, PW_STREAM_STDERR), signs[i]))
			return true;
	return false;
}

static pw_err *venv_package_hint(pw_err *e, const char *version)
{
	long major, minor;
	char *hint = pw_venv_version_parts(version, &major, &minor)
		? xasprintf(_("install the python3-venv package (Debian, Ubuntu: apt install python%ld.%ld-venv), "
			      "or use a managed runtime: pyward runtime install"), major, minor)
		: xstrdup(_("install the python3-venv package (Debian, Ubuntu: apt install python3-venv), "
			    "or use a managed runtime: pyward runtime install"));
	pw_err_set_hint(e, hint);
	free(hint);
	return e;
}

/* ------------------------------------------------------------ pyvenv.cfg */

struct cfg {
	char *home;
	char *executable;
	char *version;
	bool from_version_info; /* "version" wins over virtualenv's "version_info" */
	bool virtualenv;
};

static void cfg_clear(struct cfg *c)
{
	free(c->home);
	free(c->executable);
	free(c->version);
	memset(c, 0, sizeof *c);
}

static char *trim_dup(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	return xstrndup(s, (size_t)(end - s));
}

static void cfg_set(char **slot, char **value)
{
	if (!*slot && **value) {
		*slot = *value;
		*value = NULL;
	}
}

static void cfg_version(struct cfg *c, const char *value, bool from_info)
{
	if (c->version && (from_info || !c->from_version_info))
		return;
	char *v = short_version(value);
	if (!v)
		return;
	free(c->version);
	c->version = v;
	c->from_version_info = from_info;
}

/* "key = value", keys without case as venv's site.py reads them. */
static void cfg_line(struct cfg *c, const char *line, const char *end)
{
	const char *eq = memchr(line, '=', (size_t)(end - line));
	if (!eq)
		return;
	char *key = trim_dup(line, eq), *value = trim_dup(eq + 1, end);
	if (strcasecmp(key, "home") == 0)
		cfg_set(&c->home, &value);
	else if (strcasecmp(key, "executable") == 0)
		cfg_set(&c->executable, &value);
	else if (strcasecmp(key, "version") == 0 || strcasecmp(key, "version_info") == 0)
		cfg_version(c, value, strcasecmp(key, "version_info") == 0);
	else if (strcasecmp(key, "virtualenv") == 0)
		c->virtualenv = true;
	free(key);
	free(value);
}

/* Parse dir/pyvenv.cfg. O_NONBLOCK and the regular-file check keep a FIFO
 * of that name from hanging a scan; O_NOFOLLOW keeps it inside dir. */
static bool read_cfg(const char *dir, struct cfg *c)
{
	char *path = join(dir, "pyvenv.cfg");
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	struct stat st;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	size_t cap = st.st_size < CFG_LIMIT ? (size_t)st.st_size : CFG_LIMIT, len = 0;
	char *buf = xmalloc(cap + 1);
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		cfg_line(c, p, le);
		p = le + 1;
	}
	free(buf);
	return true;
}

/* ------------------------------------------------------------- inspect */

enum { MARK_CFG = 1, MARK_CONDA = 2, MARK_BIN = 4, MARK_SCRIPTS = 8 };

static const char *const conventional_names[] = {
	".venv", "venv", "env", ".env", "virtualenv", ".virtualenv",
};
static const char *const pruned_names[] = {
	".git", ".hg", ".svn", "node_modules", "__pycache__", "site-packages", ".pyward", "build",
	"dist", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
};

/* bin/python, else bin/python3, else a Windows layout's interpreter;
 * bin/python (not existing) when none is there. */
static char *python_of(const char *dir, bool *exists)
{
	static const char *const names[] = { "bin/python", "bin/python3", "Scripts/python.exe" };
	struct stat st;
	for (size_t i = 0; i < COUNT(names); i++) {
		char *p = join(dir, names[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			*exists = true;
			return p;
		}
		free(p);
	}
	*exists = false;
	return join(dir, "bin/python");
}

/* Is the resolved path inside the folder dir (resolved here)? */
static bool resolves_under(const char *real, const char *dir)
{
	char *d = dir && *dir ? realpath(dir, NULL) : NULL;
	size_t n = d ? strlen(d) : 0;
	bool in = d && strncmp(real, d, n) == 0 && (real[n] == '/' || (n == 1 && d[0] == '/'));
	free(d);
	return in;
}

static bool base_allows(const struct cfg *c, const char *real)
{
	if (resolves_under(real, c->home))
		return true;
	if (!c->executable || c->executable[0] != '/')
		return false;
	char *exe = realpath(c->executable, NULL), *slash = exe ? strrchr(exe, '/') : NULL;
	bool in = false;
	if (slash && slash != exe) {
		*slash = '\0';
		in = resolves_under(real, exe);
	}
	free(exe);
	return in;
}

pw_err *pw_venv_interpreter(const char *venv, const char *managed_root, char **out)
{
	*out = NULL;
	bool exists;
	char *python = python_of(venv, &exists);
	char *real = exists ? realpath(python, NULL) : NULL;
	if (!real) {
		pw_err *e = pw_err_new(PW_ERR_NOTFOUND, _("create the environment again"),
				       _("%s has no interpreter (%s)"), venv, python);
		free(python);
		return e;
	}
	struct cfg c = { 0 };
	read_cfg(venv, &c);
	bool ok = resolves_under(real, venv) || resolves_under(real, managed_root) || base_allows(&c, real);
	pw_err *e = ok ? NULL
		       : pw_err_new(PW_ERR_REFUSED,
				    _("recreate the environment with 'pyward venv create', or name its base in pyvenv.cfg (home)"),
				    _("the interpreter of %s resolves to %s, outside the environment, the managed runtime "
				      "and the base its pyvenv.cfg names"),
				    venv, real);
	cfg_clear(&c);
	free(real);
	if (e)
		free(python);
	else
		*out = python;
	return e;
}

static char *base_of(const struct cfg *c)
{
	if (c->home) {
		char *p = join(c->home, "python3");
		struct stat st;
		if (stat(p, &st) == 0)
			return p;
		free(p);
	}
	return c->executable ? xstrdup(c->executable) : NULL;
}

static bool is_pip_name(const char *name)
{
	return strcmp(name, "pip") == 0 || (starts_with(name, "pip-") && ends_with(name, ".dist-info"));
}

static bool dir_has_pip(const char *site)
{
	DIR *d = opendir(site);
	bool found = false;
	for (struct dirent *de; d && !found && (de = readdir(d));)
		found = is_pip_name(de->d_name);
	if (d)
		closedir(d);
	return found;
}

static bool site_ok(const char *site, bool with_pip)
{
	return with_pip ? dir_has_pip(site) : is_dir(site);
}

/* The first lib/<python*|pypy*>/site-packages of dir (with pip in it, when
 * asked), else a Windows layout's Lib/site-packages; NULL when none. */
static char *find_site(const char *dir, bool with_pip)
{
	char *lib = join(dir, "lib"), *found = NULL;
	DIR *d = opendir(lib);
	for (struct dirent *de; d && !found && (de = readdir(d));) {
		if (!starts_with(de->d_name, "python") && !starts_with(de->d_name, "pypy"))
			continue;
		char *site = xasprintf("%s/%s/site-packages", lib, de->d_name);
		if (site_ok(site, with_pip))
			found = site;
		else
			free(site);
	}
	if (d)
		closedir(d);
	free(lib);
	if (!found) {
		found = join(dir, "Lib/site-packages");
		if (!site_ok(found, with_pip)) {
			free(found);
			found = NULL;
		}
	}
	return found;
}

/* The usual case costs one stat: lib/pythonX.Y/site-packages/pip. */
static bool has_pip(const char *dir, const char *version)
{
	long major, minor;
	if (pw_venv_version_parts(version, &major, &minor)) {
		char *p = xasprintf("%s/lib/python%ld.%ld/site-packages/pip", dir, major, minor);
		bool fast = is_dir(p);
		free(p);
		if (fast)
			return true;
	}
	char *site = find_site(dir, true);
	free(site);
	return site != NULL;
}

/* conda records each package as conda-meta/NAME-VERSION-BUILD.json. */
static char *conda_version(const char *dir)
{
	char *meta = join(dir, "conda-meta"), *v = NULL;
	DIR *d = opendir(meta);
	free(meta);
	for (struct dirent *de; d && !v && (de = readdir(d));) {
		const char *n = de->d_name;
		if (starts_with(n, "python-") && isdigit((unsigned char)n[7]) && ends_with(n, ".json"))
			v = short_version(n + 7);
	}
	if (d)
		closedir(d);
	return v;
}

static const char version_code[] = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

/* Ask the interpreter itself; -S -B: no site import, no bytecode written. */
static char *probe_version(const char *python, int64_t deadline)
{
	const char *argv[] = { python, "-I", "-S", "-B", "-c", version_code, NULL };
	pw_venv_job j = { .deadline_ms = deadline };
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, &j, DISCOVER_PROBE_S, PROBE_CAP, python, &r);
	char *v = e ? NULL : short_version(pw_run_result_output(r, PW_STREAM_STDOUT));
	pw_err_free(e);
	pw_run_result_free(&r);
	return v;
}

/* Fill out for dir, whose markers are known. *probes (NULL: no limit)
 * counts the interpreters we may still start to learn a version. */
static void inspect_known(const char *dir, unsigned marks, int *probes, int64_t deadline, pw_venv_info *out)
{
	memset(out, 0, sizeof *out);
	out->path = xstrdup(dir);
	out->python = python_of(dir, &out->python_exists);
	if (marks & MARK_CFG) {
		struct cfg c = { 0 };
		read_cfg(dir, &c);
		out->kind = xstrdup(c.virtualenv ? "virtualenv" : "venv");
		out->version = c.version;
		c.version = NULL;
		out->base = base_of(&c);
		cfg_clear(&c);
	} else if (marks & MARK_CONDA) {
		out->kind = xstrdup("conda");
		out->version = conda_version(dir);
	} else {
		out->kind = xstrdup("venv");
	}
	bool time_left = !deadline || pw_clock_mono_ms() < deadline;
	if (!out->version && out->python_exists && time_left && (!probes || *probes > 0)) {
		if (probes)
			--*probes;
		out->version = probe_version(out->python, pw_venv_step_deadline(deadline, DISCOVER_PROBE_S));
	}
	out->has_pip = has_pip(dir, out->version);
}

static bool is_env(const char *dir, unsigned marks)
{
	if (marks & (MARK_CFG | MARK_CONDA))
		return true;
	if (!(marks & (MARK_BIN | MARK_SCRIPTS)))
		return false;
	const char *slash = strrchr(dir, '/');
	if (!in_list(slash ? slash + 1 : dir, conventional_names, COUNT(conventional_names)))
		return false;
	bool exists;
	free(python_of(dir, &exists));
	return exists;
}

static unsigned marks_of(const char *dir)
{
	static const struct { const char *name; unsigned mark; bool dir; } m[] = {
		{ "pyvenv.cfg", MARK_CFG, false }, { "conda-meta", MARK_CONDA, true },
		{ "bin", MARK_BIN, true }, { "Scripts", MARK_SCRIPTS, true },
	};
	unsigned marks = 0;
	struct stat st;
	for (size_t i = 0; i < COUNT(m); i++) {
		char *p = join(dir, m[i].name);
		if (lstat(p, &st) == 0 && (S_ISDIR(st.st_mode) == m[i].dir))
			marks |= m[i].mark;
		free(p);
	}
	return marks;
}

pw_err *pw_venv_inspect(const char *path, pw_venv_info *out)
{
	memset(out, 0, sizeof *out);
	if (!path || !*path)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("no directory to inspect"));
	char *abs = realpath(path, NULL);
	if (!abs)
		return pw_err_errno(PW_ERR_NOTFOUND, errno, NULL, _("cannot inspect %s"), path);
	unsigned marks = marks_of(abs);
	pw_err *e = NULL;
	if (!is_dir(abs) || !is_env(abs, marks))
		e = pw_err_new(PW_ERR_NOTFOUND, NULL, _("%s is not an environment: no pyvenv.cfg, conda-meta "
						       "or interpreter in it"), abs);
	else
		inspect_known(abs, marks, NULL, 0, out);
	free(abs);
	return e;
}

void pw_venv_info_clear(pw_venv_info *i)
{
	if (!i)
		return;
	free(i->path);
	free(i->kind);
	free(i->python);
	free(i->version);
	free(i->base);
	memset(i, 0, sizeof *i);
}

/* -------------------------------------------------------------- discover */

struct pending {
	char *path;
	int depth;
};

struct scan {
	pw_venv_list *out;
	size_t items_cap;
	struct pending *q;
	size_t head, len, cap;
	int depth;
	int64_t deadline;
	int probes;
};

static void push(struct scan *s, char *path, int depth)
{
	if (s->len == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->q = xrealloc(s->q, s->cap * sizeof *s->q);
	}
	s->q[s->len++] = (struct pending){ path, depth };
}

/* Drop the entries queued after mark (an environment's subfolders). */
static void unpush(struct scan *s, size_t mark)
{
	while (s->len > mark)
		free(s->q[--s->len].path);
}

static unsigned mark_of(const struct dirent *de)
{
	const char *n = de->d_name;
	bool dirish = de->d_type == DT_DIR || de->d_type == DT_UNKNOWN;
	if (de->d_type != DT_DIR && strcmp(n, "pyvenv.cfg") == 0)
		return MARK_CFG;
	if (dirish && strcmp(n, "conda-meta") == 0)
		return MARK_CONDA;
	if ((dirish || de->d_type == DT_LNK) && strcmp(n, "bin") == 0)
		return MARK_BIN;
	if ((dirish || de->d_type == DT_LNK) && strcmp(n, "Scripts") == 0)
		return MARK_SCRIPTS;
	return 0;
}

/* A real subfolder worth a visit: symlinks are not followed. */
static bool wanted_subdir(DIR *d, const struct dirent *de)
{
	if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return false;
	if (is_dots(de->d_name) || in_list(de->d_name, pruned_names, COUNT(pruned_names)))
		return false;
	struct stat st;
	return de->d_type == DT_DIR ||
		(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
}

static void add_env(struct scan *s, const char *dir, unsigned marks)
{
	pw_venv_list *l = s->out;
	if (l->count == s->items_cap) {
		s->items_cap = s->items_cap ? s->items_cap * 2 : 16;
		l->items = xrealloc(l->items, s->items_cap * sizeof *l->items);
	}
	inspect_known(dir, marks, &s->probes, s->deadline, &l->items[l->count++]);
}

/* One readdir: the markers that make dir an environment, and its
 * subfolders, queued unless it is one (we never descend into those). */
static void visit(struct scan *s, const struct pending *p)
{
	DIR *d = opendir(p->path);
	if (!d)
		return; /* unreadable: nothing of ours to report */
	s->out->dirs_visited++;
	unsigned marks = 0;
	size_t mark = s->len;
	for (struct dirent *de; (de = readdir(d));) {
		marks |= mark_of(de);
		if (p->depth < s->depth && wanted_subdir(d, de))
			push(s, join(p->path, de->d_name), p->depth + 1);
	}
	closedir(d);
	if (is_env(p->path, marks)) {
		unpush(s, mark);
		add_env(s, p->path, marks);
	}
}

static void add_root(pw_venv_list *l, char *root)
{
	l->roots = xrealloc(l->roots, (l->root_count + 1) * sizeof *l->roots);
	l->roots[l->root_count++] = root;
}

static pw_err *start_root(const pw_guard *g, const char *start, pw_venv_list *out)
{
	char *abs = NULL;
	pw_err *e = NULL;
	if (g)
		e = pw_guard_resolve(g, start, &abs);
	else if (!(abs = realpath(start, NULL)))
		e = pw_err_errno(PW_ERR_NOTFOUND, errno, NULL, _("cannot scan %s"), start);
	if (!e && !is_dir(abs))
		e = pw_err_new(PW_ERR_NOTFOUND, NULL, _("cannot scan %s: not a directory"), abs);
	if (e)
		free(abs);
	else
		add_root(out, abs);
	return e;
}

static pw_err *scan_roots(const pw_guard *g, const char *start, pw_venv_list *out)
{
	if (start && *start)
		return start_root(g, start, out);
	size_t n = pw_guard_root_count(g);
	if (!n)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("nothing to scan: no allowed root and no start folder"));
	for (size_t i = 0; i < n; i++)
		add_root(out, xstrdup(pw_guard_root(g, i)));
	return NULL;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const pw_venv_info *)a)->path, ((const pw_venv_info *)b)->path);
}

/* Sorted by path, each once (nested roots can find one twice). */
static void sort_unique(pw_venv_list *l)
{
	if (l->count)
		qsort(l->items, l->count, sizeof *l->items, by_path);
	size_t kept = 0;
	for (size_t i = 0; i < l->count; i++) {
		if (kept && strcmp(l->items[kept - 1].path, l->items[i].path) == 0)
			pw_venv_info_clear(&l->items[i]);
		else
			l->items[kept++] = l->items[i];
	}
	l->count = kept;
}

pw_err *pw_venv_discover(const pw_guard *g, const char *start, int depth, int max_dirs,
			 int64_t deadline_ms, pw_venv_list *out)
{
	memset(out, 0, sizeof *out);
	pw_err *e = scan_roots(g, start, out);
	if (e) {
		pw_venv_list_clear(out);
		return e;
	}
	struct scan s = { .out = out, .depth = depth > 0 ? depth : DEFAULT_DEPTH, .deadline = deadline_ms,
			  .probes = MAX_PROBES };
	size_t cap = max_dirs > 0 ? (size_t)max_dirs : DEFAULT_MAX_DIRS;
	for (size_t i = 0; i < out->root_count; i++)
		push(&s, xstrdup(out->roots[i]), 0);
	while (s.head < s.len) {
		if (out->dirs_visited >= cap || (deadline_ms && pw_clock_mono_ms() >= deadline_ms)) {
			out->truncated = true;
			break;
		}
		struct pending p = s.q[s.head++];
		visit(&s, &p);
		free(p.path);
	}
	while (s.head < s.len)
		free(s.q[s.head++].path);
	free(s.q);
	sort_unique(out);
	return NULL;
}

void pw_venv_list_clear(pw_venv_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++)
		pw_venv_info_clear(&l->items[i]);
	free(l->items);
	names_free(l->roots, l->root_count);
	memset(l, 0, sizeof *l);
}

/* ----------------------------------------------------------- base choice */

static const char base_code[] =
	"import sys, sysconfig\n"
	"print('%d.%d.%d' % sys.version_info[:3])\n"
	"print(sys.implementation.name)\n"
	"print(sysconfig.get_path('stdlib'))\n";

struct base_probe {
	char *version;
	char *impl;     /* sys.implementation.name */
	char *stdlib;   /* where ensurepip/_bundled lives (not known from the cache) */
	const char *cache_dir; /* in: facts cached here are trusted (venv_fast.h) */
};

static void base_probe_clear(struct base_probe *p)
{
	free(p->version);
	free(p->impl);
	free(p->stdlib);
	*p = (struct base_probe){ .cache_dir = p->cache_dir };
}

/* Line n (from 0) of text; "" past the end. */
static char *nth_line(const char *text, int n)
{
	for (; n > 0 && text; n--) {
		text = strchr(text, '\n');
		text = text ? text + 1 : NULL;
	}
	return text ? pw_venv_printable(text, strcspn(text, "\n"), '?') : xstrdup("");
}

static const char *impl_name(const char *impl)
{
	static const char *const names[][2] = {
		{ "cpython", "CPython" }, { "pypy", "PyPy" }, { "graalpy", "GraalPy" },
	};
	for (size_t i = 0; impl && i < COUNT(names); i++)
		if (strcmp(impl, names[i][0]) == 0)
			return names[i][1];
	return impl && *impl ? impl : "Python";
}

/* One run tells the version, the implementation and the stdlib folder. */
static pw_err *probe_base(const char *python, const pw_venv_job *j, struct base_probe *p)
{
	const char *argv[] = { python, "-I", "-c", base_code, NULL };
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, j, BASE_PROBE_S, PROBE_CAP, python, &r);
	if (!e) {
		const char *text = pw_run_result_output(r, PW_STREAM_STDOUT);
		char *first = nth_line(text, 0);
		p->version = short_version(first);
		p->impl = nth_line(text, 1);
		p->stdlib = nth_line(text, 2);
		free(first);
		if (!p->version)
			e = pw_err_new(PW_ERR_FAILED, NULL, _("%s did not print its version"), python);
	}
	pw_run_result_free(&r);
	if (e)
		base_probe_clear(p);
	return e;
}

/* probe_base, then the version rule; code and label for the error. */
static pw_err *usable_base(const char *python, const char *label, pw_errcode code, const char *hint,
			   struct base_probe *p)
{
	pw_venv_job j = { 0 };
	pw_err *e = NULL;
	if (!pw_venv_fast_known(p->cache_dir, python, &p->version, &p->impl))
		e = probe_base(python, &j, p);
	if (e) {
		pw_err *u = pw_err_new(code, hint, _("%s does not run: %s"), label, pw_err_message(e));
		pw_err_free(e);
		return u;
	}
	if (!pw_venv_new_enough(p->version)) {
		e = pw_err_new(code, hint, _("%s is %s %s; pyward needs Python 3.8 or newer"), label,
			       impl_name(p->impl), p->version);
		base_probe_clear(p);
	}
	return e;
}

static const char *path_env(void)
{
	const char *p = getenv("PATH");
	return p && *p ? p : DEFAULT_PATH;
}

/* The next executable called name on PATH from *cursor (advanced past
 * it), or NULL. Relative entries are skipped, as the runner does. */
static char *path_next(const char **cursor, const char *name)
{
	while (**cursor) {
		const char *s = *cursor;
		size_t n = strcspn(s, ":");
		*cursor = s + n + (s[n] == ':');
		if (!n || s[0] != '/')
			continue;
		char *cand = xasprintf("%.*s/%s", (int)n, s, name);
		if (is_executable(cand))
			return cand;
		free(cand);
	}
	return NULL;
}

static pw_err *choose_explicit(const char *python, struct base_probe *p, char **chosen, char **why)
{
	const char *cursor = path_env();
	char *path = strchr(python, '/') ? pw_paths_absolute(python) : path_next(&cursor, python);
	char *label = xasprintf("--python %s", python);
	pw_err *e = path ? usable_base(path, label, PW_ERR_USAGE, _(base_hint), p)
		: pw_err_new(PW_ERR_USAGE, _(base_hint), _("%s: no such program"), label);
	if (!e) {
		*chosen = path;
		path = NULL;
		*why = xasprintf("%s (%s %s)", label, impl_name(p->impl), p->version);
	}
	free(path);
	free(label);
	return e;
}

static pw_err *choose_managed(const char *python, struct base_probe *p, char **chosen, char **why)
{
	char *label = xasprintf(_("the managed runtime %s"), python);
	pw_err *e = usable_base(python, label, PW_ERR_FAILED,
				_("reinstall it: pyward runtime install"), p);
	free(label);
	if (!e) {
		*chosen = xstrdup(python);
		*why = xasprintf(_("the managed runtime (%s %s)"), impl_name(p->impl), p->version);
	}
	return e;
}

/* python3, then python: every match on PATH in order, until one runs and
 * is new enough (an old python3 early on PATH must not win). */
static pw_err *choose_from_path(struct base_probe *p, char **chosen, char **why)
{
	static const char *const names[] = { "python3", "python" };
	for (size_t i = 0; i < COUNT(names); i++) {
		const char *cursor = path_env();
		for (char *cand; (cand = path_next(&cursor, names[i]));) {
			pw_err *e = usable_base(cand, cand, PW_ERR_FAILED, NULL, p);
			if (!e) {
				*chosen = cand;
				*why = xasprintf(_("%s on PATH: %s (%s %s)"), names[i], cand, impl_name(p->impl),
						 p->version);
				return NULL;
			}
			pw_err_free(e);
			free(cand);
		}
	}
	return pw_err_new(PW_ERR_NOTFOUND,
			  _("install python3 (3.8 or newer), or a managed runtime: pyward runtime install"),
			  "%s", _("no Python 3.8 or newer found: no python3 or python on PATH runs and is new enough"));
}

pw_err *pw_venv_choose_base(const char *explicit_python, const char *managed_python, char **base,
			    char **version, char **why)
{
	return pw_venv_choose_base_cached(NULL, explicit_python, managed_python, base, version, why);
}

pw_err *pw_venv_choose_base_cached(const char *cache_dir, const char *explicit_python, const char *managed_python,
				   char **base, char **version, char **why)
{
	if (!base)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("choosing an interpreter needs somewhere to put it"));
	*base = NULL;
	if (version)
		*version = NULL;
	if (why)
		*why = NULL;
	struct base_probe p = { .cache_dir = cache_dir };
	char *reason = NULL;
	pw_err *e;
	if (explicit_python && *explicit_python)
		e = choose_explicit(explicit_python, &p, base, &reason);
	else if (managed_python && *managed_python)
		e = choose_managed(managed_python, &p, base, &reason);
	else
		e = choose_from_path(&p, base, &reason);
	if (!e && version) {
		*version = p.version;
		p.version = NULL;
	}
	if (!e && why)
		*why = reason;
	else
		free(reason);
	base_probe_clear(&p);
	return e;
}

/* ------------------------------------------------------------- creation */

struct row {
	char *path;             /* relative to site-packages */
	char hash[B64_LEN + 1];
	int64_t size;
};

struct build {
	const pw_venv_create_opts *o;
	pw_venv_job job;
	struct base_probe base;
	char *made;             /* topmost folder we create: removed on failure */
	bool was_empty;         /* target was an empty folder: emptied on failure */
	char *site;             /* site-packages */
	char *up;               /* from site-packages to the environment: "../../.." */
	char *staging;
	char *dist_info;        /* "pip-23.0.1.dist-info" */
	struct row *rows;
	size_t nrows, rows_cap;
	char *launchers[LAUNCHERS];
	size_t nlaunchers;
	bool moved;             /* pip is in site-packages: too late to fall back */
};

static void drop_rows(struct build *b)
{
	for (size_t i = 0; i < b->nrows; i++)
		free(b->rows[i].path);
	free(b->rows);
	b->rows = NULL;
	b->nrows = b->rows_cap = 0;
}

static void build_clear(struct build *b)
{
	base_probe_clear(&b->base);
	free(b->made);
	free(b->site);
	free(b->up);
	free(b->staging);
	free(b->dist_info);
	drop_rows(b);
	for (size_t i = 0; i < b->nlaunchers; i++)
		free(b->launchers[i]);
}

static void add_row(struct build *b, const char *path, const char *hex, int64_t size)
{
	if (b->nrows == b->rows_cap) {
		b->rows_cap = b->rows_cap ? b->rows_cap * 2 : 256;
		b->rows = xrealloc(b->rows, b->rows_cap * sizeof *b->rows);
	}
	struct row *r = &b->rows[b->nrows++];
	r->path = xstrdup(path);
	pw_record_b64(hex, r->hash);
	r->size = size;
}

static pw_err *prepare_target(struct build *b)
{
	const char *t = b->o->target;
	struct stat st;
	size_t n = 0;
	if (lstat(t, &st) < 0) {
		if (errno != ENOENT)
			return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), t);
		b->made = pw_venv_first_missing(t);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		char **names = list_names(t, &n);
		names_free(names, n);
	}
	if (!S_ISDIR(st.st_mode) || n)
		return pw_err_new(PW_ERR_REFUSED, _("choose another name, or move it away first"),
				  _("%s exists and is not an environment (no pyvenv.cfg)"), t);
	b->was_empty = true;
	return NULL;
}

static pw_err *empty_dir(const char *dir)
{
	size_t n;
	char **names = list_names(dir, &n);
	pw_err *e = NULL;
	for (size_t i = 0; i < n && !e; i++) {
		char *p = join(dir, names[i]);
		e = pw_extract_remove_tree(p);
		free(p);
	}
	names_free(names, n);
	return e;
}

static void undo(struct build *b)
{
	pw_err *e = NULL;
	if (b->made)
		e = pw_extract_remove_tree(b->made);
	else if (b->was_empty)
		e = empty_dir(b->o->target);
	if (e)
		pw_events_log(b->o->events, PW_LOG_WARN, _("could not remove the half-made environment: %s"),
			      pw_err_message(e));
	pw_err_free(e);
}

/* An environment already at target: report it, touch nothing. */
static bool existing(const char *target, pw_venv_create_result *r)
{
	char *path = join(target, "pyvenv.cfg");
	struct stat st;
	bool there = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	if (!there)
		return false;
	struct cfg c = { 0 };
	bool exists;
	read_cfg(target, &c);
	r->existed = true;
	r->python = python_of(target, &exists);
	r->version = c.version;
	c.version = NULL;
	cfg_clear(&c);
	return true;
}

/* `-m venv` writes pyvenv.cfg first and pip last: until the end, a marker
 * with our pid says the environment is not done (settle_existing). */
static pw_err *mark_incomplete(struct build *b)
{
	pw_err *e = pw_paths_mkdirs(b->o->target, 0755);
	char *path = join(b->o->target, INCOMPLETE), *pid = xasprintf("%ld\n", (long)getpid());
	if (!e)
		e = write_new_file(path, pid, strlen(pid), 0644);
	free(pid);
	free(path);
	return e;
}

static pw_err *unmark_incomplete(struct build *b)
{
	char *path = join(b->o->target, INCOMPLETE);
	pw_err *e = unlink(path) == 0 ? NULL : pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), path);
	free(path);
	return e;
}

/* What Python and pip wrote on disk before the marker goes: pyward cannot
 * name their files, so the file system is flushed (DESIGN.md). */
static pw_err *flush_written(const char *target)
{
	return pw_venv_not_flushed(pw_durable_sync_fs(target), target);
}

/* The marker's removal, and the names of the folders made for the
 * environment, on disk. */
static pw_err *flush_unmarked(const struct build *b)
{
	pw_err *e = pw_venv_not_flushed(pw_durable_sync_dir(b->o->target), b->o->target);
	if (!e && b->made)
		e = pw_venv_sync_names(b->o->target, b->made);
	return e;
}

/* A small file's first line, or NULL. */
static char *slurp_small(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return xstrndup(buf, strcspn(buf, "\n"));
}

static pw_err *make_venv(struct build *b)
{
	const char *t = b->o->target, *argv[7];
	size_t n = 0;
	argv[n++] = b->o->base;
	argv[n++] = "-I";
	argv[n++] = "-m";
	argv[n++] = "venv";
	if (b->o->seed != PW_SEED_PIP)
		argv[n++] = "--without-pip";
	argv[n++] = t;
	argv[n] = NULL;
	pw_events_log(b->o->events, PW_LOG_INFO, _("creating %s with %s (%s %s)"), t, b->o->base,
		      impl_name(b->base.impl), b->base.version);
	char *what = xasprintf(_("%s -m venv"), b->o->base);
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, &b->job, VENV_S, RUN_CAP, what, &r);
	if (e && r && pw_err_code(e) == PW_ERR_FAILED && lacks_venv(r))
		venv_package_hint(e, b->base.version);
	pw_run_result_free(&r);
	free(what);
	return e;
}

static pw_err *run_ensurepip(const char *python, const pw_venv_job *j, const char *version)
{
	const char *argv[] = { python, "-I", "-m", "ensurepip", "--upgrade", "--default-pip", NULL };
	char *what = xasprintf(_("%s -m ensurepip"), python);
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, j, VENV_S, RUN_CAP, what, &r);
	if (e && r && pw_err_code(e) == PW_ERR_FAILED && lacks_venv(r))
		venv_package_hint(e, version);
	pw_run_result_free(&r);
	free(what);
	return e;
}

/* Run a pip check in the new environment; its stdout must contain expect. */
static pw_err *check_pip(const char *venv, const pw_venv_job *j, const char *const *tail, const char *shown,
			 const char *expect)
{
	char *python = join(venv, "bin/python");
	const char *argv[8] = { python, "-I" };
	for (size_t i = 0; tail[i] && i < 5; i++)
		argv[i + 2] = tail[i];
	char *what = xasprintf("%s %s", python, shown);
	pw_run_result *r = NULL;
	pw_err *e = pw_venv_run(argv, j, PIP_CHECK_S, PROBE_CAP, what, &r);
	if (!e && !strstr(pw_run_result_output(r, PW_STREAM_STDOUT), expect))
		e = pw_err_new(PW_ERR_FAILED, NULL, _("%s did not show a pip of the environment"), what);
	if (e && pw_err_code(e) == PW_ERR_FAILED)
		pw_err_prefix(e, _("pip does not work in %s"), venv);
	pw_run_result_free(&r);
	free(what);
	free(python);
	return e;
}

static pw_err *verify_pip(const char *venv, const pw_venv_job *j)
{
	const char *tail[] = { "-m", "pip", "--version", NULL };
	return check_pip(venv, j, tail, "-m pip --version", "pip ");
}

/* After a fast seed: pip imports from the new site-packages. Cheaper than
 * `pip --version`, whose first run compiles pip's bytecode; the full check
 * is kept for ensurepip seeding. */
static pw_err *verify_seeded_pip(const char *venv, const pw_venv_job *j)
{
	const char *tail[] = { "-B", "-c", "import pip; print('pip', pip.__version__, pip.__file__)", NULL };
	return check_pip(venv, j, tail, "-c 'import pip'", venv);
}

/* ------------------------------------------------------------ the wheel */

struct unzip {
	struct build *b;
	const char *wheel;
	struct archive *a;
	int64_t bytes;
	int64_t entries;
	char *ready;            /* last folder known to exist under staging */
	unsigned char *buf;
};

static pw_err *zip_refuse(const struct unzip *u, const char *name, const char *rule)
{
	char *shown = pw_venv_printable(name ? name : "?", name ? strlen(name) : 1, '?');
	pw_err *e = pw_err_new(PW_ERR_REFUSED, _("the wheel may be damaged; reinstall the interpreter's pip wheel"),
			       _("%s: entry '%s' %s"), u->wheel, shown, rule);
	free(shown);
	return e;
}

static pw_err *zip_error(const struct unzip *u)
{
	const char *why = archive_error_string(u->a);
	return pw_err_new(PW_ERR_CORRUPT, _("the wheel may be damaged; reinstall the interpreter's pip wheel"),
			  _("cannot read %s: %s"), u->wheel, why ? why : _("unknown error"));
}

/* The rule a wheel entry's name breaks (a msgid), or NULL; *clean gets
 * the name without its trailing '/'. Every component must be a plain name,
 * so nothing can land outside the staging folder. */
static const char *name_rule(const char *name, char **clean)
{
	*clean = NULL;
	if (!name || !*name)
		return N_("has an empty name");
	if (name[0] == '/')
		return N_("has an absolute path");
	size_t len = strlen(name);
	if (len > ZIP_PATH_LIMIT)
		return N_("has a path longer than 1024 bytes");
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return N_("has a control character or a backslash in its name");
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return N_("has an empty, '.' or '..' component");
		if (n > ZIP_NAME_LIMIT)
			return N_("has a path component longer than 255 bytes");
		p += n;
		p += *p == '/';
	}
	size_t top = strcspn(name, "/");
	if (top > 5 && strncmp(name + top - 5, ".data", 5) == 0)
		return N_("is in a .data folder, which pyward does not install");
	*clean = xstrndup(name, len - (name[len - 1] == '/'));
	return NULL;
}

/* Files of the wheel's dist-info that we write ourselves. */
static bool replaced(const char *clean)
{
	static const char *const names[] = { "RECORD", "RECORD.jws", "RECORD.p7s", "INSTALLER" };
	const char *slash = strchr(clean, '/');
	if (!slash || strchr(slash + 1, '/') || !in_list(slash + 1, names, COUNT(names)))
		return false;
	return slash - clean > 10 && strncmp(slash - 10, ".dist-info", 10) == 0;
}

/* The dist-info folder must be pip's, and only one: the RECORD we write
 * speaks for everything unpacked. */
static pw_err *note_top(struct unzip *u, const char *name, const char *clean)
{
	size_t n = strcspn(clean, "/");
	char *top = xstrndup(clean, n);
	pw_err *e = NULL;
	if (!ends_with(top, ".dist-info"))
		;
	else if (!starts_with(top, "pip-"))
		e = zip_refuse(u, name, _("belongs to another package than pip"));
	else if (!u->b->dist_info)
		u->b->dist_info = xstrdup(top);
	else if (strcmp(u->b->dist_info, top) != 0)
		e = zip_refuse(u, name, _("is in a second .dist-info folder"));
	free(top);
	return e;
}

/* mkdir every folder of rel under staging (all of rel, or its parent);
 * entries come grouped by folder, so the last one made is remembered.
 * Staging holds only folders and files we made, so no link is crossed. */
static pw_err *make_dirs(struct unzip *u, const char *rel, bool whole)
{
	const char *slash = strrchr(rel, '/');
	size_t n = whole ? strlen(rel) : slash ? (size_t)(slash - rel) : 0;
	if (!n || (u->ready && strlen(u->ready) == n && strncmp(u->ready, rel, n) == 0))
		return NULL;
	char *path = xasprintf("%s/%.*s", u->b->staging, (int)n, rel);
	pw_err *e = NULL;
	for (char *p = path + strlen(u->b->staging) + 1; !e; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), path);
		*p = c;
		if (!c)
			break;
	}
	free(path);
	free(u->ready);
	u->ready = e ? NULL : xstrndup(rel, n);
	return e;
}

/* Copy the entry's data to fd, hashing it and counting it against the
 * limit as it comes: a header's size may lie. */
static pw_err *copy_data(struct unzip *u, int fd, const char *rel, const char *path)
{
	pw_sha256 *h = pw_sha256_new();
	int64_t size = 0;
	pw_err *e = NULL;
	for (;;) {
		la_ssize_t n = archive_read_data(u->a, u->buf, ZIP_BLOCK);
		if (n == 0)
			break;
		if (n < 0) {
			e = zip_error(u);
			break;
		}
		size += n;
		u->bytes += n;
		if (u->bytes > ZIP_MAX_BYTES) {
			e = zip_refuse(u, rel, _("takes the wheel past 256 MiB"));
			break;
		}
		pw_sha256_update(h, u->buf, (size_t)n);
		if (pw_write_all(fd, u->buf, (size_t)n) < 0) {
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), path);
			break;
		}
	}
	char hex[PW_SHA256_HEX_LEN + 1];
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
	if (close(fd) < 0 && !e)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), path);
	if (!e)
		add_row(u->b, rel, hex, size);
	return e;
}

static pw_err *unzip_file(struct unzip *u, struct archive_entry *ent, const char *rel)
{
	int64_t declared = archive_entry_size_is_set(ent) ? archive_entry_size(ent) : 0;
	if (declared < 0 || declared > ZIP_MAX_BYTES - u->bytes)
		return zip_refuse(u, rel, _("takes the wheel past 256 MiB"));
	pw_err *e = make_dirs(u, rel, false);
	if (e)
		return e;
	char *path = join(u->b->staging, rel);
	mode_t mode = (archive_entry_perm(ent) & 0111) ? 0755 : 0644;
	/* O_EXCL: an entry named twice is refused, not merged. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		e = pw_err_errno(errno == EEXIST ? PW_ERR_REFUSED : PW_ERR_IO, errno, NULL, _("cannot create %s"), path);
	else
		e = copy_data(u, fd, rel, path);
	free(path);
	return e;
}

static pw_err *unzip_entry(struct unzip *u, struct archive_entry *ent)
{
	const char *name = archive_entry_pathname(ent);
	char *clean = NULL;
	const char *rule = name_rule(name, &clean);
	pw_err *e = NULL;
	mode_t type = archive_entry_filetype(ent);
	if (pw_cancel_raised(u->b->job.cancel))
		e = pw_err_new(PW_ERR_CANCELLED, NULL, _("unpacking %s was cancelled"), u->wheel);
	else if (rule)
		e = zip_refuse(u, name, _(rule));
	else if (++u->entries > ZIP_MAX_ENTRIES)
		e = zip_refuse(u, name, _("takes the wheel past 20000 entries"));
	else if (type != AE_IFDIR && type != AE_IFREG)
		e = zip_refuse(u, name, _("is not a regular file or a folder"));
	else
		e = note_top(u, name, clean);
	if (!e && type == AE_IFDIR)
		e = make_dirs(u, clean, true);
	else if (!e && !replaced(clean))
		e = unzip_file(u, ent, clean);
	free(clean);
	return e;
}

/* libarchive reads the zip (its central directory, the authoritative
 * list); every name is checked here before anything is written. */
static pw_err *unzip_wheel(struct build *b, const char *wheel)
{
	pw_err *e = pw_libarchive_ready();
	if (e)
		return e;
	if (mkdir(b->staging, 0755) < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s"), b->staging);
	struct unzip u = { .b = b, .wheel = wheel, .a = archive_read_new(), .buf = xmalloc(ZIP_BLOCK) };
	archive_read_support_format_zip(u.a);
	if (archive_read_open_filename(u.a, wheel, ZIP_BLOCK) != ARCHIVE_OK)
		e = zip_error(&u);
	while (!e) {
		struct archive_entry *ent;
		int rc = archive_read_next_header(u.a, &ent);
		if (rc == ARCHIVE_EOF)
			break;
		e = rc < ARCHIVE_WARN ? zip_error(&u) : unzip_entry(&u, ent);
	}
	archive_read_free(u.a);
	free(u.buf);
	free(u.ready);
	if (!e && !b->dist_info)
		e = pw_err_new(PW_ERR_CORRUPT, NULL, _("%s has no pip-*.dist-info folder"), wheel);
	return e;
}

/* ------------------------------------------------------------ launchers */

/* bin/pip, bin/pip3, bin/pip3.X, as pip's installer names them. */
static pw_err *write_launchers(struct build *b)
{
	char *text = NULL;
	pw_err *e = pw_pip_launcher_text(b->o->target, &text);
	long major = 3, minor = 0;
	pw_venv_version_parts(b->base.version, &major, &minor);
	char *names[LAUNCHERS] = { xstrdup("pip"), xasprintf("pip%ld", major), xasprintf("pip%ld.%ld", major, minor) };
	char hex[PW_SHA256_HEX_LEN + 1];
	if (text)
		sha256_hex(text, strlen(text), hex);
	for (size_t i = 0; !e && i < LAUNCHERS; i++) {
		char *path = xasprintf("%s/bin/%s", b->o->target, names[i]);
		e = write_new_file(path, text, strlen(text), 0755);
		if (e) {
			free(path);
			break;
		}
		b->launchers[b->nlaunchers++] = path;
		char *rel = xasprintf("%s/bin/%s", b->up, names[i]);
		add_row(b, rel, hex, (int64_t)strlen(text));
		free(rel);
	}
	for (size_t i = 0; i < LAUNCHERS; i++)
		free(names[i]);
	free(text);
	return e;
}

/* ---------------------------------------------------------------- RECORD */

/* RECORD is CSV: quote a path only when it needs it. */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static char *record_text(const struct build *b, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		abort(); /* out of memory, as xalloc would */
	for (size_t i = 0; i < b->nrows; i++) {
		csv_field(f, b->rows[i].path);
		fprintf(f, ",sha256=%s,%lld\n", b->rows[i].hash, (long long)b->rows[i].size);
	}
	fprintf(f, "%s/RECORD,,\n", b->dist_info);
	fclose(f);
	return text;
}

static pw_err *write_record(struct build *b)
{
	static const char installer[] = "pyward\n";
	char *dir = join(b->staging, b->dist_info);
	char *path = join(dir, "INSTALLER");
	pw_err *e = write_new_file(path, installer, strlen(installer), 0644);
	if (!e) {
		char hex[PW_SHA256_HEX_LEN + 1], *rel = xasprintf("%s/INSTALLER", b->dist_info);
		sha256_hex(installer, strlen(installer), hex);
		add_row(b, rel, hex, (int64_t)strlen(installer));
		free(rel);
		size_t len;
		char *text = record_text(b, &len);
		free(path);
		path = join(dir, "RECORD");
		e = write_new_file(path, text, len, 0644);
		free(text);
	}
	free(path);
	free(dir);
	return e;
}

/* ------------------------------------------------------------- seeding */

static pw_err *locate_site(struct build *b)
{
	const char *t = b->o->target;
	b->site = find_site(t, false);
	if (!b->site || !starts_with(b->site, t))
		return pw_err_new(PW_ERR_FAILED, NULL, _("%s has no site-packages folder"), t);
	size_t depth = 1;
	for (const char *p = b->site + strlen(t) + 1; *p; p++)
		depth += *p == '/';
	b->up = xmalloc(depth * 3);
	b->up[0] = '\0';
	for (size_t i = 0; i < depth; i++)
		strcat(b->up, i ? "/.." : "..");
	b->staging = join(b->site, STAGING);
	return NULL;
}

/* Rename staging's top-level entries into site-packages. */
static pw_err *move_into_place(struct build *b)
{
	size_t n;
	char **names = list_names(b->staging, &n);
	pw_err *e = NULL;
	struct stat st;
	for (size_t i = 0; i < n && !e; i++) {
		char *from = join(b->staging, names[i]), *to = join(b->site, names[i]);
		if (lstat(to, &st) == 0)
			e = pw_err_new(PW_ERR_FAILED, NULL, _("cannot seed pip: %s already exists"), to);
		else if (rename(from, to) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot move %s into place"), from);
		else
			b->moved = true;
		free(from);
		free(to);
	}
	names_free(names, n);
	if (!e && rmdir(b->staging) < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), b->staging);
	return e;
}

/* Take back a fast seeding that did not finish, before falling back. */
static void drop_fast(struct build *b)
{
	if (b->staging)
		pw_err_free(pw_extract_remove_tree(b->staging));
	for (size_t i = 0; i < b->nlaunchers; i++) {
		unlink(b->launchers[i]);
		free(b->launchers[i]);
	}
	b->nlaunchers = 0;
	drop_rows(b);
	free(b->dist_info);
	b->dist_info = NULL;
}

static pw_err *seed_fast(struct build *b, const char *wheel)
{
	pw_err *e = locate_site(b);
	if (!e)
		e = unzip_wheel(b, wheel);
	if (!e)
		e = write_launchers(b);
	if (!e)
		e = write_record(b);
	if (!e)
		e = move_into_place(b);
	if (!e)
		pw_events_log(b->o->events, PW_LOG_INFO, _("seeded pip from %s (%zu files)"), wheel, b->nrows);
	return e;
}

static pw_err *seed_with_ensurepip(struct build *b)
{
	char *python = join(b->o->target, "bin/python");
	pw_err *e = run_ensurepip(python, &b->job, b->base.version);
	free(python);
	return e;
}

static bool can_fall_back(const struct build *b, const pw_err *e)
{
	pw_errcode c = pw_err_code(e);
	return !b->moved && c != PW_ERR_CANCELLED && c != PW_ERR_TIMEOUT;
}

static pw_err *seed(struct build *b, pw_venv_create_result *r)
{
	if (b->o->seed != PW_SEED_FAST)
		return NULL;
	char *wheel = pw_venv_bundled_wheel(b->base.stdlib);
	if (!wheel) {
		pw_events_log(b->o->events, PW_LOG_INFO,
			      _("no bundled pip wheel found for %s; installing pip with ensurepip"), b->o->base);
		return seed_with_ensurepip(b);
	}
	pw_err *e = seed_fast(b, wheel);
	if (e && can_fall_back(b, e)) {
		pw_events_log(b->o->events, PW_LOG_WARN,
			      _("could not seed pip from %s (%s); installing it with ensurepip instead"), wheel,
			      pw_err_message(e));
		pw_err_clear(&e);
		drop_fast(b);
		free(wheel);
		return seed_with_ensurepip(b);
	}
	if (!e) {
		r->seeded_fast = true;
		r->pip_wheel = wheel;
	} else {
		free(wheel);
	}
	return e;
}

static pw_err *check_create_opts(const pw_venv_create_opts *o, pw_venv_create_result *r)
{
	if (!o || !r || !o->target || o->target[0] != '/' || !o->base || !*o->base)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s",
				  _("creating an environment needs an absolute target and a base interpreter"));
	if (o->seed != PW_SEED_FAST && o->seed != PW_SEED_PIP && o->seed != PW_SEED_NONE)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("unknown way to seed pip"));
	return NULL;
}

/* The route that starts no Python (venv_fast.c); *served false when it
 * cannot serve this base and nothing was made. */
static pw_err *create_written(const pw_venv_create_opts *o, pw_venv_create_result *r, bool *served)
{
	pw_venv_fast_opts fo = { .target = o->target, .base = o->base, .cache_dir = o->cache_dir,
				 .with_pip = o->seed == PW_SEED_FAST, .env_add = o->env_add,
				 .deadline_ms = o->deadline_ms, .cancel = o->cancel, .events = o->events,
				 .gate = o->gate, .gate_ud = o->gate_ud };
	pw_venv_fast_result fr;
	pw_err *e = pw_venv_fast_create(&fo, &fr);
	*served = !e || pw_err_code(e) != PW_ERR_NOTFOUND;
	if (!*served) {
		pw_events_log(o->events, PW_LOG_INFO, _("writing the environment directly is not possible (%s); "
							"using %s -m venv"), pw_err_message(e), o->base);
		pw_err_free(e);
		return NULL;
	}
	if (e)
		return e;
	r->written = true;
	r->python = join(o->target, "bin/python");
	r->version = fr.version;
	fr.version = NULL;
	r->seeded_fast = fo.with_pip;
	r->pip_wheel = fr.pip_wheel;
	fr.pip_wheel = NULL;
	if (fo.with_pip)
		pw_events_log(o->events, PW_LOG_INFO, _("linked pip from the box's image of %s (%zu files, %zu copied)"),
			      r->pip_wheel, fr.pip_files, fr.copied);
	pw_venv_fast_result_clear(&fr);
	return NULL;
}

/* A create killed on the `-m venv` route left its marker (with a pid that
 * is gone): what it made is removed, to be made again. */
static pw_err *clear_killed(const pw_venv_create_opts *o, pw_venv_create_result *r)
{
	char *mark = join(o->target, INCOMPLETE);
	struct stat st;
	char *holder = lstat(mark, &st) == 0 && S_ISREG(st.st_mode) ? slurp_small(mark) : NULL;
	free(mark);
	if (!holder)
		return NULL;
	long pid = strtol(holder, NULL, 10);
	free(holder);
	if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
		return pw_err_new(PW_ERR_REFUSED, _("wait for it to finish"),
				  _("%s is being created by another pyward (pid %ld)"), o->target, pid);
	pw_events_log(o->events, PW_LOG_WARN, _("%s was left half-made by an interrupted create; making it again"),
		      o->target);
	pw_err *e = pw_extract_remove_tree(o->target);
	r->remade = !e;
	return e;
}

static pw_err *not_repaired(pw_err *f, const char *target)
{
	if (!f)
		return NULL;
	pw_err *e = pw_err_new(PW_ERR_IO, pw_err_hint(f),
			       _("pip was put back in %s but could not be flushed to disk (%s)"), target,
			       pw_err_message(f));
	pw_err_free(f);
	return e;
}

/* An environment is at target: done, unless pip should be there and does
 * not work (then it is repaired). */
static pw_err *settle_existing(const pw_venv_create_opts *o, pw_venv_create_result *r)
{
	if (o->seed == PW_SEED_NONE)
		return NULL;
	pw_venv_job j = { o->env_add, o->deadline_ms, o->cancel };
	pw_err *bad = verify_seeded_pip(o->target, &j);
	if (!bad)
		return NULL;
	pw_events_log(o->events, PW_LOG_WARN, _("%s has no working pip (%s); repairing it"), o->target,
		      pw_err_message(bad));
	pw_err_free(bad);
	pw_err *e = pw_venv_repair_pip(o->target, o->env_add, o->deadline_ms, o->cancel);
	if (!e)
		e = not_repaired(pw_durable_sync_fs(o->target), o->target);
	r->repaired = !e;
	return e;
}

pw_err *pw_venv_create(const pw_venv_create_opts *o, pw_venv_create_result *r)
{
	if (r)
		memset(r, 0, sizeof *r);
	pw_err *e = check_create_opts(o, r);
	/* Only the written route (hidden folder, renamed) can wait for the
	 * gate until its rename; the others pass it before they start. */
	bool written = o->cache_dir && o->seed != PW_SEED_PIP;
	if (!e && o->gate && !written)
		e = o->gate(o->gate_ud);
	if (!e)
		e = clear_killed(o, r);
	if (!e && existing(o->target, r))
		return o->gate && (e = o->gate(o->gate_ud)) ? e : settle_existing(o, r);
	if (e)
		return e;
	struct build b = { .o = o, .job = { o->env_add, o->deadline_ms, o->cancel } };
	e = prepare_target(&b);
	if (!e && written) {
		bool served;
		e = create_written(o, r, &served);
		if (served) {
			build_clear(&b);
			return e;
		}
	}
	if (!e && o->gate)
		e = o->gate(o->gate_ud);
	if (!e)
		e = mark_incomplete(&b);
	if (!e)
		e = probe_base(o->base, &b.job, &b.base);
	if (!e && !pw_venv_new_enough(b.base.version))
		e = pw_err_new(PW_ERR_USAGE, _(base_hint), _("%s is Python %s; pyward needs 3.8 or newer"), o->base,
			       b.base.version);
	if (!e)
		e = make_venv(&b);
	if (!e)
		e = seed(&b, r);
	if (!e && o->seed != PW_SEED_NONE)
		e = r->seeded_fast ? verify_seeded_pip(o->target, &b.job) : verify_pip(o->target, &b.job);
	if (!e)
		e = flush_written(o->target);
	if (!e)
		e = unmark_incomplete(&b);
	if (!e)
		e = flush_unmarked(&b);
	if (e) {
		undo(&b);
		pw_venv_create_result_clear(r);
	} else {
		r->python = join(o->target, "bin/python");
		r->version = b.base.version;
		b.base.version = NULL;
	}
	build_clear(&b);
	return e;
}

void pw_venv_create_result_clear(pw_venv_create_result *r)
{
	if (!r)
		return;
	free(r->python);
	free(r->version);
	free(r->pip_wheel);
	memset(r, 0, sizeof *r);
}

pw_err *pw_venv_repair_pip(const char *venv, const char *const *env_add, int64_t deadline_ms,
			   const pw_cancel *cancel)
{
	if (!venv || venv[0] != '/')
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("repairing pip needs the environment's absolute path"));
	char *python = NULL;
	pw_err *e = pw_venv_interpreter(venv, NULL, &python);
	struct cfg c = { 0 };
	read_cfg(venv, &c);
	pw_venv_job j = { env_add, deadline_ms, cancel };
	if (!e)
		e = run_ensurepip(python, &j, c.version);
	if (!e)
		e = verify_pip(venv, &j);
	cfg_clear(&c);
	free(python);
	return e;
}

/* --------------------------------------------------------------- removal */

/* Resolve path's parent with the guard and append its last name as it is,
 * so that a symlink there is seen (and refused), not followed. */
static pw_err *resolve_unfollowed(const pw_guard *g, const char *path, char **out)
{
	char *p = xstrdup(path);
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	char *slash = strrchr(p, '/'), *parent = NULL;
	const char *name = slash ? slash + 1 : p;
	pw_err *e = NULL;
	if (!*name || is_dots(name))
		e = pw_err_new(PW_ERR_REFUSED, NULL, _("refusing to remove %s: name the environment's folder"), path);
	else if (slash) {
		*slash = '\0';
		e = pw_guard_resolve(g, slash == p ? "/" : p, &parent);
	} else {
		e = pw_guard_resolve(g, ".", &parent);
	}
	if (!e)
		*out = join(parent, name);
	free(parent);
	free(p);
	return e;
}

static bool is_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

static bool has_marker(const char *dir)
{
	unsigned m = marks_of(dir);
	return m & (MARK_CFG | MARK_CONDA);
}

/* A root (or a folder holding one) is never removed, whichever way it is
 * named: checked on the resolved path, before anything else. */
static pw_err *refuse_root(const pw_guard *g, const char *path)
{
	char *full = NULL;
	pw_err *e = pw_guard_resolve(g, path, &full);
	if (e) {
		pw_err_free(e); /* reported by the checks that follow */
		return NULL;
	}
	for (size_t i = 0; !e && i < pw_guard_root_count(g); i++)
		if (is_within(pw_guard_root(g, i), full))
			e = pw_err_new(PW_ERR_REFUSED, NULL, _("refusing to remove %s: it is or holds the allowed root %s"),
				       full, pw_guard_root(g, i));
	free(full);
	return e;
}

static pw_err *check_removable(const pw_guard *g, const char *abs)
{
	struct stat st;
	if (lstat(abs, &st) < 0)
		return errno == ENOENT ? pw_err_new(PW_ERR_NOTFOUND, NULL, _("no environment at %s"), abs)
			: pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), abs);
	if (S_ISLNK(st.st_mode))
		return pw_err_new(PW_ERR_REFUSED, _("remove the link itself; pyward does not follow it"),
				  _("refusing to remove %s: it is a symlink"), abs);
	if (!pw_guard_contains(g, abs))
		return pw_err_new(PW_ERR_REFUSED, NULL, _("refusing to remove %s: outside the allowed roots"), abs);
	if (!S_ISDIR(st.st_mode) || !has_marker(abs))
		return pw_err_new(PW_ERR_REFUSED, _("pyward removes only environments; remove other folders yourself"),
				  _("refusing to remove %s: not an environment: no pyvenv.cfg"), abs);
	return NULL;
}

/* The allowed root abs lies in (the longest that holds it), or NULL. */
static const char *root_of(const pw_guard *g, const char *abs)
{
	const char *best = NULL;
	for (size_t i = 0; i < pw_guard_root_count(g); i++) {
		const char *r = pw_guard_root(g, i);
		if (is_within(abs, r) && strcmp(abs, r) != 0 && (!best || strlen(r) > strlen(best)))
			best = r;
	}
	return best;
}

static pw_err *walk_failed(const char *abs)
{
	return pw_err_errno(PW_ERR_REFUSED, errno, _("look at what changed there; nothing was removed"),
			    _("refusing to remove %s: a folder on the way changed (a link or not a folder)"), abs);
}

/* From the verified root down to abs's parent, one openat(O_NOFOLLOW |
 * O_DIRECTORY) per name: a parent swapped for a link after the checks
 * fails the walk instead of being followed. *name points into abs. */
static pw_err *open_parent(const pw_guard *g, const char *abs, int *pfd, const char **name)
{
	const char *root = root_of(g, abs);
	if (!root)
		return pw_err_new(PW_ERR_REFUSED, NULL, _("refusing to remove %s: outside the allowed roots"), abs);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return walk_failed(abs);
	const char *p = abs + strlen(root);
	while (*p == '/')
		p++;
	for (const char *slash; (slash = strchr(p, '/'));) {
		char *part = xstrndup(p, (size_t)(slash - p));
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(part);
		close(fd);
		if (next < 0)
			return walk_failed(abs);
		fd = next;
		p = slash + 1;
	}
	*pfd = fd;
	*name = p;
	return NULL;
}

/* Delete abs relative to descriptors only, after checking again, through
 * them, that it is a real folder carrying an environment's marker. */
static pw_err *remove_confined(const pw_guard *g, const char *abs)
{
	int pfd = -1;
	const char *name = NULL;
	pw_err *e = open_parent(g, abs, &pfd, &name);
	if (e)
		return e;
	int tfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	bool marked = tfd >= 0 && (fstatat(tfd, "pyvenv.cfg", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
				   fstatat(tfd, "conda-meta", &st, AT_SYMLINK_NOFOLLOW) == 0);
	if (tfd < 0)
		e = walk_failed(abs);
	else if (!marked)
		e = pw_err_new(PW_ERR_REFUSED, _("pyward removes only environments; remove other folders yourself"),
			       _("refusing to remove %s: not an environment: no pyvenv.cfg"), abs);
	if (tfd >= 0)
		close(tfd);
	if (!e) {
		char *parent = xstrndup(abs, (size_t)(name - abs - 1));
		e = pw_extract_remove_at(pfd, parent, name);
		/* the removal on disk before the catalog says it is done */
		if (!e && fsync(pfd) != 0)
			e = pw_err_errno(PW_ERR_IO, errno, _("check the disk (dmesg, df -h); the environment is gone "
							     "until a power cut, which may bring part of it back"),
					 _("%s was removed, but the removal could not be flushed to disk"), abs);
		free(parent);
	}
	close(pfd);
	return e;
}

pw_err *pw_venv_remove(const pw_guard *g, const char *path)
{
	if (!g || !path || !*path)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("no environment to remove"));
	char *abs = NULL;
	pw_err *e = refuse_root(g, path);
	if (!e)
		e = resolve_unfollowed(g, path, &abs);
	if (!e)
		e = check_removable(g, abs);
	if (!e)
		e = remove_confined(g, abs);
	free(abs);
	return e;
}

/* ------------------------------------------------------------------ lock */

static char *lock_path(const char *workspace, const char *venv)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	sha256_hex(venv, strlen(venv), hex);
	return xasprintf("%s/.pyward/locks/%.16s.lock", workspace, hex);
}

/* Who holds the lock, as its holder wrote it. */
static char *read_holder(int fd)
{
	char buf[HOLDER_LIMIT];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	return n > 0 ? pw_venv_printable(buf, (size_t)n, ' ') : xstrdup(_("another process"));
}

static void nap_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static pw_err *wait_lock(int fd, const char *venv, int64_t deadline, const pw_cancel *cancel,
			 const pw_events *events)
{
	bool told = false;
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return NULL;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot lock %s"), venv);
		char *who = read_holder(fd);
		int64_t now = pw_clock_mono_ms();
		pw_err *e = NULL;
		if (!told)
			pw_events_log(events, PW_LOG_INFO, _("waiting for %s: it is locked by %s"), venv, who);
		told = true;
		if (pw_cancel_raised(cancel))
			e = pw_err_new(PW_ERR_CANCELLED, NULL, _("waiting for the lock on %s was cancelled"), venv);
		else if (deadline && now >= deadline)
			e = pw_err_new(PW_ERR_TIMEOUT, _("wait for it to finish, or stop that process"),
				       _("%s is locked by %s"), venv, who);
		free(who);
		if (e)
			return e;
		nap_ms(deadline && deadline - now < LOCK_NAP_MS ? deadline - now : LOCK_NAP_MS);
	}
}

static pw_err *write_holder(int fd, const char *path, const char *holder)
{
	char *who = pw_venv_printable(holder ? holder : "pyward", strlen(holder ? holder : "pyward"), ' ');
	char *text = xasprintf("pid %ld %s\n", (long)getpid(), who);
	pw_err *e = NULL;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, strlen(text), 0) != (ssize_t)strlen(text))
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s"), path);
	free(text);
	free(who);
	return e;
}

pw_err *pw_venv_lock(const char *workspace, const char *venv, const char *holder, int64_t deadline_ms,
		     const pw_cancel *cancel, const pw_events *events, int *fd)
{
	if (fd)
		*fd = -1;
	if (!workspace || !*workspace || !venv || !*venv || !fd)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("locking needs a workspace and an environment"));
	char *dir = xasprintf("%s/.pyward/locks", workspace);
	pw_err *e = pw_paths_mkdirs(dir, 0755);
	free(dir);
	if (e)
		return e;
	char *path = lock_path(workspace, venv);
	int lfd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lfd < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), path);
	if (!e)
		e = wait_lock(lfd, venv, deadline_ms, cancel, events);
	if (!e)
		e = write_holder(lfd, path, holder);
	if (e && lfd >= 0)
		close(lfd);
	else if (!e)
		*fd = lfd;
	/* Children started under the lock hold it too, so it outlives the
	 * change even when pyward is killed before its pip. */
	if (!e)
		pw_runner_inherit_fd(lfd);
	free(path);
	return e;
}

void pw_venv_unlock(int *fd)
{
	/* The file stays: removing it would race with a waiter that opened it. */
	if (fd && *fd >= 0) {
		pw_runner_inherit_fd_drop(*fd);
		close(*fd);
		*fd = -1;
	}
}

/* ------------------------------------------------------------- workspace */

static pw_err *write_gitignore(const char *state)
{
	char *path = join(state, ".gitignore");
	pw_err *e = write_new_file(path, "*\n", 2, 0644);
	/* One already there is the user's (or ours): leave it. */
	if (e && pw_err_code(e) == PW_ERR_IO && access(path, F_OK) == 0)
		pw_err_clear(&e);
	free(path);
	return e;
}

pw_err *pw_venv_workspace_state(const char *workspace, char **cache, char **tmp)
{
	static const char *const subs[] = { "cache", "tmp", "locks" };
	if (cache)
		*cache = NULL;
	if (tmp)
		*tmp = NULL;
	if (!workspace || !is_dir(workspace))
		return pw_err_new(PW_ERR_NOTFOUND, NULL, _("no workspace folder %s"), workspace ? workspace : "");
	char *state = join(workspace, ".pyward");
	pw_err *e = NULL;
	for (size_t i = 0; i < COUNT(subs) && !e; i++) {
		char *p = join(state, subs[i]);
		e = pw_paths_mkdirs(p, 0755);
		free(p);
	}
	if (!e)
		e = write_gitignore(state);
	if (!e && cache)
		*cache = join(state, "cache");
	if (!e && tmp)
		*tmp = join(state, "tmp");
	free(state);
	return e;
}
