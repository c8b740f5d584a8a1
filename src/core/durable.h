/*
 * Durable means flushed: what pyward reports as done must survive a power
 * cut. The two steps every publication needs: the new files' data and
 * metadata on disk before anything points at them, and the folder that
 * holds the pointer (a renamed symlink) flushed after the rename.
 */
#ifndef PW_DURABLE_H
#define PW_DURABLE_H

#include "err.h"

#include <stdbool.h>

/* fsync(2) the folder DIR, so renames and unlinks in it are on disk. */
pw_err *pw_durable_sync_dir(const char *dir);

/* fsync the folder holding PATH, and its parents up to and including TOP
 * (an ancestor of PATH; NULL: the one folder holding PATH), so that PATH's
 * name and the names of the folders made above it are on disk. */
pw_err *pw_durable_sync_parents(const char *path, const char *top);

/* syncfs(2) the file system holding PATH: every dirty page and inode on
 * it written back, other writers' included. For trees that other programs
 * (Python, pip) wrote, whose files pyward cannot name. */
pw_err *pw_durable_sync_fs(const char *path);

/* fdatasync every regular file below ROOT and fsync every folder, ROOT
 * included (links not followed), several at once; all done when it
 * returns. skip_linked: files with more than one name are left out (hard
 * links to a tree flushed when it was made). A tree more than 64 folders
 * deep is an error (nothing below that depth would be flushed). */
pw_err *pw_durable_sync_tree(const char *root, bool skip_linked);

/* Flushes of things a caller made itself and holds open, made together
 * when it is done making them (the same threads as pw_durable_sync_tree,
 * without walking the tree to find them again). */
typedef struct pw_durable_set pw_durable_set;
pw_durable_set *pw_durable_set_new(void);
/* fd is the set's from now on (closed by flush or free); data: a file
 * (fdatasync), else a folder (fsync); shown names it in an error. */
void pw_durable_set_add(pw_durable_set *s, int fd, bool data, const char *shown);
/* Flush and close every descriptor added; the first failure is the error. */
pw_err *pw_durable_set_flush(pw_durable_set *s);
/* Close what is left unflushed and free the set. */
void pw_durable_set_free(pw_durable_set **s);

#endif
