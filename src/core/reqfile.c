/* Requirement files read and judged by pyward (see reqfile.h). */
#include "config.h"

#include "reqfile.h"
#include "i18n.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	MAX_DEPTH = 8,            /* -r inside -r inside ... */
	MAX_FILES = 64,
	MAX_LINES = 20000,        /* over all files */
	MAX_FILE_BYTES = 1 << 20,
};

/* One parse: the files seen so far (a file named twice is read once). */
typedef struct parse {
	const pw_reqs_io *io;
	pw_reqs *out;
	char *seen[MAX_FILES];
	size_t nseen;
	int depth;
} parse;

static void push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void pw_reqs_clear(pw_reqs *r)
{
	free_list(r->lines, r->nlines);
	free_list(r->constraints, r->nconstraints);
	free_list(r->extra_index, r->nextra);
	free_list(r->find_links, r->nfind);
	free_list(r->trusted_hosts, r->ntrusted);
	free_list(r->pip_flags, r->nflags);
	free(r->index_url);
	free(r->project);
	memset(r, 0, sizeof *r);
}

static pw_err *refuse(const char *where, const char *hint, const char *why, const char *what)
{
	return pw_err_new(PW_ERR_REFUSED, hint, "%s: %s: %s", where, why, what);
}

/* ---------------------------------------------------------------- words */

static bool starts_with_ci(const char *s, const char *pre)
{
	return strncasecmp(s, pre, strlen(pre)) == 0;
}

static bool is_vcs(const char *s)
{
	static const char *const vcs[] = { "git+", "hg+", "svn+", "bzr+", "git:", "git@" };
	for (size_t i = 0; i < sizeof vcs / sizeof vcs[0]; i++)
		if (starts_with_ci(s, vcs[i]))
			return true;
	return false;
}

static bool is_remote(const char *s)
{
	return strstr(s, "://") && !starts_with_ci(s, "file:");
}

/* "file:///x", "file://localhost/x", "file:/x" -> "/x"; NULL when not a
 * local file URL (another host). %XX is decoded. */
