/* pyward jobs [list|show|log|wait|cancel]: background jobs; and --background itself. */
#include "config.h"

#include "cli/cmd_jobs.h"
#include "ops/op_jobs.h"

#include "ops/json.h"
#include "cli/render.h"

#include "clock.h"
#include "i18n.h"
#include "jobs.h"
#include "proc.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 200
#define SHOW_LOG_LINES 15

/* ---------------------------------------------------------------- helpers */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static pw_err *parse_id(const char *text, int64_t *id)
{
	char *end = NULL;
	errno = 0;
	long long v = text ? strtoll(text, &end, 10) : 0;
	if (!text || !*text || *end || errno || v <= 0)
		return pw_err_new(PW_ERR_USAGE, _("'pyward jobs' lists the jobs and their ids"),
				  _("'%s' is not a job id"), text ? text : "");
	*id = v;
	return NULL;
}

static pw_err *get_job(pw_cli *cli, const char *id_text, pw_catalog **cat, pw_job_rec *r, bool write)
{
	int64_t id = 0;
	pw_err *e = parse_id(id_text, &id);
	if (!e)
		e = write ? pw_ops_catalog_rw(&cli->ctx, cat) : pw_ops_catalog_ro(&cli->ctx, cat);
	if (!e)
		e = pw_jobs_get(*cat, id, r);
	return e;
}

static bool is_running(const pw_job_rec *r)
{
	return strcmp(r->state, PW_OUTCOME_RUNNING) == 0;
}

/* ---------------------------------------------------------------- --background */

int pw_cli_job_started(pw_cli *cli, const pw_job_rec *r)
{
	if (cli->json) {
		pw_render_json(stdout, pw_op_job_started_json(r));
		return 0;
	}
	long long id = (long long)r->id;
	printf(_("job %lld started in the background (pid %lld): %s %s\n"), id, (long long)r->pid,
	       pw_render_safe(r->kind), r->target ? pw_render_safe(r->target) : "");
	printf(_("  log:     %s\n"), pw_render_safe(r->log_path));
	printf(_("  follow:  pyward jobs log %lld --follow\n"), id);
	printf(_("  wait:    pyward jobs wait %lld\n"), id);
	printf(_("  cancel:  pyward jobs cancel %lld\n"), id);
	return 0;
}

pw_err *pw_cli_job_enter(pw_cli *cli, pw_op_job_here *here)
{
	pw_err *e = pw_op_job_enter(&cli->ctx, here);
	if (e)
		return e;
	if (cli->verbosity == 0)
		cli->verbosity = 1; /* pip's lines belong in the log */
	pw_cli_interrupt_token(); /* a cancel's SIGTERM stops the work cleanly from now on */
	char now[32];
	pw_clock_iso_now(now, sizeof now);
	printf(_("[pyward: job %lld, pid %ld, started %s: %s]\n"), (long long)here->job.id, (long)getpid(), now,
	       pw_render_safe(here->job.args));
	fflush(stdout);
	return NULL;
}

int pw_cli_job_leave(pw_cli *cli, pw_op_job_here *here, int rc)
{
	pw_job_rec r = { 0 };
	fflush(stdout);
	pw_err *e = pw_op_job_leave(&cli->ctx, here, rc, &r);
	if (e)
		pw_cli_print_error(cli, e);
	else
		printf(_("[pyward: job %lld finished: %s, exit status %d]\n"), (long long)r.id, r.state, rc);
	pw_err_free(e);
	pw_job_rec_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- list */

static void print_jobs(const pw_job_list *l)
{
	if (l->count == 0) {
		printf(_("no background jobs\n"));
		return;
	}
	printf("%-6s %-11s %-14s %-19s %9s  %s\n", _("ID"), _("STATE"), _("KIND"), _("STARTED"), _("DURATION"),
	       _("TARGET"));
	for (size_t i = 0; i < l->count; i++) {
		const pw_job_rec *r = &l->items[i];
		char when[32], dur[16];
		pw_render_time(r->started_at, when, sizeof when);
		pw_render_duration(r->duration_ms, dur, sizeof dur);
		printf("%-6lld %-11s %-14s %-19s %9s  %s\n", (long long)r->id, pw_render_safe(r->state),
		       pw_render_safe(r->kind), when, dur, r->target ? pw_render_safe(r->target) : "-");
	}
}

static int list_jobs(pw_cli *cli)
{
	pw_job_list l = { 0 };
	pw_err *e = pw_op_jobs_list(&cli->ctx, &l);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json) {
		pw_render_json(stdout, pw_op_jobs_list_json(&l));
	} else {
		print_jobs(&l);
	}
	pw_job_list_clear(&l);
	return 0;
}

