/* Flushing trees and folders to disk (see durable.h). */
#define _GNU_SOURCE 1 /* syncfs */
#include "config.h"

#include "durable.h"

#include "i18n.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *disk_hint(void)
{
	return _("check the disk (dmesg, df -h) and try again");
}

static int open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

pw_err *pw_durable_sync_dir(const char *dir)
{
	int fd = open_dir(dir);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), dir);
	int rc = fsync(fd), err = errno;
	close(fd);
	if (rc != 0)
		return pw_err_errno(PW_ERR_IO, err, disk_hint(), _("flushing %s to disk"), dir);
	return NULL;
}

pw_err *pw_durable_sync_parents(const char *path, const char *top)
{
	char *dir = xstrdup(path);
	pw_err *e = NULL;
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		slash[slash == dir ? 1 : 0] = '\0';
		e = pw_durable_sync_dir(dir);
		if (e || !top || strcmp(dir, top) == 0 || strcmp(dir, "/") == 0)
			break;
	}
	free(dir);
	return e;
}

pw_err *pw_durable_sync_fs(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), path);
	int rc = syncfs(fd), err = errno;
	close(fd);
	if (rc != 0)
		return pw_err_errno(PW_ERR_IO, err, disk_hint(), _("flushing the file system of %s to disk"), path);
	return NULL;
}

/* Flushes waiting to be made: open descriptors (data: fdatasync, else
 * fsync) with the names to report. They are made by a few threads at once:
 * each fsync of an already committed folder still waits for the disk's
 * cache flush, and flushes under way together are merged by the block
 * layer, so ~120 folders take a few flushes instead of ~120 (bench/README:
 * 1 thread ~190 ms, 8 ~113 ms, 32 ~99 ms for a create with pip at load 4). */
#define SYNC_THREADS 32
#define SYNC_BATCH 256  /* descriptors held open at most */
#define SYNC_DEPTH 64

struct pending {
	int fd;
	bool data;
	char *shown;
};

struct batch {
	struct pending p[SYNC_BATCH];
	size_t n, next, failed;
	int err;
	pthread_mutex_t mu;
};

static void *sync_worker(void *arg)
{
	struct batch *b = arg;
	for (;;) {
		pthread_mutex_lock(&b->mu);
		size_t i = b->next < b->n && !b->err ? b->next++ : SIZE_MAX;
		pthread_mutex_unlock(&b->mu);
		if (i == SIZE_MAX)
			return NULL;
		int rc = b->p[i].data ? fdatasync(b->p[i].fd) : fsync(b->p[i].fd), err = errno;
		if (rc != 0) {
			pthread_mutex_lock(&b->mu);
			if (!b->err) {
				b->err = err;
				b->failed = i;
			}
			pthread_mutex_unlock(&b->mu);
		}
	}
}

/* Flush every descriptor of b (on up to SYNC_THREADS threads, this one
 * among them), close them; the first failure is the error. */