static char *file_url_path(const char *url)
{
	const char *p = url + 5;
	if (strncmp(p, "//", 2) == 0) {
		p += 2;
		if (starts_with_ci(p, "localhost/"))
			p += 9;
		else if (*p != '/')
			return NULL;
	}
	char *out = xmalloc(strlen(p) + 1), *o = out;
	for (; *p; p++) {
		if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char hex[3] = { p[1], p[2], 0 };
			*o++ = (char)strtol(hex, NULL, 16);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	if (strlen(out) != (size_t)(o - out)) { /* a %00 */
		free(out);
		return NULL;
	}
	return out;
}

/* Does the requirement name a local path rather than a project? */
static bool looks_like_path(const char *s)
{
	static const char *const archives[] = { ".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2", ".tar.xz", ".tar" };
	if (*s == '.' || *s == '/' || *s == '~' || strchr(s, '/') || strchr(s, '\\'))
		return true;
	size_t n = strlen(s);
	for (size_t i = 0; i < sizeof archives / sizeof archives[0]; i++) {
		size_t k = strlen(archives[i]);
		if (n > k && strcasecmp(s + n - k, archives[i]) == 0)
			return true;
	}
	return false;
}

/* A local path or file: URL, made absolute and confined; "[extras]" after
 * a path is kept. */
static pw_err *local_target(const pw_reqs_io *io, const char *where, const char *target, char **out)
{
	char *path = starts_with_ci(target, "file:") ? file_url_path(target) : xstrdup(target);
	if (!path)
		return refuse(where, _("name a file on this machine"), _("a file URL for another host is refused"), target);
	if (path[0] == '~') {
		free(path);
		return refuse(where, _("write the path out"), _("a path starting with ~ is refused"), target);
	}
	char *extras = NULL, *br = strrchr(path, '[');
	if (br && path[strlen(path) - 1] == ']' && br > path) {
		extras = xstrdup(br);
		*br = '\0';
	}
	char *abs = NULL;
	pw_err *e = io->local(io->ud, path, &abs);
	if (!e)
		*out = xasprintf("%s%s", abs, extras ? extras : "");
	free(abs);
	free(extras);
	free(path);
	return e;
}

/* ---------------------------------------------------------------- requirements */

/* "--hash=sha256:HEX" or "--hash sha256:HEX" options after a requirement. */
static bool hash_ok(const char *v)
{
	const char *colon = strchr(v, ':');
	if (!colon || colon == v || !colon[1])
		return false;
	for (const char *p = v; p < colon; p++)
		if (!isalnum((unsigned char)*p))
			return false;
	for (const char *p = colon + 1; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

/* Split off the requirement's own options (--hash only); *opts gets them
 * as pip should see them. */
static pw_err *split_hashes(const char *where, char *req, char **opts)
{
	*opts = xstrdup("");
	char *p = strstr(req, " --");
	if (!p)
		p = strncmp(req, "--", 2) == 0 ? req : NULL;
	if (!p)
		return NULL;
	char *rest = p;
	*p = '\0';
	rest = p + 1;
	while (*rest) {
		while (*rest == ' ' || *rest == '\t')
			rest++;
		if (!*rest)
			break;
		size_t n = strcspn(rest, " \t");
		char *word = xstrndup(rest, n);
		rest += n;
		char *value = NULL;
		if (strncmp(word, "--hash=", 7) == 0) {
			value = xstrdup(word + 7);
		} else if (strcmp(word, "--hash") == 0) {
			while (*rest == ' ' || *rest == '\t')
				rest++;
			size_t m = strcspn(rest, " \t");
			value = xstrndup(rest, m);
			rest += m;
		}
		if (!value || !hash_ok(value)) {
			pw_err *e = refuse(where, _("only --hash=ALGO:HEX may follow a requirement"),
					   _("an option pyward does not pass on"), word);
			free(word);
			free(value);
			return e;
		}
		char *next = xasprintf("%s --hash=%s", *opts, value);
		free(*opts);
		*opts = next;
		free(word);
		free(value);
	}
	return NULL;
}

static char *project_of(const char *req)
{
	size_t n = 0;
	while (req[n] && (isalnum((unsigned char)req[n]) || strchr("-_.", req[n])))
		n++;
	return n ? xstrndup(req, n) : NULL;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t k = 0;
	while (s[k] && isspace((unsigned char)s[k]))
		k++;
	memmove(s, s + k, n - k + 1);
}

/* One requirement (no options but --hash): VCS refused, local paths and
 * file: URLs confined and made absolute, remote archives and names kept. */
static pw_err *check_requirement(const pw_reqs_io *io, const char *where, const char *text, char **line,
				 char **project)
{
	char *req = xstrdup(text), *opts = NULL, *fixed = NULL;
	pw_err *e = split_hashes(where, req, &opts);
	trim(req);
	for (const char *p = req; !e && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			e = refuse(where, NULL, _("a control character in a requirement"), "");
	char *at = e ? NULL : strchr(req, '@');
	const char *semi = at ? strchr(at, ';') : NULL;
	char *before = at ? xstrndup(req, (size_t)(at - req)) : NULL;
	bool named_url = at && !looks_like_path(before) && !strstr(before, "://");
	free(before);
	if (e || !*req) {
		if (!e)
			e = refuse(where, NULL, _("an empty requirement"), text);
	} else if (is_vcs(req) || (at && is_vcs(at + 1 + strspn(at + 1, " ")))) {
		e = refuse(where, _("clone it into the workspace and name the local folder"),
			   _("VCS requirements are refused"), req);
	} else if (named_url) {
		/* "name @ URL [; marker]" */
		char *name = xstrndup(req, (size_t)(at - req));
		trim(name);
		char *url = xstrndup(at + 1, semi ? (size_t)(semi - at - 1) : strlen(at + 1));
		trim(url);
		char *abs = NULL;
		if (starts_with_ci(url, "file:"))
			e = local_target(io, where, url, &abs);
		else if (!starts_with_ci(url, "https://") && !starts_with_ci(url, "http://"))
			e = refuse(where, _("use an https:// URL or a local path"), _("a URL pyward does not pass on"), url);
		if (!e)
			fixed = abs ? xasprintf("%s @ file://%s%s%s", name, abs, semi ? " " : "", semi ? semi : "")
				    : xstrdup(req);
		if (!e && project && !*project)
			*project = project_of(name);
		free(abs);
		free(url);
		free(name);
	} else if (starts_with_ci(req, "file:") || looks_like_path(req)) {
		char *path = xstrndup(req, strcspn(req, " ;"));
		e = local_target(io, where, path, &fixed);
		free(path);
	} else if (is_remote(req)) {
		e = refuse(where, _("write it as NAME @ URL"), _("a bare URL is refused"), req);
	} else {
		fixed = xstrdup(req);
		if (project && !*project)
			*project = project_of(req);
	}
	if (!e)
		*line = xasprintf("%s%s", fixed, opts ? opts : "");
	free(fixed);
	free(opts);
	free(req);
	return e;
}

/* ---------------------------------------------------------------- options */

typedef enum {
	OPT_REQUIREMENT, OPT_CONSTRAINT, OPT_EDITABLE, OPT_INDEX, OPT_EXTRA_INDEX, OPT_FIND_LINKS,
	OPT_TRUSTED_HOST, OPT_NO_INDEX, OPT_FLAG, OPT_FLAG_VALUE,
} opt_kind;

typedef struct opt {
	const char *shrt, *lng;
	opt_kind kind;
} opt;

static const opt options[] = {
	{ "-r", "--requirement", OPT_REQUIREMENT }, { "-c", "--constraint", OPT_CONSTRAINT },
	{ "-e", "--editable", OPT_EDITABLE },       { "-i", "--index-url", OPT_INDEX },
	{ NULL, "--extra-index-url", OPT_EXTRA_INDEX }, { "-f", "--find-links", OPT_FIND_LINKS },
	{ NULL, "--trusted-host", OPT_TRUSTED_HOST }, { NULL, "--no-index", OPT_NO_INDEX },
	{ NULL, "--pre", OPT_FLAG },                { NULL, "--prefer-binary", OPT_FLAG },
	{ NULL, "--only-binary", OPT_FLAG_VALUE },  { NULL, "--no-binary", OPT_FLAG_VALUE },
};

static bool takes_value(opt_kind k)
{
	return k != OPT_NO_INDEX && k != OPT_FLAG;
}

/* Match an option at the start of line; *value gets its argument ("-rX",
 * "-r X", "--requirement=X", "--requirement X"). */
static const opt *match_option(const char *line, char **value)
{
	*value = NULL;
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
		const opt *o = &options[i];
		const char *rest = NULL;
		size_t ln = strlen(o->lng);
		if (strncmp(line, o->lng, ln) == 0 && (!line[ln] || line[ln] == '=' || isspace((unsigned char)line[ln])))
			rest = line + ln;
		else if (o->shrt && strncmp(line, o->shrt, 2) == 0)
			rest = line + 2;
		if (!rest)
			continue;
		if (!takes_value(o->kind))
			return *rest ? NULL : o;
		if (*rest == '=')
			rest++;
		while (isspace((unsigned char)*rest))
			rest++;
		*value = xstrdup(rest);
		return o;
	}
	return NULL;
}

static pw_err *parse_file(parse *ps, const char *dir, const char *name, pw_reqs *into, bool constraints);

static pw_err *editable(parse *ps, const char *where, const char *value)
{
	if (is_vcs(value) || is_remote(value))
		return refuse(where, _("clone it into the workspace and pass the local folder"),
			      _("editable installs of remote or VCS URLs are refused"), value);
	char *abs = NULL;
	pw_err *e = local_target(ps->io, where, value, &abs);
	if (!e)
		push(&ps->out->lines, &ps->out->nlines, xasprintf("-e %s", abs));
	free(abs);
	return e;
}

static pw_err *apply_option(parse *ps, const char *where, const char *dir, const opt *o, char *value)
{
	pw_reqs *r = ps->out;
	if (takes_value(o->kind) && (!value || !*value))
		return refuse(where, NULL, _("an option without its value"), o->lng);
	for (const char *p = value; p && *p; p++)
		if (isspace((unsigned char)*p) && o->kind != OPT_EDITABLE)
			return refuse(where, NULL, _("one value per option"), value);
	switch (o->kind) {
	case OPT_REQUIREMENT:
	case OPT_CONSTRAINT:
		return parse_file(ps, dir, value, r, o->kind == OPT_CONSTRAINT);
	case OPT_EDITABLE:
		return editable(ps, where, value);
	case OPT_INDEX:
		free(r->index_url);
		r->index_url = xstrdup(value);
		return NULL;
	case OPT_EXTRA_INDEX:
		push(&r->extra_index, &r->nextra, xstrdup(value));
		return NULL;
	case OPT_FIND_LINKS: {
		char *abs = NULL;
		pw_err *e = is_remote(value) ? NULL : local_target(ps->io, where, value, &abs);
		if (!e)
			push(&r->find_links, &r->nfind, abs ? abs : xstrdup(value));
		return e;
	}
	case OPT_TRUSTED_HOST:
		push(&r->trusted_hosts, &r->ntrusted, xstrdup(value));
		return NULL;
	case OPT_NO_INDEX:
		r->no_index = true;
		return NULL;
	case OPT_FLAG:
		push(&r->pip_flags, &r->nflags, xstrdup(o->lng));
		return NULL;
	case OPT_FLAG_VALUE:
		push(&r->pip_flags, &r->nflags, xasprintf("%s=%s", o->lng, value));
		return NULL;
	}
	return NULL;
}

/* ---------------------------------------------------------------- lines */

/* pip's comment rule: '#' at the start or after white space ends the line. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
}

static pw_err *one_line(parse *ps, const char *where, const char *dir, char *line, bool constraints)
{
	strip_comment(line);
	trim(line);
	if (!*line)
		return NULL;
	pw_reqs *r = ps->out;
	if (r->nlines + r->nconstraints >= MAX_LINES)
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s: more than %d requirements"), where, MAX_LINES);
	if (line[0] == '-' && strncmp(line, "--hash", 6) != 0) {
		char *value = NULL;
		const opt *o = match_option(line, &value);
		pw_err *e = o ? apply_option(ps, where, dir, o, value)
			      : refuse(where, _("pyward passes on only the options its manual lists"),
				       _("an option pyward does not pass on"), line);
		free(value);
		return e;
	}
	char *fixed = NULL;
	pw_err *e = check_requirement(ps->io, where, line, &fixed, &r->project);
	if (!e) {
		if (constraints)
			push(&r->constraints, &r->nconstraints, fixed);
		else
			push(&r->lines, &r->nlines, fixed);
	}
	return e;
}

/* Lines of text with continuations joined (a line ending in '\'). */
static pw_err *each_line(parse *ps, const char *name, const char *dir, const char *text, bool constraints)
{
	pw_err *e = NULL;
	unsigned lineno = 0, first = 0;
	char *acc = NULL;
	size_t alen = 0;
	for (const char *p = text; !e && *p;) {
		size_t n = strcspn(p, "\n");
		lineno++;
		if (!acc)
			first = lineno;
		acc = xrealloc(acc, alen + n + 1);
		memcpy(acc + alen, p, n);
		alen += n;
		acc[alen] = '\0';
		p += n;
		if (*p == '\n')
			p++;
		if (alen && acc[alen - 1] == '\r')
			acc[--alen] = '\0';
		if (alen && acc[alen - 1] == '\\' && *p) {
			acc[--alen] = '\0';
			continue;
		}
		char *where = xasprintf("%s:%u", name, first);
		e = one_line(ps, where, dir, acc, constraints);
		free(where);
		free(acc);
		acc = NULL;
		alen = 0;
	}
	if (!e && acc) {
		char *where = xasprintf("%s:%u", name, first);
		e = one_line(ps, where, dir, acc, constraints);
		free(where);
	}
	free(acc);
	return e;
}

static pw_err *parse_text(parse *ps, const char *name, const char *dir, const char *text, bool constraints)
{
	if (ps->depth > MAX_DEPTH)
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s: requirement files nest deeper than %d"), name, MAX_DEPTH);
	ps->depth++;
	pw_err *e = each_line(ps, name, dir, text, constraints);
	ps->depth--;
	return e;
}

static char *dir_of(const char *abs)
{
	const char *slash = strrchr(abs, '/');
	return slash && slash != abs ? xstrndup(abs, (size_t)(slash - abs)) : xstrdup("/");
}

/* An included file; one named again is read once. */
static pw_err *parse_file(parse *ps, const char *dir, const char *name, pw_reqs *into, bool constraints)
{
	(void)into;
	if (is_remote(name) || starts_with_ci(name, "file:"))
		return pw_err_new(PW_ERR_REFUSED, _("copy the file into the workspace"),
				  _("a requirements file must be a local file, not %s"), name);
	char *abs = NULL, *text = NULL;
	pw_err *e = ps->io->open(ps->io->ud, dir, name, &abs, &text);
	if (e)
		return e;
	bool seen = false;
	for (size_t i = 0; i < ps->nseen; i++)
		seen = seen || strcmp(ps->seen[i], abs) == 0;
	if (!seen && ps->nseen >= MAX_FILES)
		e = pw_err_new(PW_ERR_USAGE, NULL, _("more than %d requirement files"), MAX_FILES);
	if (!e && !seen) {
		ps->seen[ps->nseen++] = xstrdup(abs);
		char *sub = dir_of(abs);
		e = parse_text(ps, abs, sub, text, constraints);
		free(sub);
	}
	free(abs);
	free(text);
	return e;
}

pw_err *pw_reqs_parse_text(const pw_reqs_io *io, const char *name, const char *dir, const char *text,
			   pw_reqs *out)
{
	parse ps = { .io = io, .out = out };
	ps.seen[ps.nseen++] = xstrdup(name);
	pw_err *e = parse_text(&ps, name, dir, text, false);
	for (size_t i = 0; i < ps.nseen; i++)
		free(ps.seen[i]);
	return e;
}

/* ---------------------------------------------------------------- the guard's reader */

static pw_err *guard_local(void *ud, const char *path, char **abs)
{
	return pw_guard_resolve(ud, path, abs);
}

static char *read_limited(const char *path, pw_err **e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_BYTES) {
		*e = fd >= 0 && !S_ISREG(st.st_mode) ? pw_err_new(PW_ERR_USAGE, NULL, _("%s is not a regular file"), path)
		     : fd >= 0 ? pw_err_new(PW_ERR_USAGE, NULL, _("%s is larger than %d bytes"), path, MAX_FILE_BYTES)
			       : pw_err_errno(PW_ERR_USAGE, errno, NULL, _("requirements file %s"), path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t len = 0;
	ssize_t n;
	while (len < (size_t)st.st_size && (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		free(buf);
		*e = pw_err_new(PW_ERR_USAGE, NULL, _("%s holds a NUL byte: not a requirements file"), path);
		return NULL;
	}
	return buf;
}

/* A nested name is relative to the including file's folder, then confined. */
static pw_err *guard_open(void *ud, const char *dir, const char *name, char **abs, char **text)
{
	char *joined = name[0] == '/' || !dir ? xstrdup(name) : xasprintf("%s/%s", dir, name);
	pw_err *e = pw_guard_resolve(ud, joined, abs);
	free(joined);
	if (!e)
		*text = read_limited(*abs, &e);
	if (e) {
		free(*abs);
		*abs = NULL;
	}
	return e;
}

pw_err *pw_reqs_parse_file(const pw_guard *g, const char *path, pw_reqs *out)
{
	pw_reqs_io io = { guard_open, guard_local, (void *)(uintptr_t)g };
	parse ps = { .io = &io, .out = out };
	pw_err *e = parse_file(&ps, NULL, path, out, false);
	for (size_t i = 0; i < ps.nseen; i++)
		free(ps.seen[i]);
	return e;
}

pw_err *pw_reqs_check_spec(const pw_guard *g, const char *spec, char **line)
{
	pw_reqs_io io = { guard_open, guard_local, (void *)(uintptr_t)g };
	char *where = xasprintf(_("package spec '%s'"), spec);
	pw_err *e = check_requirement(&io, where, spec, line, NULL);
	free(where);
	return e;
}
