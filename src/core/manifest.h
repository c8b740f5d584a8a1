/*
 * File manifests: every file under a tree with its size, mode and SHA256,
 * recorded at install time and compared later, like rpm -V.
 */
#ifndef PW_MANIFEST_H
#define PW_MANIFEST_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pw_manifest_entry {
	char *path;       /* relative to the tree root */
	int64_t size;     /* bytes; for symlinks the target length */
	mode_t mode;      /* st_mode (type and permission bits) */
	char sha256[65];  /* of the content; of the target text for symlinks */
} pw_manifest_entry;

typedef struct pw_manifest {
	pw_manifest_entry *items; /* sorted by path */
	size_t count;
	int64_t total_bytes;
} pw_manifest;

/* Walk root (never following symlinks) and hash every regular file and link. */
pw_err *pw_manifest_build(const char *root, pw_manifest *out);
void pw_manifest_clear(pw_manifest *m);

typedef enum pw_manifest_diff_kind {
	PW_DIFF_MODIFIED,   /* content differs */
	PW_DIFF_MODE,       /* permission or type bits differ */
	PW_DIFF_MISSING,    /* in the manifest, not on disk */
	PW_DIFF_UNEXPECTED, /* on disk, not in the manifest */
} pw_manifest_diff_kind;

typedef struct pw_manifest_diff {
	pw_manifest_diff_kind kind;
	char *path;
	/* rpm -V's nine columns for a file on both sides: S size, M mode
	 * (type and permissions), 5 digest, L link target, '.' passed, '?'
	 * not recorded (device, owner, group, time, capabilities). */
	char rpm_flags[10];
} pw_manifest_diff;

typedef struct pw_manifest_diffs {
	pw_manifest_diff *items;
	size_t count;
} pw_manifest_diffs;

/* Compare a recorded manifest with the tree now. */
pw_err *pw_manifest_compare(const pw_manifest *recorded, const char *root, pw_manifest_diffs *out);
void pw_manifest_diffs_clear(pw_manifest_diffs *d);
const char *pw_manifest_diff_name(pw_manifest_diff_kind k); /* "modified", … */

#endif
