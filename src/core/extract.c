/*
 * Guarded extraction.
 *
 * libarchive reads the archive; every entry is checked here against our
 * own rules, then written by our own code: folders and links on this
 * thread (xtree.c), regular files by writer threads (xwriter.c) or, when
 * large, here. Why the rules keep everything inside dest:
 *
 * - Names are split into components; absolute names and ".." are refused,
 *   so a name on its own cannot leave dest.
 * - Nothing is written through a symlink: every parent of an entry that
 *   the archive made must be a folder it made, and an existing name is
 *   never replaced (only a directory entry may repeat a directory). The
 *   names are judged against what the archive's earlier entries made (the
 *   tree's record, complete before a writer thread catches up), and the
 *   kernel backs that: folders are entered with O_NOFOLLOW from their
 *   parent's descriptor and files created with O_EXCL|O_NOFOLLOW, so even
 *   a name the record got wrong could not be followed or replaced.
 * - A symlink's target is relative and may have ".." only at its start.
 *   Those climb the entry's parents, which are real directories, so
 *   counting them against the entry's depth is exact; the names after them
 *   only descend, and any link among them obeys the same rule.
 * - A hardlink's target is a clean in-archive path naming a regular file
 *   extracted earlier, reached through real directories. It may not carry
 *   data of its own (pax allows it): that data would rewrite its target.
 *   Hardlinks are made last, when every file they may name is written.
 * - With opts.root, every entry lies in that one top folder and links are
 *   counted from it, not from dest: the caller moves the folder next to
 *   other installs, where a ".." that was harmless in dest would reach them.
 * - Modes lose setuid, setgid, sticky and group/other write: a runtime
 *   shared by a machine's users must not be writable by all of them.
 *
 * Limits count every entry and every byte of file data, both from the
 * headers before writing and from the data blocks while copying, so a
 * header that lies about its size cannot write past max_bytes. The space
 * guard runs here too, before a file's bytes are handed to a writer.
 */
#include "config.h"

#include "extract.h"
#include "clock.h"
#include "i18n.h"
#include "libload.h"
#include "decoder.h"
#include "digest.h"
#include "xalloc.h"
#include "xtree.h"
#include "xwriter.h"
#include "stagetime.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define PATH_LIMIT 1024
#define NAME_LIMIT 255
#define DEFAULT_MAX_BYTES ((int64_t)2 << 30)
#define DEFAULT_MAX_ENTRIES 100000
/* By default a write must leave 1% of the file system free, at least
 * 1 MiB and at most 64 MiB: room for logs and the catalog next to it. */
#define MIN_FREE_FLOOR ((int64_t)1 << 20)
#define MIN_FREE_CAP ((int64_t)64 << 20)
/* What an entry costs on disk besides its data (inode, directory slot). */
#define ENTRY_COST 4096
#define PROGRESS_MS 100
/* Writer threads by default: file creation is mostly the kernel's work,
 * and two or three creators keep two cores busy while this thread parses. */
#define DEFAULT_WRITERS 3
/* Files up to this size are read whole into memory and handed to a
 * writer; larger ones are written here as they are read. */
#define POOL_FILE_MAX ((size_t)4 << 20)
#define SHOWN_MAX 200
/* ARCHIVE_ERRNO_MISC, which libarchive keeps in a private header: the
 * errno it reports for its own refusals, as opposed to a system error. */
#define LA_ERRNO_MISC (-1)

static const char hostile_hint[] =
	N_("the archive may be damaged or malicious; get it again from a trusted source");
static const char limit_hint[] =
	N_("the archive unpacks to more than pyward allows; it may be a decompression bomb");
static const char corrupt_hint[] = N_("the download may be damaged; fetch it again");

/* The regular file being read. */
struct cur {
	unsigned char *buf;     /* its bytes so far, for a writer thread */
	size_t cap;
	int64_t end;            /* furthest byte of data seen */
	int fd;                 /* written here instead (>= 0) */
	int dirfd;              /* its folder (borrowed from the tree) */
	const char *base;
	int64_t hashed;         /* bytes fed to hash, holes as zeros */
};

struct xs {
	const pw_extract_opts *o;
	struct archive *in;
	char *dest;             /* realpath of the directory we created */
	int dest_fd;
	pw_xtree *tree;         /* what the archive made so far */
	pw_xwriter *pool;       /* NULL: every file written on this thread */
	mode_t umask;
	int64_t max_bytes;
	int64_t max_entries;
	int64_t archive_size;
	int64_t entries;
	int64_t bytes;
	int64_t started_ms;
	int64_t last_ms;
	bool reported;
	pw_sha256 *hash;        /* of the current entry, when written here with a manifest */
	struct cur cur;
	unsigned char *stream_buf; /* for a read callback */
	pw_decoder *decoder;    /* decompresses on its own thread, when it started */
	bool disk_full;         /* a write failed with ENOSPC or EDQUOT */
	size_t manifest_cap;
	size_t root_len;        /* strlen(o->root), 0 without a root */
	long root_depth;        /* components of o->root */
	int64_t min_free;       /* -1: no space guard */
	int64_t room;           /* bytes that may be written before asking statvfs again */
};

/* ----------------------------------------------------------------- text */

/* name with control characters escaped and cut to SHOWN_MAX bytes (on a
 * UTF-8 boundary), so a message cannot forge lines or fill the screen. */
