/*
 * Is a recorded process still running on this host? A pid alone cannot
 * say: the kernel hands freed pids out again. So a process is matched by
 * its pid and when it started, either its kernel start time (jobs record
 * it) or, for records that kept only a wall-clock time, that it started no
 * later than the record was made (the operations of the catalog).
 */
#ifndef PW_PROC_H
#define PW_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What /proc/PID/stat says of a process. */
typedef struct pw_proc_info {
	char state;          /* 'R', 'S', 'Z' (zombie), ... */
	int64_t ppid;
	int64_t start_ticks; /* kernel start time, clock ticks since boot */
} pw_proc_info;

/* Read pid's fields; false when there is no such process (or no /proc). */
bool pw_proc_info_read(pid_t pid, pw_proc_info *out);

/* The kernel start time of pid (field 22 of /proc/PID/stat, clock ticks
 * since boot); 0 when unknown. */
int64_t pw_proc_start(pid_t pid);

/* pid is alive (not a zombie) and, when start_ticks > 0, is the process
 * that started then. Without /proc, only whether the pid exists. */
bool pw_proc_alive(int64_t pid, int64_t start_ticks);

/* pid is alive and started no later than unix time since (seconds, with
 * a few seconds' slack for the clock): a process started after the record
 * was made holds a recycled pid. since <= 0: pw_proc_alive(pid, 0). */
bool pw_proc_alive_since(int64_t pid, int64_t since);

#endif
