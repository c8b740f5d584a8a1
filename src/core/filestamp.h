/*
 * File stamps: whether a path still names the file it named when the stamp
 * was taken (same device and inode, type, size, modification and change
 * times). A caller that derived something from a few files (an
 * interpreter resolved through a venv's pyvenv.cfg and links) keeps their
 * stamps and derives it again only when one differs: a stat per file
 * instead of the whole walk. A file replaced by rename, rewritten,
 * retouched, removed, or a link made to point elsewhere all differ.
 */
#ifndef PW_FILESTAMP_H
#define PW_FILESTAMP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pw_filestamp {
	bool exists;
	uint64_t dev, ino;
	uint32_t mode;
	int64_t size;
	int64_t mtime_ns, ctime_ns;
} pw_filestamp;

/* follow: stat (the link's target) rather than lstat (the link itself). */
void pw_filestamp_take(const char *path, bool follow, pw_filestamp *out);
/* True when two stamps are of the same file in the same state, or both
 * say there was no file (for a caller that compares stamps taken at two
 * times, where "still absent" means nothing changed). */
bool pw_filestamp_equal(const pw_filestamp *a, const pw_filestamp *b);
/* True when path (looked at the same way) is still the file of s; a path
 * that did not exist then is never the same. */
bool pw_filestamp_same(const char *path, bool follow, const pw_filestamp *s);
/* The same for path relative to the folder open as dirfd (AT_FDCWD: the
 * working folder): no walk of the folder's own path. */
void pw_filestamp_take_at(int dirfd, const char *path, bool follow, pw_filestamp *out);
bool pw_filestamp_same_at(int dirfd, const char *path, bool follow, const pw_filestamp *s);

#endif
