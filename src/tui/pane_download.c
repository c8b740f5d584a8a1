/*
 * Download pane: the consented runtime install. A job prepares the plan
 * exactly as `pyward runtime install` does (pin, mirror, size, preflight);
 * the consent dialog states it with No as the default; a second job runs
 * the install inside a catalog operation, reporting progress; Esc cancels
 * (the .part stays in the cache, so the next install resumes it).
 */
#include "config.h"

#include "tui/pane_download.h"

#include "tui/app.h"
#include "tui/dialog.h"
#include "tui/draw.h"
#include "tui/fmt.h"
#include "tui/keys.h"

#include "ops/ctx.h"
#include "ops/op_runtime.h"

#include "clock.h"
#include "paths.h"
#include "events.h"
#include "i18n.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_LINES 4

typedef enum dl_state { DL_IDLE, DL_PLANNING, DL_ASKING, DL_RUNNING, DL_DONE } dl_state;

typedef struct download_pane {
	pw_app *app;
	dl_state state;
	int job;
	bool cancelling;
	pw_runtime_request rq;      /* the defaults: shipped pins, configured mirror and CA */
	pw_runtime_plan plan;
	char *plan_lines[PW_OP_INSTALL_CONSENT_LINES];
	size_t line_count;           /* the archive's lines, then the baseline's */
	const char *heading;
	bool have_lines;
	/* progress */
	char stage[32];
	int64_t done, total;
	double rate, eta;
	/* outcome */
	char *result, *result_hint;
	pw_color result_color;
	char *source;               /* s: a mirror URL or a local archive for this session's installs */
	char *log[LOG_LINES];
} download_pane;

/* What a job works on; the plan is the pane's (it outlives the job: jobs
 * are joined before panes are freed). */
typedef struct dl_job {
	const pw_ops_ctx *ctx;
	pw_runtime_request rq;
	pw_consent_seen seen;         /* the statement the user consented to */
	pw_op_runtime_install_result result; /* the planning job's plan is in result.plan */
} dl_job;

static void dl_job_free(void *p)
{
	dl_job *j = p;
	pw_op_runtime_install_clear(&j->result);
	pw_consent_seen_clear(&j->seen);
	free(j);
}

/* planned: install the pane's plan (made by the planning job), else make one. */
static dl_job *dl_job_new(download_pane *p, bool planned)
{
	dl_job *j = xcalloc(1, sizeof *j);
	j->ctx = pw_app_ctx(p->app);
	j->rq = p->rq;
	if (planned) {
		j->rq.plan = &p->plan;
		pw_consent_seen_set(&j->seen, (const char *const *)p->plan_lines, p->line_count);
	} else {
		j->rq.plan_only = true;
	}
	return j;
}

/* ---------------------------------------------------------------- state */

