/*
 * What undoing one operation's package changes takes: the plan (uninstall
 * what it installed, install name==old for what it upgraded, downgraded or
 * removed) and the drift (packages that are not as the operation left
 * them, so the plan would undo something else too). Pure: the caller reads
 * the recorded changes (pkgdb.h) and the environment now (distinfo.h).
 */
#ifndef PW_UNDO_H
#define PW_UNDO_H

#include "distinfo.h"
#include "pkgdiff.h"

#include <stddef.h>

typedef enum pw_undo_kind {
	PW_UNDO_UNINSTALL,   /* it was installed by the operation */
	PW_UNDO_INSTALL,     /* name==version: the version before the operation */
} pw_undo_kind;

typedef struct pw_undo_step {
	pw_undo_kind kind;
	char *name;
	char *version;       /* uninstall: the version that goes; install: the one that comes back */
	char *now;           /* the version installed now; NULL when none */
} pw_undo_step;

typedef struct pw_undo_plan {
	pw_undo_step *items; /* uninstalls first, then installs, each by name */
	size_t count;
	size_t reinstalled;  /* reinstalls of the same version: nothing to undo */
	char **drift;        /* "NAME: the operation left 1.1, now 1.2" … (untranslated data, see undo.c) */
	size_t drift_count;
} pw_undo_plan;

void pw_undo_plan_make(const pw_pkg_changes *changes, const pw_distset *now, pw_undo_plan *out);
void pw_undo_plan_clear(pw_undo_plan *p);
/* The pip specs of one kind of step ("name" or "name==version"), NULL-terminated (free with free()). */
char **pw_undo_specs(const pw_undo_plan *p, pw_undo_kind kind, size_t *count);

#endif