static pw_err *run_batch(struct batch *b)
{
	pthread_t t[SYNC_THREADS - 1];
	size_t started = 0, want = b->n < SYNC_THREADS ? b->n : SYNC_THREADS;
	b->next = 0;
	b->err = 0;
	for (size_t i = 1; i < want; i++)
		if (pthread_create(&t[started], NULL, sync_worker, b) == 0)
			started++;
	sync_worker(b);
	for (size_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pw_err *e = b->err ? pw_err_errno(PW_ERR_IO, b->err, disk_hint(), _("flushing %s to disk"),
					  b->p[b->failed].shown)
		: NULL;
	for (size_t i = 0; i < b->n; i++) {
		close(b->p[i].fd);
		free(b->p[i].shown);
	}
	b->n = 0;
	return e;
}

/* fd (owned by the batch from now on) flushed before run_batch returns. */
static pw_err *add_pending(struct batch *b, int fd, bool data, char *shown)
{
	b->p[b->n++] = (struct pending){ .fd = fd, .data = data, .shown = shown };
	return b->n == SYNC_BATCH ? run_batch(b) : NULL;
}

/* Every file and folder below the open folder fd, then fd itself (taken
 * by the batch), queued on b. */
static pw_err *sync_tree_at(int fd, const char *shown, bool skip_linked, int depth, struct batch *b)
{
	if (depth > SYNC_DEPTH) {
		close(fd);
		return pw_err_new(PW_ERR_IO, NULL, _("%s is more than %d folders deep, so it was not flushed to disk"),
				  shown, SYNC_DEPTH);
	}
	int dup_fd = dup(fd);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	pw_err *e = NULL;
	if (!d) {
		int err = errno;
		if (dup_fd >= 0)
			close(dup_fd);
		close(fd);
		return pw_err_errno(PW_ERR_IO, err, NULL, _("opening %s to flush it"), shown);
	}
	for (struct dirent *de; !e && (de = readdir(d));) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		/* d_type spares a stat, except for a file that may be a link
		 * to be left out, or a file system that does not say */
		unsigned char type = de->d_type;
		struct stat st = { 0 };
		if (type == DT_UNKNOWN || (type == DT_REG && skip_linked)) {
			if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				e = pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s/%s to flush it"), shown, n);
				break;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
		}
		if (type == DT_DIR) {
			int sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *path = xasprintf("%s/%s", shown, n);
			e = sub < 0 ? pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), path)
				    : sync_tree_at(sub, path, skip_linked, depth + 1, b);
			free(path);
		} else if (type == DT_REG && !(skip_linked && st.st_nlink > 1)) {
			int f = openat(fd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (f < 0)
				e = pw_err_errno(PW_ERR_IO, errno, disk_hint(), _("flushing %s/%s to disk"), shown, n);
			else
				e = add_pending(b, f, true, xasprintf("%s/%s", shown, n));
		}
	}
	closedir(d);
	if (e) {
		close(fd);
		return e;
	}
	return add_pending(b, fd, false, xstrdup(shown));
}

pw_err *pw_durable_sync_tree(const char *root, bool skip_linked)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), root);
	struct batch *b = xcalloc(1, sizeof *b);
	pthread_mutex_init(&b->mu, NULL);
	pw_err *e = sync_tree_at(fd, root, skip_linked, 0, b);
	pw_err *last = run_batch(b); /* also closes what an error left queued */
	if (!e)
		e = last;
	else
		pw_err_free(last);
	pthread_mutex_destroy(&b->mu);
	free(b);
	return e;
}

struct pw_durable_set {
	struct pending *p;
	size_t n, cap;
};

pw_durable_set *pw_durable_set_new(void)
{
	return xcalloc(1, sizeof(pw_durable_set));
}

void pw_durable_set_add(pw_durable_set *s, int fd, bool data, const char *shown)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->p = xrealloc(s->p, s->cap * sizeof *s->p);
	}
	s->p[s->n++] = (struct pending){ .fd = fd, .data = data, .shown = xstrdup(shown) };
}

/* Called once everything added is made: in batches of SYNC_BATCH (the
 * descriptors are already open, so the order does not matter). */
pw_err *pw_durable_set_flush(pw_durable_set *s)
{
	struct batch *b = xcalloc(1, sizeof *b);
	pthread_mutex_init(&b->mu, NULL);
	pw_err *e = NULL;
	size_t i = 0;
	while (i < s->n) {
		while (i < s->n && b->n < SYNC_BATCH)
			b->p[b->n++] = s->p[i++];
		pw_err *f = run_batch(b); /* closes them */
		if (!e)
			e = f;
		else
			pw_err_free(f);
	}
	s->n = 0;
	pthread_mutex_destroy(&b->mu);
	free(b);
	return e;
}

void pw_durable_set_free(pw_durable_set **s)
{
	if (!s || !*s)
		return;
	for (size_t i = 0; i < (*s)->n; i++) {
		close((*s)->p[i].fd);
		free((*s)->p[i].shown);
	}
	free((*s)->p);
	free(*s);
	*s = NULL;
}