static void set_result(download_pane *p, pw_color c, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The core's hints name the command line's options; here the same advice
 * is what can be done in this interface. */
static const char *tui_hint(const char *hint)
{
	if (hint && strstr(hint, "--mirror"))
		return _("press s to give a mirror URL or a local archive, then i to install again "
			 "(or set runtime_mirror in the settings file)");
	return hint;
}

static void set_result(download_pane *p, pw_color c, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(p->result);
	p->result = xvasprintf(fmt, ap);
	va_end(ap);
	free(p->result_hint);
	hint = tui_hint(hint);
	p->result_hint = hint ? xstrdup(hint) : NULL;
	p->result_color = c;
	p->state = DL_DONE;
	/* The pane shows the whole message; the frame's status line only says
	 * where to read it, so a long error never runs along the border. */
	if (c == PW_C_ERROR)
		pw_app_status(p->app, c, _("%.*s: pane 2 says why"), (int)strcspn(p->result, ":"), p->result);
	else
		pw_app_status(p->app, c, "%s", p->result);
}

static void clear_plan(download_pane *p)
{
	for (size_t i = 0; i < p->line_count && p->have_lines; i++)
		free(p->plan_lines[i]);
	p->have_lines = false;
	pw_runtime_plan_clear(&p->plan);
}

static void clear_log(download_pane *p)
{
	for (int i = 0; i < LOG_LINES; i++) {
		free(p->log[i]);
		p->log[i] = NULL;
	}
}

static void add_log(download_pane *p, const char *text)
{
	free(p->log[0]);
	memmove(p->log, p->log + 1, (LOG_LINES - 1) * sizeof *p->log);
	p->log[LOG_LINES - 1] = xstrdup(text);
}

static void reset_progress(download_pane *p)
{
	p->stage[0] = 0;
	p->done = 0;
	p->total = -1;
	p->rate = 0;
	p->eta = -1;
	p->cancelling = false;
}

/* ---------------------------------------------------------------- jobs (worker threads) */

static pw_err *plan_work(pw_job *job, void *ud)
{
	dl_job *j = ud;
	pw_op_io io = { .events = pw_job_events(job), .cancel = pw_job_cancel_token(job) };
	return pw_op_runtime_install(j->ctx, &j->rq, &io, &j->result);
}

/* The install says yes only to the statement the dialog showed. */
static pw_err *install_work(pw_job *job, void *ud)
{
	dl_job *j = ud;
	pw_op_io io = { .events = pw_job_events(job), .cancel = pw_job_cancel_token(job),
			.consent = pw_consent_if_seen, .consent_ud = &j->seen };
	return pw_op_runtime_install(j->ctx, &j->rq, &io, &j->result);
}

/* A declined consent is recorded like the CLI's: the same operation, refused. */
static pw_err *refusal_work(pw_job *job, void *ud)
{
	dl_job *j = ud;
	pw_op_io io = { .events = pw_job_events(job), .cancel = pw_job_cancel_token(job),
			.consent = pw_consent_given, .consent_ud = NULL };
	pw_err *e = pw_op_runtime_install(j->ctx, &j->rq, &io, &j->result);
	bool refused = e && pw_err_code(e) == PW_ERR_REFUSED;
	if (refused)
		pw_err_free(e);
	return refused ? NULL : e;
}

/* ---------------------------------------------------------------- flow */

static void on_consent(void *ud, bool yes)
{
	download_pane *p = ud;
	if (!yes) {
		p->job = pw_app_start_job(p->app, _("recording the refusal"), p, refusal_work, dl_job_new(p, true), dl_job_free);
		set_result(p, PW_C_WARN, NULL, "%s", _("Not installed: consent was not given. Nothing was downloaded."));
		return;
	}
	reset_progress(p);
	clear_log(p);
	p->state = DL_RUNNING;
	p->job = pw_app_start_op(p->app, _("installing the runtime"), p, install_work, dl_job_new(p, true), dl_job_free);
}

static void ask_consent(download_pane *p)
{
	const char *lines[PW_OP_INSTALL_CONSENT_LINES + 3];
	size_t n = 0;
	lines[n++] = p->heading;
	for (size_t i = 0; i < p->line_count; i++)
		lines[n++] = p->plan_lines[i];
	lines[n++] = "";
	lines[n++] = _("Nothing is downloaded or installed unless you choose Install. Esc or Enter on Cancel declines.");
	p->state = DL_ASKING;
	pw_dialog_consent(p->app, _("Install the managed Python runtime?"), lines, n, _("Install"), _("Cancel"),
			  on_consent, p);
}

static void planned(download_pane *p, const pw_job_event *ev)
{
	dl_job *j = ev->ud;
	if (ev->err) {
		set_result(p, PW_C_ERROR, pw_err_hint(ev->err), _("Cannot install: %s"), pw_err_message(ev->err));
		return;
	}
	clear_plan(p);
	p->plan = j->result.plan;
	memset(&j->result.plan, 0, sizeof j->result.plan);
	pw_consent what;
	pw_op_runtime_install_consent(&p->rq, &p->plan, p->plan_lines, &what);
	p->line_count = what.line_count;
	p->heading = what.heading;
	p->have_lines = true;
	ask_consent(p);
}

static void installed(download_pane *p, const pw_job_event *ev)
{
	const dl_job *j = ev->ud;
	const pw_runtime_install_result *r = &j->result.install;
	if (ev->err && pw_err_code(ev->err) == PW_ERR_CANCELLED) {
		set_result(p, PW_C_WARN, NULL, "%s",
			   _("Cancelled. The partial download is kept in the cache; installing again resumes it."));
	} else if (ev->err && j->result.runtime_installed) {
		set_result(p, PW_C_ERROR, pw_err_hint(ev->err), _("Partly done: %s"), pw_err_message(ev->err));
	} else if (ev->err) {
		set_result(p, PW_C_ERROR, pw_err_hint(ev->err), _("Failed: %s"), pw_err_message(ev->err));
	} else if (r->already_current && j->result.baseline_ran) {
		set_result(p, PW_C_OK, NULL, _("CPython %s is already installed and current; its baseline (%s) is installed."),
			   p->plan.pin->version, p->plan.baseline_names);
	} else if (r->already_current) {
		set_result(p, PW_C_OK, NULL, _("CPython %s is already installed and current."), p->plan.pin->version);
	} else if (j->result.baseline_ran) {
		char size[32];
		pw_fmt_bytes(r->bytes_on_disk, size, sizeof size);
		set_result(p, PW_C_OK, NULL, _("Installed CPython %s (%lld files, %s, in %s) and its baseline: %s."),
			   p->plan.pin->version, (long long)r->files, size, r->path ? r->path : "?",
			   p->plan.baseline_names);
	} else {
		char size[32];
		pw_fmt_bytes(r->bytes_on_disk, size, sizeof size);
		char *resumed = r->resumed_from > 0 ? xasprintf(_(" (the download resumed from byte %lld)"),
								 (long long)r->resumed_from)
						     : xstrdup("");
		set_result(p, PW_C_OK, NULL, _("Installed CPython %s: %lld files, %s, in %s%s."), p->plan.pin->version,
			   (long long)r->files, size, r->path ? r->path : "?", resumed);
		free(resumed);
	}
}

void pw_download_begin(pw_app *app)
{
	download_pane *p = pw_app_pane_state(app, &pw_pane_download);
	pw_app_show(app, &pw_pane_download);
	if (p->state == DL_PLANNING || p->state == DL_RUNNING || p->state == DL_ASKING) {
		pw_app_status(app, PW_C_WARN, "%s", _("an install is already being prepared or running"));
		return;
	}
	pw_err *e = pw_ops_require_write(pw_app_ctx(app), _("installing the runtime"));
	if (e) {
		set_result(p, PW_C_ERROR, pw_err_hint(e), _("Refused: %s"), pw_err_message(e));
		pw_err_free(e);
		return;
	}
	free(p->result);
	free(p->result_hint);
	p->result = p->result_hint = NULL;
	reset_progress(p);
	p->state = DL_PLANNING;
	p->job = pw_app_start_op(app, _("preparing the install"), p, plan_work, dl_job_new(p, false), dl_job_free);
}

/* ---------------------------------------------------------------- pane */

static void *create(pw_app *app)
{
	download_pane *p = xcalloc(1, sizeof *p);
	p->app = app;
	reset_progress(p);
	return p;
}

static void destroy(void *self)
{
	download_pane *p = self;
	clear_plan(p);
	clear_log(p);
	free(p->result);
	free(p->result_hint);
	free(p->source);
	free(p);
}

static void on_event(void *self, const pw_job_event *ev)
{
	download_pane *p = self;
	if (ev->owner != p || ev->job_id != p->job)
		return;
	switch (ev->kind) {
	case PW_JOB_PROGRESS:
		snprintf(p->stage, sizeof p->stage, "%s", ev->progress.stage);
		if (ev->progress.total < 0 && ev->progress.done <= 0)
			break; /* a stage without a measure: keep the download's figures */
		p->done = ev->progress.done;
		p->total = ev->progress.total;
		p->rate = ev->progress.rate;
		p->eta = ev->progress.eta_seconds;
		break;
	case PW_JOB_LOG: add_log(p, ev->text); break;
	case PW_JOB_DONE:
		if (p->state == DL_PLANNING)
			planned(p, ev);
		else if (p->state == DL_RUNNING)
			installed(p, ev);
		break;
	case PW_JOB_MESSAGE: break;
	}
}

static const char *const stages[] = { "download", "verify", "extract", "probe", "swap", "baseline" };

static void draw_stages(const download_pane *p, WINDOW *win, int y, int x, int w)
{
	int used = pw_draw_text(win, y, x, w, _("Stage:   "));
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
		bool now = strcmp(p->stage, stages[i]) == 0;
		pw_draw_set(win, now ? PW_C_SELECTED : PW_C_DIM);
		used += pw_draw_textf(win, y, x + used, w - used, now ? "[%s]" : " %s ",
				      pw_progress_stage_label(stages[i]));
		pw_draw_set(win, PW_C_NORMAL);
		used += pw_draw_text(win, y, x + used, w - used, " ");
	}
}

