/*
 * File manifests. The walk opens directories one level at a time and
 * lstat()s every name, so a symlink is recorded as a link (its target text
 * hashed) and never followed; only the root itself is allowed to be a link,
 * because the caller chose it. Directories are not listed: their existence
 * follows from the files, and their modes are not what rpm -V style
 * checks care about.
 */
#include "config.h"

#include "manifest.h"
#include "digest.h"
#include "i18n.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct walk {
	const char *root;
	pw_manifest *m;
	size_t cap;
};

static void push(struct walk *w, const pw_manifest_entry *item)
{
	pw_manifest *m = w->m;
	if (m->count == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		m->items = xrealloc(m->items, w->cap * sizeof *m->items);
	}
	m->items[m->count++] = *item;
}

static void hash_text(const char *text, size_t len, char hex[PW_SHA256_HEX_LEN + 1])
{
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, text, len);
	pw_sha256_final_hex(h, hex);
	pw_sha256_free(&h);
}

static pw_err *record_link(const char *full, const struct stat *st, pw_manifest_entry *it)
{
	size_t cap = (size_t)(st->st_size > 0 ? st->st_size : 255) + 1;
	char *target = xmalloc(cap);
	ssize_t n = readlink(full, target, cap);
	pw_err *e = NULL;
	if (n < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read link %s"), full);
	else if ((size_t)n == cap)
		e = pw_err_new(PW_ERR_IO, NULL, _("link %s changed while being read"), full);
	else {
		it->size = n;
		hash_text(target, (size_t)n, it->sha256);
	}
	free(target);
	return e;
}

/* One non-directory: a regular file is hashed, a link's target text is
 * hashed, anything else (a FIFO, a device) is listed with an empty hash so
 * that a comparison notices it. */
static pw_err *record(struct walk *w, const char *rel, const char *full, const struct stat *st)
{
	pw_manifest_entry it = { .mode = st->st_mode };
	pw_err *e = NULL;
	if (S_ISREG(st->st_mode))
		e = pw_sha256_file(full, it.sha256, &it.size);
	else if (S_ISLNK(st->st_mode))
		e = record_link(full, st, &it);
	else
		hash_text("", 0, it.sha256);
	if (e)
		return e;
	if (S_ISREG(st->st_mode))
		w->m->total_bytes += it.size;
	it.path = xstrdup(rel);
	push(w, &it);
	return NULL;
}

static pw_err *walk_dir(struct walk *w, const char *rel);

static pw_err *visit(struct walk *w, const char *rel)
{
	char *full = xasprintf("%s/%s", w->root, rel);
	struct stat st;
	pw_err *e = NULL;
	if (lstat(full, &st) < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), full);
	else if (S_ISDIR(st.st_mode))
		e = walk_dir(w, rel);
	else
		e = record(w, rel, full, &st);
	free(full);
	return e;
}

/* Open a directory; below the root with O_NOFOLLOW, so one swapped for a
 * link after its lstat() is not followed. */
static DIR *open_dir(const char *full, bool is_root)
{
	int fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (is_root ? 0 : O_NOFOLLOW));
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (fd >= 0 && !d) {
		int eno = errno;
		close(fd);
		errno = eno;
	}
	return d;
}

/* rel is "" for the root. */
static pw_err *walk_dir(struct walk *w, const char *rel)
{
	char *full = *rel ? xasprintf("%s/%s", w->root, rel) : xstrdup(w->root);
	DIR *d = open_dir(full, !*rel);
	pw_err *e = NULL;
	if (!d) {
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read directory %s"), full);
		free(full);
		return e;
	}
	struct dirent *de;
	while (!e && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *child = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		e = visit(w, child);
		free(child);
	}
	if (!e && errno)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read directory %s"), full);
	closedir(d);
	free(full);
	return e;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const pw_manifest_entry *)a)->path, ((const pw_manifest_entry *)b)->path);
}

pw_err *pw_manifest_build(const char *root, pw_manifest *out)
{
	memset(out, 0, sizeof *out);
	struct walk w = { root, out, 0 };
	struct stat st;
	if (!root || !*root)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("no directory to list"));
	if (stat(root, &st) < 0)
		return pw_err_errno(errno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, errno, NULL,
			_("cannot inspect %s"), root);
	if (!S_ISDIR(st.st_mode))
		return pw_err_new(PW_ERR_USAGE, NULL, _("%s is not a directory"), root);
	pw_err *e = walk_dir(&w, "");
	if (e) {
		pw_manifest_clear(out);
		return e;
	}
	if (out->count)
		qsort(out->items, out->count, sizeof *out->items, by_path);
	return NULL;
}

