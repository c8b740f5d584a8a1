/* Flushing trees and folders to disk (see durable.h). */
#define _GNU_SOURCE 1 /* syncfs */
#include "config.h"

#include "durable.h"

#include "i18n.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *disk_hint(void)
{
	return _("check the disk (dmesg, df -h) and try again");
}

static int open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

pw_err *pw_durable_sync_dir(const char *dir)
{
	int fd = open_dir(dir);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), dir);
	int rc = fsync(fd), err = errno;
	close(fd);
	if (rc != 0)
		return pw_err_errno(PW_ERR_IO, err, disk_hint(), _("flushing %s to disk"), dir);
	return NULL;
}

pw_err *pw_durable_sync_parents(const char *path, const char *top)
{
	char *dir = xstrdup(path);
	pw_err *e = NULL;
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		slash[slash == dir ? 1 : 0] = '\0';
		e = pw_durable_sync_dir(dir);
		if (e || !top || strcmp(dir, top) == 0 || strcmp(dir, "/") == 0)
			break;
	}
	free(dir);
	return e;
}

pw_err *pw_durable_sync_fs(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), path);
	int rc = syncfs(fd), err = errno;
	close(fd);
	if (rc != 0)
		return pw_err_errno(PW_ERR_IO, err, disk_hint(), _("flushing the file system of %s to disk"), path);
	return NULL;
}

/* Every file and folder below the open folder fd, then fd itself. */
static pw_err *sync_tree_at(int fd, const char *shown, bool skip_linked, int depth)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	pw_err *e = NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), shown);
	}
	for (struct dirent *de; !e && (de = readdir(d));) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			e = pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s/%s to flush it"), shown, n);
		else if (S_ISDIR(st.st_mode) && depth < 64) {
			int sub = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *path = xasprintf("%s/%s", shown, n);
			e = sub < 0 ? pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), path)
				    : sync_tree_at(sub, path, skip_linked, depth + 1);
			if (sub >= 0)
				close(sub);
			free(path);
		} else if (S_ISREG(st.st_mode) && !(skip_linked && st.st_nlink > 1)) {
			int f = openat(fd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (f < 0 || fdatasync(f) != 0)
				e = pw_err_errno(PW_ERR_IO, errno, disk_hint(), _("flushing %s/%s to disk"), shown, n);
			if (f >= 0)
				close(f);
		}
	}
	closedir(d);
	if (!e && fsync(fd) != 0)
		e = pw_err_errno(PW_ERR_IO, errno, disk_hint(), _("flushing %s to disk"), shown);
	return e;
}

pw_err *pw_durable_sync_tree(const char *root, bool skip_linked)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("opening %s to flush it"), root);
	pw_err *e = sync_tree_at(fd, root, skip_linked, 0);
	close(fd);
	return e;
}
