/*
 * The CLI's shared state and command table. Each command is an entry
 * {name, summary, usage, run}; --help, `pyward help COMMAND`, dispatch and
 * the man page follow this one table.
 */
#ifndef PW_CLI_H
#define PW_CLI_H

#include "ops/ctx.h"
#include "ops/op.h"

#include "cancel.h"
#include "err.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct pw_cli {
	/* what every operation needs: the global options that say where and
	 * how (box root, workspace, roots, mode, timeout) go straight into it;
	 * pw_cli_prepare() resolves the rest (ops/ctx.h) */
	pw_ops_ctx ctx;
	bool json;
	bool yes;
	int verbosity;    /* -1 quiet, 0 normal, 1+ verbose */
	char *cmdline;    /* the command line, recorded as the operation's args */
	const char *prog;
	const char *command; /* the command being run, for "see 'pyward COMMAND --help'" */
} pw_cli;

typedef struct pw_cmd {
	const char *name;
	const char *summary; /* N_() text */
	const char *usage;   /* N_() text: options after the name */
	const char *help;    /* N_() text or NULL: a usage line per verb and a line per option */
	int (*run)(pw_cli *cli, int argc, char **argv);
} pw_cmd;

extern const pw_cmd pw_cmd_history;
extern const pw_cmd pw_cmd_paths;
extern const pw_cmd pw_cmd_tui;
extern const pw_cmd pw_cmd_serve;
extern const pw_cmd pw_cmd_runtime;
extern const pw_cmd pw_cmd_exec;
extern const pw_cmd pw_cmd_venv;
extern const pw_cmd pw_cmd_python;
extern const pw_cmd pw_cmd_jobs;
extern const pw_cmd pw_cmd_mcp;
extern const pw_cmd pw_cmd_pins;

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
/* Load settings, resolve the box root, workspace and guard roots (pw_ops_ctx_prepare). */
pw_err *pw_cli_prepare(pw_cli *cli);

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

/* A cancel token raised by SIGINT/SIGTERM (handlers installed on first call). */
pw_cancel *pw_cli_interrupt_token(void);
/* Ask a yes/no question on the terminal; default No. False when there is no terminal. */
bool pw_cli_confirm(const char *question);
/* The operations' consent callback on a terminal (ud: the pw_cli): --yes
 * gives consent; without a terminal no one can; else the statement is shown
 * on stderr and the question asked. */
pw_consent_answer pw_cli_ask_consent(const pw_consent *what, void *ud);

#endif