/* ---------------------------------------------------------------- show */

static void print_op(const pw_op_rec *op, const pw_attempt_list *att)
{
	printf(_("  operation %lld  %s  %s  (attempts so far: %zu)\n"), (long long)op->id, pw_render_safe(op->kind),
	       pw_render_safe(op->outcome), att->count);
	for (size_t i = 0; i < att->count; i++) {
		const pw_attempt_rec *a = &att->items[i];
		char dur[16];
		pw_render_duration(a->duration_ms, dur, sizeof dur);
		printf(_("    attempt %d: %s%s%s  exit %d  class %s  %s\n"), a->seq,
		       a->index_url ? pw_render_safe(a->index_url) : _("(default index)"), a->proxy ? _(" via ") : "",
		       a->proxy ? pw_render_safe(a->proxy) : "", a->exit_code, pw_render_safe(a->klass), dur);
	}
}

static void print_job(const pw_job_rec *r)
{
	char dur[16];
	pw_render_duration(r->duration_ms, dur, sizeof dur);
	printf(_("Job %lld\n"), (long long)r->id);
	printf(_("  state:     %s\n"), pw_render_safe(r->state));
	printf(_("  kind:      %s\n"), pw_render_safe(r->kind));
	printf(_("  target:    %s\n"), r->target ? pw_render_safe(r->target) : "-");
	printf(_("  command:   %s\n"), pw_render_safe(r->args));
	printf(_("  started:   %s\n"), r->started_at);
	printf(_("  finished:  %s\n"), r->finished_at ? r->finished_at : "-");
	printf(_("  duration:  %s (budget %.0f s)\n"), dur, r->budget_s);
	printf(_("  process:   pid %lld on %s, user %s\n"), (long long)r->pid, pw_render_safe(r->host),
	       pw_render_safe(r->user));
	if (r->exit_status >= 0)
		printf(_("  exit:      %d\n"), r->exit_status);
	if (r->cancel_requested_at)
		printf(_("  cancel:    requested by %s at %s\n"), r->cancelled_by ? r->cancelled_by : "?",
		       r->cancel_requested_at);
	if (r->stop_reason) {
		printf(_("  stop reason:\n"));
		pw_render_indented(r->stop_reason, "    ");
	} else if (strcmp(r->state, PW_OUTCOME_INTERRUPTED) == 0) {
		printf(_("  stop reason:\n    the job's process ended without recording an outcome (killed, or the machine restarted)\n"));
	}
	printf(_("  log:       %s\n"), pw_render_safe(r->log_path));
}

static int show_job(pw_cli *cli, const char *id_text)
{
	int64_t id = 0;
	pw_op_job_show_result r = { 0 };
	pw_err *e = parse_id(id_text, &id);
	if (!e)
		e = pw_op_job_show(&cli->ctx, id, SHOW_LOG_LINES, &r);
	if (!e && cli->json) {
		pw_render_json(stdout, pw_op_job_show_json(&r));
	} else if (!e) {
		print_job(&r.job);
		printf(_("  operations and attempts:\n"));
		for (size_t i = 0; i < r.operation_count; i++)
			print_op(&r.operations[i].op, &r.operations[i].attempts);
		if (r.log_tail && *r.log_tail) {
			printf(_("  log (last %d lines):\n"), SHOW_LOG_LINES);
			pw_render_indented(r.log_tail, "    ");
		}
	}
	pw_op_job_show_clear(&r);
	return e ? pw_cli_fail(cli, e) : 0;
}

/* ---------------------------------------------------------------- log */

/* Copy what is new in fd to stdout, whole lines made safe (pip's words
 * and a name may carry terminal escapes); a last line without its newline
 * waits in pending until it has one, or until flush. Returns the bytes read. */
static size_t copy_new(int fd, char **pending, bool flush)
{
	char buf[8192];
	size_t total = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		char *chunk = xstrndup(buf, (size_t)n), *joined = xasprintf("%s%s", *pending ? *pending : "", chunk);
		free(chunk);
		free(*pending);
		char *line = joined, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			printf("%s\n", pw_render_safe(line));
			line = nl + 1;
		}
		*pending = *line ? xstrdup(line) : NULL;
		free(joined);
		total += (size_t)n;
	}
	if (flush && *pending) {
		printf("%s\n", pw_render_safe(*pending));
		free(*pending);
		*pending = NULL;
	}
	fflush(stdout);
	return total;
}

