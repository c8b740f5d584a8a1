/* Rendering helpers shared by CLI commands: text formatting and JSON output. */
#ifndef PW_RENDER_H
#define PW_RENDER_H

#include "catalog.h"
#include "pip.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "850ms", "12.3s", "4m05s", "2h03m"; "-" for a negative value. */
void pw_render_duration(int64_t ms, char *buf, size_t size);
/* "2026-12-02T15:57:21.123Z" -> "2026-12-02 15:57:21" */
void pw_render_time(const char *iso, char *buf, size_t size);
/* Join argv into one line, quoting words that need it for a POSIX shell. */
char *pw_render_cmdline(int argc, char *const *argv);
/* Text from outside (a path, a name, a URL, a message, pip's output)
 * made safe for a terminal (visible.h): every control shown as an escape.
 * The copy stays valid for the next 31 calls (several fit in one printf);
 * NULL stays NULL. Every human-readable output of such text goes through
 * this (or pw_render_cell / pw_render_indented, which call it); --json
 * output does not. */
const char *pw_render_safe(const char *s);
/* Print width columns of text (made safe), cut with "…" (or "~" when not UTF-8). */
void pw_render_cell(FILE *out, const char *text, int width, int right_align);
/* Print text to stdout line by line (each made safe), after indent. */
void pw_render_indented(const char *text, const char *indent);
/* Dump j (stolen) to out with a newline; returns 0 or 1 on write failure. */
int pw_render_json(FILE *out, json_t *j);
/* One line an attempt on stderr. */
void pw_cli_print_attempts(const pw_pip_result *res);

#endif
