/*
 * The tree an extraction writes, below a directory descriptor: which names
 * it holds (folder, file or link, known from the archive's entries, so
 * that an entry is judged before writer threads have caught up), and the
 * writing of folders and links. Every folder is made with mkdirat and
 * entered with openat(O_DIRECTORY|O_NOFOLLOW) from its parent's
 * descriptor; no path is resolved from the top again, so a link in the
 * tree is never followed. The folders of the entry being written stay
 * open, for the files handed to writer threads.
 *
 * Hardlinks are made at the end (their target may still be with a
 * writer), and folder modes that would keep the extraction out (0555) or
 * that the umask changed are set then too.
 */
#ifndef PW_XTREE_H
#define PW_XTREE_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

typedef struct pw_xtree pw_xtree;

enum { PW_XTREE_NONE, PW_XTREE_DIR, PW_XTREE_FILE, PW_XTREE_LINK };

/* top: an open folder (the tree's root, kept open by the caller); dest
 * names it in messages; umask is the process's. */
pw_xtree *pw_xtree_new(int top, const char *dest, mode_t umask);
void pw_xtree_free(pw_xtree **t);

/* What the tree holds at path[0..len) ("" is the top folder). */
int pw_xtree_kind(const pw_xtree *t, const char *path, size_t len);

/* Errors name the entry as shown (escaped by the caller); clean is its
 * path in the tree, checked by the caller. */

/* The open descriptor of clean's folder (borrowed: valid until the next
 * call), making missing folders 0755 on the way. */
pw_err *pw_xtree_parent(pw_xtree *t, const char *shown, const char *clean, int *fd);
/* A folder with mode perm (again: its mode changes to perm). */
pw_err *pw_xtree_dir(pw_xtree *t, const char *shown, const char *clean, mode_t perm);
/* A symlink dated mtime (tv_nsec UTIME_OMIT: now). */
pw_err *pw_xtree_symlink(pw_xtree *t, const char *shown, const char *clean, const char *target,
			 const struct timespec *mtime);
/* A regular file at clean, written by the caller. */
void pw_xtree_file(pw_xtree *t, const char *clean);
/* A hardlink at clean to the file target (a regular file of the tree),
 * made by pw_xtree_finish. */
void pw_xtree_hardlink(pw_xtree *t, const char *shown, const char *clean, const char *target);

/* Make the hardlinks (calling linked for each, in archive order), set
 * the folder modes, and with flush fsync every folder made and the top. */
pw_err *pw_xtree_finish(pw_xtree *t, bool flush, void (*linked)(void *ud, const char *clean, const char *target),
			void *ud);

/* A write failed for want of space (ENOSPC, EDQUOT). */
bool pw_xtree_disk_full(const pw_xtree *t);

#endif
