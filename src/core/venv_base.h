/*
 * The base interpreter of an environment, as both ways of creating one
 * need it (venv.c runs `-m venv`, venv_fast.c writes the environment
 * itself): running it, bounded in time and with the variables every child
 * of the venv modules gets; the version rule; where its bundled pip wheel
 * is; and which folder a failed create must remove.
 */
#ifndef PW_VENV_BASE_H
#define PW_VENV_BASE_H

#include "cancel.h"
#include "err.h"
#include "runner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What every child of the venv modules runs with. */
typedef struct pw_venv_job {
	const char *const *env_add;
	int64_t deadline_ms;    /* overall; 0 none */
	const pw_cancel *cancel;
} pw_venv_job;

/* Run argv within seconds (and the job's deadline) with user
 * site-packages and pip's version check off; an error unless it exits 0:
 * PW_ERR_TIMEOUT, PW_ERR_CANCELLED, or PW_ERR_FAILED quoting the end of
 * what it said under the name what. *res keeps the result whenever the
 * child started (the caller frees it). */
pw_err *pw_venv_run(const char *const *argv, const pw_venv_job *j, double seconds, size_t cap, const char *what,
		    pw_run_result **res);

/* The earlier of the overall deadline and now + seconds. */
int64_t pw_venv_step_deadline(int64_t overall, double seconds);

/* "3.11.2" gives 3 and 11; false unless it starts with two numbers. */
bool pw_venv_version_parts(const char *v, long *major, long *minor);

/* Python 3.8 or newer. */
bool pw_venv_new_enough(const char *version);

/* The highest pip-*.whl the interpreter's ensurepip would use: in
 * STDLIB/ensurepip/_bundled, else Debian's /usr/share/python-wheels.
 * Looked up at each create, so an upgraded wheel package is seen. NULL
 * when there is none. */
char *pw_venv_bundled_wheel(const char *stdlib);

/* s[0..n) with control characters replaced by repl. */
char *pw_venv_printable(const char *s, size_t n, char repl);

/* The highest missing folder among path's ancestors (and path itself):
 * what a failed create removes. NULL when path exists. */
char *pw_venv_first_missing(const char *path);

/* f (a failed flush of the new environment at target) as the error that
 * says the environment was not created; NULL when f is NULL. Takes f. */
pw_err *pw_venv_not_flushed(pw_err *f, const char *target);

/* fsync the folder holding target and the folders above it up to the one
 * holding made (the topmost folder made for it; NULL: none), so the
 * environment's name and theirs are on disk; a failure as
 * pw_venv_not_flushed says. */
pw_err *pw_venv_sync_names(const char *target, const char *made);

#endif
