/*
 * Guarded extraction of a .tar.gz (any format libarchive reads) into a
 * private staging directory. Refused, rejecting the whole archive and
 * removing the staging directory: absolute paths, any ".." component,
 * symlinks or hardlinks whose target resolves outside the staging root (or
 * outside opts.root, the folder that becomes the install), hardlinks that
 * carry data, device, FIFO and socket entries, paths longer than
 * PATH_MAX-ish bounds, more than max_entries entries or more than max_bytes
 * in total (a decompression bomb is stopped while being read, not after).
 * Every write first checks the file system keeps min_free bytes free, so a
 * small archive that unpacks huge stops before the disk is full. setuid,
 * setgid, sticky and group/other write bits are stripped; ownership is
 * never restored.
 */
#ifndef PW_EXTRACT_H
#define PW_EXTRACT_H

#include "cancel.h"
#include "err.h"
#include "events.h"
#include "manifest.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pw_extract_opts {
	const char *archive;
	const char *dest;       /* created (mode 0755); must not exist yet */
	int64_t max_bytes;      /* 0: default 2 GiB */
	int64_t max_entries;    /* 0: default 100000 */
	/* Free space (bytes) every write must leave on dest's file system;
	 * 0: 1% of it, at least 1 MiB and at most 64 MiB; -1: no check (a full
	 * disk is still reported). */
	int64_t min_free;
	/* When set (e.g. "python"): the one top folder every entry must lie in,
	 * because the caller moves it elsewhere afterwards; links are judged
	 * against it, so no link can reach a sibling of its new place. */
	const char *root;
	const pw_cancel *cancel;
	const pw_events *events; /* progress with stage "extract" (bytes of archive read) */
	/* When set, filled (unsorted) with every regular file and symlink as
	 * written: path relative to dest, size, mode, SHA256 hashed on the way
	 * through, so no second pass over the tree is needed. Cleared on error. */
	pw_manifest *manifest;
	/* When set, the archive's bytes come from this callback instead of the
	 * file (archive still names it in messages): it returns the number of
	 * bytes read, 0 at the end, or -1 to stop the extraction. */
	ssize_t (*read)(void *ud, void *buf, size_t len);
	void *read_ud;
	int64_t stream_size;     /* with read: the size for progress, -1 unknown */
	/* Writer threads creating the regular files: 0 the default (3), < 0
	 * none (every file written by the thread that reads the archive). */
	int writers;
	/* fdatasync every file and fsync every folder before returning, so
	 * the tree is on disk without a syncfs of the whole file system. */
	bool flush;
} pw_extract_opts;

typedef struct pw_extract_result {
	int64_t entries;
	int64_t bytes;          /* total size of regular files written */
	bool disk_full;         /* on error: a write failed for want of space (ENOSPC, EDQUOT) */
} pw_extract_result;

/* PW_ERR_REFUSED for a hostile entry (the message names the entry and the
 * rule), PW_ERR_CORRUPT for an unreadable archive, PW_ERR_IO for disk
 * errors. On any error dest is removed. */
pw_err *pw_extract(const pw_extract_opts *opts, pw_extract_result *res);

/* rm -rf that never follows symlinks (used for staging and removal). */
pw_err *pw_extract_remove_tree(const char *path);
/* The same for name in the open directory dirfd (dir only names it in
 * messages): every step is relative to a descriptor, no path is resolved
 * again, so a folder swapped for a link meanwhile is not followed. */
pw_err *pw_extract_remove_at(int dirfd, const char *dir, const char *name);

#endif
