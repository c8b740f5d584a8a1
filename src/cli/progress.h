/* CLI progress rendering: a one-line bar on a terminal, JSON lines, or nothing. */
#ifndef PW_CLI_PROGRESS_H
#define PW_CLI_PROGRESS_H

#include "events.h"

#include <stdbool.h>

typedef enum pw_progress_style { PW_PROGRESS_AUTO, PW_PROGRESS_BAR, PW_PROGRESS_NONE, PW_PROGRESS_JSON } pw_progress_style;

typedef struct pw_cli_progress pw_cli_progress;

/* Parse "auto", "bar", "none", "json". */
bool pw_cli_progress_parse(const char *s, pw_progress_style *out);
pw_cli_progress *pw_cli_progress_new(pw_progress_style style, int verbosity);
/* The events sink that renders to stderr. */
const pw_events *pw_cli_progress_events(pw_cli_progress *p);
/* End the bar line (if any). */
void pw_cli_progress_finish(pw_cli_progress *p);
void pw_cli_progress_free(pw_cli_progress **p);

#endif
