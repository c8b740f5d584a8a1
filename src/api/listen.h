/*
 * The server's listening sockets: a UNIX socket (file permissions are the
 * authorisation; the peer's uid is the caller), TCP (bearer tokens; loopback
 * unless told otherwise), and the sockets systemd passes (LISTEN_FDS).
 */
#ifndef PW_API_LISTEN_H
#define PW_API_LISTEN_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pw_listener {
	bool is_unix;
	int fd;
	char *name;       /* "unix:PATH", "127.0.0.1:8080", "[::1]:8080" */
	char *unix_path;  /* the socket file this process made (removed on close); NULL otherwise */
	bool loopback;    /* TCP on 127.0.0.0/8 or ::1 */
	bool activated;   /* passed in by systemd */
	uint16_t port;    /* TCP: the bound port (the real one when 0 was asked) */
} pw_listener;

/* Open spec: "unix:PATH" (mode 0660, group gid unless (gid_t)-1; a stale
 * socket file is replaced, a live one or any other file is an error),
 * "HOST:PORT", "[V6ADDR]:PORT" or "PORT" (127.0.0.1). HOST is an address
 * or "localhost"; PORT 0 picks a free one. */
pw_err *pw_listen_open(const char *spec, gid_t gid, pw_listener *out);
/* The descriptors systemd passed (sd_listen_fds), as listeners; *n = 0
 * when not socket-activated. Each must be a listening stream socket. */
pw_err *pw_listen_activated(pw_listener **out, size_t *n);
/* Close the socket; remove the socket file this process made. */
void pw_listener_close(pw_listener *l);

#endif
