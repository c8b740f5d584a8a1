/*
 * `venv create` without starting Python: the environment is written by
 * pyward from facts about the base interpreter learned once and cached in
 * the box (keyed by the interpreter's path, size and mtime), and pip is
 * linked from an unpacked, verified image of the interpreter's bundled pip
 * wheel, also kept in the box's cache. Used by venv.c.
 */
#ifndef PW_VENV_FAST_H
#define PW_VENV_FAST_H

#include "cancel.h"
#include "err.h"
#include "events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_venv_fast_opts {
	const char *target;          /* absolute; missing, or an empty folder */
	const char *base;            /* the base interpreter */
	const char *cache_dir;       /* the box's cache folder (BOX/cache) */
	bool with_pip;
	const char *const *env_add;  /* for the one-time probes */
	int64_t deadline_ms;
	const pw_cancel *cancel;
	const pw_events *events;
	pw_err *(*gate)(void *ud);   /* before the rename into place (venv.h); NULL: none */
	void *gate_ud;
} pw_venv_fast_opts;

typedef struct pw_venv_fast_result {
	char *version;       /* "3.11.2" */
	char *impl;          /* "cpython" */
	char *pip_wheel;     /* the wheel the image was made from */
	size_t pip_files;    /* files linked (or copied) from the image */
	size_t copied;       /* of those, copied (another file system) */
	bool base_probed;    /* the base's facts were not cached: it ran once */
	bool image_built;    /* the pip image was (re)built */
	bool image_changed;  /* the cached image had changed files: rebuilt */
} pw_venv_fast_result;

/* Create the environment in a temporary sibling folder and rename it into
 * place, so a killed create leaves nothing that looks like an environment.
 * PW_ERR_NOTFOUND means this route cannot serve the base (no venv module,
 * no bundled pip wheel, an interpreter that is a script, no writable
 * cache): nothing was made and the caller takes the `-m venv` route. */
pw_err *pw_venv_fast_create(const pw_venv_fast_opts *o, pw_venv_fast_result *r);
void pw_venv_fast_result_clear(pw_venv_fast_result *r);

/* The cached version and implementation of python, without running it;
 * false when nothing valid is cached for it. */
bool pw_venv_fast_known(const char *cache_dir, const char *python, char **version, char **impl);

/* RECORD's digest form: unpadded urlsafe base64 of a sha256 given in hex. */
enum { PW_RECORD_B64_LEN = 43 };
void pw_record_b64(const char *hex, char out[PW_RECORD_B64_LEN + 1]);

/* The text of a pip console script for the environment venv. */
pw_err *pw_pip_launcher_text(const char *venv, char **out);

#endif