static void draw_progress(const download_pane *p, WINDOW *win, pw_rect r, int y)
{
	draw_stages(p, win, y, r.x, r.w);
	double fraction = p->total > 0 ? (double)p->done / (double)p->total : -1;
	pw_draw_bar(win, y + 2, r.x, r.w - 6, fraction);
	if (fraction >= 0)
		pw_draw_textf(win, y + 2, r.x + r.w - 5, 5, "%3d%%", (int)(fraction * 100 + 0.5));
	char done[32], total[32], rate[32], eta[32];
	pw_fmt_bytes(p->done, done, sizeof done);
	pw_fmt_bytes(p->total, total, sizeof total);
	pw_fmt_rate(p->rate, rate, sizeof rate);
	pw_fmt_eta(p->eta, eta, sizeof eta);
	pw_draw_textf(win, y + 3, r.x, r.w, _("%s of %s   %s   ETA %s"), done, total, rate, eta);
}

static void draw_plan(const download_pane *p, WINDOW *win, pw_rect r, int *y)
{
	if (!p->have_lines)
		return;
	for (size_t i = 0; i < p->line_count; i++)
		*y += pw_draw_wrapped(win, *y, r.x, r.w, 3, pw_draw_hang(p->plan_lines[i], 8), p->plan_lines[i]);
	(*y)++;
}

