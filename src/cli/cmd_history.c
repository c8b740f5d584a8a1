/* pyward history: the catalog's operations, newest first, one in full, and
 * the history's own verbs (undo, export, prune: src/ops/op_history.c). */
#include "config.h"

#include "cli/cli.h"

#include "ops/json.h"
#include "ops/op_history.h"
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
	char before[40];
	bool dry_run;
	bool force;
	const char *format;
	const char *index;
	const char *proxy;
	unsigned given; /* the options given, one bit per history_takes entry */
} history_args;

enum { OPT_KIND = 0x200, OPT_TARGET, OPT_OUTCOME, OPT_SINCE, OPT_LIMIT, OPT_PACKAGE, OPT_DRY_RUN, OPT_FORCE,
       OPT_FORMAT, OPT_BEFORE, OPT_INDEX, OPT_PROXY };

static const struct option history_longopts[] = {
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "outcome", required_argument, NULL, OPT_OUTCOME },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "package", required_argument, NULL, OPT_PACKAGE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "before", required_argument, NULL, OPT_BEFORE },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "proxy", required_argument, NULL, OPT_PROXY },
	{ NULL, 0, NULL, 0 },
};

/* Which verb takes which option ("list" is history without a verb); any
 * other is refused with exit 2 (an option silently ignored would let a
 * user believe it applied: `history show 5 --kind x`, `export --before`). */
static const struct {
	int code;
	const char *verbs; /* " verb verb " */
} history_takes[] = {
	{ OPT_KIND, " list " },       { OPT_TARGET, " list " },      { OPT_OUTCOME, " list " },
	{ OPT_PACKAGE, " list " },    { OPT_LIMIT, " list " },       { OPT_SINCE, " list export " },
	{ OPT_DRY_RUN, " undo " },    { OPT_FORCE, " undo " },       { OPT_INDEX, " undo " },
	{ OPT_PROXY, " undo " },      { OPT_FORMAT, " export " },    { OPT_BEFORE, " prune " },
};
#define HISTORY_TAKES (sizeof history_takes / sizeof history_takes[0])

/* The first option given that verb does not take ("kind"), or NULL. */
static const char *option_not_taken(const history_args *h, const char *verb)
{
	char *key = xasprintf(" %s ", verb);
	const char *bad = NULL;
	for (size_t i = 0; i < HISTORY_TAKES && !bad; i++) {
		if (!(h->given & (1u << i)) || strstr(history_takes[i].verbs, key))
			continue;
		for (const struct option *o = history_longopts; !bad && o->name; o++)
			if (o->val == history_takes[i].code)
				bad = o->name;
	}
	free(key);
	return bad;
}

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
	for (size_t i = 0; i < HISTORY_TAKES; i++)
		if (history_takes[i].code == code)
			h->given |= 1u << i;
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
	case OPT_PACKAGE: h->filter.package = arg; return 0;
	case OPT_DRY_RUN: h->dry_run = true; return 0;
	case OPT_FORCE: h->force = true; return 0;
	case OPT_INDEX: h->index = arg; return 0;
	case OPT_PROXY: h->proxy = arg; return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "jsonl") != 0 && strcmp(arg, "csv") != 0) {
			pw_cli_usage_error(h->cli, _("--format takes jsonl or csv, not '%s'"), arg);
			return 2;
		}
		h->format = arg;
		return 0;
	case OPT_BEFORE:
		if (!valid_since(arg)) {
			pw_cli_usage_error(h->cli, _("--before needs a UTC date like 2026-12-01 or 2026-12-01T08:00, not '%s'"), arg);
			return 2;
		}
		snprintf(h->before, sizeof h->before, "%s", arg);
		h->before[10] = h->before[10] == ' ' ? 'T' : h->before[10];
		return 0;
	}
	return 2;
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

/* The ID column grows with the largest id shown (a million operations
 * have seven digits), never below its title's width. */
static int id_width = 5;

static int column_width(size_t c, int term)
{
	return c == STARTED_COLUMN ? started_width(term) : c == 0 ? id_width : columns[c].width;
}

