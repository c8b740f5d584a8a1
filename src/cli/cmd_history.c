/* pyward history: the catalog's operations, newest first, and one in full. */
#include "config.h"

#include "cli/cli.h"

#include "ops/json.h"
#include "cli/render.h"

#include "catalog.h"
#include "i18n.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

typedef struct history_args {
	pw_cli *cli;
	pw_op_filter filter;
	char since[40];
} history_args;

enum { OPT_KIND = 0x200, OPT_TARGET, OPT_OUTCOME, OPT_SINCE, OPT_LIMIT };

static const struct option history_longopts[] = {
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "outcome", required_argument, NULL, OPT_OUTCOME },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ NULL, 0, NULL, 0 },
};

/* Accept YYYY-MM-DD, optionally followed by THH:MM[:SS[.mmm]][Z] or a space form. */
static bool valid_since(const char *s)
{
	static const char shape[] = "dddd-dd-dd";
	size_t n = strlen(s);
	if (n < 10 || n > 30)
		return false;
	for (size_t i = 0; i < 10; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return false;
	if (n == 10)
		return true;
	if (s[10] != 'T' && s[10] != ' ')
		return false;
	for (size_t i = 11; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && !strchr(":.Z", s[i]))
			return false;
	return n >= 16;
}

static int parse_limit(pw_cli *cli, const char *arg, int *out)
{
	if (strcmp(arg, "all") == 0) {
		*out = -1;
		return 0;
	}
	char *end = NULL;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 1000000) {
		pw_cli_usage_error(cli, _("--limit needs a whole number from 1 to 1000000, or 'all', not '%s'"), arg);
		return 2;
	}
	*out = (int)v;
	return 0;
}

static int handle_option(int code, const char *arg, void *ud)
{
	history_args *h = ud;
	switch (code) {
	case OPT_KIND: h->filter.kind = arg; return 0;
	case OPT_TARGET: h->filter.target = arg; return 0;
	case OPT_OUTCOME: h->filter.outcome = arg; return 0;
	case OPT_SINCE:
		if (!valid_since(arg)) {
			pw_cli_usage_error(h->cli, _("--since needs a UTC date like 2026-12-01 or 2026-12-01T08:00, not '%s'"), arg);
			return 2;
		}
		/* The catalog stores 'T'; accept a space too. */
		snprintf(h->since, sizeof h->since, "%s", arg);
		h->since[10] = h->since[10] == ' ' ? 'T' : h->since[10];
		h->filter.since = h->since;
		return 0;
	case OPT_LIMIT: return parse_limit(h->cli, arg, &h->filter.limit);
	}
	return 2;
}

static json_t *op_to_json(const pw_op_rec *op)
{
	json_t *j = json_object();
	json_object_set_new(j, "id", json_integer(op->id));
	json_object_set_new(j, "kind", pw_json_str(op->kind));
	json_object_set_new(j, "target", pw_json_str(op->target));
	json_object_set_new(j, "outcome", pw_json_str(op->outcome));
	json_object_set_new(j, "stop_reason", pw_json_str(op->stop_reason));
	json_object_set_new(j, "started_at", pw_json_str(op->started_at));
	json_object_set_new(j, "finished_at", pw_json_str(op->finished_at));
	json_object_set_new(j, "duration_ms", op->duration_ms < 0 ? json_null() : json_integer(op->duration_ms));
	json_object_set_new(j, "user", pw_json_str(op->user));
	json_object_set_new(j, "uid", json_integer(op->uid));
	json_object_set_new(j, "host", pw_json_str(op->host));
	json_object_set_new(j, "pid", json_integer(op->pid));
	json_object_set_new(j, "command", pw_json_str(op->args));
	json_object_set_new(j, "pyward_version", pw_json_str(op->pyward_version));
	json_object_set_new(j, "attempt_count", json_integer(op->attempt_count));
	return j;
}

/* Columns in order; TARGET is last and takes what is left of a terminal's
 * width (it is never cut when the output is not a terminal). */
