/*
 * Process runner: spawn a child from an argv array (never a shell) in its
 * own process group with an explicit, scrubbed environment; capture stdout
 * and stderr with a byte cap each (head and tail kept, the middle counted and
 * spilled to a file); stream each line to a callback as it arrives; stop the
 * whole group at a deadline or on cancel (SIGTERM, then SIGKILL after a
 * grace period); always reap. A child dies with the thread that started it
 * (PR_SET_PDEATHSIG, SIGKILL): a killed pyward leaves no pip behind.
 */
#ifndef PW_RUNNER_H
#define PW_RUNNER_H

#include "cancel.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pw_stream { PW_STREAM_STDOUT = 1, PW_STREAM_STDERR = 2 } pw_stream;

/* Called once per complete line (without its newline; a final unterminated
 * line is delivered too). Lines longer than 64 KiB are delivered in pieces. */
typedef void (*pw_line_fn)(void *ud, pw_stream stream, const char *line, size_t len);

typedef struct pw_run_opts {
	const char *const *argv;    /* argv[0] is looked up on PATH when it has no '/' */
	const char *cwd;            /* NULL: inherit */
	const char *const *env_add; /* NULL-terminated "NAME=VALUE" added after scrubbing */
	int64_t deadline_ms;        /* pw_clock_mono_ms() value; 0 = none */
	const pw_cancel *cancel;    /* NULL = not cancellable */
	int grace_ms;               /* SIGTERM→SIGKILL grace; 0 = default 2000 */
	size_t cap_bytes;           /* per stream; 0 = default 1 MiB */
	const char *spill_dir;      /* where bytes past the cap go; NULL = not kept */
	const char *stdin_path;     /* NULL: /dev/null */
	pw_line_fn on_line;         /* may be NULL */
	void *ud;
} pw_run_opts;

typedef enum pw_run_status {
	PW_RUN_EXITED,     /* exited normally: see exit code */
	PW_RUN_SIGNALLED,  /* killed by a signal it did not get from us */
	PW_RUN_TIMED_OUT,  /* we stopped it at its deadline */
	PW_RUN_CANCELLED,  /* we stopped it because the cancel token was raised */
} pw_run_status;

typedef struct pw_run_result pw_run_result;

/* Build the child's environment from envp: keeps PATH, HOME, USER, LOGNAME,
 * SHELL, LANG, LC_*, TERM, TZ, TMPDIR, the XDG base directories and proxy
 * variables (any case), drops names that look like credentials, then
 * appends add (later entries win).
 * Returns a NULL-terminated array to free with pw_runner_env_free(). */
char **pw_runner_build_env(const char *const *envp, const char *const *add);
/* The same scrub, also keeping the names in keep (NULL-terminated; "P*"
 * keeps every name starting with P) unless they look like credentials. */
char **pw_runner_build_env_keeping(const char *const *envp, const char *const *keep, const char *const *add);
/* For an interactive Python (a scratchpad worker): the same scrub, also
 * keeping VIRTUAL_ENV, PYTHONPATH, the CA bundle variables a session
 * relies on, and TERMINFO_DIRS. */
char **pw_runner_build_env_python(const char *const *envp);
void pw_runner_env_free(char **env);
/* True when a variable name looks like it holds a credential. */
bool pw_runner_name_is_secret(const char *name);

/* Descriptors every child this thread starts keeps open (at most 4): a
 * lock held across a change is then held until the change's process is
 * gone too, even when pyward is killed first. Drop it before closing. */
void pw_runner_inherit_fd(int fd);
void pw_runner_inherit_fd_drop(int fd);

/* Run to completion. An error only when the child could not be started
 * (not found, not executable, fork failure); every outcome of a started child
 * is a result. */
pw_err *pw_run(const pw_run_opts *opts, pw_run_result **out);

pw_run_status pw_run_result_status(const pw_run_result *r);
int pw_run_result_exit_code(const pw_run_result *r);   /* -1 unless EXITED */
int pw_run_result_signal(const pw_run_result *r);      /* signal that ended it, or 0 */
int64_t pw_run_result_duration_ms(const pw_run_result *r);
/* Captured text of a stream: head, then a marker line naming the dropped
 * byte count when over the cap, then tail. NUL-terminated, owned by r. */
const char *pw_run_result_output(const pw_run_result *r, pw_stream s);
size_t pw_run_result_total_bytes(const pw_run_result *r, pw_stream s);
size_t pw_run_result_dropped_bytes(const pw_run_result *r, pw_stream s);
const char *pw_run_result_spill_path(const pw_run_result *r, pw_stream s); /* or NULL */
/* Human description: "exited 0", "killed by signal 9", "timed out", "cancelled". */
const char *pw_run_result_describe(const pw_run_result *r);
void pw_run_result_free(pw_run_result **r);

#endif
