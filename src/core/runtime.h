/*
 * The managed runtime: one pinned CPython per box, shared by every user and
 * workspace. Install = fetch into the cache while hashing -> compare with
 * the pin -> guarded extract into a staging folder under versions/ -> probe
 * the new interpreter -> manifest into the catalog -> swap the `current`
 * symlink with rename(2), keeping `previous`. Any failure leaves `current`
 * untouched. One provisioning at a time per box (flock on runtime/.lock).
 *
 *   BOX/runtime/python/versions/<version>-<release>-<sha8>/   installs
 *   BOX/runtime/python/current  -> versions/...                 the live one
 *   BOX/runtime/python/previous -> versions/...                 for rollback
 *   BOX/runtime/.lock
 *   BOX/cache/downloads/<sha256>.tar.gz (.part while arriving)
 */
#ifndef PW_RUNTIME_H
#define PW_RUNTIME_H

#include "cancel.h"
#include "catalog.h"
#include "err.h"
#include "events.h"
#include "manifest.h"
#include "pins.h"

#include <stdbool.h>
#include <stdint.h>

/* Name of the marker file written into every install. */
#define PW_RUNTIME_MARKER ".pyward-runtime.json"

typedef enum pw_runtime_state {
	PW_RUNTIME_NOT_PROVISIONED,
	PW_RUNTIME_INSTALLED,
	PW_RUNTIME_BROKEN,
} pw_runtime_state;

typedef struct pw_runtime_info {
	pw_runtime_state state;
	char *why;          /* for BROKEN: what is wrong */
	char *path;         /* resolved install directory */
	char *python;       /* path of bin/python3 */
	char *version, *release, *platform, *sha256, *url, *installed_at, *pins_source;
	bool pins_from_operator;
	int64_t size_on_disk; /* bytes of regular files, -1 when unknown */
	bool has_previous;
	char *previous_version;
} pw_runtime_info;

const char *pw_runtime_state_name(pw_runtime_state s);
/* Read the current state from disk (markers and symlinks); never writes. */
pw_err *pw_runtime_status(const char *box_root, pw_runtime_info *out);
void pw_runtime_info_clear(pw_runtime_info *i);
/* The interpreter of the current install, or PW_ERR_REFUSED saying how to get one. */
pw_err *pw_runtime_python(const char *box_root, char **python);

typedef struct pw_runtime_install_opts {
	const char *box_root;
	const pw_pin *pin;
	const char *pins_source;   /* file the pin came from */
	bool pins_from_operator;   /* --pins FILE: recorded as such */
	const char *url;           /* effective URL (mirror applied) */
	const char *archive;       /* --archive FILE instead of a download, or NULL */
	const char *ca_file;
	pw_catalog *catalog;       /* where the operation's details go */
	int64_t operation_id;      /* the caller's open operation */
	int64_t deadline_ms;
	const pw_cancel *cancel;
	const pw_events *events;
} pw_runtime_install_opts;

typedef struct pw_runtime_install_result {
	bool already_current;  /* the same pin was current: nothing done */
	bool waited_for_lock;  /* another install held the lock meanwhile */
	bool reused_cache;
	int64_t resumed_from;
	int64_t download_bytes;
	int64_t files;
	int64_t bytes_on_disk;
	char *path;            /* the new install */
} pw_runtime_install_result;

/* Free space needed for an archive of size bytes (archive + extracted tree). */
int64_t pw_runtime_space_needed(int64_t size);
/* Plain checks before any byte moves: box root writable, free space (when
 * size is known). url and archive are accepted for the record only. */
pw_err *pw_runtime_preflight(const char *box_root, const char *url, const char *archive, int64_t size);
pw_err *pw_runtime_install(const pw_runtime_install_opts *o, pw_runtime_install_result *r);
void pw_runtime_install_result_clear(pw_runtime_install_result *r);

typedef struct pw_runtime_verify_result {
	int64_t files_checked;
	size_t modified, mode, missing, unexpected;
	size_t caches_ignored; /* new bytecode caches: not reported */
	char **lines; /* "modified lib/python3.12/os.py" … */
	size_t line_count;
	char **rpm_lines; /* the same differences as rpm -V prints them, with absolute paths */
} pw_runtime_verify_result;

/* Re-hash the current install against the manifest recorded at install
 * time. New bytecode caches (.pyc files in __pycache__) are counted, not reported. */
pw_err *pw_runtime_verify(const char *box_root, pw_catalog *cat, pw_runtime_verify_result *r);
void pw_runtime_verify_result_clear(pw_runtime_verify_result *r);
/* Changes made to the current install on purpose (`pyward runtime baseline`
 * installing packages into it), recorded into its manifest so that verify,
 * like rpm -V after a second package, checks them rather than calling them
 * unexpected. Take a snapshot (hash the tree) before the change and record
 * after it: only what differs between the two is recorded, so a change
 * someone made before the snapshot is not absorbed and verify still reports
 * it. New bytecode caches are left out, as verify ignores them. */
typedef struct pw_runtime_changes {
	size_t added, changed, removed;
} pw_runtime_changes;
pw_err *pw_runtime_snapshot(const char *box_root, pw_manifest *before);
pw_err *pw_runtime_record_changes(const char *box_root, pw_catalog *cat, const pw_manifest *before,
				  pw_runtime_changes *out);
/* Swap back to `previous` (the current install becomes `previous`). */
pw_err *pw_runtime_rollback(const char *box_root, pw_catalog *cat, char **now_version);
/* Remove every install, the symlinks and the lock's state; recorded. */
pw_err *pw_runtime_remove(const char *box_root, pw_catalog *cat, int64_t *removed);

#endif
