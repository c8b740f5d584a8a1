/*
 * Virtual environments of a workspace: discover them (bounded, read-only),
 * create them (from an explicit, managed or PATH interpreter, with pip
 * seeded fast from the interpreter's own bundled wheel), repair pip, and
 * remove them. Every path is confined by the caller's guard.
 */
#ifndef PW_VENV_H
#define PW_VENV_H

#include "cancel.h"
#include "err.h"
#include "events.h"
#include "guard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_venv_info {
	char *path;          /* absolute */
	char *kind;          /* "venv", "virtualenv", "conda" */
	char *python;        /* interpreter path inside it */
	bool python_exists;
	char *version;       /* "3.11.2" from pyvenv.cfg (or a capped probe), NULL if unknown */
	char *base;          /* base interpreter (pyvenv.cfg "home" / "executable"), NULL if unknown */
	bool has_pip;        /* a pip package in its site-packages */
} pw_venv_info;

typedef struct pw_venv_list {
	pw_venv_info *items;
	size_t count;
	char **roots;        /* the roots scanned */
	size_t root_count;
	size_t dirs_visited;
	bool truncated;      /* stopped at the directory cap or the deadline */
} pw_venv_list;

/* Breadth-first scan of every guard root (or of start, confined), at most
 * depth levels below a root (default 2) and max_dirs directories in all
 * (default 256), pruning .git, node_modules, __pycache__, site-packages,
 * .pyward, build, dist, .tox, .mypy_cache … Recognises pyvenv.cfg, the
 * conventional names (.venv, venv, env, .env, virtualenv, .virtualenv)
 * when they hold an interpreter, and conda environments (conda-meta/).
 * Never descends into an environment it found. Sorted by path. */
pw_err *pw_venv_discover(const pw_guard *g, const char *start, int depth, int max_dirs,
			 int64_t deadline_ms, pw_venv_list *out);
void pw_venv_list_clear(pw_venv_list *l);
/* Inspect one directory; PW_ERR_NOTFOUND when it is not an environment. */
pw_err *pw_venv_inspect(const char *path, pw_venv_info *out);
void pw_venv_info_clear(pw_venv_info *i);

/* Choose the base interpreter: explicit (must run and be >= 3.8), else
 * managed (the managed runtime's, when given), else the first of python3,
 * python on PATH that runs and is >= 3.8. *why (malloc'd) says which and
 * why, e.g. "the managed runtime (CPython 3.12.13)". */
pw_err *pw_venv_choose_base(const char *explicit_python, const char *managed_python, char **base,
			    char **version, char **why);
/* The same, trusting facts cached in cache_dir (BOX/cache) for an
 * interpreter already seen, so no Python starts. */
pw_err *pw_venv_choose_base_cached(const char *cache_dir, const char *explicit_python, const char *managed_python,
				   char **base, char **version, char **why);

typedef enum pw_venv_seed {
	PW_SEED_FAST,  /* written by pyward, pip linked from the box's image of the bundled wheel */
	PW_SEED_PIP,   /* plain -m venv (ensurepip runs pip to install pip) */
	PW_SEED_NONE,  /* --without-pip */
} pw_venv_seed;

typedef struct pw_venv_create_opts {
	const char *target;          /* absolute, already confined */
	const char *base;            /* from pw_venv_choose_base */
	const char *cache_dir;       /* BOX/cache: fast seeding without starting Python (venv_fast.h); NULL: -m venv */
	pw_venv_seed seed;
	const char *const *env_add;  /* e.g. TMPDIR, PIP_CACHE_DIR for children */
	int64_t deadline_ms;
	const pw_cancel *cancel;
	const pw_events *events;
	/* Called (any number of times; it must answer the same) before
	 * anything is put at target: an error stops the create there and
	 * removes what it made. The caller's work that may run meanwhile
	 * (the catalog's start row, on another thread). NULL: none. */
	pw_err *(*gate)(void *ud);
	void *gate_ud;
} pw_venv_create_opts;

typedef struct pw_venv_create_result {
	bool existed;        /* an environment was already there: nothing done */
	bool repaired;       /* it was there without a working pip: pip was put back */
	bool remade;         /* a create killed earlier had left it half-made: made again */
	bool written;        /* written by pyward without starting Python (venv_fast.h) */
	char *python;        /* its interpreter */
	char *version;
	bool seeded_fast;    /* pip came from the bundled wheel, unpacked */
	char *pip_wheel;     /* which wheel, when seeded fast */
} pw_venv_create_result;

/* Idempotent: an existing environment at target is reported, not
 * recreated; one without a working pip (unless seed is none) has pip
 * repaired, and one a killed create left behind is made again. A missing venv/ensurepip module gives an error naming the
 * package to install (python3-venv on Debian). A failed creation removes
 * what it made. */
pw_err *pw_venv_create(const pw_venv_create_opts *o, pw_venv_create_result *r);
void pw_venv_create_result_clear(pw_venv_create_result *r);

/* <venv python> -m ensurepip --upgrade (offline) when pip is missing. */
pw_err *pw_venv_repair_pip(const char *venv, const char *const *env_add, int64_t deadline_ms,
			   const pw_cancel *cancel);

/* The interpreter of the environment at venv (absolute), in *out as
 * venv/bin/python (not resolved). Refused (PW_ERR_REFUSED) unless it
 * resolves, links followed, to a file inside the environment, inside
 * managed_root (the managed runtime's folder; NULL: none) or inside the
 * base its pyvenv.cfg names (home, or the folder of executable): a hostile
 * workspace's "environment" must not make pyward run a program elsewhere. */
pw_err *pw_venv_interpreter(const char *venv, const char *managed_root, char **out);

/* Delete an environment: it must carry pyvenv.cfg (or conda-meta/), lie
 * inside a guard root, and not be a symlink; nothing outside is touched. */
pw_err *pw_venv_remove(const pw_guard *g, const char *path);

/* Per-environment lock (flock on <workspace>/.pyward/locks/<hash>.lock,
 * recording the holder's pid and command): waits up to deadline, logging
 * who holds it; PW_ERR_TIMEOUT naming the holder when it does not free. */
pw_err *pw_venv_lock(const char *workspace, const char *venv, const char *holder, int64_t deadline_ms,
		     const pw_cancel *cancel, const pw_events *events, int *fd);
void pw_venv_unlock(int *fd);

/* <workspace>/.pyward/{cache,tmp,locks} and a .gitignore ignoring the
 * folder; *cache and *tmp (malloc'd) for PIP_CACHE_DIR and TMPDIR. */
pw_err *pw_venv_workspace_state(const char *workspace, char **cache, char **tmp);

#endif