static char *shown_name(const char *name)
{
	if (!name)
		return xstrdup("?");
	size_t n = strlen(name);
	bool cut = n > SHOWN_MAX;
	if (cut)
		for (n = SHOWN_MAX; n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80; n--)
			;
	char *out = xmalloc(n * 4 + 4), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f)
			o += sprintf(o, "\\x%02x", c);
		else
			*o++ = (char)c;
	}
	strcpy(o, cut ? "..." : "");
	return out;
}

/* "8 MiB" for whole mebibytes, else "N bytes". */
static char *size_text(int64_t n)
{
	if (n > 0 && n % (1 << 20) == 0)
		return xasprintf(_("%lld MiB"), (long long)(n >> 20));
	return xasprintf(_("%lld bytes"), (long long)n);
}

static pw_err *refuse_v(const char *hint, const char *name, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static pw_err *refuse_v(const char *hint, const char *name, const char *fmt, va_list ap)
{
	char *rule = xvasprintf(fmt, ap);
	char *shown = shown_name(name);
	pw_err *e = pw_err_new(PW_ERR_REFUSED, hint,
		_("archive entry '%s' %s; the archive was rejected and nothing was installed"),
		shown, rule);
	free(shown);
	free(rule);
	return e;
}

/* PW_ERR_REFUSED naming the entry and the rule it breaks. */
static pw_err *refuse(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static pw_err *refuse(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pw_err *e = refuse_v(_(hostile_hint), name, fmt, ap);
	va_end(ap);
	return e;
}

static pw_err *refuse_limit(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static pw_err *refuse_limit(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pw_err *e = refuse_v(_(limit_hint), name, fmt, ap);
	va_end(ap);
	return e;
}

static pw_err *read_error(const struct xs *x)
{
	const char *why = archive_error_string(x->in);
	return pw_err_new(PW_ERR_CORRUPT, _(corrupt_hint), _("cannot read archive %s: %s"),
		x->o->archive, why ? why : _("unknown error"));
}

/* A system call failed writing entry name: a full disk (or quota) is said
 * in plain words. */
static pw_err *write_error(struct xs *x, const char *name, int eno)
{
	char *shown = shown_name(name);
	bool full = false;
	pw_err *e = pw_xwriter_error(shown, x->o->dest, eno, &full);
	x->disk_full |= full;
	free(shown);
	return e;
}

static pw_err *cancelled(const struct xs *x)
{
	return pw_err_new(PW_ERR_CANCELLED, NULL, _("extraction of %s was cancelled"),
		x->o->archive);
}

/* ---------------------------------------------------------------- names */

static bool is_dot(const char *s, size_t n)
{
	return n == 1 && s[0] == '.';
}

static bool is_dotdot(const char *s, size_t n)
{
	return n == 2 && s[0] == '.' && s[1] == '.';
}

/* Rebuild path without empty and "." components into *clean ("" for the
 * archive's root entry). Returns the rule it breaks (a msgid), or NULL. */
static const char *clean_path(const char *path, char **clean)
{
	*clean = NULL;
	if (!path || !*path)
		return N_("has an empty name");
	if (path[0] == '/')
		return N_("has an absolute path");
	if (strlen(path) > PATH_LIMIT)
		return N_("has a path longer than 1024 bytes");
	char *out = xmalloc(strlen(path) + 1);
	size_t len = 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		const char *rule = is_dotdot(p, n) ? N_("has a '..' component")
			: n > NAME_LIMIT ? N_("has a path component longer than 255 bytes") : NULL;
		if (rule) {
			free(out);
			return rule;
		}
		if (n && !is_dot(p, n)) {
			if (len)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
		p += *p == '/';
	}
	out[len] = '\0';
	*clean = out;
	return NULL;
}

static long depth_of(const char *clean)
{
	long d = 0;
	for (const char *p = clean; *p; p++)
		d += *p == '/';
	return d; /* components of the parent */
}

/* clean is the root folder or below it (always, without a root). */
static bool in_root(const struct xs *x, const char *clean)
{
	return !x->root_len || (strncmp(clean, x->o->root, x->root_len) == 0 &&
				(clean[x->root_len] == '\0' || clean[x->root_len] == '/'));
}

/* A symlink target may climb with leading ".." only as far as the entry's
 * depth, then descend by names: ".." after a name could climb out through
 * another link (d/l -> .. makes d/l/../.. leave the root). */
static pw_err *check_symlink(const struct xs *x, const char *name, const char *clean,
	const char *target)
{
	if (!target || !*target)
		return refuse(name, "%s", _("is a symlink with an empty target"));
	char *t = shown_name(target);
	pw_err *e = NULL;
	long depth = depth_of(clean) - x->root_depth;
	bool named = false;
	if (target[0] == '/')
		e = refuse(name, _("is a symlink to an absolute path ('%s')"), t);
	else if (strlen(target) > PATH_LIMIT)
		e = refuse(name, _("is a symlink with a target longer than %d bytes"), PATH_LIMIT);
	for (const char *p = target; !e && *p;) {
		size_t n = strcspn(p, "/");
		if (is_dotdot(p, n) && named)
			e = refuse(name, _("is a symlink with '..' after a name in its target ('%s')"), t);
		else if (is_dotdot(p, n) && --depth < 0)
			e = refuse(name, _("is a symlink pointing outside the archive ('%s')"), t);
		else if (n && !is_dot(p, n) && !is_dotdot(p, n))
			named = true;
		p += n;
		p += *p == '/';
	}
	free(t);
	return e;
}

static pw_err *check_type(const char *name, mode_t type)
{
	switch (type) {
	case AE_IFREG:
	case AE_IFDIR:
	case AE_IFLNK:
		return NULL;
	case AE_IFCHR:
		return refuse(name, "%s", _("is a character device"));
	case AE_IFBLK:
		return refuse(name, "%s", _("is a block device"));
	case AE_IFIFO:
		return refuse(name, "%s", _("is a FIFO"));
	case AE_IFSOCK:
		return refuse(name, "%s", _("is a socket"));
	}
	return refuse(name, "%s", _("has an unknown file type"));
}

/* ------------------------------------------------------ earlier entries */

/* Every parent of clean that the archive made must be a folder; *missing
 * is set when one was not made yet (so neither was clean). */
static pw_err *check_parents(struct xs *x, const char *name, const char *clean, bool *missing)
{
	*missing = false;
	for (const char *s = strchr(clean, '/'); s; s = strchr(s + 1, '/')) {
		size_t len = (size_t)(s - clean);
		int kind = pw_xtree_kind(x->tree, clean, len);
		if (kind == PW_XTREE_NONE) {
			*missing = true;
			return NULL;
		}
		if (kind != PW_XTREE_DIR) {
			char *rel = xstrndup(clean, len);
			pw_err *e = refuse(name, _("would be written through '%s', "
						   "which is a link or a file, not a directory"), rel);
			free(rel);
			return e;
		}
	}
	return NULL;
}

/* The entry must not replace anything, except a directory repeated. */
static pw_err *check_new(struct xs *x, const char *name, const char *clean, bool is_dir)
{
	bool missing;
	pw_err *e = check_parents(x, name, clean, &missing);
	if (e || missing)
		return e;
	int kind = pw_xtree_kind(x->tree, clean, strlen(clean));
	if (kind != PW_XTREE_NONE && !(is_dir && kind == PW_XTREE_DIR))
		e = refuse(name, "%s", _("would replace an earlier entry"));
	return e;
}

/* A hardlink must name a regular file extracted earlier, reached through
 * real directories. *target gets the cleaned in-archive path. */
static pw_err *check_hardlink(struct xs *x, const char *name, const char *link,
	char **target)
{
	char *t = shown_name(link);
	bool missing = false;
	pw_err *e = NULL;
	const char *rule = clean_path(link, target);
	if (rule)
		e = refuse(name, _("is a hardlink whose target '%s' %s"), t, _(rule));
	else if (!**target)
		e = refuse(name, "%s", _("is a hardlink to the archive's root"));
	else if (!in_root(x, *target))
		e = refuse(name, _("is a hardlink to '%s', outside the archive's top folder '%s/'"), t,
			x->o->root);
	if (!e)
		e = check_parents(x, name, *target, &missing);
	if (!e && (missing || pw_xtree_kind(x->tree, *target, strlen(*target)) != PW_XTREE_FILE))
		e = refuse(name, _("is a hardlink to '%s', which is not a file extracted earlier"), t);
	free(t);
	if (e) {
		free(*target);
		*target = NULL;
	}
	return e;
}

/* ------------------------------------------------------------- progress */

static void progress(struct xs *x, bool final)
{
	const pw_events *ev = x->o->events;
	if (!ev || !ev->progress)
		return;
	int64_t now = pw_clock_mono_ms();
	if (!final && x->reported && now - x->last_ms < PROGRESS_MS)
		return;
	x->reported = true;
	x->last_ms = now;
	int64_t done = final ? x->archive_size
		: x->decoder ? pw_decoder_consumed(x->decoder) : archive_filter_bytes(x->in, -1);
	double secs = (double)(now - x->started_ms) / 1000.0;
	pw_progress p = { "extract", done, x->archive_size, 0, -1 };
	if (secs > 0 && done > 0) {
		p.rate = (double)done / secs;
		p.eta_seconds = (double)(x->archive_size - done) / p.rate;
	}
	pw_events_progress(ev, &p);
}

/* ----------------------------------------------------------------- data */

/* Refuse when this entry would take the total past max_bytes. */
static pw_err *check_bytes(const struct xs *x, const char *name, int64_t entry_bytes)
{
	if (entry_bytes <= x->max_bytes - x->bytes)
		return NULL;
	char *lim = size_text(x->max_bytes);
	pw_err *e = refuse_limit(name, _("would exceed the limit of %s of unpacked data"), lim);
	free(lim);
	return e;
}

/* The space guard: a write of need bytes must leave min_free bytes (and a
 * few inodes) free on dest's file system. statvfs is asked again only when
 * the room it last gave is used up, so a tree of many small files costs a
 * handful of calls; a disk that others fill meanwhile still ends in ENOSPC,
 * reported the same way. */
static pw_err *check_room(struct xs *x, const char *name, int64_t need)
{
	if (x->min_free < 0 || need <= x->room) {
		x->room -= need;
		return NULL;
	}
	struct statvfs vfs;
	if (statvfs(x->dest, &vfs) != 0) {
		x->min_free = -1; /* cannot tell: ENOSPC remains the guard */
		return NULL;
	}
	int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
	if (x->min_free == 0) {
		int64_t pct = (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize / 100;
		x->min_free = pct < MIN_FREE_FLOOR ? MIN_FREE_FLOOR : pct > MIN_FREE_CAP ? MIN_FREE_CAP : pct;
	}
	/* the inodes left, as bytes of entries we may still make (none when
	 * the file system does not count them) */
	bool inodes_low = vfs.f_files > 0 && vfs.f_favail < 64;
	x->room = avail - x->min_free;
	if (need <= x->room && !inodes_low) {
		/* ask again after a quarter of the room, as others write too */
		x->room = x->room / 4 > need ? x->room / 4 : need;
		x->room -= need;
		return NULL;
	}
	x->disk_full = true;
	char *shown = shown_name(name);
	char *free_text = size_text(avail > 0 ? avail : 0);
	char *margin = size_text(x->min_free);
	char *lim = size_text(x->max_bytes);
	char *done = size_text(x->bytes);
	pw_err *e = pw_err_new(PW_ERR_IO,
		_("free some space on that file system and run again"),
		_("disk full: writing '%s' into %s would leave less than %s free (%s free, "
		  "%lld entries and %s written so far; pyward unpacks at most %lld entries "
		  "and %s)"),
		shown, x->o->dest, margin, free_text, (long long)(x->entries - 1), done,
		(long long)x->max_entries, lim);
	free(shown);
	free(free_text);
	free(margin);
	free(lim);
	free(done);
	return e;
}

/* Feed the hash the bytes a reader of the file will see: holes are zeros. */
static void hash_upto(struct xs *x, const void *buf, size_t len, int64_t off)
{
	static const unsigned char zeros[4096];
	if (!x->hash)
		return;
	while (x->cur.hashed < off) {
		int64_t n = off - x->cur.hashed;
		n = n < (int64_t)sizeof zeros ? n : (int64_t)sizeof zeros;
		pw_sha256_update(x->hash, zeros, (size_t)n);
		x->cur.hashed += n;
	}
	pw_sha256_update(x->hash, buf, len);
	x->cur.hashed += (int64_t)len;
}

/* The buffer holds [0, upto): room made, and a gap since the last byte
 * (a hole) zeroed. upto is at most POOL_FILE_MAX. */
static void buffer_upto(struct cur *c, size_t upto)
{
	if (upto > c->cap) {
		size_t cap = c->cap ? c->cap : 16384;
		while (cap < upto)
			cap *= 2;
		c->cap = cap < POOL_FILE_MAX ? cap : POOL_FILE_MAX;
		c->buf = xrealloc(c->buf, c->cap);
	}
	if ((int64_t)upto > c->end) {
		memset(c->buf + c->end, 0, upto - (size_t)c->end);
		c->end = (int64_t)upto;
	}
}

static pw_err *put_here(struct xs *x, const char *name, const unsigned char *buf, size_t len, int64_t off)
{
	hash_upto(x, buf, len, off);
	while (len) {
		ssize_t n = pwrite(x->cur.fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return write_error(x, name, n < 0 ? errno : ENOSPC);
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return NULL;
}

/* From now on the file is written on this thread, as it is read: it is
 * too large to hand over whole, or there are no writers. */
static pw_err *write_here(struct xs *x, const char *name, mode_t perm)
{
	struct cur *c = &x->cur;
	c->fd = pw_xwriter_create(c->dirfd, c->base, perm, x->umask);
	if (c->fd < 0)
		return write_error(x, name, errno);
	if (x->o->manifest)
		x->hash = pw_sha256_new();
	pw_err *e = c->end ? put_here(x, name, c->buf, (size_t)c->end, 0) : NULL;
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
	return e;
}

static pw_err *put_block(struct xs *x, const char *name, mode_t perm, const void *buf, size_t len, int64_t off)
{
	struct cur *c = &x->cur;
	pw_err *e = NULL;
	if (c->fd < 0 && (uint64_t)off + len > POOL_FILE_MAX)
		e = write_here(x, name, perm);
	if (e || c->fd >= 0)
		return e ? e : put_here(x, name, buf, len, off);
	buffer_upto(c, (size_t)off + len);
	if (len)
		memcpy(c->buf + off, buf, len);
	return NULL;
}

/* Read the entry's data, counting what the blocks really hold (the end of
 * the furthest block, so sparse holes count too); *size gets the file's. */
static pw_err *copy_data(struct xs *x, const char *name, mode_t perm, int64_t declared, int64_t *size)
{
	int64_t end = 0;
	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;
		if (pw_cancel_raised(x->o->cancel))
			return cancelled(x);
		int r = archive_read_data_block(x->in, &buf, &len, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return read_error(x);
		if (off < 0 || (int64_t)len > INT64_MAX - off)
			return refuse(name, "%s", _("has a data block at an impossible offset"));
		if (off + (int64_t)len > end)
			end = off + (int64_t)len;
		pw_err *e = check_bytes(x, name, end > declared ? end : declared);
		if (!e)
			e = check_room(x, name, (int64_t)len);
		if (!e)
			e = put_block(x, name, perm, buf, len, off);
		if (e)
			return e;
		progress(x, false);
	}
	*size = end > declared ? end : declared;
	x->bytes += *size;
	return NULL;
}

static void warn_entry(const struct xs *x, struct archive *a, const char *name)
{
	char *shown = shown_name(name);
	const char *why = archive_error_string(a);
	pw_events_log(x->o->events, PW_LOG_WARN, _("archive entry '%s': %s"), shown,
		why ? why : _("warning"));
	free(shown);
}

/* ------------------------------------------------------------- manifest */

static pw_manifest_entry *manifest_add(struct xs *x, const char *clean)
{
	pw_manifest *m = x->o->manifest;
	if (m->count == x->manifest_cap) {
		x->manifest_cap = x->manifest_cap ? x->manifest_cap * 2 : 256;
		m->items = xrealloc(m->items, x->manifest_cap * sizeof *m->items);
	}
	pw_manifest_entry *f = &m->items[m->count++];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(clean);
	return f;
}

static const pw_manifest_entry *manifest_find(const struct xs *x, const char *clean)
{
	const pw_manifest *m = x->o->manifest;
	for (size_t i = m->count; i-- > 0;)
		if (strcmp(m->items[i].path, clean) == 0)
			return &m->items[i];
	return NULL;
}

/* A writer thread wrote a file: its hash goes into the entry made for it. */
static void file_written(void *ud, const pw_xfile *f)
{
	struct xs *x = ud;
	memcpy(x->o->manifest->items[f->tag].sha256, f->sha256, sizeof f->sha256);
}

/* A hardlink was made: it records what its target does. */
static void link_made(void *ud, const char *clean, const char *target)
{
	struct xs *x = ud;
	if (!x->o->manifest)
		return;
	const pw_manifest_entry *src = manifest_find(x, target);
	if (!src)
		return;
	pw_manifest_entry copy = *src;
	pw_manifest_entry *f = manifest_add(x, clean);
	f->size = copy.size;
	f->mode = copy.mode;
	memcpy(f->sha256, copy.sha256, sizeof f->sha256);
}

static void record_symlink(struct xs *x, const char *clean, const char *target)
{
	if (!x->o->manifest)
		return;
	pw_manifest_entry *f = manifest_add(x, clean);
	f->size = (int64_t)strlen(target);
	f->mode = S_IFLNK | 0777;
	pw_sha256 *h = pw_sha256_new();
	pw_sha256_update(h, target, strlen(target));
	pw_sha256_final_hex(h, f->sha256);
	pw_sha256_free(&h);
}

/* ---------------------------------------------------------------- files */

static struct timespec mtime_of(struct archive_entry *ae)
{
	struct timespec t = { 0, UTIME_OMIT };
	if (archive_entry_mtime_is_set(ae)) {
		t.tv_sec = archive_entry_mtime(ae);
		long ns = archive_entry_mtime_nsec(ae);
		t.tv_nsec = ns >= 0 && ns < 1000000000L ? ns : 0;
	}
	return t;
}

/* The file's data is all read: close it here, or hand it to a writer. */
static pw_err *finish_file(struct xs *x, const char *name, mode_t perm, int64_t size,
			   const struct timespec *mtime, pw_manifest_entry *f)
{
	struct cur *c = &x->cur;
	if (c->fd >= 0) {
		hash_upto(x, NULL, 0, size);
		int fd = c->fd;
		c->fd = -1;
		bool ok = ftruncate(fd, size) == 0; /* a hole at the end */
		if (!ok)
			close(fd);
		if (!ok || pw_xwriter_close(fd, mtime, x->o->flush) != 0)
			return write_error(x, name, errno);
		if (f)
			pw_sha256_final_hex(x->hash, f->sha256);
		return NULL;
	}
	buffer_upto(c, (size_t)size);
	pw_xfile job = { .dirfd = fcntl(c->dirfd, F_DUPFD_CLOEXEC, 0), .base = xstrdup(c->base),
			 .name = shown_name(name), .mode = perm, .mtime = *mtime, .data = c->buf,
			 .len = (size_t)size, .hash = f != NULL,
			 .tag = f ? (size_t)(f - x->o->manifest->items) : 0 };
	c->buf = NULL;
	c->cap = 0;
	if (job.dirfd < 0) {
		pw_err *e = write_error(x, name, errno);
		free(job.base);
		free(job.name);
		free(job.data);
		return e;
	}
	pw_xwriter_submit(x->pool, &job); /* a failed pool is seen by run() */
	return NULL;
}

static pw_err *write_file(struct xs *x, struct archive_entry *ae, const char *name, const char *shown,
			  const char *clean, mode_t perm)
{
	struct cur *c = &x->cur;
	int64_t declared = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
	declared = declared > 0 ? declared : 0;
	pw_err *e = pw_xtree_parent(x->tree, shown, clean, &c->dirfd);
	if (e)
		return e;
	pw_xtree_file(x->tree, clean);
	const char *slash = strrchr(clean, '/');
	c->base = slash ? slash + 1 : clean;
	c->end = c->hashed = 0;
	pw_manifest_entry *f = NULL;
	if (x->o->manifest) {
		f = manifest_add(x, clean);
		f->mode = S_IFREG | perm;
	}
	size_t tag = f ? (size_t)(f - x->o->manifest->items) : 0; /* f moves as the list grows */
	if (!x->pool || (uint64_t)declared > POOL_FILE_MAX)
		e = write_here(x, name, perm);
	else if (declared) {
		c->buf = xmalloc((size_t)declared); /* filled as blocks come */
		c->cap = (size_t)declared;
	}
	int64_t size = 0;
	if (!e)
		e = copy_data(x, name, perm, declared, &size);
	if (f)
		(f = &x->o->manifest->items[tag])->size = size;
	struct timespec mtime = mtime_of(ae);
	if (!e)
		e = finish_file(x, name, perm, size, &mtime, f);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
	pw_sha256_free(&x->hash);
	return e;
}

/* Drop setuid/setgid/sticky and group/other write, then write the entry. */
static pw_err *write_entry(struct xs *x, struct archive_entry *ae, const char *name,
	const char *clean, const char *link)
{
	mode_t perm = archive_entry_perm(ae) & 0755;
	char *shown = shown_name(name);
	pw_err *e = NULL;
	if (link)
		pw_xtree_hardlink(x->tree, shown, clean, link);
	else if (archive_entry_filetype(ae) == AE_IFDIR)
		e = pw_xtree_dir(x->tree, shown, clean, perm);
	else if (archive_entry_filetype(ae) == AE_IFLNK) {
		struct timespec mtime = mtime_of(ae);
		e = pw_xtree_symlink(x->tree, shown, clean, archive_entry_symlink(ae), &mtime);
		if (!e)
			record_symlink(x, clean, archive_entry_symlink(ae));
	} else
		e = write_file(x, ae, name, shown, clean, perm);
	x->disk_full |= pw_xtree_disk_full(x->tree);
	free(shown);
	return e;
}

/* Everything decided from the header alone, before anything is written. */
static pw_err *check_header(struct xs *x, struct archive_entry *ae, const char *name,
	const char *clean, char **link)
{
	mode_t type = archive_entry_filetype(ae);
	const char *hard = archive_entry_hardlink(ae);
	pw_err *e = NULL;
	*link = NULL;
	if (hard && archive_entry_size_is_set(ae) && archive_entry_size(ae) > 0)
		e = refuse(name, _("is a hardlink that carries %lld bytes of data, which would "
				   "rewrite the file it links to"), (long long)archive_entry_size(ae));
	else if (hard)
		e = check_hardlink(x, name, hard, link);
	else
		e = check_type(name, type);
	if (!e && x->root_len && strlen(clean) == x->root_len && (hard || type != AE_IFDIR))
		e = refuse(name, _("is the archive's top folder '%s/' but not a directory"), x->o->root);
	if (!e && !hard && type == AE_IFLNK)
		e = check_symlink(x, name, clean, archive_entry_symlink(ae));
	if (!e && archive_entry_size_is_set(ae))
		e = check_bytes(x, name, archive_entry_size(ae));
	if (!e)
		e = check_new(x, name, clean, !hard && type == AE_IFDIR);
	return e;
}

static pw_err *entry_named(struct xs *x, struct archive_entry *ae, const char *name)
{
	char *clean = NULL, *link = NULL;
	const char *rule = clean_path(name, &clean);
	if (rule)
		return refuse(name, "%s", _(rule));
	pw_err *e = NULL;
	bool root_dir = archive_entry_filetype(ae) == AE_IFDIR && !archive_entry_hardlink(ae);
	if (!*clean && !root_dir)
		e = refuse(name, "%s", _("has an empty name"));
	else if (*clean && !in_root(x, clean))
		e = refuse(name, _("lies outside the archive's top folder '%s/'"), x->o->root);
	else if (*clean) { /* "./" is dest itself, which we made: nothing to write */
		e = check_header(x, ae, name, clean, &link);
		if (!e)
			e = write_entry(x, ae, name, clean, link);
	}
	free(clean);
	free(link);
	return e;
}

/* The name is copied first: write_entry() repoints the entry, and with it
 * the string archive_entry_pathname() returned. */
static pw_err *one_entry(struct xs *x, struct archive_entry *ae)
{
	const char *p = archive_entry_pathname(ae);
	char *name = p ? xstrdup(p) : NULL;
	pw_err *e;
	if (++x->entries > x->max_entries)
		e = refuse_limit(name, _("exceeds the limit of %lld entries"),
			(long long)x->max_entries);
	else
		e = check_room(x, name, ENTRY_COST);
	if (!e)
		e = entry_named(x, ae, name);
	free(name);
	return e;
}

/* ---------------------------------------------------------------- setup */

/* True when libarchive decodes with filter itself: a filter it can only
 * run as an external program returns ARCHIVE_WARN, and we probe on a
 * throwaway handle because a registration cannot be undone. */
static bool builtin_filter(int (*filter)(struct archive *))
{
	struct archive *probe = archive_read_new();
	bool ok = filter(probe) == ARCHIVE_OK;
	archive_read_free(probe);
	return ok;
}

/* Not archive_read_support_filter_all: it would also accept formats that
 * libarchive decodes by running an external program on hostile input. */
static void read_filters(struct archive *a)
{
	int (*const filters[])(struct archive *) = {
		archive_read_support_filter_gzip, archive_read_support_filter_bzip2,
		archive_read_support_filter_xz, archive_read_support_filter_zstd,
	};
	for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
		if (builtin_filter(filters[i]))
			filters[i](a);
}

#define STREAM_BLOCK (64 * 1024)

static la_ssize_t stream_read(struct archive *a, void *ud, const void **buf)
{
	struct xs *x = ud;
	if (!x->stream_buf)
		x->stream_buf = xmalloc(STREAM_BLOCK);
	ssize_t n = x->o->read(x->o->read_ud, x->stream_buf, STREAM_BLOCK);
	if (n < 0) {
		archive_set_error(a, LA_ERRNO_MISC, "%s", _("the archive stream stopped"));
		return -1;
	}
	*buf = x->stream_buf;
	return n;
}

/* The tar reader's input: the plain bytes the decoder thread produced. */
static la_ssize_t decoded_read(struct archive *a, void *ud, const void **buf)
{
	struct xs *x = ud;
	ssize_t n = pw_decoder_next(x->decoder, buf);
	if (n < 0)
		archive_set_error(a, LA_ERRNO_MISC, "%s", pw_decoder_error(x->decoder));
	return n;
}

static int open_reader(struct xs *x)
{
	/* Inflating on a second thread lets it overlap with creating files. */
	x->decoder = pw_decoder_start(x->o->archive, x->o->read, x->o->read_ud);
	if (x->decoder)
		return archive_read_open(x->in, x, NULL, decoded_read, NULL);
	read_filters(x->in);
	return x->o->read ? archive_read_open(x->in, x, NULL, stream_read, NULL)
			  : archive_read_open_filename(x->in, x->o->archive, 64 * 1024);
}

static pw_err *open_archives(struct xs *x)
{
	pw_err *e = pw_libarchive_ready();
	if (e)
		return e;
	x->in = archive_read_new();
	archive_read_support_format_tar(x->in);
	if (open_reader(x) != ARCHIVE_OK)
		return read_error(x);
	return NULL;
}

/* The writer threads, unless the caller wants none (or none starts). */
static void start_writers(struct xs *x)
{
	int n = x->o->writers ? x->o->writers : DEFAULT_WRITERS;
	if (n < 0)
		return;
	pw_xwriter_opts wo = { .threads = n, .flush = x->o->flush, .umask = x->umask, .dest = x->o->dest,
			       .done = x->o->manifest ? file_written : NULL, .ud = x };
	x->pool = pw_xwriter_start(&wo);
}

static pw_err *run(struct xs *x)
{
	progress(x, false);
	for (;;) {
		struct archive_entry *ae;
		if (x->pool && pw_xwriter_failed(x->pool))
			return NULL; /* pw_xwriter_finish() says why */
		if (pw_cancel_raised(x->o->cancel))
			return cancelled(x);
		int r = archive_read_next_header(x->in, &ae);
		if (r == ARCHIVE_EOF)
			return NULL;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return read_error(x);
		if (r == ARCHIVE_WARN)
			warn_entry(x, x->in, archive_entry_pathname(ae));
		pw_err *e = one_entry(x, ae);
		if (e)
			return e;
		progress(x, false);
	}
}

/* Wait for the writers (dropping what they have not started when e says
 * the extraction failed), then make the hardlinks and set folder modes. */
static pw_err *finish_writes(struct xs *x, pw_err *e)
{
	bool full = false;
	pw_err *w = pw_xwriter_finish(&x->pool, e != NULL, &full);
	pw_stage_mark("extract: writers joined");
	if (!e) {
		e = w;
		x->disk_full |= full;
	} else {
		pw_err_free(w);
	}
	if (!e && x->tree)
		e = pw_xtree_finish(x->tree, x->o->flush, link_made, x);
	if (x->tree)
		x->disk_full |= pw_xtree_disk_full(x->tree);
	return e;
}

static pw_err *close_archives(struct xs *x, pw_err *e)
{
	if (x->in)
		archive_read_free(x->in);
	x->in = NULL;
	pw_decoder_free(&x->decoder);
	pw_xtree_free(&x->tree);
	if (x->dest_fd >= 0)
		close(x->dest_fd);
	x->dest_fd = -1;
	return e;
}

/* The umask, read without changing it (other threads may be creating
 * files); /proc says it since Linux 4.7. */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned int mask = 0;
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f))
		found = sscanf(line, "Umask: %o", &mask) == 1;
	if (f)
		fclose(f);
	if (found)
		return (mode_t)mask & 0777;
	mode_t m = umask(022);
	umask(m);
	return m;
}

static pw_err *make_dest(struct xs *x)
{
	const char *dest = x->o->dest;
	if (mkdir(dest, 0755) < 0) {
		x->disk_full = errno == ENOSPC || errno == EDQUOT;
		return pw_err_errno(PW_ERR_IO, errno,
			errno == EEXIST ? _("the staging directory must not exist yet") : NULL,
			_("cannot create staging directory %s"), dest);
	}
	x->dest = realpath(dest, NULL);
	x->dest_fd = x->dest ? open(x->dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (x->dest_fd < 0) {
		int eno = errno;
		rmdir(dest);
		return pw_err_errno(PW_ERR_IO, eno, NULL, _("cannot resolve %s"), dest);
	}
	x->umask = current_umask();
	x->tree = pw_xtree_new(x->dest_fd, dest, x->umask);
	return NULL;
}

static pw_err *start(struct xs *x, const pw_extract_opts *o)
{
	struct stat st;
	memset(x, 0, sizeof *x);
	x->o = o;
	x->dest_fd = x->cur.fd = -1;
	if (!o || !o->archive || !o->dest || !*o->dest)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("extract needs an archive and a destination"));
	x->max_bytes = o->max_bytes > 0 ? o->max_bytes : DEFAULT_MAX_BYTES;
	x->max_entries = o->max_entries > 0 ? o->max_entries : DEFAULT_MAX_ENTRIES;
	x->min_free = o->min_free; /* 0: set from the file system's size on first use */
	if (o->root && *o->root) {
		char *clean = NULL;
		if (clean_path(o->root, &clean) || strcmp(clean, o->root) != 0) {
			free(clean);
			return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("extract's root must be a clean relative folder name"));
		}
		free(clean);
		x->root_len = strlen(o->root);
		x->root_depth = depth_of(o->root) + 1;
	}
	if (o->read)
		st.st_size = o->stream_size;
	else if (stat(o->archive, &st) < 0)
		return pw_err_errno(errno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, errno, NULL,
			_("cannot read archive %s"), o->archive);
	x->archive_size = st.st_size;
	x->started_ms = pw_clock_mono_ms();
	return make_dest(x);
}

pw_err *pw_extract(const pw_extract_opts *opts, pw_extract_result *res)
{
	struct xs x;
	if (res)
		memset(res, 0, sizeof *res);
	pw_err *e = start(&x, opts);
	if (e && res)
		res->disk_full = x.disk_full;
	if (e)
		return e; /* dest is not ours (or was not made): leave it */
	pw_stage_mark("extract: start");
	e = open_archives(&x);
	if (!e) {
		start_writers(&x);
		e = run(&x);
	}
	pw_stage_mark("extract: last entry read");
	/* no writer runs after this, so removing the tree below is final */
	e = finish_writes(&x, e);
	pw_stage_mark("extract: hardlinks made, folders flushed");
	e = close_archives(&x, e);
	if (res)
		res->disk_full = x.disk_full;
	if (e) {
		if (opts->manifest)
			pw_manifest_clear(opts->manifest);
		pw_err *rm = pw_extract_remove_tree(x.dest);
		if (rm)
			pw_events_log(opts->events, PW_LOG_WARN, "%s", pw_err_message(rm));
		pw_err_free(rm);
	} else {
		progress(&x, true);
		if (res) {
			res->entries = x.entries;
			res->bytes = x.bytes;
		}
	}
	free(x.dest);
	free(x.stream_buf);
	return e;
}

/* --------------------------------------------------------------- remove */

static pw_err *remove_at(int dfd, const char *dir, const char *name, dev_t dev);

static pw_err *remove_error(const char *dir, const char *name)
{
	return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s/%s"), dir, name);
}

/* The names in the open directory fd, read in full before anything is
 * removed: what readdir() returns once entries go is unspecified. */
static char **list_names(int fd, size_t *count)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	*count = 0;
	if (!d) {
		int eno = errno;
		if (dup_fd >= 0)
			close(dup_fd);
		errno = eno;
		return NULL;
	}
	while ((de = readdir(d))) {
		if (is_dot(de->d_name, strlen(de->d_name)) || is_dotdot(de->d_name, strlen(de->d_name)))
			continue;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
		v[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	*count = n;
	return v ? v : xcalloc(1, sizeof *v);
}

/* Empty the open directory fd (shown as path), keeping the first error. */
static pw_err *remove_contents(int fd, const char *path, dev_t dev)
{
	size_t n;
	char **names = list_names(fd, &n);
	if (!names)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot read directory %s"), path);
	pw_err *first = NULL;
	for (size_t i = 0; i < n; i++) {
		pw_err *e = remove_at(fd, path, names[i], dev);
		if (e && !first)
			first = e;
		else
			pw_err_free(e);
		free(names[i]);
	}
	free(names);
	return first;
}

/* Open directory name in dfd without following a link; a directory we
 * may not read or change (0555, 0000) is given u+rwx first, so that the
 * archive's own modes cannot make the tree unremovable. */
static int open_dir_at(int dfd, const char *name, mode_t mode)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dfd, name, flags);
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, (mode & 07777) | 0700, 0) == 0)
		fd = openat(dfd, name, flags);
	if (fd >= 0 && (mode & 0700) != 0700)
		(void)fchmod(fd, (mode & 07777) | 0700);
	return fd;
}

