/* RECORD checks: hash every listed file, then look for strays in the
 * folders the distributions installed into. */
#include "config.h"

#include "recordcheck.h"

#include "digest.h"
#include "distinfo.h"
#include "i18n.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX (16 * 1024 * 1024)
#define WALK_MAX 200000

/* ---------------------------------------------------------------- RECORD lines */

/* One CSV field at *p (quoted or not); advances past its comma. */
static char *csv_field(const char **p, const char *end)
{
	const char *s = *p;
	char *out = xmalloc((size_t)(end - s) + 1), *o = out;
	if (s < end && *s == '"') {
		for (s++; s < end; s++) {
			if (*s == '"' && s + 1 < end && s[1] == '"')
				*o++ = *s++;
			else if (*s == '"') {
				s++;
				break;
			} else
				*o++ = *s;
		}
		while (s < end && *s != ',')
			s++;
	} else {
		while (s < end && *s != ',')
			*o++ = *s++;
	}
	if (s < end)
		s++;
	*o = '\0';
	*p = s;
	return out;
}

bool pw_record_parse_line(const char *line, size_t len, pw_record_line *out)
{
	memset(out, 0, sizeof *out);
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (len == 0)
		return false;
	const char *p = line, *end = line + len;
	out->path = csv_field(&p, end);
	out->hash = csv_field(&p, end);
	char *size = csv_field(&p, end);
	char *stop = NULL;
	out->size = *size ? strtoll(size, &stop, 10) : -1;
	bool ok = *out->path && (!*size || (stop && !*stop && out->size >= 0)) && !memchr(line, '\0', len);
	free(size);
	if (!ok)
		pw_record_line_clear(out);
	return ok;
}

void pw_record_line_clear(pw_record_line *l)
{
	free(l->path);
	free(l->hash);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- paths */

/* base/rel with "." and ".." worked out on the text; NULL when rel is
 * absolute (RECORD paths are relative to site-packages). */
static char *normalize(const char *base, const char *rel)
{
	if (rel[0] == '/')
		return NULL;
	char *joined = xasprintf("%s/%s", base, rel);
	size_t n = strlen(joined);
	char *out = xmalloc(n + 2);
	size_t o = 0;
	for (char *tok = strtok(joined, "/"); tok; tok = strtok(NULL, "/")) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		size_t t = strlen(tok);
		memcpy(out + o, tok, t);
		o += t;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	free(joined);
	return out;
}

static bool inside(const char *path, const char *root)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && path[n] == '/';
}

static bool is_bytecode_cache(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && strcmp(path + n - 4, ".pyc") == 0 && strstr(path, "/__pycache__/") != NULL;
}

/* ---------------------------------------------------------------- digests */

static void b64url(const unsigned char *in, size_t n, char *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = abc[v >> 6 & 63];
		if (i + 2 < n)
			out[o++] = abc[v & 63];
	}
	out[o] = '\0';
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
}

/* The file's sha256 as RECORD writes it: urlsafe base64, no padding. */
static pw_err *record_digest(const char *path, char out[48], int64_t *size)
{
	char hex[PW_SHA256_HEX_LEN + 1];
	pw_err *e = pw_sha256_file(path, hex, size);
	if (e)
		return e;
	unsigned char raw[32];
	for (int i = 0; i < 32; i++)
		raw[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	b64url(raw, sizeof raw, out);
	return NULL;
}

/* ---------------------------------------------------------------- the report */

typedef struct strset {
	char **items;
	size_t count, cap;
	bool sorted;
} strset;

static void set_add(strset *s, char *owned)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->items = xrealloc(s->items, s->cap * sizeof *s->items);
	}
	s->items[s->count++] = owned;
	s->sorted = false;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool set_has(strset *s, const char *key)
{
	if (!s->sorted && s->count > 1)
		qsort(s->items, s->count, sizeof *s->items, by_str);
	s->sorted = true;
	return s->count && bsearch(&key, s->items, s->count, sizeof *s->items, by_str) != NULL;
}

