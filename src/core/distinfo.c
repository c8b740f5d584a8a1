/* Installed distributions from *.dist-info folders, read with openat(2)
 * relative to site-packages: per distribution the head of METADATA, the
 * INSTALLER line, direct_url.json when present and one fstatat of RECORD. */
#include "config.h"

#include "distinfo.h"

#include "i18n.h"
#include "pkgname.h"
#include "xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* METADATA's headers come first; a header block longer than this is not
 * one pip wrote, and the distribution is skipped. */
#define METADATA_HEAD_MAX (256 * 1024)
#define SMALL_FILE_MAX (64 * 1024)
#define FIELD_MAX 512

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n > t && strcmp(s + n - t, tail) == 0;
}

pw_err *pw_distinfo_site(const char *env, char **site)
{
	*site = NULL;
	char *lib = xasprintf("%s/lib", env);
	DIR *d = opendir(lib);
	struct stat sb;
	for (struct dirent *de; d && !*site && (de = readdir(d));) {
		if (strncmp(de->d_name, "python", 6) != 0 && strncmp(de->d_name, "pypy", 4) != 0)
			continue;
		char *s = xasprintf("%s/%s/site-packages", lib, de->d_name);
		if (stat(s, &sb) == 0 && S_ISDIR(sb.st_mode))
			*site = s;
		else
			free(s);
	}
	if (d)
		closedir(d);
	free(lib);
	if (*site)
		return NULL;
	return pw_err_new(PW_ERR_NOTFOUND, NULL, _("%s has no site-packages folder"), env);
}

/* Read at most max bytes of dir/name; NULL when it cannot be opened. */
static char *read_small(int dir, const char *name, size_t max, size_t *len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		size_t want = cap - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		/* a regular file comes up short only at its end: spare the read that says so */
		if ((size_t)r < want)
			break;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n && n < FIELD_MAX ? xstrndup(s, n) : NULL;
}

/* Name and Version from the lines of buf[0..len) that are complete; true
 * once both are found or the header block ended (an empty line). */
static bool scan_headers(const char *buf, size_t len, pw_dist *d)
{
	for (const char *line = buf; line < buf + len;) {
		const char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl)
			return false; /* a line not yet read whole */
		size_t n = (size_t)(nl - line);
		if (n == 0 || (n == 1 && line[0] == '\r'))
			return true;
		if (!d->name && n > 5 && strncasecmp(line, "Name:", 5) == 0)
			d->name = trimmed(line + 5, n - 5);
		else if (!d->version && n > 8 && strncasecmp(line, "Version:", 8) == 0)
			d->version = trimmed(line + 8, n - 8);
		if (d->name && d->version)
			return true;
		line = nl + 1;
	}
	return false;
}

/* Name and Version from METADATA's header block (ends at the first empty
 * line). Read a few KiB at a time until both are found: they come first,
 * and the description after the headers can be long. */
static void read_metadata(int dir, pw_dist *d)
{
	int fd = openat(dir, "METADATA", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= METADATA_HEAD_MAX)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		size_t want = cap - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)
			n += (size_t)r;
		/* names found on an earlier pass are kept: scan only for what is missing */
		if (r > 0 && scan_headers(buf, n, d))
			break;
		if (r <= 0 || (size_t)r < want) { /* the end of the file (a short read of a regular file) */
			buf[n] = '\n'; /* a last line without its newline */
			scan_headers(buf, n + 1, d);
			break;
		}
	}
	close(fd);
	free(buf);
}

static char *read_installer(int dir)
{
	size_t len = 0;
	char *buf = read_small(dir, "INSTALLER", FIELD_MAX, &len);
	if (!buf)
		return NULL;
	char *nl = strchr(buf, '\n');
	char *v = trimmed(buf, nl ? (size_t)(nl - buf) : len);
	free(buf);
	return v;
}