static pw_err *remove_at(int dfd, const char *dir, const char *name, dev_t dev)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? NULL : remove_error(dir, name);
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? remove_error(dir, name) : NULL;
	if (st.st_dev != dev)
		return pw_err_new(PW_ERR_REFUSED, NULL,
			_("not removing %s/%s: it is on another file system"), dir, name);
	int fd = open_dir_at(dfd, name, st.st_mode);
	if (fd < 0)
		return remove_error(dir, name);
	char *path = xasprintf("%s/%s", dir, name);
	pw_err *e = remove_contents(fd, path, dev);
	close(fd);
	free(path);
	if (!e && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		e = remove_error(dir, name);
	return e;
}

pw_err *pw_extract_remove_at(int dirfd, const char *dir, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? NULL : remove_error(dir, name);
	return remove_at(dirfd, dir, name, st.st_dev);
}

pw_err *pw_extract_remove_tree(const char *path)
{
	struct stat st, root;
	if (!path || !*path)
		return pw_err_new(PW_ERR_USAGE, NULL, "%s", _("no directory to remove"));
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? NULL
			: pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), path);
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT
			? pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), path) : NULL;
	if (stat("/", &root) == 0 && root.st_dev == st.st_dev && root.st_ino == st.st_ino)
		return pw_err_new(PW_ERR_REFUSED, NULL, "%s", _("refusing to remove /"));
	int fd = open_dir_at(AT_FDCWD, path, st.st_mode);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), path);
	pw_err *e = remove_contents(fd, path, st.st_dev);
	close(fd);
	if (!e && rmdir(path) < 0 && errno != ENOENT)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove %s"), path);
	return e;
}
