/*
 * Background jobs from the command line: a command's --background starts it
 * again as a detached job (pw_cli_job_detach); the detached process brackets
 * its work with pw_cli_job_enter/pw_cli_job_leave; `pyward jobs` reads them.
 */
#ifndef PW_CLI_CMD_JOBS_H
#define PW_CLI_CMD_JOBS_H

#include "cli/cli.h"

/* True in the detached process that runs a job ($PYWARD_JOB is set). */
bool pw_cli_job_running_here(void);

/* The caller's side of --background: record the job, start pyward again
 * detached with the same command and options (and budget), print the job id
 * and how to follow it, and return at once. argv is the command's own
 * (argv[0] is the command word). Returns the exit status. */
int pw_cli_job_detach(pw_cli *cli, const char *kind, const char *target, double budget_s, int argc,
		      char **argv);

/* In the detached process: claim the job named by $PYWARD_JOB (operations
 * recorded from now on point at it). */
pw_err *pw_cli_job_enter(pw_cli *cli);
/* Record the job's end with the command's exit status rc; returns rc. */
int pw_cli_job_leave(pw_cli *cli, int rc);

#endif
