/*
 * Processes by pid and start time, read from /proc (Linux). Elsewhere only
 * kill(pid, 0) is asked, which cannot tell a recycled pid.
 */
#include "config.h"

#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A clock that moved, and start times rounded to seconds, within this. */
#define SINCE_SLACK_S 5

/* Fields 3 (state), 4 (ppid) and 22 (starttime) of /proc/PID/stat. The
 * name in field 2 may hold spaces and parentheses: parse after its last ')'. */
bool pw_proc_info_read(pid_t pid, pw_proc_info *out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	long long ppid = 0;
	if (!p || sscanf(p + 1, " %c %lld", &out->state, &ppid) != 2)
		return false;
	out->ppid = ppid;
	/* after ')': state is field 3, starttime field 22 */
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	long long st = 0;
	if (!p || sscanf(p + 1, "%lld", &st) != 1)
		return false;
	out->start_ticks = st;
	return true;
}

/* When the machine booted (unix seconds), from /proc/stat; 0 unknown.
 * Read once per process: a history listing asks for every unfinished
 * operation. */
static int64_t booted_at;
static pthread_once_t booted_once = PTHREAD_ONCE_INIT;

static void read_boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return;
	char line[256];
	long long btime = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	fclose(f);
	booted_at = btime;
}

static int64_t boot_time(void)
{
	pthread_once(&booted_once, read_boot_time);
	return booted_at;
}

int64_t pw_proc_start(pid_t pid)
{
	pw_proc_info info;
	return pw_proc_info_read(pid, &info) ? info.start_ticks : 0;
}

/* What /proc says of pid: false when it cannot say (no /proc), then only
 * kill(pid, 0) can be asked; else *alive, and *start when alive. */
static bool look_up(int64_t pid, bool *alive, int64_t *start)
{
	pw_proc_info info;
	*alive = false;
	if (pid <= 0 || pid > INT_MAX)
		return true;
	if (pw_proc_info_read((pid_t)pid, &info)) {
		*alive = info.state != 'Z' && info.state != 'X';
		*start = info.start_ticks;
		return true;
	}
	return pw_proc_start(getpid()) > 0; /* /proc works, and knows no such process */
}

static bool exists_by_signal(int64_t pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

bool pw_proc_alive(int64_t pid, int64_t start_ticks)
{
	bool alive;
	int64_t start = 0;
	if (!look_up(pid, &alive, &start))
		return exists_by_signal(pid);
	return alive && (start_ticks <= 0 || start == start_ticks);
}

bool pw_proc_alive_since(int64_t pid, int64_t since)
{
	bool alive;
	int64_t start = 0;
	if (!look_up(pid, &alive, &start))
		return exists_by_signal(pid);
	long hz = sysconf(_SC_CLK_TCK);
	int64_t booted = boot_time();
	if (!alive || since <= 0 || hz <= 0 || booted <= 0)
		return alive;
	return booted + start / hz <= since + SINCE_SLACK_S;
}
