/* Time helpers: a monotonic clock for deadlines, UTC ISO-8601 text for records. */
#ifndef PW_CLOCK_H
#define PW_CLOCK_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC; only differences mean anything. */
int64_t pw_clock_mono_ms(void);
/* A CLOCK_REALTIME time ms from now, for pthread_cond_timedwait. */
void pw_clock_realtime_in(struct timespec *ts, int64_t ms);
/* Current UTC time as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (at least 32 bytes). */
void pw_clock_iso_now(char *buf, size_t size);
/* Unix seconds of such a text (the milliseconds dropped); -1 when it is not one. */
int64_t pw_clock_iso_to_unix(const char *iso);
/* Deadline in monotonic ms for a budget of seconds; 0 (no deadline) when seconds <= 0. */
int64_t pw_clock_deadline_after(double seconds);

#endif
