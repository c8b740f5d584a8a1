/* Installed distributions from *.dist-info folders, read relative to
 * site-packages: per distribution the head of METADATA (one read, and its
 * fstat for the reinstall stamp), the INSTALLER line and direct_url.json
 * when present. Three opens, three reads, three closes and one fstat each,
 * one buffer for every file, and the strings in chunks the set owns. */
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
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

/* METADATA's headers come first; a header block longer than this is not
 * one pip wrote, and the distribution is skipped. */
#define METADATA_HEAD_MAX (256 * 1024)
#define SMALL_FILE_MAX (64 * 1024)
#define FIELD_MAX 512
/* A file's first READ_BUF bytes come in one read(2) into the reader's
 * buffer; only a longer direct_url.json reads on. METADATA's first read is
 * METADATA_FIRST bytes: pip writes Name and Version on its second and third
 * lines, and the description after the headers can be long (copying it out
 * of the page cache was a tenth of the time). */
#define READ_BUF (16 * 1024)
#define METADATA_FIRST 2048
#define ARENA_CHUNK (16 * 1024)

/* ---------------------------------------------------------------- strings */

/* The strings of a set live in chunks it owns: one allocation per 16 KiB,
 * not six per distribution. */
typedef struct pw_distinfo_strings {
	struct pw_distinfo_strings *next;
	size_t used, cap;
	char data[];
} arena;

static char *arena_strndup(arena **a, const char *s, size_t n)
{
	arena *c = *a;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
		arena *fresh = xmalloc(sizeof *fresh + cap);
		fresh->next = c;
		fresh->used = 0;
		fresh->cap = cap;
		*a = c = fresh;
	}
	char *out = c->data + c->used;
	memcpy(out, s, n);
	out[n] = '\0';
	c->used += n + 1;
	return out;
}

static void arena_free(arena *c)
{
	while (c) {
		arena *next = c->next;
		free(c);
		c = next;
	}
}

