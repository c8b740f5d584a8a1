/* Listening sockets for the HTTP API (listen.h). */
#include "config.h"

#include "api/listen.h"

#include "i18n.h"
#include "libload.h"
#include "xalloc.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum { BACKLOG = 128 };

/* ---------------------------------------------------------------- UNIX */

/* A socket file already at path: replace it only when nobody answers. */
static pw_err *clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? NULL : pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot inspect %s"), path);
	if (!S_ISSOCK(st.st_mode))
		return pw_err_new(PW_ERR_USAGE, _("give another path with --listen unix:PATH"),
				  _("%s exists and is not a socket; it is left alone"), path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot make a socket"));
	int rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
	int err = errno;
	close(fd);
	if (rc == 0)
		return pw_err_new(PW_ERR_REFUSED, _("stop the other server first, or listen elsewhere"),
				  _("another server is listening on %s"), path);
	if (err != ECONNREFUSED)
		return pw_err_errno(PW_ERR_IO, err, NULL, _("cannot tell whether %s is in use"), path);
	if (unlink(path) != 0 && errno != ENOENT)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot remove the stale socket %s"), path);
	return NULL;
}

static pw_err *bind_unix(int fd, const struct sockaddr_un *sa, const char *path, gid_t gid)
{
	/* Made with no access for others at all, then opened to the group:
	 * never a moment when anyone else could connect. */
	mode_t old = umask(0177);
	int rc = bind(fd, (const struct sockaddr *)sa, sizeof *sa);
	int err = errno;
	umask(old);
	if (rc != 0)
		return pw_err_errno(PW_ERR_IO, err, NULL, _("cannot listen on %s"), path);
	/* The box's group: its members may use the API. Not being in it
	 * (no permission to chown) leaves our own group, which is narrower. */
	if (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0 && errno != EPERM) {
		err = errno;
		unlink(path);
		return pw_err_errno(PW_ERR_IO, err, NULL, _("cannot set the group of %s"), path);
	}
	if (chmod(path, 0660) != 0) {
		err = errno;
		unlink(path);
		return pw_err_errno(PW_ERR_IO, err, NULL, _("cannot set the mode of %s"), path);
	}
	return NULL;
}

static pw_err *open_unix(const char *path, gid_t gid, pw_listener *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!*path || strlen(path) >= sizeof sa.sun_path)
		return pw_err_new(PW_ERR_USAGE, _("UNIX socket paths are at most 107 bytes; choose a shorter one"),
				  _("unusable socket path \"%s\""), path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	pw_err *e = clear_stale(path, &sa);
	if (e)
		return e;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot make a socket"));
	e = bind_unix(fd, &sa, path, gid);
	if (!e && listen(fd, BACKLOG) != 0) {
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot listen on %s"), path);
		unlink(path);
	}
	if (e) {
		close(fd);
		return e;
	}
	*out = (pw_listener){ .is_unix = true, .fd = fd, .name = xasprintf("unix:%s", path),
			      .unix_path = xstrdup(path) };
	return NULL;
}

/* ---------------------------------------------------------------- TCP */

static bool addr_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

/* "127.0.0.1:8080" or "[::1]:8080" for a bound socket; sets the port. */
static char *addr_name(const struct sockaddr_storage *ss, uint16_t *port)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		*port = ntohs(in->sin_port);
		return xasprintf("%s:%u", host, (unsigned)*port);
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
	*port = ntohs(in6->sin6_port);
	return xasprintf("[%s]:%u", host, (unsigned)*port);
}

static bool parse_port(const char *s, uint16_t *port)
{
	if (!*s || strlen(s) > 5)
		return false;
	unsigned long v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* spec -> address: "PORT", "HOST:PORT", "[V6]:PORT"; HOST numeric or localhost. */
static pw_err *parse_tcp(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2] = "127.0.0.1";
	const char *port_s = spec;
	const char *colon = strrchr(spec, ':');
	if (colon) {
		size_t hl = (size_t)(colon - spec);
		const char *h = spec;
		if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		if (hl >= sizeof host)
			hl = sizeof host - 1;
		if (hl > 0) {
			memcpy(host, h, hl);
			host[hl] = '\0';
		}
		port_s = colon + 1;
	}
	uint16_t port;
	pw_err *bad = pw_err_new(PW_ERR_USAGE,
		_("write unix:PATH, HOST:PORT, [IPV6]:PORT or PORT, with a numeric address or localhost"),
		_("cannot listen on \"%s\""), spec);
	if (!parse_port(port_s, &port))
		return bad;
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof *in;
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof *in6;
	} else {
		return bad;
	}
	pw_err_free(bad);
	return NULL;
}