static bool still_running(pw_catalog *cat, int64_t id)
{
	pw_job_rec r = { 0 };
	pw_err *e = pw_jobs_get(cat, id, &r);
	bool running = !e && is_running(&r);
	pw_err_free(e);
	pw_job_rec_clear(&r);
	return running;
}

static int show_log(pw_cli *cli, const char *id_text, bool follow)
{
	pw_catalog *cat = NULL;
	pw_job_rec r = { 0 };
	pw_err *e = get_job(cli, id_text, &cat, &r, false);
	int fd = -1;
	if (!e && (fd = open(r.log_path, O_RDONLY | O_CLOEXEC)) < 0)
		e = pw_err_errno(PW_ERR_IO, errno, NULL, _("job log %s"), r.log_path);
	if (!e) {
		char *pending = NULL;
		copy_new(fd, &pending, !follow);
		pw_cancel *stop = pw_cli_interrupt_token();
		/* The log gets its last lines as the job's process exits, just
		 * after the job is recorded as over: read on until it is quiet. */
		int quiet = 0;
		while (follow && !pw_cancel_raised(stop) && quiet < 3) {
			sleep_ms(POLL_MS);
			size_t n = copy_new(fd, &pending, false);
			quiet = still_running(cat, r.id) || n ? 0 : quiet + 1;
		}
		copy_new(fd, &pending, true);
		close(fd);
	}
	pw_job_rec_clear(&r);
	pw_catalog_close(&cat);
	return e ? pw_cli_fail(cli, e) : 0;
}

/* ---------------------------------------------------------------- wait */

static int wait_job(pw_cli *cli, const char *id_text)
{
	pw_catalog *cat = NULL;
	pw_job_rec r = { 0 };
	pw_err *e = get_job(cli, id_text, &cat, &r, false);
	int64_t deadline = pw_clock_deadline_after(cli->ctx.timeout);
	pw_cancel *stop = pw_cli_interrupt_token();
	while (!e && is_running(&r)) {
		if (deadline && pw_clock_mono_ms() >= deadline)
			e = pw_err_new(PW_ERR_TIMEOUT, _("wait longer with --timeout SECONDS, or stop it with 'pyward jobs cancel'"),
				       _("job %lld is still running after %.0f s"), (long long)r.id, cli->ctx.timeout);
		else if (pw_cancel_raised(stop))
			e = pw_err_new(PW_ERR_CANCELLED, _("the job itself goes on; 'pyward jobs' shows it"),
				       _("stopped waiting for job %lld"), (long long)r.id);
		if (e)
			break;
		sleep_ms(POLL_MS);
		int64_t id = r.id;
		pw_job_rec_clear(&r);
		e = pw_jobs_get(cat, id, &r);
	}
	int rc = 0;
	if (e) {
		rc = pw_cli_fail(cli, e);
	} else {
		rc = pw_jobs_exit_status(&r);
		if (cli->json)
			pw_render_json(stdout, pw_op_job_json(&r));
		else if (cli->verbosity >= 0)
			printf(_("job %lld: %s (exit status %d)\n"), (long long)r.id, r.state, rc);
	}
	pw_job_rec_clear(&r);
	pw_catalog_close(&cat);
	return rc;
}

/* ---------------------------------------------------------------- cancel */

static int cancel_job(pw_cli *cli, const char *id_text)
{
	pw_job_rec r = { 0 };
	int64_t id = 0;
	pw_err *e = parse_id(id_text, &id);
	if (!e)
		e = pw_op_job_cancel(&cli->ctx, id, &r);
	int rc = e ? pw_cli_fail(cli, e) : 0;
	if (!e && cli->json) {
		pw_render_json(stdout, pw_op_job_json(&r));
	} else if (!e) {
		printf(_("job %lld: %s\n"), (long long)r.id, r.state);
		if (r.stop_reason)
			pw_render_indented(r.stop_reason, "  ");
	}
	pw_job_rec_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- dispatch */

enum { OPT_FOLLOW = 0x500 };

static const struct option jobs_longopts[] = {
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ NULL, 0, NULL, 0 },
};

/* Which verb takes which option; any other is refused with exit 2 (an
 * option silently ignored would let a user believe it applied). */
