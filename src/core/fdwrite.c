#include "config.h"

#include "fdwrite.h"

#include <errno.h>
#include <unistd.h>

int pw_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
