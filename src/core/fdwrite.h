#ifndef PW_FDWRITE_H
#define PW_FDWRITE_H

#include <stddef.h>

/* Writes all LEN bytes to a blocking descriptor, retrying short writes and
 * EINTR. Returns 0, or -1 with errno set (ENOSPC when write made no
 * progress without an error). */
int pw_write_all(int fd, const void *data, size_t len);

#endif
