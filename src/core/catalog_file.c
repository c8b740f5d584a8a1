/*
 * The catalog file's permissions, links and read-only opening: see
 * catalog_file.h.
 */
#include "config.h"

#include "catalog_file.h"
#include "i18n.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const sidecars[] = { "", "-wal", "-shm", "-journal" };

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

pw_err *pw_catalog_file_refuse_links(const char *path)
{
	for (size_t i = 0; i < sizeof sidecars / sizeof sidecars[0]; i++) {
		char *p = xasprintf("%s%s", path, sidecars[i]);
		struct stat st;
		bool link = lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
		pw_err *e = link ? pw_err_new(PW_ERR_REFUSED,
					      _("remove the link; pyward then starts a catalog in the box root, or "
						"choose another box root with --box-root"),
					      _("catalog %s is a symbolic link: pyward keeps its catalog in the box "
						"root itself and does not follow a link out of it"), p)
				 : NULL;
		free(p);
		if (e)
			return e;
	}
	return NULL;
}

/* Narrow a catalog this user owns, made readable by others, to 0640.
 * Without opening it: closing a descriptor of the catalog, its -wal or its
 * -shm drops the POSIX locks this process's other SQLite connections hold
 * on it (see check_header in catalog.c). fchmodat does not follow a link
 * and holds only an O_PATH descriptor, which carries no locks. */
static void narrow(const char *path)
{
	for (size_t i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, sidecars[i]);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0137) != 0)
			(void)fchmodat(AT_FDCWD, p, st.st_mode & PW_CATALOG_FILE_MODE, AT_SYMLINK_NOFOLLOW);
		free(p);
	}
}

pw_err *pw_catalog_file_prepare(const char *path)
{
	pw_err *e = pw_catalog_file_refuse_links(path);
	if (e)
		return e;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PW_CATALOG_FILE_MODE);
	if (fd < 0 && errno == EEXIST) {
		narrow(path);
		return NULL;
	}
	if (fd < 0)
		return pw_err_errno(PW_ERR_IO, errno, _("check that the box root exists and that you may write to it"),
				    _("cannot create catalog %s"), path);
	/* The box root's group, as a set-group-id folder would give; umask
	 * must not widen or narrow what the man page promises. */
	char *dir = dir_of(path);
	struct stat st;
	if (stat(dir, &st) == 0)
		(void)fchown(fd, (uid_t)-1, st.st_gid);
	(void)fchmod(fd, PW_CATALOG_FILE_MODE);
	free(dir);
	close(fd);
	return NULL;
}

bool pw_catalog_file_writable(const char *path)
{
	char *dir = dir_of(path);
	bool ok = access(dir, W_OK) == 0 && (access(path, W_OK) == 0 || errno == ENOENT);
	free(dir);
	return ok;
}

/* SQLite's URI filenames: everything but unreserved characters and '/'
 * percent-encoded, so '?', '#' and '%' in a box path keep their meaning. */
static char *uri_path(const char *path)
{
	size_t n = strlen(path);
	char *out = xmalloc(n * 3 + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/._-~", *p))
			*o++ = (char)*p;
		else
			o += sprintf(o, "%%%02X", *p);
	}
	*o = '\0';
	return out;
}

char *pw_catalog_file_reader_name(const char *path, int *extra_flags)
{
	*extra_flags = 0;
	char *wal = xasprintf("%s-wal", path), *shm = xasprintf("%s-shm", path);
	/* A writer at work keeps -wal and -shm: SQLite reads them without
	 * writing (a read-only -shm is fine since 3.22). Without them it would
	 * have to create the -shm, which a reader who may not write cannot. */
	bool writer_files = access(wal, R_OK) == 0 && access(shm, R_OK) == 0;
	free(wal);
	free(shm);
	if (pw_catalog_file_writable(path) || writer_files)
		return xstrdup(path);
	char *enc = uri_path(path);
	char *uri = xasprintf("file:%s?mode=ro&immutable=1", enc);
	free(enc);
	*extra_flags = SQLITE_OPEN_URI;
	return uri;
}

/* Every connection to a WAL database holds a shared lock on byte 128 of the
 * -shm (the "DMS" lock of SQLite's WAL file format) while it is open. Locks
 * are matched by inode alone: /proc/locks names the device the lock lives
 * on, which on an overlay is not the one stat() reports. */
#define SHM_DMS_BYTE 128

static bool shm_held(const struct stat *shm)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return false; /* cannot tell: as if nobody held it, so the file is checked */
	char line[256];
	bool held = false;
	while (!held && fgets(line, sizeof line, f)) {
		char kind[16], end[32];
		unsigned long long ino;
		long long start;
		/* "1: POSIX  ADVISORY  READ 4242 fd:01:1234 128 128"; a waiter's
		 * line has "->" after the number and holds nothing */
		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %*s %*d %*x:%*x:%llu %lld %31s", kind, &ino, &start, end) != 4)
			continue;
		long long last = strcmp(end, "EOF") == 0 ? SHM_DMS_BYTE : atoll(end);
		held = strcmp(kind, "POSIX") == 0 && ino == (unsigned long long)shm->st_ino &&
		       start <= SHM_DMS_BYTE && last >= SHM_DMS_BYTE;
	}
	fclose(f);
	return held;
}

bool pw_catalog_file_left_open(const char *path)
{
	char *wal = xasprintf("%s-wal", path), *shm = xasprintf("%s-shm", path);
	struct stat ws, ss;
	bool left = false;
	/* A clean close of the last connection checkpoints and deletes the
	 * -wal; an empty one holds nothing to recover. */
	if (lstat(wal, &ws) == 0 && S_ISREG(ws.st_mode) && ws.st_size > 0)
		left = lstat(shm, &ss) != 0 || !S_ISREG(ss.st_mode) || !shm_held(&ss);
	free(wal);
	free(shm);
	return left;
}
