/*
 * Path confinement. Every path a user or an agent can influence is resolved
 * to an absolute, symlink-free form and must lie inside one of the allowed
 * roots (the workspace first, then any --root). Resolution uses realpath on
 * the longest existing prefix and appends the rest after checking it has no
 * "..", so a symlink pointing out of a root is caught, as are NUL and
 * newline characters.
 */
#ifndef PW_GUARD_H
#define PW_GUARD_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pw_guard pw_guard;

pw_guard *pw_guard_new(void);
void pw_guard_free(pw_guard **g);
/* Add an allowed root; it must exist and be a directory. The first root
 * added is the workspace: relative paths are taken relative to it. */
pw_err *pw_guard_add_root(pw_guard *g, const char *dir);
size_t pw_guard_root_count(const pw_guard *g);
const char *pw_guard_root(const pw_guard *g, size_t i); /* realpath'd */

/* Resolve path (relative to the workspace, or absolute) and confine it.
 * *out receives a malloc'd absolute path. PW_ERR_REFUSED when outside. */
pw_err *pw_guard_resolve(const pw_guard *g, const char *path, char **out);
/* True when abs (already resolved) is inside one of the roots. */
bool pw_guard_contains(const pw_guard *g, const char *abs);

/* Venv names: ^[A-Za-z0-9._-]{1,64}$ and not "." or "..". */
pw_err *pw_guard_check_name(const char *name);
/* Check name, join it under dir, resolve and confine the result again. */
pw_err *pw_guard_join_name(const pw_guard *g, const char *dir, const char *name, char **out);

#endif
