/*
 * The extractor's writer threads. Regular files read from an archive are
 * handed over whole (their bytes copied out of libarchive's buffer), and a
 * small pool creates, writes, dates, hashes and, when asked, flushes them,
 * so that the kernel's work of making files runs on more than one core
 * while the reading thread goes on parsing and checking entries.
 *
 * A writer never resolves a path: each file is created in a directory
 * descriptor its caller opened without following links, by one openat(2)
 * with O_CREAT|O_EXCL|O_NOFOLLOW and its final mode, so it can neither
 * follow a link nor replace anything. Every guard on names, links and
 * limits stays with the caller, which decides before handing a file over.
 *
 * The first error stops the pool: files not started are dropped, and the
 * caller sees it through pw_xwriter_failed() and pw_xwriter_finish().
 */
#ifndef PW_XWRITER_H
#define PW_XWRITER_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

typedef struct pw_xwriter pw_xwriter;

typedef struct pw_xfile {
	int dirfd;             /* folder to create it in: the pool closes it */
	char *base;            /* its name there (owned by the pool once handed over) */
	char *name;            /* the archive entry's name, for messages (owned) */
	mode_t mode;           /* final permission bits */
	struct timespec mtime; /* tv_nsec == UTIME_OMIT: leave the time of writing */
	unsigned char *data;   /* len bytes (owned) */
	size_t len;
	bool hash;             /* fill sha256 with the data's SHA256 */
	size_t tag;            /* the caller's (which manifest entry) */
	char sha256[65];
} pw_xfile;

typedef struct pw_xwriter_opts {
	int threads;           /* writer threads, at least 1 */
	size_t max_pending;    /* bytes handed over and not written yet; 0: 32 MiB */
	bool flush;            /* fdatasync each file before closing it */
	mode_t umask;          /* the process's: bits it would strip are set back with fchmod */
	const char *dest;      /* the tree, for messages */
	/* Called for every file written, on the caller's thread (from submit
	 * and finish), never on a writer's. */
	void (*done)(void *ud, const pw_xfile *f);
	void *ud;
} pw_xwriter_opts;

/* NULL when no thread could be started (the caller writes itself). */
pw_xwriter *pw_xwriter_start(const pw_xwriter_opts *o);

/* Hand f over (its fields are taken; the caller forgets them). Waits while
 * too many bytes or files are pending. false when the pool has failed: f
 * was dropped and pw_xwriter_finish() returns the error. */
bool pw_xwriter_submit(pw_xwriter *w, pw_xfile *f);

/* A writer failed: stop handing files over. */
bool pw_xwriter_failed(pw_xwriter *w);

/* Wait until every file handed over is written (or, with abandon, drop
 * those not started and wait only for the running ones), stop the
 * threads, free the pool. Returns the first writer's error; *disk_full
 * tells whether it was for want of space. */
pw_err *pw_xwriter_finish(pw_xwriter **w, bool abandon, bool *disk_full);

/* For the caller's own writes, which must behave the same: */
/* Create base in dirfd as a writer does; a descriptor, or -1 with errno. */
int pw_xwriter_create(int dirfd, const char *base, mode_t mode, mode_t umask);
/* Set the time, flush when asked, close; 0 or -1 with errno (fd closed). */
int pw_xwriter_close(int fd, const struct timespec *mtime, bool flush);
/* The error for a failed write of entry name into dest; *disk_full set for
 * ENOSPC and EDQUOT. */
pw_err *pw_xwriter_error(const char *name, const char *dest, int eno, bool *disk_full);

#endif