static void set_clear(strset *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
	memset(s, 0, sizeof *s);
}

static void add_file(pw_rc_dist *d, pw_rc_kind kind, const char *path, const char *flags)
{
	d->files = xrealloc(d->files, (d->count + 1) * sizeof *d->files);
	pw_rc_file *f = &d->files[d->count++];
	f->kind = kind;
	f->path = xstrdup(path);
	snprintf(f->rpm_flags, sizeof f->rpm_flags, "%s", flags ? flags : "?????????");
	switch (kind) {
	case PW_RC_MODIFIED: d->modified++; break;
	case PW_RC_MISSING: d->missing++; break;
	case PW_RC_UNEXPECTED: d->unexpected++; break;
	case PW_RC_UNCHECKED: d->unchecked++; break;
	}
}

/* One listed file against its RECORD line. */
static void check_entry(pw_rc_dist *d, const char *env, const char *abs, const pw_record_line *l)
{
	struct stat st;
	if (!inside(abs, env)) {
		add_file(d, PW_RC_UNCHECKED, abs, NULL);
		return;
	}
	if (lstat(abs, &st) != 0) {
		add_file(d, PW_RC_MISSING, abs, NULL);
		return;
	}
	if (strncmp(l->hash, "sha256=", 7) != 0) {
		add_file(d, PW_RC_UNCHECKED, abs, NULL);
		return;
	}
	d->checked++;
	/* SM5DLUGTP; RECORD knows size and digest, and that it was a file. */
	char flags[10] = "..?.?????";
	if (!S_ISREG(st.st_mode)) {
		flags[1] = 'M';
		flags[2] = '?';
		flags[0] = '?';
		add_file(d, PW_RC_MODIFIED, abs, flags);
		return;
	}
	char digest[48];
	int64_t size = 0;
	pw_err *e = record_digest(abs, digest, &size);
	if (e) { /* unreadable: not checked, and said so */
		pw_err_free(e);
		d->checked--;
		add_file(d, PW_RC_UNCHECKED, abs, NULL);
		return;
	}
	flags[0] = l->size >= 0 && l->size != size ? 'S' : '.';
	flags[2] = strcmp(digest, l->hash + 7) != 0 ? '5' : '.';
	if (flags[0] == 'S' || flags[2] == '5')
		add_file(d, PW_RC_MODIFIED, abs, flags);
}

static pw_err *read_record(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("reading %s"), path);
	size_t cap = 8192, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= RECORD_MAX)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return NULL;
}

/* The folder one level below site-packages that a RECORD path installs
 * into; NULL for files at the top and for paths leading out (scripts). */
static char *top_folder(const char *site, const char *rel)
{
	const char *slash = strchr(rel, '/');
	if (!slash || strncmp(rel, "..", 2) == 0 || strncmp(rel, "./", 2) == 0 || rel[0] == '/')
		return NULL;
	return xasprintf("%s/%.*s", site, (int)(slash - rel), rel);
}

/* Every line of one distribution's RECORD; the folders it installed into go to mine. */
static void check_dist(const char *env, const char *site, const pw_dist *dist, pw_rc_dist *d, strset *recorded,
		       strset *mine)
{
	char *rpath = xasprintf("%s/%s/RECORD", site, dist->info_dir), *text = NULL;
	size_t len = 0;
	pw_err *e = read_record(rpath, &text, &len);
	if (e) {
		pw_err_free(e);
		add_file(d, PW_RC_MISSING, rpath, NULL);
		free(rpath);
		return;
	}
	free(rpath);
	for (const char *line = text; line < text + len;) {
		const char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		pw_record_line l;
		if (pw_record_parse_line(line, n, &l)) {
			char *abs = normalize(site, l.path);
			if (!abs) {
				add_file(d, PW_RC_UNCHECKED, l.path, NULL);
			} else {
				check_entry(d, env, abs, &l);
				set_add(recorded, abs);
				char *dir = top_folder(site, l.path);
				if (dir && !set_has(mine, dir))
					set_add(mine, dir);
				else
					free(dir);
			}
			pw_record_line_clear(&l);
		}
		line += n + 1;
	}
	free(text);
}