static int target_width(int term)
{
	if (term == 0)
		return 0;
	int used = 0;
	for (size_t i = 0; i + 1 < NCOLUMNS; i++)
		used += column_width(i, term) + 1;
	return term - used > 8 ? term - used : 8;
}

static void print_row(const char *const cells[NCOLUMNS], int term)
{
	int last_width = target_width(term);
	for (size_t c = 0; c + 1 < NCOLUMNS; c++) {
		int w = column_width(c, term);
		pw_render_cell(stdout, cells[c], w, columns[c].right);
		fputc(' ', stdout);
	}
	const char *last = cells[NCOLUMNS - 1] ? cells[NCOLUMNS - 1] : "-";
	if (last_width > 0)
		pw_render_cell(stdout, last, last_width, 0);
	else
		fputs(pw_render_safe(last), stdout);
	fputc('\n', stdout);
}

static void print_table(const pw_op_list *ops)
{
	for (size_t i = 0; i < ops->count; i++) {
		char id[24];
		int n = snprintf(id, sizeof id, "%lld", (long long)ops->items[i].id);
		if (n > id_width)
			id_width = n;
	}
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

static int list_operations(pw_cli *cli, const pw_op_filter *f)
{
	pw_op_list ops = { 0 };
	pw_err *e = pw_cli_prepare(cli);
	if (!e)
		e = pw_op_history_list(&cli->ctx, f, &ops);
	int rc = 0;
	if (e) {
		rc = pw_cli_report(cli, e);
	} else if (cli->json) {
		/* pw_op_history_list_json's document, one operation at a time:
		 * an audit log of many thousand rows is never held as one tree. */
		fputs("{\n  \"schema\": 1,\n  \"operations\": [", stdout);
		for (size_t i = 0; i < ops.count; i++) {
			json_t *j = pw_json_op_summary(&ops.items[i]);
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
	return rc;
}

static void print_attempt(const pw_attempt_rec *a)
{
	char dur[16], when[32];
	pw_render_duration(a->duration_ms, dur, sizeof dur);
	pw_render_time(a->started_at, when, sizeof when);
	printf(_("  attempt %d  %s  %s  exit %d  class %s\n"), a->seq, when, dur, a->exit_code,
	       a->klass ? pw_render_safe(a->klass) : "-");
	printf(_("    index:   %s\n"), a->index_url ? pw_render_safe(a->index_url) : _("(default)"));
	printf(_("    proxy:   %s\n"), a->proxy ? pw_render_safe(a->proxy) : _("(none)"));
	printf(_("    command: %s\n"), a->argv ? pw_render_safe(a->argv) : "-");
	if (a->output_tail && *a->output_tail) {
		printf(_("    output (tail):\n"));
		pw_render_indented(a->output_tail, "      ");
	}
}

/* apt's history lines: "Install: a (1.0), b (2.0)", "Upgrade: c (1.0 -> 1.1)", … */
static void print_changes(const char *env, const pw_pkg_changes *ch, const char *indent)
{
	if (!ch->count)
		return;
	printf(_("%spackages in %s:\n"), indent, env ? pw_render_safe(env) : "?");
	char **lines = NULL;
	size_t n = pw_pkg_changes_apt_lines(ch, &lines);
	for (size_t i = 0; i < n; i++) {
		printf("%s  %s\n", indent, pw_render_safe(lines[i])); /* package names from dist-info */
		free(lines[i]);
	}
	free(lines);
}

static void print_operation(const pw_op_rec *op, const pw_attempt_list *att, const char *env, const pw_pkg_changes *ch)
{
	char dur[16];
	pw_render_duration(op->duration_ms, dur, sizeof dur);
	printf(_("Operation %lld\n"), (long long)op->id);
	printf(_("  kind:      %s\n"), pw_render_safe(op->kind));
	printf(_("  target:    %s\n"), op->target ? pw_render_safe(op->target) : "-");
	printf(_("  outcome:   %s\n"), pw_render_safe(op->outcome));
	if (op->stop_reason)
		printf(_("  reason:    %s\n"), pw_render_safe(op->stop_reason));
	printf(_("  started:   %s\n"), op->started_at);
	printf(_("  finished:  %s\n"), op->finished_at ? op->finished_at : "-");
	printf(_("  duration:  %s\n"), dur);
	printf(_("  user:      %s (uid %lld) on %s, pid %lld\n"), pw_render_safe(op->user), (long long)op->uid,
	       pw_render_safe(op->host), (long long)op->pid);
	printf(_("  command:   %s\n"), op->args ? pw_render_safe(op->args) : "-");
	printf(_("  pyward:    %s\n"), op->pyward_version ? pw_render_safe(op->pyward_version) : "-");
	if (op->undo_of)
		printf(_("  undo of:   operation %lld\n"), (long long)op->undo_of);
	if (op->note)
		printf(_("  result:    %s\n"), pw_render_safe(op->note));
	print_changes(env, ch, "  ");
	printf(_("  attempts:  %zu\n"), att->count);
	for (size_t i = 0; i < att->count; i++)
		print_attempt(&att->items[i]);
}

static long long parse_id(pw_cli *cli, const char *verb, const char *text)
{
	char *end = NULL;
	errno = 0;
	long long id = strtoll(text, &end, 10);
	if (errno || end == text || *end || id < 1) {
		pw_cli_usage_error(cli, _("'history %s' needs an operation id (a positive number), not '%s'"), verb, text);
		return 0;
	}
	return id;
}

static int show_operation(pw_cli *cli, const char *id_text)
{
	long long id = parse_id(cli, "show", id_text);
	if (!id)
		return PW_EXIT_USAGE;
	pw_op_history_show_result r = { 0 };
	pw_err *e = pw_cli_prepare(cli);
	if (!e)
		e = pw_op_history_show(&cli->ctx, id, &r);
	int rc = 0;
	if (e)
		rc = pw_cli_report(cli, e);
	else if (cli->json)
		rc = pw_render_json(stdout, pw_op_history_show_json(&r));
	else
		print_operation(&r.op, &r.attempts, r.env, &r.changes);
	pw_err_free(e);
	pw_op_history_show_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- undo */

static pw_op_io terminal_io(pw_cli *cli)
{
	return (pw_op_io){ .consent = pw_cli_ask_consent, .consent_ud = cli, .cancel = pw_cli_interrupt_token() };
}

static void print_plan(const pw_op_history_undo_result *r, long long id)
{
	printf(_("Undo operation %lld (%s) in %s:\n"), id, r->kind ? pw_render_safe(r->kind) : "?",
	       r->env ? pw_render_safe(r->env) : "?");
	char **lines = NULL;
	size_t n = pw_op_history_undo_lines(r, &lines);
	for (size_t i = 0; i < n; i++) {
		printf("  %s\n", pw_render_safe(lines[i]));
		free(lines[i]);
	}
	free(lines);
}

static int undo_operation(pw_cli *cli, const history_args *h, const char *id_text)
{
	long long id = parse_id(cli, "undo", id_text);
	if (!id)
		return PW_EXIT_USAGE;
	pw_op_history_undo_result r = { 0 };
	pw_op_history_undo_request rq = { .id = id, .dry_run = h->dry_run, .force = h->force, .index = h->index,
					  .proxy = h->proxy };
	pw_op_io io = terminal_io(cli);
	pw_err *e = pw_cli_prepare(cli);
	if (!e)
		e = pw_op_history_undo(&cli->ctx, &rq, &io, &r);
	int rc = e ? pw_err_exit_status(e) : 0;
	if (cli->json) {
		pw_render_json(stdout, pw_op_history_undo_json(&r, id, e));
	} else if (r.env && (h->dry_run || (e && pw_err_code(e) == PW_ERR_REFUSED))) {
		print_plan(&r, id);
	} else if (!e && cli->verbosity >= 0) {
		pw_cli_print_attempts(&r.uninstall);
		pw_cli_print_attempts(&r.install);
		if (!r.operation)
			printf(_("nothing to undo: %s already is as before operation %lld\n"), pw_render_safe(r.env), id);
		else
			printf(_("undone: operation %lld (operation %lld; 'pyward history show %lld' has the details)\n"),
			       id, (long long)r.operation, (long long)r.operation);
		print_changes(r.env, &r.changed, "");
	}
	if (e)
		pw_cli_print_error(cli, e);
	pw_err_free(e);
	pw_op_history_undo_clear(&r);
	return rc;
}

/* ---------------------------------------------------------------- export */

static void csv_field(FILE *out, const char *s, bool last)
{
	if (s && strpbrk(s, ",\"\r\n")) {
		fputc('"', out);
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				fputc('"', out);
			fputc(*p, out);
		}
		fputc('"', out);
	} else if (s) {
		fputs(s, out);
	}
	fputc(last ? '\n' : ',', out);
}

static const char *const csv_columns[] = {
	"id", "started_at", "finished_at", "kind", "target", "outcome", "stop_reason", "user", "uid", "host", "pid",
	"duration_ms", "command", "pyward_version", "undo_of", "note", "attempt_count", "attempt_classes",
	"environment", "packages", "api_job",
};
#define CSV_COLUMNS (sizeof csv_columns / sizeof csv_columns[0])

/* A member as CSV text: numbers written out, null empty. */
static char *member_text(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	return xstrdup("");
}

/* A row for an API job that ran no operation: no id, its own times,
 * outcome (its state), user, host, pid and request (command). */
static const char *const csv_job_columns[CSV_COLUMNS] = {
	NULL, "created_at", "finished_at", "kind", "target", "state", NULL, "user", NULL, "host", "pid",
	NULL, "command", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "id",
};

/* One row per operation: the operation's members, its attempts' classes in
 * order, its package changes as apt's lines joined by "; ", the API job
 * that ran it; then a row per API job that ran none. */
static pw_err *export_csv(json_t *op, void *ud)
{
	(void)ud;
	char *cells[CSV_COLUMNS];
	json_t *job = json_object_get(op, "api_job");
	bool alone = !json_object_get(op, "id");
	for (size_t i = 0; i < CSV_COLUMNS; i++)
		if (!alone)
			cells[i] = i + 1 == CSV_COLUMNS ? member_text(job, "id") : member_text(op, csv_columns[i]);
		else
			cells[i] = csv_job_columns[i] ? member_text(job, csv_job_columns[i]) : xstrdup("");
	json_t *att = json_object_get(op, "attempts"), *a;
	size_t i;
	char *classes = xstrdup("");
	json_array_foreach(att, i, a) {
		char *next = xasprintf("%s%s%s", classes, i ? " " : "", json_string_value(json_object_get(a, "class")));
		free(classes);
		classes = next;
	}
	if (!alone) {
		free(cells[17]);
		cells[17] = classes;
	} else {
		free(classes);
	}
	pw_pkg_changes ch = { 0 };
	json_t *p;
	json_array_foreach(json_object_get(op, "packages"), i, p) {
		pw_pkg_action act;
		if (pw_pkg_action_parse(json_string_value(json_object_get(p, "action")), &act))
			pw_pkg_changes_add(&ch, act, json_string_value(json_object_get(p, "name")),
					   json_string_value(json_object_get(p, "old_version")),
					   json_string_value(json_object_get(p, "new_version")), NULL, NULL);
	}
	char **lines = NULL, *packages = xstrdup("");
	size_t n = pw_pkg_changes_apt_lines(&ch, &lines);
	for (size_t k = 0; k < n; k++) {
		char *next = xasprintf("%s%s%s", packages, k ? "; " : "", lines[k]);
		free(packages);
		free(lines[k]);
		packages = next;
	}
	free(lines);
	pw_pkg_changes_clear(&ch);
	if (!alone) {
		free(cells[19]);
		cells[19] = packages;
	} else {
		free(packages);
	}
	for (size_t k = 0; k < CSV_COLUMNS; k++) {
		csv_field(stdout, cells[k], k + 1 == CSV_COLUMNS);
		free(cells[k]);
	}
	return ferror(stdout) ? pw_err_new(PW_ERR_IO, NULL, _("writing the export failed")) : NULL;
}

static pw_err *export_jsonl(json_t *op, void *ud)
{
	(void)ud;
	json_dumpf(op, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	return ferror(stdout) ? pw_err_new(PW_ERR_IO, NULL, _("writing the export failed")) : NULL;
}

static int export_history(pw_cli *cli, const history_args *h)
{
	bool csv = h->format && strcmp(h->format, "csv") == 0;
	pw_op_io io = terminal_io(cli);
	pw_err *e = pw_cli_prepare(cli);
	if (!e && csv)
		for (size_t i = 0; i < CSV_COLUMNS; i++)
			csv_field(stdout, csv_columns[i], i + 1 == CSV_COLUMNS);
	if (!e)
		e = pw_op_history_export(&cli->ctx, h->filter.since, &io, csv ? export_csv : export_jsonl, NULL);
	if (!e && fflush(stdout) != 0)
		e = pw_err_new(PW_ERR_IO, NULL, _("writing the export failed"));
	return e ? pw_cli_fail(cli, e) : 0;
}

/* ---------------------------------------------------------------- prune */

static int prune_history(pw_cli *cli, const history_args *h)
{
	if (!h->before[0]) {
		pw_cli_usage_error(cli, _("'history prune' needs --before DATE"));
		return PW_EXIT_USAGE;
	}
	pw_prune_result r = { 0 };
	pw_op_io io = terminal_io(cli);
	pw_err *e = pw_cli_prepare(cli);
	if (!e)
		e = pw_op_history_prune(&cli->ctx, h->before, &io, &r);
	if (e)
		return pw_cli_fail(cli, e);
	if (cli->json)
		pw_render_json(stdout, pw_op_history_prune_json(&r, h->before));
	else
		printf(_("deleted %lld operations started before %s (%lld attempts, %lld package changes) and %lld "
			 "API jobs; recorded as operation %lld\n"), (long long)r.operations, h->before,
		       (long long)r.attempts, (long long)r.package_changes, (long long)r.api_jobs,
		       (long long)r.operation_id);
	return 0;
}

/* ---------------------------------------------------------------- check */

static int check_history(pw_cli *cli)
{
	pw_op_history_check_result r = { 0 };
	pw_op_io io = terminal_io(cli);
	pw_err *e = pw_cli_prepare(cli);
	if (!e)
		e = pw_op_history_check(&cli->ctx, &io, &r);
	if (e) {
		pw_op_history_check_clear(&r);
		return pw_cli_fail(cli, e);
	}
	if (cli->json) {
		pw_render_json(stdout, pw_op_history_check_json(&r));
	} else if (!r.damaged) {
		printf(_("catalog %s: no damage found (%lld pages read, every index compared with its table)\n"),
		       pw_render_safe(r.catalog), (long long)r.check.pages);
	} else {
		for (size_t i = 0; i < r.check.count; i++)
			printf("%s\n", pw_render_safe(r.check.problems[i]));
	}
	int rc = 0;
	pw_err *d = pw_op_history_check_damage(&r);
	if (d) {
		pw_cli_print_error(cli, d);
		pw_err_free(d);
		rc = 1;
	}
	pw_op_history_check_clear(&r);
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
	const char *sub = nops ? argv[first] : "list";
	static const char *const verbs[] = { "show", "undo", "export", "prune", "check" };
	bool known = nops == 0;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		known = known || strcmp(sub, verbs[i]) == 0;
	const char *extra = known ? option_not_taken(&h, sub) : NULL;
	if (extra && nops == 0) {
		pw_cli_usage_error(cli, _("'history' without a verb lists operations and does not take --%s"), extra);
		return PW_EXIT_USAGE;
	}
	if (extra) {
		pw_cli_usage_error(cli, _("'history %s' does not take --%s"), sub, extra);
		return PW_EXIT_USAGE;
	}
	if (nops == 0)
		return list_operations(cli, &h.filter);
	if (strcmp(sub, "show") == 0 && nops == 2)
		return show_operation(cli, argv[first + 1]);
	if (strcmp(sub, "undo") == 0 && nops == 2)
		return undo_operation(cli, &h, argv[first + 1]);
	if (strcmp(sub, "export") == 0 && nops == 1)
		return export_history(cli, &h);
	if (strcmp(sub, "prune") == 0 && nops == 1)
		return prune_history(cli, &h);
	if (strcmp(sub, "check") == 0 && nops == 1)
		return check_history(cli);
	if (strcmp(sub, "show") == 0)
		pw_cli_usage_error(cli, _("usage: history show ID"));
	else if (strcmp(sub, "undo") == 0)
		pw_cli_usage_error(cli, _("usage: history undo ID [--dry-run] [--force] [--yes] [--index URL]"));
	else if (strcmp(sub, "export") == 0 || strcmp(sub, "prune") == 0 || strcmp(sub, "check") == 0)
		pw_cli_usage_error(cli, _("'history %s' takes no operands"), sub);
	else
		pw_cli_usage_error(cli, _("unknown history argument '%s'"), sub);
	return PW_EXIT_USAGE;
}

const pw_cmd pw_cmd_history = {
	.name = "history",
	.summary = N_("recorded operations: list, show, undo, export, prune, check"),
	.usage = N_("[--kind K] [--target T] [--outcome O] [--package NAME] [--since DATE] [--limit N|all] [--json]\n"
		    "       pyward history show ID [--json]\n"
		    "       pyward history undo ID [--dry-run] [--force] [--yes] [--index URL] [--proxy URL] [--json]\n"
		    "       pyward history export [--since DATE] [--format jsonl|csv]\n"
		    "       pyward history prune --before DATE [--yes] [--json]\n"
		    "       pyward history check [--json]"),
	.help = N_("Usage:\n"
		   "  pyward history [--kind K] [--target T] [--outcome O] [--package NAME]\n"
		   "                 [--since DATE] [--limit N|all]\n"
		   "  pyward history show ID\n"
		   "  pyward history undo ID [--dry-run] [--force] [--yes] [--index URL]\n"
		   "                 [--proxy URL]\n"
		   "  pyward history export [--since DATE] [--format jsonl|csv]\n"
		   "  pyward history prune --before DATE [--yes]\n"
		   "  pyward history check\n"
		   "\n"
		   "Options:\n"
		   "  --kind K              list: operations of this kind, or of the kinds it starts\n"
		   "                        when it ends in '.' or '*' (venv.)\n"
		   "  --target T            list: operations whose target contains T\n"
		   "  --outcome O           list: ok, failed, refused, timed-out, cancelled,\n"
		   "                        interrupted or running\n"
		   "  --package NAME        list: operations that changed this package\n"
		   "  --since DATE          list, export: started at or after this UTC date\n"
		   "                        (2026-12-01 or 2026-12-01T08:00)\n"
		   "  --limit N|all         list: at most N operations, newest first (default 50)\n"
		   "  --dry-run             undo: show what it would change, change nothing\n"
		   "  --force               undo: go ahead although later changes are in the way\n"
		   "  --index URL           undo: this package index for what is installed again\n"
		   "  --proxy URL           undo: through this proxy\n"
		   "  --format jsonl|csv    export: one JSON object a line (default), or CSV\n"
		   "  --before DATE         prune: delete the operations started before this UTC\n"
		   "                        date\n"
		   "\n"
		   "check reads the whole catalog for damage (every page, every index against its\n"
		   "table) without writing; exit status 1 when it finds any.\n"
		   "--json prints the results of the list, show, undo, prune and check as JSON.\n"
		   "A verb refuses an option it does not take (exit status 2)."),
	.run = run_history,
};
