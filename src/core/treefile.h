/*
 * Files pyward itself writes into a tree it did not make (an unpacked
 * runtime): the marker, the PEP 668 file, the rewritten sysconfig data.
 * The tree came from an archive, so any name in it may be a link: every
 * folder on the way is opened from the root's descriptor with O_NOFOLLOW,
 * and files are created with O_EXCL|O_NOFOLLOW (a new file) or written to
 * a fresh name and renamed over a regular file (a rewrite). Nothing is
 * written outside root, whatever the tree holds. What is written is on disk
 * when the call returns (the file's data, then its folder).
 */
#ifndef PW_TREEFILE_H
#define PW_TREEFILE_H

#include "err.h"

#include <stddef.h>
#include <sys/types.h>

/* Create root/rel (its folders must exist, real directories) holding data;
 * an existing rel, of any kind, is PW_ERR_REFUSED. */
pw_err *pw_treefile_create(const char *root, const char *rel, const void *data, size_t len,
			   mode_t mode);
/* Replace the regular file root/rel with data, keeping its mode; anything
 * else at rel (a link, a folder) is PW_ERR_REFUSED. */
pw_err *pw_treefile_replace(const char *root, const char *rel, const void *data, size_t len);
/* Read the regular file root/rel (at most max bytes) into a malloc'd,
 * NUL-terminated *data; a link is PW_ERR_REFUSED, absence PW_ERR_NOTFOUND. */
pw_err *pw_treefile_read(const char *root, const char *rel, size_t max, char **data, size_t *len);

#endif
