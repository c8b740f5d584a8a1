/*
 * The events sink: how core reports progress and log lines without printing.
 * The CLI, the TUI and the tests each implement it. Any callback may be NULL.
 */
#ifndef PW_EVENTS_H
#define PW_EVENTS_H

#include <stdint.h>

typedef enum pw_log_level { PW_LOG_DEBUG, PW_LOG_INFO, PW_LOG_WARN, PW_LOG_ERROR } pw_log_level;

typedef struct pw_progress {
	const char *stage;   /* "download", "verify", "extract", "probe", "swap", … */
	int64_t done;        /* bytes (or items) done */
	int64_t total;       /* -1 when unknown */
	double rate;         /* per second, 0 when unknown */
	double eta_seconds;  /* -1 when unknown */
} pw_progress;

typedef struct pw_events {
	void (*log)(void *ud, pw_log_level level, const char *msg);
	void (*progress)(void *ud, const pw_progress *p);
	void *ud;
} pw_events;

void pw_events_log(const pw_events *ev, pw_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pw_events_progress(const pw_events *ev, const pw_progress *p);
/* A stage's name for people (translated); the name itself when unknown.
 * The untranslated names are what --json and the code compare. */
const char *pw_progress_stage_label(const char *stage);

#endif
