/*
 * The runtime's baseline: the requirements file of document libraries that
 * `runtime install` puts into the managed runtime under the same consent
 * (and `runtime baseline` adds or re-runs): which file, the names it lists,
 * which of them the runtime lacks, and the step itself (binary wheels
 * through the attempt chain, recorded in the caller's catalog operation
 * and in the runtime's manifest). Threading: any thread.
 */
#ifndef PW_OPS_BASELINE_H
#define PW_OPS_BASELINE_H

#include "ops/ctx.h"
#include "ops/op.h"

#include "pip.h"
#include "runtime.h"

#include <stdbool.h>
#include <stddef.h>

/* The file an install's baseline step uses: requirements when given, else
 * $PYWARD_BASELINE, else the `baseline` setting, else the shipped
 * data/requirements-baseline.txt. NULL when there is none: no_baseline, or
 * the variable or the setting set empty. */
char *pw_baseline_file(const pw_ops_ctx *ctx, const char *requirements, bool no_baseline);
/* The project names the file lists, ", " between them (comments, options
 * and version specifiers left out). PW_ERR_USAGE when it cannot be read. */
pw_err *pw_baseline_names(const char *file, char **names);
/* The names of file that are not installed in the runtime at box_root
 * (NULL-terminated; free with pw_ops_list_free). */
pw_err *pw_baseline_missing(const char *box_root, const char *file, char ***missing, size_t *count);
/* Install file into the current runtime inside the open operation op:
 * pip from ensurepip when missing, then `pip install --only-binary=:all:
 * -r file` with PIP_BREAK_SYSTEM_PACKAGES=1 (the runtime is marked
 * externally managed; older pips ignore the variable) through the attempt
 * chain (index first);
 * what it changed goes into the runtime's manifest (changes) and the
 * catalog's package changes. pip's attempts are left in *pip either way. */
pw_err *pw_baseline_step(const pw_ops_ctx *ctx, const char *file, const char *index, const pw_op_io *io,
			 pw_catalog *cat, int64_t op, pw_pip_result *pip, pw_runtime_changes *changes);

#endif
