/*
 * A cgroup v2 folder per child tree, when the system lets us make one: a
 * child that forks, calls setsid and forks again leaves its process group,
 * never its cgroup, so killing the cgroup stops all it started.
 *
 * The folder is made below pyward's own cgroup (from /proc/self/cgroup, on
 * the cgroup2 mount from /proc/self/mountinfo) as pyward-PID-N. Where that
 * is not writable (an unprivileged user without a delegated subtree, no
 * cgroup2 mount) pw_cgroup_new returns NULL and callers fall back to
 * process groups. Folders of a pyward that was killed are swept (their
 * processes killed, the folder removed) when the next one is made.
 */
#ifndef PW_CGROUP_H
#define PW_CGROUP_H

#include <stdbool.h>

typedef struct pw_cgroup pw_cgroup;

/* A new, empty cgroup, or NULL when none can be made here. */
pw_cgroup *pw_cgroup_new(void);
/* Path of its cgroup.procs: a child writes "0" there (async-signal-safe:
 * open, write, close) between fork and exec to enter it. */
const char *pw_cgroup_procs_path(const pw_cgroup *cg);
/* In the child, between fork and exec: enter the cgroup. */
void pw_cgroup_enter(const char *procs_path);
/* Kill every process in it (cgroup.kill, else SIGKILL to each listed pid). */
void pw_cgroup_kill(pw_cgroup *cg);
/* Kill what is left, wait briefly until it is empty, remove it; NULLs *cg. */
void pw_cgroup_free(pw_cgroup **cg);
/* Why no cgroup can be made here (for messages and tests), or NULL. */
const char *pw_cgroup_unavailable_reason(void);

#endif