static char *trimmed(arena **a, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n && n < FIELD_MAX ? arena_strndup(a, s, n) : NULL;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n > t && memcmp(s + n - t, tail, t) == 0;
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

/* ---------------------------------------------------------------- opening */

typedef struct reader {
	int site;                  /* site-packages: every path is opened from it */
	arena **strings;
	char path[NAME_MAX + 32];  /* "NAME.dist-info/FILE" */
	size_t base;               /* the length of "NAME.dist-info/" */
	char buf[READ_BUF + 1];
} reader;

/* Set once the kernel turned openat2 down (older than 5.6, or a seccomp
 * filter): then the folder is opened first and the file from it. */
static atomic_int no_openat2;

static int open_from_folder(const reader *r)
{
	char dir[NAME_MAX + 1];
	if (r->base < 2 || r->base > sizeof dir)
		return -1;
	memcpy(dir, r->path, r->base - 1);
	dir[r->base - 1] = '\0';
	int d = openat(r->site, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (d < 0)
		return -1;
	int fd = openat(d, r->path + r->base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int err = errno;
	close(d);
	errno = err;
	return fd;
}

/* The dist-info folder's file, in one openat2 that refuses a symlink
 * anywhere in the path (a symlinked dist-info folder too). O_NONBLOCK: a
 * FIFO planted under a file's name reads as empty instead of hanging. */
static int open_file(reader *r, const char *file)
{
	size_t n = strlen(file);
	if (r->base + n >= sizeof r->path)
		return -1;
	memcpy(r->path + r->base, file, n + 1);
#ifdef SYS_openat2
	if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
		struct open_how how = {
			.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
		};
		long fd = syscall(SYS_openat2, r->site, r->path, &how, sizeof how);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return (int)fd;
		atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
	}
#endif
	return open_from_folder(r);
}

/* Up to max bytes of fd into r->buf; the count (0 at an error). */
static size_t read_into(int fd, char *buf, size_t max)
{
	ssize_t n;
	do
		n = read(fd, buf, max);
	while (n < 0 && errno == EINTR);
	return n > 0 ? (size_t)n : 0;
}

/* ---------------------------------------------------------------- the files */

/* Name and Version from the lines of buf[0..len) that are complete; true
 * once both are found or the header block ended (an empty line). */
static bool scan_headers(arena **a, const char *buf, size_t len, pw_dist *d)
{
	for (const char *line = buf; line < buf + len;) {
		const char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl)
			return false; /* a line not yet read whole */
		size_t n = (size_t)(nl - line);
		if (n == 0 || (n == 1 && line[0] == '\r'))
			return true;
		if (!d->name && n > 5 && strncasecmp(line, "Name:", 5) == 0)
			d->name = trimmed(a, line + 5, n - 5);
		else if (!d->version && n > 8 && strncasecmp(line, "Version:", 8) == 0)
			d->version = trimmed(a, line + 8, n - 8);
		if (d->name && d->version)
			return true;
		line = nl + 1;
	}
	return false;
}

/* The rest of a header block whose Name or Version is not in the first
 * read, read on into the heap (rare: pip writes them first). */
static void read_long_head(reader *r, int fd, pw_dist *d)
{
	size_t cap = READ_BUF, n = METADATA_FIRST;
	char *buf = xmalloc(cap + 1);
	memcpy(buf, r->buf, n);
	for (;;) {
		if (n == cap) {
			if (cap >= METADATA_HEAD_MAX)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		size_t want = cap - n, got = read_into(fd, buf + n, want);
		n += got;
		/* names found on an earlier pass are kept: scan only for what is missing */
		if (got && scan_headers(r->strings, buf, n, d))
			break;
		if (got < want) { /* the end of the file (a short read of a regular file) */
			buf[n] = '\n'; /* a last line without its newline */
			scan_headers(r->strings, buf, n + 1, d);
			break;
		}
	}
	free(buf);
}

static int64_t stamp_of(const struct stat *sb)
{
	return (int64_t)sb->st_ino * 1000003 + (int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
}

/* Name and Version from METADATA's header block (ends at the first empty
 * line), and the reinstall stamp from its inode and change time: pip writes
 * a new METADATA when it installs a distribution again. */
static void read_metadata(reader *r, pw_dist *d)
{
	int fd = open_file(r, "METADATA");
	if (fd < 0)
		return;
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return;
	}
	d->stamp = stamp_of(&sb);
	size_t n = read_into(fd, r->buf, METADATA_FIRST);
	if (!scan_headers(r->strings, r->buf, n, d)) {
		if (n == METADATA_FIRST) {
			read_long_head(r, fd, d);
		} else {
			r->buf[n] = '\n'; /* the whole file: a last line without its newline */
			scan_headers(r->strings, r->buf, n + 1, d);
		}
	}
	close(fd);
}

static char *read_installer(reader *r)
{
	int fd = open_file(r, "INSTALLER");
	if (fd < 0)
		return NULL;
	size_t n = read_into(fd, r->buf, FIELD_MAX);
	close(fd);
	const char *nl = memchr(r->buf, '\n', n);
	return trimmed(r->strings, r->buf, nl ? (size_t)(nl - r->buf) : n);
}

/* PEP 610: {"url": ..., "dir_info": {"editable": true}} or vcs_info/archive_info. */
static char *read_direct_url(reader *r)
{
	int fd = open_file(r, "direct_url.json");
	if (fd < 0)
		return NULL;
	char *heap = NULL, *text = r->buf;
	size_t len = read_into(fd, r->buf, READ_BUF);
	if (len == READ_BUF) { /* longer than any pip writes, but allowed up to SMALL_FILE_MAX */
		heap = xmalloc(SMALL_FILE_MAX);
		memcpy(heap, r->buf, len);
		for (size_t got = 1; got && len < SMALL_FILE_MAX; len += got)
			got = read_into(fd, heap + len, SMALL_FILE_MAX - len);
		text = heap;
	}
	close(fd);
	json_t *j = json_loadb(text, len, 0, NULL);
	free(heap);
	const char *url = json_string_value(json_object_get(j, "url"));
	char *out = NULL;
	if (url && strlen(url) < 4096) {
		json_t *vcs = json_object_get(j, "vcs_info");
		const char *commit = json_string_value(json_object_get(vcs, "commit_id"));
		const char *tool = json_string_value(json_object_get(vcs, "vcs"));
		bool editable = json_is_true(json_object_get(json_object_get(j, "dir_info"), "editable"));
		char *s = vcs && tool && commit ? xasprintf("%s+%s@%s", tool, url, commit)
						: xasprintf("%s%s", editable ? "editable " : "", url);
		out = arena_strndup(r->strings, s, strlen(s));
		free(s);
	}
	json_decref(j);
	return out;
}

/* One *.dist-info folder (name[0..n), r->path set to "NAME/"); false when
 * it names no distribution. */
static bool read_dist(reader *r, const char *name, size_t n, pw_dist *d)
{
	memset(d, 0, sizeof *d);
	read_metadata(r, d);
	if (!d->name || !d->version)
		return false; /* what it put in the arena goes with the set */
	d->installer = read_installer(r);
	d->source = read_direct_url(r);
	size_t nn = strlen(d->name);
	d->key = arena_strndup(r->strings, d->name, nn); /* the room; the key is never longer */
	pw_pkgname_key_to(d->name, nn, d->key);
	d->info_dir = arena_strndup(r->strings, name, n);
	return true;
}

static int by_key(const void *a, const void *b)
{
	const pw_dist *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : strcmp(x->info_dir, y->info_dir);
}

/* ---------------------------------------------------------------- reading again */

static int by_info_dir(const void *a, const void *b)
{
	const pw_dist *const *x = a, *const *y = b;
	return strcmp((*x)->info_dir, (*y)->info_dir);
}

/* prev's distributions by folder name, for a read after an operation. */
typedef struct earlier {
	const pw_dist **by_dir;
	size_t count;
} earlier;

static const pw_dist *earlier_find(const earlier *e, const char *info_dir)
{
	size_t lo = 0, hi = e->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(e->by_dir[mid]->info_dir, info_dir);
		if (c == 0)
			return e->by_dir[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static char *arena_dup0(arena **a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

/* The folder was read before and its METADATA is the same file, unchanged
 * (same inode and change time: pip writes a new one whenever it installs):
 * take what was read then, for one fstatat instead of three opens. */
static bool same_as_before(reader *r, const earlier *e, const char *name, size_t n, pw_dist *d)
{
	const pw_dist *p = e ? earlier_find(e, name) : NULL;
	struct stat sb;
	if (!p || r->base + sizeof "METADATA" > sizeof r->path)
		return false;
	memcpy(r->path + r->base, "METADATA", sizeof "METADATA");
	if (fstatat(r->site, r->path, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) || stamp_of(&sb) != p->stamp)
		return false;
	*d = (pw_dist){
		.name = arena_dup0(r->strings, p->name), .key = arena_dup0(r->strings, p->key),
		.version = arena_dup0(r->strings, p->version), .installer = arena_dup0(r->strings, p->installer),
		.source = arena_dup0(r->strings, p->source), .info_dir = arena_strndup(r->strings, name, n),
		.stamp = p->stamp,
	};
	return true;
}

static pw_err *read_site(const char *site, const pw_distset *prev, pw_distset *out)
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
	reader *r = xmalloc(sizeof *r);
	r->site = dirfd(d);
	r->strings = &out->strings;
	earlier before = { 0 }, *e = NULL;
	if (prev && prev->count) {
		before.by_dir = xmalloc(prev->count * sizeof *before.by_dir);
		for (size_t i = 0; i < prev->count; i++)
			before.by_dir[i] = &prev->items[i];
		before.count = prev->count;
		qsort(before.by_dir, before.count, sizeof *before.by_dir, by_info_dir);
		e = &before;
	}
	size_t cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		size_t n = strlen(de->d_name);
		/* a folder, or a file system that does not say (the open refuses a symlink) */
		if (!ends_with(de->d_name, n, ".dist-info") || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (out->count == cap) {
			cap = cap ? 2 * cap : 64;
			out->items = xrealloc(out->items, cap * sizeof *out->items);
		}
		if (n + 1 > NAME_MAX + 1)
			continue;
		memcpy(r->path, de->d_name, n);
		r->path[n] = '/';
		r->base = n + 1;
		pw_dist *item = &out->items[out->count];
		if (same_as_before(r, e, de->d_name, n, item) || read_dist(r, de->d_name, n, item))
			out->count++;
	}
	free(before.by_dir);
	free(r);
	closedir(d);
	if (out->count > 1)
		qsort(out->items, out->count, sizeof *out->items, by_key);
	out->site = xstrdup(site);
	return NULL;
}

pw_err *pw_distinfo_read_site(const char *site, pw_distset *out)
{
	return read_site(site, NULL, out);
}

pw_err *pw_distinfo_reread(const char *env, const pw_distset *prev, pw_distset *out)
{
	char *site = NULL;
	pw_err *e = pw_distinfo_site(env, &site);
	if (e && pw_err_code(e) == PW_ERR_NOTFOUND) {
		pw_err_free(e);
		memset(out, 0, sizeof *out);
		return NULL;
	}
	if (!e)
		e = read_site(site, prev && prev->site && strcmp(prev->site, site) == 0 ? prev : NULL, out);
	free(site);
	return e;
}

pw_err *pw_distinfo_read(const char *env, pw_distset *out)
{
	return pw_distinfo_reread(env, NULL, out);
}

void pw_distset_clear(pw_distset *s)
{
	if (!s)
		return;
	arena_free(s->strings);
	free(s->items);
	free(s->site);
	memset(s, 0, sizeof *s);
}

const pw_dist *pw_distset_find(const pw_distset *s, const char *name)
{
	char small[256], *key = small;
	size_t n = strlen(name);
	if (n >= sizeof small)
		key = xmalloc(n + 1);
	pw_pkgname_key_to(name, n, key);
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
	if (key != small)
		free(key);
	return found;
}
