/*
 * GET /api/runtime/python answered from a copy of the last status text while
 * nothing it was made from has changed. Building the status reads the
 * runtime's marker, the pins table, the baseline file and every
 * distribution in site-packages (some sixty system calls and three parsers);
 * checking that none of them changed is a handful of stat calls: the runtime
 * folder and its current/previous links (a swap or rollback renames them),
 * the marker and interpreter behind current, its lib/ and site-packages
 * folders (pip adds and removes .dist-info folders there), the pins table and
 * the baseline file. Each file's device, inode, size, mode, mtime and ctime
 * must match. A copy older than PW_API_STATUS_MAX_AGE_MS is made again
 * whatever the stamps say, which bounds what a stamp cannot see (a file
 * edited in place within one clock tick).
 */
#ifndef PW_API_STATUS_CACHE_H
#define PW_API_STATUS_CACHE_H

#include <stddef.h>

#define PW_API_STATUS_MAX_AGE_MS 1000

typedef struct pw_api_status_cache pw_api_status_cache;

/* pins and baseline: the files the status reads besides the box (may be NULL). */
pw_api_status_cache *pw_api_status_cache_new(const char *box_root, const char *pins, const char *baseline);
void pw_api_status_cache_free(pw_api_status_cache **c);

/* What the stamps are taken against; opaque to callers. */
typedef struct pw_api_status_stamp pw_api_status_stamp;

/* Take the stamps now (before building, so a change made while building
 * shows as a difference next time). */
pw_api_status_stamp *pw_api_status_stamp_take(pw_api_status_cache *c);
void pw_api_status_stamp_free(pw_api_status_stamp *s);
/* The cached text (a copy to free) when stamp s matches the copy's and the
 * copy is young enough; else NULL. */
char *pw_api_status_cache_get(pw_api_status_cache *c, const pw_api_status_stamp *s);
/* Keep text (copied) as made under stamp s; python_version ("3.11.2", may be
 * NULL) names the site-packages folder to watch from now on. */
void pw_api_status_cache_put(pw_api_status_cache *c, const pw_api_status_stamp *s, const char *text,
			     const char *python_version);

#endif