static const struct { const char *title; int width; int right; } columns[] = {
	{ N_("ID"), 5, 1 }, { N_("STARTED (UTC)"), 19, 0 }, { N_("USER"), 8, 0 },
	{ N_("KIND"), 16, 0 }, { N_("OUTCOME"), 11, 0 }, { N_("ATT"), 3, 1 },
	{ N_("TIME"), 6, 1 }, { N_("TARGET"), 0, 0 },
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

#define STARTED_COLUMN 1
#define SHORT_DATE_SKIP 5 /* "2026-" */

/* 0 when not a terminal (nothing is cut), else the terminal's width. */
static int terminal_width(void)
{
	struct winsize ws;
	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
		return 0;
	return ws.ws_col;
}

/* Below 100 columns the year is dropped from the start time to leave room for the target. */
static int started_width(int term)
{
	return term > 0 && term < 100 ? columns[STARTED_COLUMN].width - SHORT_DATE_SKIP
				       : columns[STARTED_COLUMN].width;
}

static int target_width(int term)
{
	if (term == 0)
		return 0;
	int used = 0;
	for (size_t i = 0; i + 1 < NCOLUMNS; i++)
		used += (i == STARTED_COLUMN ? started_width(term) : columns[i].width) + 1;
	return term - used > 8 ? term - used : 8;
}

static void print_row(const char *const cells[NCOLUMNS], int term)
{
	int last_width = target_width(term);
	for (size_t c = 0; c + 1 < NCOLUMNS; c++) {
		int w = c == STARTED_COLUMN ? started_width(term) : columns[c].width;
		pw_render_cell(stdout, cells[c], w, columns[c].right);
		fputc(' ', stdout);
	}
	const char *last = cells[NCOLUMNS - 1] ? cells[NCOLUMNS - 1] : "-";
	if (last_width > 0)
		pw_render_cell(stdout, last, last_width, 0);
	else
		fputs(last, stdout);
	fputc('\n', stdout);
}

static void print_table(const pw_op_list *ops)
{
	int term = terminal_width();
	size_t skip = started_width(term) < columns[STARTED_COLUMN].width ? SHORT_DATE_SKIP : 0;
	const char *titles[NCOLUMNS];
	for (size_t i = 0; i < NCOLUMNS; i++)
		titles[i] = _(columns[i].title);
	print_row(titles, term);
	for (size_t i = 0; i < ops->count; i++) {
		const pw_op_rec *op = &ops->items[i];
		char id[24], when[32], att[16], dur[16];
		snprintf(id, sizeof id, "%lld", (long long)op->id);
		pw_render_time(op->started_at, when, sizeof when);
		snprintf(att, sizeof att, "%d", op->attempt_count);
		pw_render_duration(op->duration_ms, dur, sizeof dur);
		const char *start = strlen(when) > skip ? when + skip : when;
		const char *cells[NCOLUMNS] = { id, start, op->user, op->kind, op->outcome, att, dur, op->target };
		print_row(cells, term);
	}
}

static pw_err *open_catalog(pw_cli *cli, pw_catalog **cat)
{
	pw_err *e = pw_cli_prepare(cli);
	return e ? e : pw_ops_catalog_ro(&cli->ctx, cat);
}

static int list_operations(pw_cli *cli, const pw_op_filter *f)
{
	pw_catalog *cat = NULL;
	pw_op_list ops = { 0 };
	pw_err *e = open_catalog(cli, &cat);
	if (!e)
		e = pw_catalog_ops_query(cat, f, &ops);
	int rc = 0;
	if (e) {
		rc = pw_cli_report(cli, e);
	} else if (cli->json) {
		/* One operation at a time: an audit log of many thousand rows is
		 * never held as one JSON tree. */
		fputs("{\n  \"schema\": 1,\n  \"operations\": [", stdout);
		for (size_t i = 0; i < ops.count; i++) {
			json_t *j = op_to_json(&ops.items[i]);
			fputs(i ? ",\n    " : "\n    ", stdout);
			json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
			json_decref(j);
		}
		fputs(ops.count ? "\n  ]\n}\n" : "]\n}\n", stdout);
		rc = ferror(stdout) ? 1 : 0;
	} else if (ops.count == 0) {
		if (cli->verbosity >= 0)
			puts(_("No operations recorded (or none match)."));
	} else {
		print_table(&ops);
	}
	pw_err_free(e);
	pw_op_list_clear(&ops);
	pw_catalog_close(&cat);
	return rc;
}

static void print_attempt(const pw_attempt_rec *a)
{
	char dur[16], when[32];
	pw_render_duration(a->duration_ms, dur, sizeof dur);
	pw_render_time(a->started_at, when, sizeof when);
	printf(_("  attempt %d  %s  %s  exit %d  class %s\n"), a->seq, when, dur, a->exit_code,
	       a->klass ? a->klass : "-");
	printf(_("    index:   %s\n"), a->index_url ? a->index_url : _("(default)"));
	printf(_("    proxy:   %s\n"), a->proxy ? a->proxy : _("(none)"));
	printf(_("    command: %s\n"), a->argv ? a->argv : "-");
	if (a->output_tail && *a->output_tail) {
		printf(_("    output (tail):\n"));
		pw_render_indented(a->output_tail, "      ");
	}
}

static void print_operation(const pw_op_rec *op, const pw_attempt_list *att)
{
	char dur[16];
	pw_render_duration(op->duration_ms, dur, sizeof dur);
	printf(_("Operation %lld\n"), (long long)op->id);
	printf(_("  kind:      %s\n"), op->kind);
	printf(_("  target:    %s\n"), op->target ? op->target : "-");
	printf(_("  outcome:   %s\n"), op->outcome);
	if (op->stop_reason)
		printf(_("  reason:    %s\n"), op->stop_reason);
	printf(_("  started:   %s\n"), op->started_at);
	printf(_("  finished:  %s\n"), op->finished_at ? op->finished_at : "-");
	printf(_("  duration:  %s\n"), dur);
	printf(_("  user:      %s (uid %lld) on %s, pid %lld\n"), op->user, (long long)op->uid,
	       op->host, (long long)op->pid);
	printf(_("  command:   %s\n"), op->args ? op->args : "-");
	printf(_("  pyward:    %s\n"), op->pyward_version ? op->pyward_version : "-");
	printf(_("  attempts:  %zu\n"), att->count);
	for (size_t i = 0; i < att->count; i++)
		print_attempt(&att->items[i]);
}

static int show_operation(pw_cli *cli, const char *id_text)
{
	char *end = NULL;
	errno = 0;
	long long id = strtoll(id_text, &end, 10);
	if (errno || end == id_text || *end || id < 1) {
		pw_cli_usage_error(cli, _("'history show' needs an operation id (a positive number), not '%s'"), id_text);
		return PW_EXIT_USAGE;
	}
	pw_catalog *cat = NULL;
	pw_op_rec op = { 0 };
	pw_attempt_list att = { 0 };
	pw_err *e = open_catalog(cli, &cat);
	if (!e)
		e = pw_catalog_op_get(cat, id, &op, &att);
	int rc = 0;
	if (e) {
		rc = pw_cli_report(cli, e);
	} else if (cli->json) {
		json_t *j = op_to_json(&op);
		json_t *arr = json_array();
		for (size_t i = 0; i < att.count; i++)
			json_array_append_new(arr, pw_json_attempt_rec(&att.items[i], false));
		json_object_set_new(j, "attempts", arr);
		rc = pw_render_json(stdout, json_pack("{s:i,s:o}", "schema", 1, "operation", j));
	} else {
		print_operation(&op, &att);
	}
	pw_err_free(e);
	pw_op_rec_clear(&op);
	pw_attempt_list_clear(&att);
	pw_catalog_close(&cat);
	return rc;
}

static int run_history(pw_cli *cli, int argc, char **argv)
{
	history_args h = { .cli = cli };
	int first = pw_cli_parse_command(cli, &pw_cmd_history, argc, argv, "", history_longopts,
					 handle_option, &h);
	if (first == -2)
		return 0;
	if (first < 0)
		return PW_EXIT_USAGE;
	int nops = argc - first;
	if (nops == 0)
		return list_operations(cli, &h.filter);
	if (strcmp(argv[first], "show") == 0 && nops == 2)
		return show_operation(cli, argv[first + 1]);
	if (strcmp(argv[first], "show") == 0)
		pw_cli_usage_error(cli, _("usage: history show ID"));
	else
		pw_cli_usage_error(cli, _("unknown history argument '%s'"), argv[first]);
	return PW_EXIT_USAGE;
}

const pw_cmd pw_cmd_history = {
	.name = "history",
	.summary = N_("list recorded operations, or show one with its attempts"),
	.usage = N_("[--kind K] [--target T] [--outcome O] [--since DATE] [--limit N|all] [--json]\n"
		    "       pyward history show ID [--json]"),
	.run = run_history,
};
