/*
 * A bounded job log: the first head_cap bytes of a job's output are written
 * through as they come (so `jobs log --follow` sees them at once); past that
 * only the last tail_cap bytes are kept in memory and written, after a note
 * saying how much was left out, when the log is closed. The file never grows
 * past head_cap + tail_cap plus the note.
 */
#ifndef PW_JOBLOG_H
#define PW_JOBLOG_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw_joblog pw_joblog;

/* fd: the open log file (not closed by the log). */
pw_joblog *pw_joblog_new(int fd, size_t head_cap, size_t tail_cap);
void pw_joblog_write(pw_joblog *l, const char *buf, size_t n);
/* Bytes left out so far (neither written nor kept in the tail). */
uint64_t pw_joblog_dropped(const pw_joblog *l);
/* Write the note and the kept tail, then free; *l becomes NULL. */
void pw_joblog_close(pw_joblog **l);

#endif