static const struct {
	int code;
	const char *verbs; /* " verb verb " */
} jobs_takes[] = {
	{ OPT_FOLLOW, " log " },
};
#define JOBS_TAKES (sizeof jobs_takes / sizeof jobs_takes[0])

typedef struct jobs_args {
	bool follow;
	unsigned given; /* one bit per jobs_takes entry */
} jobs_args;

static int handle_option(int code, const char *arg, void *ud)
{
	(void)arg;
	jobs_args *a = ud;
	if (code == 'f')
		code = OPT_FOLLOW;
	for (size_t i = 0; i < JOBS_TAKES; i++)
		if (jobs_takes[i].code == code)
			a->given |= 1u << i;
	if (code == OPT_FOLLOW) {
		a->follow = true;
		return 0;
	}
	return 2;
}

/* The first option given that verb does not take ("follow"), or NULL. */
static const char *option_not_taken(const jobs_args *a, const char *verb)
{
	char *key = xasprintf(" %s ", verb);
	const char *bad = NULL;
	for (size_t i = 0; i < JOBS_TAKES && !bad; i++) {
		if (!(a->given & (1u << i)) || strstr(jobs_takes[i].verbs, key))
			continue;
		for (const struct option *o = jobs_longopts; !bad && o->name; o++)
			if (o->val == jobs_takes[i].code)
				bad = o->name;
	}
	free(key);
	return bad;
}

static int one_id(pw_cli *cli, const char *sub, int nops)
{
	if (nops == 1)
		return 0;
	pw_cli_usage_error(cli, _("'jobs %s' takes one job id"), sub);
	return PW_EXIT_USAGE;
}

static int run_jobs(pw_cli *cli, int argc, char **argv)
{
	jobs_args a = { 0 };
	int first = pw_cli_parse_command(cli, &pw_cmd_jobs, argc, argv, "f", jobs_longopts, handle_option, &a);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	const char *sub = first < argc ? argv[first] : "list";
	int nops = first < argc ? argc - first - 1 : 0;
	char **ops = argv + first + 1;
	static const char *const subs[] = { "list", "show", "log", "wait", "cancel" };
	size_t verb = 0;
	while (verb < sizeof subs / sizeof subs[0] && strcmp(sub, subs[verb]) != 0)
		verb++;
	if (verb == sizeof subs / sizeof subs[0]) {
		pw_cli_usage_error(cli, _("unknown jobs subcommand '%s' (use list, show, log, wait or cancel)"), sub);
		return PW_EXIT_USAGE;
	}
	const char *extra = option_not_taken(&a, sub);
	if (extra) {
		pw_cli_usage_error(cli, _("'jobs %s' does not take --%s"), sub, extra);
		return PW_EXIT_USAGE;
	}
	if (verb == 0 && nops) {
		pw_cli_usage_error(cli, _("'jobs list' takes no arguments"));
		return PW_EXIT_USAGE;
	}
	if (verb > 0 && one_id(cli, sub, nops))
		return PW_EXIT_USAGE;
	pw_err *e = pw_cli_prepare(cli);
	if (e)
		return pw_cli_fail(cli, e);
	switch (verb) {
	case 0: return list_jobs(cli);
	case 1: return show_job(cli, ops[0]);
	case 2: return show_log(cli, ops[0], a.follow);
	case 3: return wait_job(cli, ops[0]);
	default: return cancel_job(cli, ops[0]);
	}
}

const pw_cmd pw_cmd_jobs = {
	.name = "jobs",
	.summary = N_("list, inspect, follow, wait for and cancel background jobs"),
	.usage = N_("[list]\n"
		    "       pyward jobs show ID\n"
		    "       pyward jobs log ID [--follow]\n"
		    "       pyward jobs wait ID\n"
		    "       pyward jobs cancel ID"),
	.help = N_("Usage:\n"
		   "  pyward jobs [list]\n"
		   "  pyward jobs show ID\n"
		   "  pyward jobs log ID [--follow]\n"
		   "  pyward jobs wait ID\n"
		   "  pyward jobs cancel ID\n"
		   "\n"
		   "Options:\n"
		   "  -f, --follow          log: keep printing what the job writes until it ends\n"
		   "\n"
		   "wait gives up after --timeout SECONDS (exit status 4); the job goes on.\n"
		   "A verb refuses an option it does not take (exit status 2)."),
	.run = run_jobs,
};
