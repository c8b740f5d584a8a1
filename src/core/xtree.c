/* The tree an extraction writes (see xtree.h). */
#include "config.h"

#include "xtree.h"
#include "nameset.h"
#include "xalloc.h"
#include "xwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct open_dir {
	size_t len;   /* of its path, a prefix of the last parent entered */
	int fd;
};

struct later {
	char *clean;
	char *target; /* hardlinks */
	char *shown;
	mode_t perm;  /* folder modes */
	size_t order;
};

struct list {
	struct later *v;
	size_t n, cap;
};

struct pw_xtree {
	int top;
	const char *dest;
	mode_t umask;
	pw_nameset *names;
	char *entered;          /* the folder whose chain is open */
	struct open_dir *stack; /* its folders, outermost first */
	size_t depth, cap;
	struct list links, modes;
	struct list made;       /* every folder made, for the flush */
	bool disk_full;
};

pw_xtree *pw_xtree_new(int top, const char *dest, mode_t umask)
{
	pw_xtree *t = xcalloc(1, sizeof *t);
	t->top = top;
	t->dest = dest;
	t->umask = umask;
	t->names = pw_nameset_new();
	t->entered = xstrdup("");
	return t;
}

static void list_clear(struct list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].clean);
		free(l->v[i].target);
		free(l->v[i].shown);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

static void leave_to(pw_xtree *t, size_t depth)
{
	while (t->depth > depth)
		close(t->stack[--t->depth].fd);
	t->entered[t->depth ? t->stack[t->depth - 1].len : 0] = '\0';
}

void pw_xtree_free(pw_xtree **tp)
{
	pw_xtree *t = tp ? *tp : NULL;
	if (!t)
		return;
	leave_to(t, 0);
	free(t->stack);
	free(t->entered);
	pw_nameset_free(&t->names);
	list_clear(&t->links);
	list_clear(&t->modes);
	list_clear(&t->made);
	free(t);
	*tp = NULL;
}

int pw_xtree_kind(const pw_xtree *t, const char *path, size_t len)
{
	return len ? pw_nameset_get(t->names, path, len) : PW_XTREE_DIR;
}

bool pw_xtree_disk_full(const pw_xtree *t)
{
	return t->disk_full;
}

static pw_err *failed(pw_xtree *t, const char *shown)
{
	return pw_xwriter_error(shown, t->dest, errno, &t->disk_full);
}

static void later_add(struct list *l, const char *clean, const char *target, const char *shown, mode_t perm)
{
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof *l->v);
	l->v[l->n] = (struct later){ xstrdup(clean), target ? xstrdup(target) : NULL,
				    shown ? xstrdup(shown) : NULL, perm, l->n };
	l->n++;
}

/* ------------------------------------------------------------- folders */

static const char *last_name(const char *clean, size_t len)
{
	const char *p = clean + len;
	while (p > clean && p[-1] != '/')
		p--;
	return p;
}

/* mkdirat clean[0..len) in fd. It is opened later, when entered. A mode
 * the umask cut, or one without u+rwx (which would keep the rest of the
 * archive out), is set at the end. */
static pw_err *make_dir(pw_xtree *t, const char *shown, int fd, const char *clean, size_t len, mode_t perm)
{
	char *path = xstrndup(clean, len);
	const char *base = last_name(path, len);
	mode_t made = (perm | 0700) & ~t->umask;
	pw_err *e = mkdirat(fd, base, perm | 0700) == 0 ? NULL : failed(t, shown);
	if (!e) {
		pw_nameset_put(t->names, path, len, PW_XTREE_DIR);
		if (made != perm)
			later_add(&t->modes, path, NULL, shown, perm);
		later_add(&t->made, path, NULL, shown, 0);
	}
	free(path);
	return e;
}

/* How many open folders are clean[0..plen)'s own folders or parents. */
static size_t common_depth(const pw_xtree *t, const char *clean, size_t plen)
{
	size_t d = 0;
	while (d < t->depth) {
		size_t l = t->stack[d].len;
		if (l > plen || memcmp(t->entered, clean, l) != 0 || (l < plen && clean[l] != '/'))
			break;
		d++;
	}
	return d;
}

