/*
 * Writes into an untrusted tree, relative to descriptors: see treefile.h.
 */
#include "config.h"

#include "treefile.h"
#include "i18n.h"
#include "xalloc.h"
#include "fdwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char link_hint[] =
	N_("the runtime's files may come from a damaged or malicious archive; install it again");

/* Open the folder holding rel (root itself when rel has no '/') by walking
 * from root without following any link; *base points at rel's last name. */
static pw_err *open_parent(const char *root, const char *rel, int *dfd, const char **base)
{
	*dfd = -1;
	if (!rel || !*rel || rel[0] == '/' || strstr(rel, ".."))
		return pw_err_new(PW_ERR_USAGE, NULL, _("not a plain path inside the tree: %s"), rel ? rel : "");
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot open %s"), root);
	const char *p = rel;
	for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		char *name = xstrndup(p, (size_t)(slash - p));
		int next = *name ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(fd);
		int eno = errno;
		free(name);
		close(fd);
		if (next < 0) {
			char *where = xstrndup(rel, (size_t)(slash - rel));
			pw_err *e = eno == ELOOP || eno == ENOTDIR
				? pw_err_new(PW_ERR_REFUSED, _(link_hint),
					     _("%s/%s is a link or a file, not a folder: nothing was written through it"),
					     root, where)
				: pw_err_errno(eno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, eno, NULL,
					       _("cannot open %s/%s"), root, where);
			free(where);
			return e;
		}
		fd = next;
	}
	*dfd = fd;
	*base = p;
	return NULL;
}

/* The new name (or the rename) in dfd on disk. */
static pw_err *sync_folder(int dfd, const char *root, const char *rel)
{
	if (fsync(dfd) == 0)
		return NULL;
	return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s/%s"), root, rel);
}

/* Write data to a new name in dfd, flushed, and close it. */
static pw_err *write_new_at(int dfd, const char *root, const char *rel, const char *name,
			    const void *data, size_t len, mode_t mode)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST)
		return pw_err_new(PW_ERR_REFUSED, _(link_hint),
				  _("%s/%s is already there (the archive brought it?): not written"), root, rel);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot create %s/%s"), root, rel);
	pw_err *e = NULL;
	if (fchmod(fd, mode) != 0 || pw_write_all(fd, data, len) != 0 || fdatasync(fd) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s/%s"), root, rel);
	if (close(fd) != 0 && !e)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot write %s/%s"), root, rel);
	if (e)
		unlinkat(dfd, name, 0);
	return e;
}

pw_err *pw_treefile_create(const char *root, const char *rel, const void *data, size_t len, mode_t mode)
{
	int dfd;
	const char *base;
	pw_err *e = open_parent(root, rel, &dfd, &base);
	if (e)
		return e;
	e = write_new_at(dfd, root, rel, base, data, len, mode);
	if (!e)
		e = sync_folder(dfd, root, rel);
	close(dfd);
	return e;
}

pw_err *pw_treefile_replace(const char *root, const char *rel, const void *data, size_t len)
{
	int dfd;
	const char *base;
	pw_err *e = open_parent(root, rel, &dfd, &base);
	if (e)
		return e;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		e = pw_err_errno(errno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, errno, NULL, _("cannot inspect %s/%s"),
				 root, rel);
	else if (!S_ISREG(st.st_mode))
		e = pw_err_new(PW_ERR_REFUSED, _(link_hint), _("%s/%s is not a regular file: not rewritten"), root, rel);
	char *tmp = xasprintf(".%s.pyward-%ld", base, (long)getpid());
	if (!e)
		e = write_new_at(dfd, root, rel, tmp, data, len, st.st_mode & 0755);
	if (!e && renameat(dfd, tmp, dfd, base) != 0) {
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot replace %s/%s"), root, rel);
		unlinkat(dfd, tmp, 0);
	}
	if (!e)
		e = sync_folder(dfd, root, rel);
	free(tmp);
	close(dfd);
	return e;
}

pw_err *pw_treefile_read(const char *root, const char *rel, size_t max, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	int dfd;
	const char *base;
	pw_err *e = open_parent(root, rel, &dfd, &base);
	if (e)
		return e;
	int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int eno = errno;
	close(dfd);
	struct stat st;
	if (fd < 0)
		return eno == ELOOP
			? pw_err_new(PW_ERR_REFUSED, _(link_hint), _("%s/%s is a link: not read"), root, rel)
			: pw_err_errno(eno == ENOENT ? PW_ERR_NOTFOUND : PW_ERR_IO, eno, NULL, _("cannot open %s/%s"),
				       root, rel);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		close(fd);
		return pw_err_new(PW_ERR_REFUSED, _(link_hint), _("%s/%s is not a regular file of at most %zu bytes"),
				  root, rel, max);
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return NULL;
}
