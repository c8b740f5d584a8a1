/*
 * Background jobs from the command line: a command's --background has ops
 * start it as a detached job (pw_op_job_start) and prints what it started;
 * the detached process brackets its work with pw_cli_job_enter/leave;
 * `pyward jobs` reads them.
 */
#ifndef PW_CLI_CMD_JOBS_H
#define PW_CLI_CMD_JOBS_H

#include "cli/cli.h"
#include "ops/op_jobs.h"

/* The caller's side of --background, once ops has started the job
 * (pw_op_job_start): print the job id and how to follow it. Returns 0. */
int pw_cli_job_started(pw_cli *cli, const pw_job_rec *job);

/* In the detached process ($PYWARD_JOB set: pw_op_job_running_here):
 * claim the job, taking its starter's identity into cli->ctx (keep *here
 * until leave), with pip's lines in the log and SIGTERM stopping the work. */
pw_err *pw_cli_job_enter(pw_cli *cli, pw_op_job_here *here);
/* Record the job's end with the command's exit status rc; returns rc. */
int pw_cli_job_leave(pw_cli *cli, pw_op_job_here *here, int rc);

#endif
