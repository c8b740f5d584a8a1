/* The extractor's writer threads (see xwriter.h). */
#include "config.h"

#include "xwriter.h"
#include "digest.h"
#include "i18n.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define MAX_THREADS 8
#define DEFAULT_PENDING ((size_t)32 << 20)
/* Each pending file holds a folder descriptor: bound them well under the
 * usual limit of 1024. */
#define MAX_PENDING_FILES 128
/* With flush: written files wait, open, for a flusher's fdatasync. Many
 * flushers, because a flush mostly waits for the device, and the block
 * layer merges the cache flushes of fdatasyncs that wait at the same time
 * into one: 16 flushing together cost little more than one. */
#define FLUSHERS 16
#define MAX_FLUSH_QUEUE 256

struct flush_job {
	int fd;
	char *name;
};

struct job {
	pw_xfile f;
	struct job *next;
};

struct pw_xwriter {
	pw_xwriter_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work;   /* a job queued, or stopping */
	pthread_cond_t room;   /* a job finished: pending shrank */
	struct job *head, *tail; /* queued, not started */
	struct job *done;      /* written, for the done callback */
	size_t pending_bytes;  /* queued or being written */
	size_t pending_files;
	bool stopping;
	atomic_bool failed;
	pw_err *first;
	bool disk_full;
	pthread_t threads[MAX_THREADS];
	int started;
	/* the flushers: their own lock, so a waiting writer never holds mu */
	pthread_mutex_t fmu;
	pthread_cond_t fwork;   /* a file queued, or stopping */
	pthread_cond_t froom;   /* a file taken */
	struct flush_job fq[MAX_FLUSH_QUEUE];
	size_t fhead, fcount;
	bool fstopping;
	pthread_t flushers[FLUSHERS];
	int fstarted;
};

/* ---------------------------------------------------------------- files */

int pw_xwriter_create(int dirfd, const char *base, mode_t mode, mode_t umask)
{
	int fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	/* The umask is the user's, but a runtime's modes are the archive's
	 * (masked by the caller): only when it stripped a bit is a chmod due. */
	if (fd >= 0 && (mode & umask) && fchmod(fd, mode) != 0) {
		int eno = errno;
		close(fd);
		errno = eno;
		return -1;
	}
	return fd;
}

int pw_xwriter_close(int fd, const struct timespec *mtime, bool flush)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, *mtime };
	int rc = 0, eno = 0;
	if (mtime->tv_nsec != UTIME_OMIT && futimens(fd, times) != 0)
		rc = -1, eno = errno;
	if (rc == 0 && flush && fdatasync(fd) != 0)
		rc = -1, eno = errno;
	if (close(fd) != 0 && rc == 0)
		rc = -1, eno = errno;
	errno = eno;
	return rc;
}

pw_err *pw_xwriter_error(const char *name, const char *dest, int eno, bool *disk_full)
{
	if (eno == ENOSPC || eno == EDQUOT) {
		*disk_full = true;
		return pw_err_new(PW_ERR_IO, _("free some space on that file system and run again"),
				  _("disk full: no space left to write '%s' into %s (%s)"), name, dest,
				  strerror(eno));
	}
	return pw_err_new(PW_ERR_IO, NULL, _("cannot write archive entry '%s' into %s: %s"), name, dest,
			  strerror(eno));
}

static void record_error(pw_xwriter *w, const char *name, int eno);

/* Give an open, written file to the flushers (they fdatasync and close
 * it); without flushers, flush and close it here. 0 or an errno. */
static int flush_later(pw_xwriter *w, int fd, const char *name)
{
	if (!w->fstarted) {
		int rc = fdatasync(fd) != 0 ? errno : 0;
		if (close(fd) != 0 && !rc)
			rc = errno;
		return rc;
	}
	pthread_mutex_lock(&w->fmu);
	while (w->fcount == MAX_FLUSH_QUEUE)
		pthread_cond_wait(&w->froom, &w->fmu);
	w->fq[(w->fhead + w->fcount) % MAX_FLUSH_QUEUE] = (struct flush_job){ fd, xstrdup(name) };
	w->fcount++;
	pthread_cond_signal(&w->fwork);
	pthread_mutex_unlock(&w->fmu);
	return 0;
}