static pw_err *enter(pw_xtree *t, const char *shown, const char *clean, size_t len)
{
	int parent = t->depth ? t->stack[t->depth - 1].fd : t->top;
	int kind = pw_xtree_kind(t, clean, len);
	pw_err *e = kind == PW_XTREE_NONE ? make_dir(t, shown, parent, clean, len, 0755) : NULL;
	if (e)
		return e;
	if (kind != PW_XTREE_NONE && kind != PW_XTREE_DIR) {
		errno = ENOTDIR; /* the caller's checks make this unreachable */
		return failed(t, shown);
	}
	char *base = xstrndup(last_name(clean, len), len - (size_t)(last_name(clean, len) - clean));
	int fd = openat(parent, base, DIR_FLAGS);
	free(base);
	if (fd < 0)
		return failed(t, shown);
	if (t->depth == t->cap)
		t->stack = xrealloc(t->stack, (t->cap = t->cap ? 2 * t->cap : 16) * sizeof *t->stack);
	t->stack[t->depth++] = (struct open_dir){ len, fd };
	t->entered = xrealloc(t->entered, len + 1);
	memcpy(t->entered, clean, len);
	t->entered[len] = '\0';
	return NULL;
}

pw_err *pw_xtree_parent(pw_xtree *t, const char *shown, const char *clean, int *fd)
{
	const char *slash = strrchr(clean, '/');
	size_t plen = slash ? (size_t)(slash - clean) : 0;
	leave_to(t, common_depth(t, clean, plen));
	pw_err *e = NULL;
	for (size_t at = t->depth ? t->stack[t->depth - 1].len : 0; !e && at < plen;) {
		size_t start = at ? at + 1 : 0;
		size_t end = start + strcspn(clean + start, "/");
		e = enter(t, shown, clean, end);
		at = end;
	}
	*fd = t->depth ? t->stack[t->depth - 1].fd : t->top;
	return e;
}

pw_err *pw_xtree_dir(pw_xtree *t, const char *shown, const char *clean, mode_t perm)
{
	if (pw_xtree_kind(t, clean, strlen(clean)) == PW_XTREE_DIR) {
		later_add(&t->modes, clean, NULL, shown, perm);
		return NULL;
	}
	int fd;
	pw_err *e = pw_xtree_parent(t, shown, clean, &fd);
	return e ? e : make_dir(t, shown, fd, clean, strlen(clean), perm);
}

pw_err *pw_xtree_symlink(pw_xtree *t, const char *shown, const char *clean, const char *target,
			 const struct timespec *mtime)
{
	int fd;
	const char *base = last_name(clean, strlen(clean));
	struct timespec times[2] = { { 0, UTIME_OMIT }, *mtime };
	pw_err *e = pw_xtree_parent(t, shown, clean, &fd);
	if (!e && symlinkat(target, fd, base) != 0)
		e = failed(t, shown);
	if (!e && mtime->tv_nsec != UTIME_OMIT && utimensat(fd, base, times, AT_SYMLINK_NOFOLLOW) != 0)
		e = failed(t, shown);
	if (!e)
		pw_nameset_put(t->names, clean, strlen(clean), PW_XTREE_LINK);
	return e;
}

void pw_xtree_file(pw_xtree *t, const char *clean)
{
	pw_nameset_put(t->names, clean, strlen(clean), PW_XTREE_FILE);
}

void pw_xtree_hardlink(pw_xtree *t, const char *shown, const char *clean, const char *target)
{
	pw_xtree_file(t, clean);
	later_add(&t->links, clean, target, shown, 0);
}

/* ---------------------------------------------------------------- finish */

/* Open path's folder (the whole path with whole) by walking from the top
 * without following links; *base points at the last name otherwise. */
static int open_walk(pw_xtree *t, const char *path, bool whole, const char **base)
{
	int fd = dup(t->top);
	const char *p = path;
	for (;;) {
		size_t n = strcspn(p, "/");
		if (!p[n] && !whole) {
			*base = p;
			return fd;
		}
		char *name = xstrndup(p, n);
		int next = fd < 0 ? -1 : openat(fd, name, DIR_FLAGS);
		int eno = errno;
		free(name);
		if (fd >= 0)
			close(fd);
		errno = eno;
		fd = next;
		if (fd < 0 || !p[n])
			return fd;
		p += n + 1;
	}
}

static pw_err *make_link(pw_xtree *t, const struct later *l)
{
	const char *tbase, *nbase;
	int from = open_walk(t, l->target, false, &tbase);
	int to = from < 0 ? -1 : open_walk(t, l->clean, false, &nbase);
	pw_err *e = to < 0 || linkat(from, tbase, to, nbase, 0) != 0 ? failed(t, l->shown) : NULL;
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	return e;
}