/* PEP 610: {"url": ..., "dir_info": {"editable": true}} or vcs_info/archive_info. */
static char *read_direct_url(int dir)
{
	size_t len = 0;
	char *buf = read_small(dir, "direct_url.json", SMALL_FILE_MAX, &len);
	if (!buf)
		return NULL;
	json_t *j = json_loadb(buf, len, 0, NULL);
	free(buf);
	const char *url = json_string_value(json_object_get(j, "url"));
	char *out = NULL;
	if (url && strlen(url) < 4096) {
		json_t *vcs = json_object_get(j, "vcs_info");
		const char *commit = json_string_value(json_object_get(vcs, "commit_id"));
		const char *tool = json_string_value(json_object_get(vcs, "vcs"));
		bool editable = json_is_true(json_object_get(json_object_get(j, "dir_info"), "editable"));
		if (vcs && tool && commit)
			out = xasprintf("%s+%s@%s", tool, url, commit);
		else
			out = xasprintf("%s%s", editable ? "editable " : "", url);
	}
	json_decref(j);
	return out;
}

static void dist_clear(pw_dist *d)
{
	free(d->name);
	free(d->key);
	free(d->version);
	free(d->installer);
	free(d->source);
	free(d->info_dir);
	memset(d, 0, sizeof *d);
}

/* One *.dist-info folder; false when it names no distribution. */
static bool read_dist(int site, const char *info, pw_dist *d)
{
	memset(d, 0, sizeof *d);
	int dir = openat(site, info, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dir < 0)
		return false;
	read_metadata(dir, d);
	if (!d->name || !d->version) {
		close(dir);
		dist_clear(d);
		return false;
	}
	d->installer = read_installer(dir);
	d->source = read_direct_url(dir);
	struct stat sb;
	if (fstatat(dir, "RECORD", &sb, AT_SYMLINK_NOFOLLOW) == 0)
		d->stamp = (int64_t)sb.st_ino * 1000003 + (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
	close(dir);
	d->key = pw_pkgname_key(d->name);
	d->info_dir = xstrdup(info);
	return true;
}

static int by_key(const void *a, const void *b)
{
	const pw_dist *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : strcmp(x->info_dir, y->info_dir);
}

pw_err *pw_distinfo_read_site(const char *site, pw_distset *out)
{
	memset(out, 0, sizeof *out);
	int fd = open(site, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("reading %s"), site);
	DIR *d = fdopendir(fd);
	if (!d) {
		int err = errno;
		close(fd);
		return pw_err_errno(PW_ERR_IO, err, NULL, _("reading %s"), site);
	}
	size_t cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (!ends_with(de->d_name, ".dist-info"))
			continue;
		if (out->count == cap) {
			cap = cap ? 2 * cap : 64;
			out->items = xrealloc(out->items, cap * sizeof *out->items);
		}
		if (read_dist(dirfd(d), de->d_name, &out->items[out->count]))
			out->count++;
	}
	closedir(d);
	if (out->count > 1)
		qsort(out->items, out->count, sizeof *out->items, by_key);
	out->site = xstrdup(site);
	return NULL;
}

pw_err *pw_distinfo_read(const char *env, pw_distset *out)
{
	char *site = NULL;
	pw_err *e = pw_distinfo_site(env, &site);
	if (e && pw_err_code(e) == PW_ERR_NOTFOUND) {
		pw_err_free(e);
		memset(out, 0, sizeof *out);
		return NULL;
	}
	if (!e)
		e = pw_distinfo_read_site(site, out);
	free(site);
	return e;
}

void pw_distset_clear(pw_distset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		dist_clear(&s->items[i]);
	free(s->items);
	free(s->site);
	memset(s, 0, sizeof *s);
}

const pw_dist *pw_distset_find(const pw_distset *s, const char *name)
{
	char *key = pw_pkgname_key(name);
	size_t lo = 0, hi = s->count;
	const pw_dist *found = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->items[mid].key, key);
		if (c == 0) {
			found = &s->items[mid];
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	free(key);
	return found;
}
