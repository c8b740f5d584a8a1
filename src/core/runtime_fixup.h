/*
 * What an upstream (python-build-standalone) install needs after unpacking
 * (while its probe runs: it touches no file the probe reads):
 * - its sysconfig data (lib/pythonX.Y/_sysconfigdata_*.py) and
 *   lib/pythonX.Y/config-X.Y-*\/Makefile name the build machine's prefix
 *   /install: rewritten to the install's real path, so sysconfig and pip
 *   builds of sdists see where the interpreter lives;
 * - an EXTERNALLY-MANAGED file (PEP 668) in lib/pythonX.Y saying pyward
 *   manages this interpreter and how to add packages, so a stray
 *   `current/bin/python3 -m pip install x` refuses.
 * Every file is written through treefile.h (no link followed) and put into
 * the manifest as it ends up, so `runtime verify` checks what is on disk.
 */
#ifndef PW_RUNTIME_FIXUP_H
#define PW_RUNTIME_FIXUP_H

#include "err.h"
#include "manifest.h"

#include <stdbool.h>
#include <stddef.h>

/* The build prefix upstream archives carry. */
#define PW_RUNTIME_BUILD_PREFIX "/install"
/* The PEP 668 marker's name, in the stdlib folder. */
#define PW_RUNTIME_EXTERNALLY_MANAGED "EXTERNALLY-MANAGED"

typedef struct pw_runtime_fixup_result {
	size_t rewritten;       /* files whose build prefix was replaced */
	size_t replacements;    /* occurrences replaced in them */
} pw_runtime_fixup_result;

/* root: the install (versions/NAME), version: "3.12.13" (its X.Y names the
 * stdlib folder; when the install has none, nothing is done). m (may be
 * NULL) is updated for every file written. */
pw_err *pw_runtime_fixup(const char *root, const char *version, pw_manifest *m, pw_runtime_fixup_result *r);

/* Replace each whole-path occurrence of prefix in text with real (a path
 * component boundary on both sides: "/install/lib" and '/install' change,
 * "/installer" and "/usr/install" do not). Returns a malloc'd string and
 * the count in *n. Exposed for the unit test. */
char *pw_runtime_fixup_replace_prefix(const char *text, const char *prefix, const char *real, size_t *n);

/* The stdlib folder's EXTERNALLY-MANAGED text (PEP 668: an INI file with
 * an [externally-managed] section and an Error key). */
const char *pw_runtime_fixup_externally_managed(void);

/* ensurepip drops every PIP_* variable and passes pip no override, so the
 * PEP 668 file would stop pyward's own repair of a runtime without pip:
 * aside=true renames lib/python3.*\/EXTERNALLY-MANAGED to a hidden name
 * for that one run, aside=false puts it back. A kill in between leaves it
 * aside, which `runtime verify` reports (missing, unexpected). */
pw_err *pw_runtime_pep668_aside(const char *root, bool aside);

/* For the children pyward starts in the runtime (exec): when no terminfo
 * directory of the system knows term and the runtime bundles an entry for
 * it (root/share/terminfo, as upstream archives do), "TERMINFO_DIRS=..."
 * naming the bundled one first; else NULL. malloc'd. */
char *pw_runtime_terminfo_env(const char *root, const char *term);

#endif
