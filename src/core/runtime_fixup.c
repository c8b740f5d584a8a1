/*
 * Upstream traits fixed after unpacking: see runtime_fixup.h.
 */
#include "config.h"

#include "runtime_fixup.h"
#include "digest.h"
#include "i18n.h"
#include "treefile.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sysconfig data and the Makefile are tens of kilobytes; anything far
 * larger is not what upstream ships. */
#define FIXUP_MAX_BYTES (8 << 20)

/* PEP 668: pip shows Error's text and refuses. Kept in English on purpose:
 * pip prints it to whoever runs it, in whatever locale, and the file is
 * part of the install (its hash is in the manifest). */
static const char externally_managed[] =
	"[externally-managed]\n"
	"Error=This Python is pyward's managed runtime, shared by the users of this\n"
	" machine: pip does not install into it directly, so that the runtime stays\n"
	" what `pyward runtime verify` checks.\n"
	" To add packages to the runtime itself, list them in a requirements file and run:\n"
	"     pyward runtime baseline --requirements FILE\n"
	" For a project of your own, make a virtual environment and install there:\n"
	"     pyward venv create && pyward venv install PACKAGE\n";

const char *pw_runtime_fixup_externally_managed(void)
{
	return externally_managed;
}

static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '.' || c == '/' || c == '+';
}

