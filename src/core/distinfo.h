/*
 * What is installed in an environment, read from its site-packages'
 * *.dist-info folders in C (no Python started): each distribution's name
 * and version (METADATA), the tool that installed it (INSTALLER) and where
 * pip said it came from (direct_url.json). Cheap enough to read before and
 * after every operation: a few small reads per distribution.
 */
#ifndef PW_DISTINFO_H
#define PW_DISTINFO_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_dist {
	char *name;       /* as METADATA spells it */
	char *key;        /* pw_pkgname_key(name) */
	char *version;
	char *installer;  /* first line of INSTALLER; NULL when absent */
	char *source;     /* direct_url.json's url ("editable " in front for -e); NULL when absent */
	char *info_dir;   /* the *.dist-info folder's name, in site-packages */
	int64_t stamp;    /* METADATA's inode and change time: a reinstall of the same version moves it */
} pw_dist;

typedef struct pw_distset {
	pw_dist *items;   /* sorted by key; their strings belong to the set */
	size_t count;
	char *site;       /* the site-packages folder read; NULL when the environment has none */
	struct pw_distinfo_strings *strings; /* owned: freed by pw_distset_clear */
} pw_distset;

/* The first lib/python*\/site-packages of an environment (or a runtime's
 * tree); PW_ERR_NOTFOUND when it has none. */
pw_err *pw_distinfo_site(const char *env, char **site);
/* Every distribution of env's site-packages. An environment without a
 * site-packages folder is an empty set; a folder that cannot be read is
 * an error. A dist-info folder without a readable Name/Version is skipped
 * (pip ignores it too). */
pw_err *pw_distinfo_read(const char *env, pw_distset *out);
/* The same after an operation, given what was read before it (prev, or
 * NULL): a dist-info folder of the same name whose METADATA is the same
 * file with the same change time (pip writes a new one whenever it
 * installs) is taken from prev, for one fstatat instead of three opens.
 * An INSTALLER or direct_url.json edited in place meanwhile, METADATA
 * untouched, is not seen. */
pw_err *pw_distinfo_reread(const char *env, const pw_distset *prev, pw_distset *out);
/* The same for a site-packages folder given directly. */
pw_err *pw_distinfo_read_site(const char *site, pw_distset *out);
void pw_distset_clear(pw_distset *s);
/* The distribution named name (any spelling), or NULL. */
const pw_dist *pw_distset_find(const pw_distset *s, const char *name);

#endif
