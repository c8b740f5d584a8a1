/*
 * The CLI's shared state and command table. Each command is an entry
 * {name, summary, usage, run}; --help, `pyward help COMMAND`, dispatch and
 * the man page follow this one table.
 */
#ifndef PW_CLI_H
#define PW_CLI_H

#include "catalog.h"
#include "cancel.h"
#include "err.h"
#include "guard.h"
#include "settings.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum pw_mode { PW_MODE_READ_ONLY, PW_MODE_WORKSPACE_WRITE, PW_MODE_FULL_ACCESS } pw_mode;

enum pw_exit {
	PW_EXIT_OK = 0,
	PW_EXIT_FAILED = 1,
	PW_EXIT_USAGE = 2,
	PW_EXIT_REFUSED = 3,
	PW_EXIT_TIMEOUT = 4,
	PW_EXIT_INTERRUPTED = 130,
};

typedef struct pw_cli {
	/* global options as given */
	const char *box_root_opt;
	const char *workspace_opt;
	const char **roots;
	size_t root_count;
	pw_mode mode;
	bool mode_given;
	bool json;
	double timeout;   /* seconds; 0 = none */
	bool yes;
	int verbosity;    /* -1 quiet, 0 normal, 1+ verbose */
	/* resolved lazily by pw_cli_prepare() */
	pw_settings *settings;
	char *box_root;
	const char *box_root_source;
	char *workspace;
	pw_guard *guard;
	char *system_config;
	char *user_config;
	/* the command line, for the catalog */
	char *cmdline;
	int64_t job_id;   /* the background job this process runs (cmd_jobs.h); 0: none */
	const char *prog;
} pw_cli;

typedef struct pw_cmd {
	const char *name;
	const char *summary; /* N_() text */
	const char *usage;   /* N_() text: options after the name */
	int (*run)(pw_cli *cli, int argc, char **argv);
} pw_cmd;

extern const pw_cmd pw_cmd_history;
extern const pw_cmd pw_cmd_paths;
extern const pw_cmd pw_cmd_tui;
extern const pw_cmd pw_cmd_runtime;
extern const pw_cmd pw_cmd_exec;
extern const pw_cmd pw_cmd_venv;
extern const pw_cmd pw_cmd_python;
extern const pw_cmd pw_cmd_jobs;
extern const pw_cmd pw_cmd_mcp;

const pw_cmd *pw_cli_find(const char *name);
size_t pw_cli_command_count(void);
const pw_cmd *pw_cli_command(size_t i);

/* Parse the global options at the front of argv; returns the index of the
 * command word (argc when none), or -1 after reporting a usage error. */
int pw_cli_parse_globals(pw_cli *cli, int argc, char **argv);
/* Parse a command's own options merged with the global ones (which may
 * appear after the command). handle(code, optarg, ud) is called for the
 * command's options and returns 0, or a non-zero exit status. Returns the
 * index of the first operand, or -1 after reporting a usage error. */
int pw_cli_parse_command(pw_cli *cli, const pw_cmd *cmd, int argc, char **argv,
			 const char *shortopts, const struct option *longopts,
			 int (*handle)(int code, const char *arg, void *ud), void *ud);
/* True when arg is a global option whose value is the next word
 * ("--timeout", "-C"; not "--timeout=5"). */
bool pw_cli_global_takes_value(const char *arg);
/* Load settings, resolve the box root, workspace and guard roots. */
pw_err *pw_cli_prepare(pw_cli *cli);
/* Fail closed when the mode does not allow a mutation. */
pw_err *pw_cli_require_write(const pw_cli *cli, const char *what);

void pw_cli_usage_error(const pw_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report an error (human on stderr; JSON on stdout too with --json); returns its exit status. */
int pw_cli_report(const pw_cli *cli, const pw_err *e);
/* pw_cli_report, then free e; returns its exit status. */
int pw_cli_fail(const pw_cli *cli, pw_err *e);
/* Only the human lines on stderr (for commands whose JSON carries the error itself). */
void pw_cli_print_error(const pw_cli *cli, const pw_err *e);
void pw_cli_print_help(const pw_cli *cli, FILE *out);
void pw_cli_print_command_help(const pw_cli *cli, const pw_cmd *cmd, FILE *out);
void pw_cli_free(pw_cli *cli);

const char *pw_mode_name(pw_mode m);

/* Open the box's catalog for reading only (a missing one reads as empty). */
pw_err *pw_cli_catalog_ro(pw_cli *cli, pw_catalog **cat);
/* Open the box's catalog for writing (creating it). */
pw_err *pw_cli_catalog_rw(pw_cli *cli, pw_catalog **cat);
/* Record the start of an operation (kind, target, this command line). */
pw_err *pw_cli_op_begin(pw_cli *cli, pw_catalog *cat, const char *kind, const char *target, int64_t *id);
/* Record its end: the outcome follows from e (NULL = ok). */
void pw_cli_op_end(pw_catalog *cat, int64_t id, const pw_err *e);
/* A cancel token raised by SIGINT/SIGTERM (handlers installed on first call). */
pw_cancel *pw_cli_interrupt_token(void);
/* Data file path: $PYWARD_DATADIR, the installed pkgdatadir, then the source tree. */
char *pw_cli_data_file(const char *name);
/* Ask a yes/no question on the terminal; default No. False when there is no terminal. */
bool pw_cli_confirm(const char *question);

#endif