/* Files under dir that no RECORD lists. */
static void walk_unexpected(const char *dir, strset *recorded, pw_rc_dist *d, size_t *budget)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	for (struct dirent *de; *budget > 0 && (de = readdir(dh));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		(*budget)--;
		char *path = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk_unexpected(path, recorded, d, budget);
		else if (!set_has(recorded, path) && !is_bytecode_cache(path))
			add_file(d, PW_RC_UNEXPECTED, path, NULL);
		free(path);
	}
	closedir(dh);
}

static int by_file_path(const void *a, const void *b)
{
	return strcmp(((const pw_rc_file *)a)->path, ((const pw_rc_file *)b)->path);
}

static int by_dist_name(const void *a, const void *b)
{
	return strcmp(((const pw_rc_dist *)a)->name, ((const pw_rc_dist *)b)->name);
}

pw_err *pw_record_check(const char *env, pw_rc_report *out)
{
	memset(out, 0, sizeof *out);
	char *site = NULL;
	pw_distset set = { 0 };
	pw_err *e = pw_distinfo_site(env, &site);
	if (!e)
		e = pw_distinfo_read_site(site, &set);
	if (e) {
		free(site);
		return e;
	}
	char *root = normalize(env, "."), *nsite = normalize(site, ".");
	out->site = site;
	out->dists = xcalloc(set.count + 1, sizeof *out->dists);
	out->count = set.count;
	strset recorded = { 0 }, walked = { 0 };
	strset *dirs = xcalloc(set.count + 1, sizeof *dirs);
	for (size_t i = 0; i < set.count; i++) {
		out->dists[i].name = xstrdup(set.items[i].name);
		out->dists[i].version = xstrdup(set.items[i].version);
		check_dist(root, nsite, &set.items[i], &out->dists[i], &recorded, &dirs[i]);
	}
	/* Strays: a folder shared by several distributions (a namespace
	 * package) is walked once, for the first of them. */
	size_t budget = WALK_MAX;
	for (size_t i = 0; i < set.count; i++) {
		for (size_t k = 0; k < dirs[i].count; k++) {
			if (set_has(&walked, dirs[i].items[k]))
				continue;
			set_add(&walked, xstrdup(dirs[i].items[k]));
			walk_unexpected(dirs[i].items[k], &recorded, &out->dists[i], &budget);
		}
		set_clear(&dirs[i]);
	}
	free(dirs);
	for (size_t i = 0; i < out->count; i++) {
		pw_rc_dist *d = &out->dists[i];
		out->checked += d->checked;
		out->modified += d->modified;
		out->missing += d->missing;
		out->unexpected += d->unexpected;
		out->unchecked += d->unchecked;
		if (d->count > 1)
			qsort(d->files, d->count, sizeof *d->files, by_file_path);
	}
	if (out->count > 1)
		qsort(out->dists, out->count, sizeof *out->dists, by_dist_name);
	set_clear(&recorded);
	set_clear(&walked);
	pw_distset_clear(&set);
	free(nsite);
	free(root);
	return NULL;
}

void pw_rc_report_clear(pw_rc_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->count; i++) {
		pw_rc_dist *d = &r->dists[i];
		for (size_t k = 0; k < d->count; k++)
			free(d->files[k].path);
		free(d->files);
		free(d->name);
		free(d->version);
	}
	free(r->dists);
	free(r->site);
	memset(r, 0, sizeof *r);
}

const char *pw_rc_kind_name(pw_rc_kind k)
{
	switch (k) {
	case PW_RC_MODIFIED: return "modified";
	case PW_RC_MISSING: return "missing";
	case PW_RC_UNEXPECTED: return "unexpected";
	case PW_RC_UNCHECKED: return "unchecked";
	}
	return "modified";
}