static size_t depth_of(const char *path)
{
	size_t d = 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* Deepest first (a parent left without x must not stop its children
 * being reached), later entries of one folder after earlier ones. */
static int deeper_first(const void *a, const void *b)
{
	const struct later *x = a, *y = b;
	size_t dx = depth_of(x->clean), dy = depth_of(y->clean);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static pw_err *set_modes(pw_xtree *t)
{
	if (t->modes.n > 1)
		qsort(t->modes.v, t->modes.n, sizeof *t->modes.v, deeper_first);
	for (size_t i = 0; i < t->modes.n; i++) {
		const struct later *m = &t->modes.v[i];
		int fd = open_walk(t, m->clean, true, NULL);
		bool ok = fd >= 0 && fchmod(fd, m->perm) == 0;
		int eno = errno;
		if (fd >= 0)
			close(fd);
		errno = eno;
		if (!ok)
			return failed(t, m->shown);
	}
	return NULL;
}

/* Folders are opened here in turn (walking without following links) and
 * fsynced by a few threads at once: each fsync mostly waits for the
 * device, and waits at the same time share its cache flushes (one after
 * another they took 7-200 ms for 150 folders on ext4, the longer when
 * another user's I/O kept the disk busy). */
#define DIR_SYNCERS 8
#define DIR_BATCH 256

struct dir_sync {
	const int *fds;
	size_t n;
	atomic_size_t next;
	atomic_size_t bad;  /* index of a folder whose fsync failed, n when none */
	atomic_int eno;
};

static void *dir_syncer(void *ud)
{
	struct dir_sync *s = ud;
	size_t i;
	while ((i = atomic_fetch_add(&s->next, 1)) < s->n) {
		if (fsync(s->fds[i]) != 0) {
			size_t none = s->n;
			if (atomic_compare_exchange_strong(&s->bad, &none, i))
				atomic_store(&s->eno, errno);
		}
	}
	return NULL;
}

/* fsync fds[0..n) with up to DIR_SYNCERS threads (fewer when few folders
 * or none starts); the index of one that failed with its errno, or n. */
static size_t sync_fds(const int *fds, size_t n, int *eno)
{
	struct dir_sync s = { .fds = fds, .n = n };
	atomic_init(&s.next, 0);
	atomic_init(&s.bad, n);
	atomic_init(&s.eno, 0);
	pthread_t th[DIR_SYNCERS];
	int started = 0;
	while (n > 8 && started < DIR_SYNCERS && (size_t)started * 8 < n &&
	       pthread_create(&th[started], NULL, dir_syncer, &s) == 0)
		started++;
	dir_syncer(&s);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	*eno = atomic_load(&s.eno);
	return atomic_load(&s.bad);
}

static pw_err *flush_dirs(pw_xtree *t)
{
	int fds[DIR_BATCH];
	for (size_t from = 0; from < t->made.n; from += DIR_BATCH) {
		size_t n = t->made.n - from < DIR_BATCH ? t->made.n - from : DIR_BATCH;
		size_t opened = 0, bad = n;
		int eno = 0;
		for (; opened < n; opened++) {
			fds[opened] = open_walk(t, t->made.v[from + opened].clean, true, NULL);
			if (fds[opened] < 0) {
				eno = errno;
				bad = opened;
				break;
			}
		}
		if (bad == n)
			bad = sync_fds(fds, opened, &eno);
		for (size_t k = 0; k < opened; k++)
			close(fds[k]);
		if (bad < n) {
			errno = eno;
			return failed(t, t->made.v[from + bad].shown);
		}
	}
	if (fsync(t->top) != 0)
		return failed(t, ".");
	return NULL;
}

pw_err *pw_xtree_finish(pw_xtree *t, bool flush, void (*linked)(void *ud, const char *clean, const char *target),
			void *ud)
{
	leave_to(t, 0);
	pw_err *e = NULL;
	for (size_t i = 0; !e && i < t->links.n; i++) {
		e = make_link(t, &t->links.v[i]);
		if (!e && linked)
			linked(ud, t->links.v[i].clean, t->links.v[i].target);
	}
	if (!e)
		e = set_modes(t);
	if (!e && flush)
		e = flush_dirs(t);
	return e;
}