static void draw_result(const download_pane *p, WINDOW *win, pw_rect r, int y)
{
	pw_draw_set(win, p->result_color);
	y += pw_draw_wrapped(win, y, r.x, r.w, 3, 0, p->result);
	pw_draw_set(win, PW_C_NORMAL);
	if (p->result_hint)
		pw_draw_wrapped(win, y, r.x, r.w, 2, 0, p->result_hint);
}

static void draw(void *self, WINDOW *win, pw_rect r)
{
	download_pane *p = self;
	int y = r.y;
	pw_draw_set(win, PW_C_TITLE);
	pw_draw_text(win, y, r.x, r.w, _("Managed Python runtime: download and install"));
	pw_draw_set(win, PW_C_NORMAL);
	if (p->source) /* the row under the title, in every state */
		pw_draw_textf(win, y + 1, r.x, r.w, _("source: %s (s changes it)"), p->source);
	y += 2;
	switch (p->state) {
	case DL_IDLE:
		y += pw_draw_wrapped(win, y, r.x, r.w, 4, 0,
				     _("No download running. Press i to install the managed runtime: you are shown what, "
				       "from where, how big and where it goes before anything is downloaded."));
		return;
	case DL_PLANNING:
		pw_draw_text(win, y, r.x, r.w, _("Preparing: reading the pins, asking the size, checking space..."));
		return;
	case DL_ASKING:
		draw_plan(p, win, r, &y);
		pw_draw_text(win, y, r.x, r.w, _("Waiting for your answer."));
		return;
	case DL_RUNNING:
	case DL_DONE:
		break;
	}
	draw_plan(p, win, r, &y);
	if (p->stage[0])
		draw_progress(p, win, r, y);
	y += 5;
	for (int i = 0; i < LOG_LINES && p->state == DL_RUNNING; i++)
		if (p->log[i])
			pw_draw_text(win, y++, r.x, r.w, p->log[i]);
	if (p->state == DL_RUNNING) {
		/* At the bottom; two rows when a translation is longer than one. */
		const char *msg = p->cancelling ? _("Cancelling...")
						: _("Esc cancels (the partial download is kept; installing again resumes it).");
		int rows = pw_draw_wrapped(NULL, 0, 0, r.w, 2, 0, msg);
		pw_draw_wrapped(win, r.y + r.h - rows, r.x, r.w, rows, 0, msg);
	} else
		draw_result(p, win, r, r.y + r.h - 4);
}

/* s: the source for the next installs; a URL is a mirror, anything else a
 * local archive (as --mirror and --archive on the command line). */
static void source_entered(void *ud, const char *text)
{
	download_pane *p = ud;
	if (!text)
		return;
	free(p->source);
	p->source = NULL;
	p->rq.mirror = p->rq.archive = NULL;
	size_t n = strspn(text, " ");
	if (text[n]) {
		bool url = strncmp(text + n, "https://", 8) == 0 || strncmp(text + n, "http://", 7) == 0;
		p->source = url ? xstrdup(text + n) : pw_paths_absolute(text + n);
		if (url)
			p->rq.mirror = p->source;
		else
			p->rq.archive = p->source;
	}
	pw_app_status(p->app, PW_C_NORMAL, "%s",
		      p->source ? _("the next install uses this source (i installs)") : _("the next install uses the pinned URL"));
}

static bool key(void *self, int ch)
{
	download_pane *p = self;
	if (ch == 'i') {
		pw_download_begin(p->app);
		return true;
	}
	if (ch == 's' && p->state != DL_RUNNING && p->state != DL_PLANNING && p->state != DL_ASKING) {
		pw_dialog_input(p->app, _("Source"),
				_("A mirror URL, or the path of a local archive (empty: the pinned URL):"),
				p->source ? p->source : "", source_entered, p);
		return true;
	}
	if (ch == PW_KEY_ESC && p->state == DL_RUNNING && !p->cancelling) {
		p->cancelling = pw_app_cancel_job(p->app, p->job);
		return true;
	}
	return false;
}

static const pw_help_key help_keys[] = {
	{ N_("i"), N_("install the managed runtime (asks first; No is the default)") },
	{ N_("Esc"), N_("cancel the running download (installing again resumes it)") },
	{ N_("s"), N_("install from a mirror URL or a local archive instead of the pinned URL") },
	{ NULL, NULL },
};

const pw_pane_ops pw_pane_download = {
	.title = N_("Download"),
	.create = create,
	.destroy = destroy,
	.draw = draw,
	.key = key,
	.on_event = on_event,
	.help_keys = help_keys,
	.hint = N_("i install  s source  Esc cancel"),
};
