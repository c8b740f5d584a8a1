/*
 * What an operation did to an environment's packages: the difference of
 * two dist-info readings (distinfo.h), as apt's history states it:
 * installed, upgraded (old -> new), downgraded, removed, reinstalled.
 */
#ifndef PW_PKGDIFF_H
#define PW_PKGDIFF_H

#include "distinfo.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum pw_pkg_action {
	PW_PKG_INSTALLED,
	PW_PKG_UPGRADED,
	PW_PKG_DOWNGRADED,
	PW_PKG_REMOVED,
	PW_PKG_REINSTALLED,
} pw_pkg_action;

typedef struct pw_pkg_change {
	pw_pkg_action action;
	char *name;          /* as METADATA spells it (the new one, else the old) */
	char *old_version;   /* NULL when installed */
	char *new_version;   /* NULL when removed */
	char *installer;     /* of the new install (removed: of the old) */
	char *source;        /* direct_url.json's url, likewise */
} pw_pkg_change;

typedef struct pw_pkg_changes {
	pw_pkg_change *items;  /* by normalized name */
	size_t count;
} pw_pkg_changes;

/* after minus before. Same name and version counts as reinstalled when
 * RECORD was rewritten or the installer or source changed. */
void pw_pkgdiff(const pw_distset *before, const pw_distset *after, pw_pkg_changes *out);
/* Append one change (copies the strings). */
void pw_pkg_changes_add(pw_pkg_changes *l, pw_pkg_action action, const char *name, const char *old_version,
			const char *new_version, const char *installer, const char *source);
void pw_pkg_changes_clear(pw_pkg_changes *l);

/* "installed", "upgraded", "downgraded", "removed", "reinstalled". */
const char *pw_pkg_action_name(pw_pkg_action a);
bool pw_pkg_action_parse(const char *s, pw_pkg_action *out);

/* The changes as apt's history states them, one line per action present,
 * in apt's order: "Install: a (1.0), b (2.0)", "Upgrade: c (1.0 -> 1.1)",
 * "Downgrade: …", "Reinstall: d (1.0)", "Remove: e (2.0)" (labels
 * translated). Returns the count; *lines and each line are malloc'd. */
size_t pw_pkg_changes_apt_lines(const pw_pkg_changes *l, char ***lines);

/* PEP 440 order (epoch, release, pre, post, dev; local labels compared as
 * text); versions that are not PEP 440 compare as text, after those that are. */
int pw_version_cmp(const char *a, const char *b);

#endif
