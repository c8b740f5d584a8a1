/* File stamps: see filestamp.h. */
#include "config.h"

#include "filestamp.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

void pw_filestamp_take(const char *path, bool follow, pw_filestamp *out)
{
	pw_filestamp_take_at(AT_FDCWD, path, follow, out);
}

void pw_filestamp_take_at(int dirfd, const char *path, bool follow, pw_filestamp *out)
{
	struct stat st;
	memset(out, 0, sizeof *out);
	if (fstatat(dirfd, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
		return;
	out->exists = true;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->mode = (uint32_t)st.st_mode;
	out->size = (int64_t)st.st_size;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	out->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

bool pw_filestamp_equal(const pw_filestamp *a, const pw_filestamp *b)
{
	if (a->exists != b->exists)
		return false;
	return !a->exists || (a->dev == b->dev && a->ino == b->ino && a->mode == b->mode && a->size == b->size &&
			      a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns);
}

bool pw_filestamp_same(const char *path, bool follow, const pw_filestamp *s)
{
	return pw_filestamp_same_at(AT_FDCWD, path, follow, s);
}

bool pw_filestamp_same_at(int dirfd, const char *path, bool follow, const pw_filestamp *s)
{
	pw_filestamp now;
	pw_filestamp_take_at(dirfd, path, follow, &now);
	return s->exists && pw_filestamp_equal(&now, s);
}
