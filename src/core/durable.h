/*
 * Durable means flushed: what pyward reports as done must survive a power
 * cut. The two steps every publication needs: the new files' data and
 * metadata on disk before anything points at them, and the folder that
 * holds the pointer (a renamed symlink) flushed after the rename.
 */
#ifndef PW_DURABLE_H
#define PW_DURABLE_H

#include "err.h"

/* fsync(2) the folder DIR, so renames and unlinks in it are on disk. */
pw_err *pw_durable_sync_dir(const char *dir);

#endif