static void *flusher_main(void *ud)
{
	pw_xwriter *w = ud;
	pthread_mutex_lock(&w->fmu);
	for (;;) {
		while (!w->fcount && !w->fstopping)
			pthread_cond_wait(&w->fwork, &w->fmu);
		if (!w->fcount)
			break;
		struct flush_job j = w->fq[w->fhead];
		w->fhead = (w->fhead + 1) % MAX_FLUSH_QUEUE;
		w->fcount--;
		pthread_cond_signal(&w->froom);
		pthread_mutex_unlock(&w->fmu);
		/* after a failure the tree is removed: flushing it is no use */
		int eno = !atomic_load(&w->failed) && fdatasync(j.fd) != 0 ? errno : 0;
		if (close(j.fd) != 0 && !eno)
			eno = errno;
		if (eno) {
			pthread_mutex_lock(&w->mu);
			record_error(w, j.name, eno);
			pthread_mutex_unlock(&w->mu);
		}
		free(j.name);
		pthread_mutex_lock(&w->fmu);
	}
	pthread_mutex_unlock(&w->fmu);
	return NULL;
}

/* Create, write, date and close one file, flushed when asked (by the
 * flushers, which close it then); 0 or an errno. */
static int write_file(pw_xwriter *w, pw_xfile *f)
{
	int fd = pw_xwriter_create(f->dirfd, f->base, f->mode, w->o.umask);
	int eno = fd < 0 ? errno : 0;
	close(f->dirfd);
	f->dirfd = -1;
	if (fd < 0)
		return eno;
	if (pw_write_all(fd, f->data, f->len) != 0) {
		eno = errno;
		close(fd);
		return eno;
	}
	if (f->hash) {
		pw_sha256 *h = pw_sha256_new();
		pw_sha256_update(h, f->data, f->len);
		pw_sha256_final_hex(h, f->sha256);
		pw_sha256_free(&h);
	}
	struct timespec times[2] = { { 0, UTIME_OMIT }, f->mtime };
	if (f->mtime.tv_nsec != UTIME_OMIT && futimens(fd, times) != 0) {
		eno = errno;
		close(fd);
		return eno;
	}
	if (w->o.flush)
		return flush_later(w, fd, f->name);
	return close(fd) != 0 ? errno : 0;
}

static void free_job(struct job *j)
{
	if (j->f.dirfd >= 0)
		close(j->f.dirfd);
	free(j->f.base);
	free(j->f.name);
	free(j->f.data);
	free(j);
}

/* -------------------------------------------------------------- threads */

static struct job *next_job(pw_xwriter *w)
{
	while (!w->head && !w->stopping)
		pthread_cond_wait(&w->work, &w->mu);
	struct job *j = w->head;
	if (j && !(w->head = j->next))
		w->tail = NULL;
	return j;
}

/* With mu held: the first error is the one reported; the pool stops. */
static void record_error(pw_xwriter *w, const char *name, int eno)
{
	if (!w->first)
		w->first = pw_xwriter_error(name, w->o.dest, eno, &w->disk_full);
	atomic_store(&w->failed, true);
}

/* With the lock held: the job no longer counts as pending. */
static void settle(pw_xwriter *w, struct job *j, bool written, int eno)
{
	w->pending_bytes -= j->f.len;
	w->pending_files--;
	pthread_cond_broadcast(&w->room);
	if (eno)
		record_error(w, j->f.name, eno);
	if (!written || eno || !w->o.done) {
		free_job(j);
		return;
	}
	free(j->f.data); /* only the tag and hash are wanted now */
	j->f.data = NULL;
	j->next = w->done;
	w->done = j;
}