static pw_err *open_tcp(const char *spec, pw_listener *out)
{
	struct sockaddr_storage ss;
	socklen_t len;
	pw_err *e = parse_tcp(spec, &ss, &len);
	if (e)
		return e;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, NULL, _("cannot make a socket"));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, BACKLOG) != 0) {
		e = pw_err_errno(PW_ERR_IO, errno, _("is another server using that port?"), _("cannot listen on %s"), spec);
		close(fd);
		return e;
	}
	len = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*out = (pw_listener){ .fd = fd, .loopback = addr_loopback(&ss) };
	out->name = addr_name(&ss, &out->port);
	return NULL;
}

pw_err *pw_listen_open(const char *spec, gid_t gid, pw_listener *out)
{
	memset(out, 0, sizeof *out);
	out->fd = -1;
	if (strncmp(spec, "unix:", 5) == 0)
		return open_unix(spec + 5, gid, out);
	return open_tcp(spec, out);
}

/* ---------------------------------------------------------------- systemd */

#define LISTEN_FDS_START 3

/* sd_listen_fds(1) from libsystemd when the build has it (loaded on first
 * use); without it the same protocol read by hand. Either way the
 * variables are unset, so children never see them. */
static int listen_fds(void)
{
#ifdef HAVE_LIBSYSTEMD
	char *why = NULL;
	void *h = pw_lib_open(PW_LIBSYSTEMD_SONAME, &why);
	free(why);
	int (*fn)(int) = h ? (int (*)(int))dlsym(h, "sd_listen_fds") : NULL;
	if (fn)
		return fn(1);
#endif
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int n = 0;
	if (pid && fds && strtol(pid, NULL, 10) == (long)getpid())
		n = (int)strtol(fds, NULL, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	for (int i = 0; i < n; i++)
		fcntl(LISTEN_FDS_START + i, F_SETFD, FD_CLOEXEC);
	return n < 0 ? 0 : n;
}

static pw_err *adopt(int fd, pw_listener *out)
{
	int type = 0, acc = 0;
	socklen_t tl = sizeof type, al = sizeof acc;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) != 0 || type != SOCK_STREAM || !acc ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return pw_err_new(PW_ERR_USAGE, _("the socket unit must use ListenStream="),
				  _("descriptor %d passed by systemd is not a listening stream socket"), fd);
	*out = (pw_listener){ .fd = fd, .activated = true };
	if (ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
		out->is_unix = true;
		out->name = xasprintf("unix:%s", len > sizeof(sa_family_t) && un->sun_path[0] ? un->sun_path : "(unnamed)");
		return NULL;
	}
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return pw_err_new(PW_ERR_USAGE, NULL, _("descriptor %d passed by systemd is of an unknown family"), fd);
	out->loopback = addr_loopback(&ss);
	out->name = addr_name(&ss, &out->port);
	return NULL;
}

pw_err *pw_listen_activated(pw_listener **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int count = listen_fds();
	if (count <= 0)
		return NULL;
	pw_listener *l = xcalloc((size_t)count, sizeof *l);
	for (int i = 0; i < count; i++) {
		pw_err *e = adopt(LISTEN_FDS_START + i, &l[i]);
		if (e) {
			for (int j = 0; j < i; j++)
				pw_listener_close(&l[j]);
			free(l);
			return e;
		}
	}
	*out = l;
	*n = (size_t)count;
	return NULL;
}

void pw_listener_close(pw_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->unix_path)
		unlink(l->unix_path);
	free(l->unix_path);
	free(l->name);
	l->unix_path = l->name = NULL;
}