void pw_manifest_clear(pw_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->count; i++)
		free(m->items[i].path);
	free(m->items);
	memset(m, 0, sizeof *m);
}

/* -------------------------------------------------------------- compare */

static void add_diff(pw_manifest_diffs *d, size_t *cap, pw_manifest_diff_kind kind,
	const char *path)
{
	if (d->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		d->items = xrealloc(d->items, *cap * sizeof *d->items);
	}
	d->items[d->count].kind = kind;
	d->items[d->count].path = xstrdup(path);
	snprintf(d->items[d->count].rpm_flags, sizeof d->items[d->count].rpm_flags, "?????????");
	d->count++;
}

/* SM5DLUGTP: what was recorded is compared, the rest is not known. */
static void rpm_flags(const pw_manifest_entry *was, const pw_manifest_entry *now, char out[10])
{
	bool link = S_ISLNK(was->mode) && S_ISLNK(now->mode);
	bool digest = strcmp(was->sha256, now->sha256) != 0;
	out[0] = was->size != now->size ? 'S' : '.';
	out[1] = (was->mode & (S_IFMT | 07777)) != (now->mode & (S_IFMT | 07777)) ? 'M' : '.';
	out[2] = !link && digest ? '5' : '.';
	out[3] = '.';
	out[4] = link && digest ? 'L' : '.';
	memcpy(out + 5, "????", 5);
}

/* Content first: a file whose bytes changed is "modified" even if its mode
 * changed as well. */
static bool differs(const pw_manifest_entry *was, const pw_manifest_entry *now,
	pw_manifest_diff_kind *kind)
{
	if (was->size != now->size || strcmp(was->sha256, now->sha256)) {
		*kind = PW_DIFF_MODIFIED;
		return true;
	}
	if ((was->mode & (S_IFMT | 07777)) != (now->mode & (S_IFMT | 07777))) {
		*kind = PW_DIFF_MODE;
		return true;
	}
	return false;
}

static int by_path_ptr(const void *a, const void *b)
{
	return by_path(*(const pw_manifest_entry *const *)a, *(const pw_manifest_entry *const *)b);
}

/* The recorded entries in path order; a manifest read back from storage
 * need not have kept the order. */
static const pw_manifest_entry **sorted_view(const pw_manifest *m)
{
	const pw_manifest_entry **v = xcalloc(m->count + 1, sizeof *v);
	for (size_t i = 0; i < m->count; i++)
		v[i] = &m->items[i];
	if (m->count)
		qsort(v, m->count, sizeof *v, by_path_ptr);
	return v;
}

/* Merge the two sorted lists; the result comes out in path order. */
static void merge(const pw_manifest_entry **was, size_t nwas, const pw_manifest *now,
	pw_manifest_diffs *out)
{
	size_t i = 0, j = 0, cap = 0;
	while (i < nwas || j < now->count) {
		int c = i == nwas ? 1 : j == now->count ? -1 : strcmp(was[i]->path, now->items[j].path);
		pw_manifest_diff_kind kind;
		if (c < 0)
			add_diff(out, &cap, PW_DIFF_MISSING, was[i++]->path);
		else if (c > 0)
			add_diff(out, &cap, PW_DIFF_UNEXPECTED, now->items[j++].path);
		else {
			if (differs(was[i], &now->items[j], &kind)) {
				add_diff(out, &cap, kind, now->items[j].path);
				rpm_flags(was[i], &now->items[j], out->items[out->count - 1].rpm_flags);
			}
			i++;
			j++;
		}
	}
}

pw_err *pw_manifest_compare(const pw_manifest *recorded, const char *root, pw_manifest_diffs *out)
{
	pw_manifest now;
	memset(out, 0, sizeof *out);
	if (!recorded)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("no manifest to compare with"));
	pw_err *e = pw_manifest_build(root, &now);
	if (e)
		return e;
	const pw_manifest_entry **was = sorted_view(recorded);
	merge(was, recorded->count, &now, out);
	free(was);
	pw_manifest_clear(&now);
	return NULL;
}

void pw_manifest_diffs_clear(pw_manifest_diffs *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++)
		free(d->items[i].path);
	free(d->items);
	memset(d, 0, sizeof *d);
}

const char *pw_manifest_diff_name(pw_manifest_diff_kind k)
{
	switch (k) {
	case PW_DIFF_MODIFIED: return "modified";
	case PW_DIFF_MODE: return "mode";
	case PW_DIFF_MISSING: return "missing";
	case PW_DIFF_UNEXPECTED: return "unexpected";
	}
	return "modified";
}