static void *writer_main(void *ud)
{
	pw_xwriter *w = ud;
	pthread_mutex_lock(&w->mu);
	struct job *j;
	while ((j = next_job(w))) {
		int eno = 0;
		bool written = !atomic_load(&w->failed); /* else dropped */
		if (written) {
			pthread_mutex_unlock(&w->mu);
			eno = write_file(w, &j->f);
			pthread_mutex_lock(&w->mu);
		}
		settle(w, j, written, eno);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Run the done callback for the files written so far, outside the lock. */
static void reap(pw_xwriter *w)
{
	pthread_mutex_lock(&w->mu);
	struct job *j = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->mu);
	while (j) {
		struct job *next = j->next;
		w->o.done(w->o.ud, &j->f);
		free_job(j);
		j = next;
	}
}

/* tmpfs and ramfs keep nothing over a power cut, and their fdatasync
 * returns at once: handing files to flushers there only costs wake-ups. */
static bool in_memory(const char *dest)
{
	struct statfs s;
	return dest && statfs(dest, &s) == 0 && (s.f_type == TMPFS_MAGIC || s.f_type == RAMFS_MAGIC);
}

/* Let the flushers finish what is queued, join them, free their lock. */
static void stop_flushers(pw_xwriter *w)
{
	pthread_mutex_lock(&w->fmu);
	w->fstopping = true;
	pthread_cond_broadcast(&w->fwork);
	pthread_mutex_unlock(&w->fmu);
	for (int i = 0; i < w->fstarted; i++)
		pthread_join(w->flushers[i], NULL);
	pthread_cond_destroy(&w->froom);
	pthread_cond_destroy(&w->fwork);
	pthread_mutex_destroy(&w->fmu);
}

pw_xwriter *pw_xwriter_start(const pw_xwriter_opts *o)
{
	pw_xwriter *w = xcalloc(1, sizeof *w);
	w->o = *o;
	if (!w->o.max_pending)
		w->o.max_pending = DEFAULT_PENDING;
	int want = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->room, NULL);
	atomic_init(&w->failed, false);
	pthread_mutex_init(&w->fmu, NULL);
	pthread_cond_init(&w->fwork, NULL);
	pthread_cond_init(&w->froom, NULL);
	while (w->o.flush && !in_memory(o->dest) && w->fstarted < FLUSHERS &&
	       pthread_create(&w->flushers[w->fstarted], NULL, flusher_main, w) == 0)
		w->fstarted++;
	while (w->started < want && pthread_create(&w->threads[w->started], NULL, writer_main, w) == 0)
		w->started++;
	if (!w->started) {
		stop_flushers(w);
		pthread_cond_destroy(&w->room);
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	return w;
}

bool pw_xwriter_failed(pw_xwriter *w)
{
	return atomic_load(&w->failed);
}

bool pw_xwriter_submit(pw_xwriter *w, pw_xfile *f)
{
	struct job *j = xcalloc(1, sizeof *j);
	j->f = *f;
	memset(f, 0, sizeof *f);
	f->dirfd = -1;
	if (w->o.done)
		reap(w);
	pthread_mutex_lock(&w->mu);
	/* A file bigger than the whole allowance still goes, alone. */
	while (!atomic_load(&w->failed) &&
	       (w->pending_files >= MAX_PENDING_FILES ||
		(w->pending_bytes && w->pending_bytes + j->f.len > w->o.max_pending)))
		pthread_cond_wait(&w->room, &w->mu);
	bool ok = !atomic_load(&w->failed);
	if (ok) {
		w->pending_bytes += j->f.len;
		w->pending_files++;
		if (w->tail)
			w->tail->next = j;
		else
			w->head = j;
		w->tail = j;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->mu);
	if (!ok)
		free_job(j);
	return ok;
}

pw_err *pw_xwriter_finish(pw_xwriter **wp, bool abandon, bool *disk_full)
{
	pw_xwriter *w = *wp;
	*wp = NULL;
	if (!w)
		return NULL;
	pthread_mutex_lock(&w->mu);
	if (abandon)
		atomic_store(&w->failed, true); /* writers drop what is queued */
	w->stopping = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->started; i++)
		pthread_join(w->threads[i], NULL);
	stop_flushers(w); /* every file written is flushed (or failed) now */
	if (w->o.done && !abandon && !w->first)
		reap(w);
	for (struct job *j = w->done, *next; j; j = next) {
		next = j->next;
		free_job(j);
	}
	pw_err *e = w->first;
	if (disk_full)
		*disk_full = w->disk_full;
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	free(w);
	return e;
}
