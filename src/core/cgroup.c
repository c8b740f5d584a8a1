/* A cgroup v2 folder per child tree (see cgroup.h). */
#include "config.h"

#include "cgroup.h"
#include "clock.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "pyward-"

struct pw_cgroup {
	char *dir;
	char *procs;
};

static const char *unavailable;

/* The cgroup2 mount point and the root of that mount, from mountinfo:
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - cgroup2 SOURCE ...". */
static bool cgroup2_mount(char **mount, char **root)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f)) {
		char *dash = strstr(line, " - cgroup2 ");
		char r[1024], m[1024];
		if (dash && sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) == 2) {
			*mount = xstrdup(m);
			*root = xstrdup(r);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Our own cgroup v2 path ("0::/PATH" in /proc/self/cgroup). */
static char *own_cgroup(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	char *path = NULL;
	while (f && !path && fgets(line, sizeof line, f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			path = xstrdup(line + 3);
		}
	if (f)
		fclose(f);
	return path;
}

/* The folder new cgroups go under, or NULL (unavailable says why). */
static char *parent_dir(void)
{
	char *mount = NULL, *root = NULL, *own = NULL, *dir = NULL;
	if (!cgroup2_mount(&mount, &root))
		unavailable = "no cgroup2 file system is mounted";
	else if (!(own = own_cgroup()))
		unavailable = "this process is in no cgroup v2 hierarchy";
	else {
		size_t rn = strcmp(root, "/") == 0 ? 0 : strlen(root);
		const char *rel = rn && strncmp(own, root, rn) == 0 ? own + rn : own;
		dir = xasprintf("%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel);
	}
	free(mount);
	free(root);
	free(own);
	return dir;
}

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

static void kill_listed(const char *dir)
{
	char *procs = xasprintf("%s/cgroup.procs", dir);
	FILE *f = fopen(procs, "re");
	long pid;
	while (f && fscanf(f, "%ld", &pid) == 1)
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
	if (f)
		fclose(f);
	free(procs);
}

static void kill_dir(const char *dir)
{
	char *k = xasprintf("%s/cgroup.kill", dir);
	bool done = write_text(k, "1");
	free(k);
	if (!done)
		kill_listed(dir);
}

/* Kill, then rmdir until it is empty (bounded: about 2 s). */
static void remove_dir(const char *dir)
{
	int64_t until = pw_clock_mono_ms() + 2000;
	kill_dir(dir);
	while (rmdir(dir) != 0 && errno == EBUSY && pw_clock_mono_ms() < until) {
		kill_dir(dir);
		usleep(10 * 1000);
	}
}

/* True while pid runs. A killed pyward whose parent has not reaped it yet
 * is a zombie: kill(pid, 0) still succeeds, yet it runs nothing and will
 * never free its cgroups (in a container whose first process reaps late,
 * such a zombie can stay for minutes, and its workers' grandchildren with
 * it). */
static bool pid_running(long pid)
{
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return false;
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true; /* no /proc to ask: kill's answer stands */
	char buf[512];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *close_paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	if (!close_paren || close_paren[1] != ' ')
		return true;
	char state = close_paren[2];
	return state != 'Z' && state != 'X';
}

/* Folders of a pyward that is gone: pyward-PID-N with PID not running. */
static void sweep(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		long pid = 0;
		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) != 0 ||
		    sscanf(de->d_name + strlen(PREFIX), "%ld-", &pid) != 1 || pid <= 0 || pid == (long)getpid())
			continue;
		if (pid_running(pid))
			continue;
		char *dir = xasprintf("%s/%s", parent, de->d_name);
		remove_dir(dir);
		free(dir);
	}
	if (d)
		closedir(d);
}

pw_cgroup *pw_cgroup_new(void)
{
	static atomic_uint counter;
	char *p = parent_dir();
	if (!p)
		return NULL;
	char *dir = xasprintf("%s/" PREFIX "%ld-%u", p, (long)getpid(), atomic_fetch_add(&counter, 1));
	if (mkdir(dir, 0755) != 0) {
		unavailable = errno == EACCES || errno == EPERM || errno == EROFS
				      ? "the cgroup v2 folder of this process is not writable (no delegated subtree)"
				      : "a cgroup could not be made";
		free(dir);
		free(p);
		return NULL;
	}
	sweep(p);
	free(p);
	pw_cgroup *cg = xcalloc(1, sizeof *cg);
	cg->dir = dir;
	cg->procs = xasprintf("%s/cgroup.procs", dir);
	return cg;
}

const char *pw_cgroup_procs_path(const pw_cgroup *cg)
{
	return cg ? cg->procs : NULL;
}

void pw_cgroup_enter(const char *procs_path)
{
	if (!procs_path)
		return;
	int fd = open(procs_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = write(fd, "0", 1);
	(void)n;
	close(fd);
}

void pw_cgroup_kill(pw_cgroup *cg)
{
	if (cg)
		kill_dir(cg->dir);
}

void pw_cgroup_free(pw_cgroup **cg)
{
	if (!cg || !*cg)
		return;
	remove_dir((*cg)->dir);
	free((*cg)->dir);
	free((*cg)->procs);
	free(*cg);
	*cg = NULL;
}

const char *pw_cgroup_unavailable_reason(void)
{
	return unavailable;
}
