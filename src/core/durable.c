/* Flushing trees and folders to disk (see durable.h). */
#include "config.h"

#include "durable.h"

#include "i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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
		return pw_err_errno(PW_ERR_IO, err, _("check the disk (dmesg, df -h) and try again"),
				    _("flushing %s to disk"), dir);
	return NULL;
}
