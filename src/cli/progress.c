/* CLI progress: a bar redrawn in place on a terminal, at most 10 times a second. */
#include "config.h"

#include "cli/progress.h"

#include "clock.h"
#include "events.h"
#include "i18n.h"
#include "xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct pw_cli_progress {
	pw_progress_style style;
	int verbosity;
	pw_events events;
	int64_t last_ms;
	bool line_open;
	char stage[32];
};

bool pw_cli_progress_parse(const char *s, pw_progress_style *out)
{
	static const char *const names[] = { "auto", "bar", "none", "json" };
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (pw_progress_style)i;
			return true;
		}
	return false;
}

static void human_bytes(int64_t n, char *buf, size_t size)
{
	if (n < 0)
		snprintf(buf, size, "?");
	else if (n < 1000000)
		snprintf(buf, size, "%.0f kB", (double)n / 1e3);
	else
		snprintf(buf, size, "%.1f MB", (double)n / 1e6);
}

static int term_width(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

static void draw_bar(pw_cli_progress *p, const pw_progress *ev)
{
	if (ev->total < 0 && ev->done <= 0) {
		/* A stage without a measure (probe, swap): its name is the news. */
		fprintf(stderr, "\r%s...\033[K", pw_progress_stage_label(ev->stage));
		fflush(stderr);
		p->line_open = true;
		return;
	}
	char done[24], total[24], rate[24], eta[24] = "";
	human_bytes(ev->done, done, sizeof done);
	human_bytes(ev->total, total, sizeof total);
	human_bytes((int64_t)ev->rate, rate, sizeof rate);
	if (ev->eta_seconds >= 0)
		snprintf(eta, sizeof eta, " ETA %ds", (int)ev->eta_seconds);
	char tail[128];
	snprintf(tail, sizeof tail, " %s/%s %s/s%s", done, total, rate, eta);
	int width = term_width() - 1;
	const char *label = pw_progress_stage_label(ev->stage);
	int bar = width - (int)strlen(label) - (int)strlen(tail) - 4;
	fprintf(stderr, "\r%s ", label);
	if (bar >= 10 && ev->total > 0) {
		int fill = (int)((double)bar * (double)ev->done / (double)ev->total);
		fill = fill > bar ? bar : fill;
		fputc('[', stderr);
		for (int i = 0; i < bar; i++)
			fputc(i < fill ? '#' : '.', stderr);
		fputc(']', stderr);
	}
	fprintf(stderr, "%s\033[K", tail);
	fflush(stderr);
	p->line_open = true;
}

static void emit_json(const pw_progress *ev)
{
	json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:f,s:f}", "event", "progress", "stage", ev->stage,
			      "done", (json_int_t)ev->done, "total", (json_int_t)ev->total, "rate", ev->rate,
			      "eta_seconds", ev->eta_seconds);
	if (j) {
		json_dumpf(j, stderr, JSON_COMPACT);
		fputc('\n', stderr);
		json_decref(j);
	}
}

static void on_progress(void *ud, const pw_progress *ev)
{
	pw_cli_progress *p = ud;
	bool new_stage = strncmp(p->stage, ev->stage, sizeof p->stage - 1) != 0;
	int64_t now = pw_clock_mono_ms();
	bool final = ev->total > 0 && ev->done >= ev->total;
	if (!new_stage && !final && now - p->last_ms < 100)
		return;
	p->last_ms = now;
	if (new_stage && p->line_open && p->style == PW_PROGRESS_BAR) {
		fputc('\n', stderr);
		p->line_open = false;
	}
	snprintf(p->stage, sizeof p->stage, "%s", ev->stage);
	if (p->style == PW_PROGRESS_JSON)
		emit_json(ev);
	else if (p->style == PW_PROGRESS_BAR)
		draw_bar(p, ev);
}

static void on_log(void *ud, pw_log_level level, const char *msg)
{
	pw_cli_progress *p = ud;
	if (level == PW_LOG_DEBUG && p->verbosity < 1)
		return;
	if (level == PW_LOG_INFO && p->verbosity < 0)
		return;
	if (p->line_open) {
		fputc('\n', stderr);
		p->line_open = false;
	}
	fprintf(stderr, "pyward: %s\n", msg);
}

pw_cli_progress *pw_cli_progress_new(pw_progress_style style, int verbosity)
{
	pw_cli_progress *p = xcalloc(1, sizeof *p);
	if (style == PW_PROGRESS_AUTO)
		style = isatty(STDERR_FILENO) && verbosity >= 0 ? PW_PROGRESS_BAR : PW_PROGRESS_NONE;
	p->style = style;
	p->verbosity = verbosity;
	p->events = (pw_events){ .log = on_log, .progress = on_progress, .ud = p };
	return p;
}

const pw_events *pw_cli_progress_events(pw_cli_progress *p)
{
	return &p->events;
}

void pw_cli_progress_finish(pw_cli_progress *p)
{
	if (p && p->line_open) {
		fputc('\n', stderr);
		p->line_open = false;
	}
}

void pw_cli_progress_free(pw_cli_progress **p)
{
	if (!p || !*p)
		return;
	pw_cli_progress_finish(*p);
	free(*p);
	*p = NULL;
}
