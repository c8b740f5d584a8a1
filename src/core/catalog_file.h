/*
 * The catalog's file on disk, apart from what is in it: created 0640 with
 * the box root's group (so an operator may let a group read the history,
 * and nobody else reads recorded command lines), never reached through a
 * symlink, and opened by a reader who may not write (another user, a
 * read-only mount) without SQLite trying to create its -shm file.
 */
#ifndef PW_CATALOG_FILE_H
#define PW_CATALOG_FILE_H

#include "err.h"

#include <stdbool.h>

#define PW_CATALOG_FILE_MODE 0640

/* PW_ERR_REFUSED when path (or its -wal, -shm or -journal file) is a
 * symlink, dangling or not: the catalog would be written where it points. */
pw_err *pw_catalog_file_refuse_links(const char *path);
/* Before a writer opens it: create path 0640 (group: the folder's) when
 * missing, without following a link; a catalog this user owns that others
 * may read (0644 from older releases) is narrowed to 0640, with its -wal
 * and -shm. */
pw_err *pw_catalog_file_prepare(const char *path);
/* May this process write the catalog (the file, or the folder for a new
 * one, and the folder for SQLite's -wal and -shm)? */
bool pw_catalog_file_writable(const char *path);
/* What a reader passes to sqlite3_open_v2 (malloc'd) and the flags to add:
 * the path itself when it may write, or may read the -wal and -shm a
 * writer keeps; else a URI with mode=ro&immutable=1 (no -shm needed: the
 * last writer left everything in the file). */
char *pw_catalog_file_reader_name(const char *path, int *extra_flags);
/* Did the last connection to path end without closing (killed, crashed,
 * power cut)? True when its -wal holds frames and no open connection holds
 * the -shm (read from /proc/locks, never by opening the -shm: closing a
 * descriptor would drop this process's own SQLite locks on it). Asked
 * before opening, since the open itself takes the lock. */
bool pw_catalog_file_left_open(const char *path);

#endif