char *pw_runtime_fixup_replace_prefix(const char *text, const char *prefix, const char *real, size_t *n)
{
	size_t plen = strlen(prefix), rlen = strlen(real), len = strlen(text);
	*n = 0;
	/* worst case: every byte starts a replacement */
	size_t cap = len + 1 + (rlen > plen ? (len / plen + 1) * (rlen - plen) : 0);
	char *out = xmalloc(cap), *o = out;
	for (const char *p = text; *p;) {
		bool start = p == text || !path_char(p[-1]);
		if (start && strncmp(p, prefix, plen) == 0 && (p[plen] == '/' || !path_char(p[plen]))) {
			memcpy(o, real, rlen);
			o += rlen;
			p += plen;
			(*n)++;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* Put rel (as now written from data) into the manifest. */
static void manifest_set(pw_manifest *m, const char *rel, const char *data, size_t len, mode_t mode)
{
	if (!m)
		return;
	pw_manifest_entry *f = NULL;
	for (size_t i = 0; i < m->count && !f; i++)
		if (strcmp(m->items[i].path, rel) == 0)
			f = &m->items[i];
	if (!f) {
		m->items = xrealloc(m->items, (m->count + 1) * sizeof *m->items);
		f = &m->items[m->count++];
		memset(f, 0, sizeof *f);
		f->path = xstrdup(rel);
	} else {
		m->total_bytes -= f->size;
	}
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, data, len);
	pw_sha256_final_hex(h, f->sha256);
	pw_sha256_free(&h);
	f->size = (int64_t)len;
	f->mode = S_IFREG | mode;
	m->total_bytes += f->size;
}

/* Rewrite one file's build prefix in place (a fresh file renamed over it). */
static pw_err *rewrite(const char *root, const char *rel, pw_manifest *m, pw_runtime_fixup_result *r)
{
	char *text = NULL;
	size_t len = 0, n = 0;
	pw_err *e = pw_treefile_read(root, rel, FIXUP_MAX_BYTES, &text, &len);
	if (e)
		return e;
	char *out = strlen(text) == len ? pw_runtime_fixup_replace_prefix(text, PW_RUNTIME_BUILD_PREFIX, root, &n) : NULL;
	if (n > 0) {
		e = pw_treefile_replace(root, rel, out, strlen(out));
		struct stat st;
		char *full = xasprintf("%s/%s", root, rel);
		mode_t mode = lstat(full, &st) == 0 ? st.st_mode & 07777 : 0644;
		free(full);
		if (!e) {
			manifest_set(m, rel, out, strlen(out), mode);
			r->rewritten++;
			r->replacements += n;
		}
	}
	free(out);
	free(text);
	return e;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Names in root/rel that are real directories (want_dir) or regular files
 * matching the test; links are never taken. */
static char **list(const char *root, const char *rel, bool want_dir, bool (*match)(const char *), size_t *count)
{
	char *dir = xasprintf("%s/%s", root, rel);
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		struct stat st;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		bool kind = lstat(p, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
		free(p);
		if (!kind || !match(de->d_name))
			continue;
		v = xrealloc(v, (n + 2) * sizeof *v);
		v[n++] = xstrdup(de->d_name);
		v[n] = NULL;
	}
	if (d)
		closedir(d);
	free(dir);
	*count = n;
	return v;
}

static void list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_sysconfigdata(const char *name)
{
	return starts(name, "_sysconfigdata_") && ends(name, ".py");
}

static bool is_config_dir(const char *name)
{
	return starts(name, "config-");
}

static pw_err *rewrite_build_prefix(const char *root, const char *stdlib, pw_manifest *m, pw_runtime_fixup_result *r)
{
	size_t n = 0;
	char **files = list(root, stdlib, false, is_sysconfigdata, &n);
	pw_err *e = NULL;
	for (size_t i = 0; i < n && !e; i++) {
		char *rel = xasprintf("%s/%s", stdlib, files[i]);
		e = rewrite(root, rel, m, r);
		free(rel);
	}
	list_free(files, n);
	char **dirs = list(root, stdlib, true, is_config_dir, &n);
	for (size_t i = 0; i < n && !e; i++) {
		char *rel = xasprintf("%s/%s/Makefile", stdlib, dirs[i]);
		e = rewrite(root, rel, m, r);
		if (e && pw_err_code(e) == PW_ERR_NOTFOUND)
			pw_err_clear(&e); /* a config folder without a Makefile */
		free(rel);
	}
	list_free(dirs, n);
	return e;
}

/* Create the PEP 668 file, or replace one the archive brought (a regular
 * file only: treefile refuses a link). */
static pw_err *write_externally_managed(const char *root, const char *stdlib, pw_manifest *m)
{
	char *rel = xasprintf("%s/%s", stdlib, PW_RUNTIME_EXTERNALLY_MANAGED);
	size_t len = strlen(externally_managed);
	pw_err *e = pw_treefile_create(root, rel, externally_managed, len, 0644);
	if (e && pw_err_code(e) == PW_ERR_REFUSED) {
		pw_err_clear(&e);
		e = pw_treefile_replace(root, rel, externally_managed, len);
	}
	if (!e)
		manifest_set(m, rel, externally_managed, len, 0644);
	free(rel);
	return e;
}

pw_err *pw_runtime_fixup(const char *root, const char *version, pw_manifest *m, pw_runtime_fixup_result *r)
{
	pw_runtime_fixup_result ignored;
	r = r ? r : &ignored;
	memset(r, 0, sizeof *r);
	/* "3.12.13" -> "lib/python3.12" */
	const char *dot = version ? strchr(version, '.') : NULL;
	size_t mm = dot ? strcspn(dot + 1, ".") + (size_t)(dot + 1 - version) : 0;
	if (!dot || mm == 0)
		return pw_err_new(PW_ERR_USAGE, NULL, _("not a Python version: %s"), version ? version : "");
	char *stdlib = xasprintf("lib/python%.*s", (int)mm, version);
	char *full = xasprintf("%s/%s", root, stdlib);
	struct stat st;
	pw_err *e = NULL;
	/* No such folder: nothing to fix, and the probe then says which
	 * Python the archive really holds. */
	if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
		e = rewrite_build_prefix(root, stdlib, m, r);
		if (!e)
			e = write_externally_managed(root, stdlib, m);
	}
	free(full);
	free(stdlib);
	return e;
}

static bool is_stdlib_dir(const char *name)
{
	return starts(name, "python3");
}

pw_err *pw_runtime_pep668_aside(const char *root, bool aside)
{
	size_t n = 0;
	char **dirs = list(root, "lib", true, is_stdlib_dir, &n);
	pw_err *e = NULL;
	for (size_t i = 0; i < n && !e; i++) {
		char *on = xasprintf("%s/lib/%s/%s", root, dirs[i], PW_RUNTIME_EXTERNALLY_MANAGED);
		char *off = xasprintf("%s/lib/%s/.%s.pyward-aside", root, dirs[i], PW_RUNTIME_EXTERNALLY_MANAGED);
		const char *from = aside ? on : off, *to = aside ? off : on;
		struct stat st;
		if (lstat(from, &st) == 0 && S_ISREG(st.st_mode) && rename(from, to) != 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot rename %s"), from);
		free(on);
		free(off);
	}
	list_free(dirs, n);
	return e;
}

/* dir holds a compiled entry for term (ncurses' letter or hex layout). */
static bool has_entry(const char *dir, const char *term)
{
	char *a = xasprintf("%s/%c/%s", dir, term[0], term);
	char *b = xasprintf("%s/%02x/%s", dir, (unsigned char)term[0], term);
	bool ok = access(a, R_OK) == 0 || access(b, R_OK) == 0;
	free(a);
	free(b);
	return ok;
}

char *pw_runtime_terminfo_env(const char *root, const char *term)
{
	if (!term || !*term || strchr(term, '/') || strstr(term, ".."))
		return NULL;
	static const char *const system_dirs[] = { "/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo",
						   "/usr/lib/terminfo" };
	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
		if (has_entry(system_dirs[i], term))
			return NULL;
	const char *own = getenv("TERMINFO"), *dirs = getenv("TERMINFO_DIRS");
	if (own && *own && has_entry(own, term))
		return NULL;
	char *copy = xstrdup(dirs ? dirs : "");
	bool found = false;
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save))
		found = has_entry(d, term);
	free(copy);
	char *bundled = xasprintf("%s/share/terminfo", root);
	char *out = NULL;
	if (!found && has_entry(bundled, term))
		out = dirs && *dirs ? xasprintf("TERMINFO_DIRS=%s:%s", bundled, dirs) : xasprintf("TERMINFO_DIRS=%s", bundled);
	free(bundled);
	return out;
}
