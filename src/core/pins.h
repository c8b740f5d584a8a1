/*
 * The runtime pins table: which python-build-standalone archive is trusted
 * for which platform, by SHA256. Tab-separated; '#' starts a comment line;
 * one header line naming the columns version, release, platform, url,
 * sha256, size in that order; size in bytes or "-" when unknown. A malformed
 * table is an error naming the file and line.
 */
#ifndef PW_PINS_H
#define PW_PINS_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pw_pin {
	const char *version;   /* "3.12.13" */
	const char *release;   /* "20260414" */
	const char *platform;  /* target triple, "x86_64-unknown-linux-gnu" */
	const char *url;
	const char *sha256;    /* 64 lower-case hex digits */
	int64_t size;          /* bytes, -1 when unknown */
	int line;              /* line in the table it came from */
} pw_pin;

typedef struct pw_pins pw_pins;

/* The URL prefix that --mirror replaces. */
#define PW_PINS_UPSTREAM_PREFIX "https://github.com/astral-sh/python-build-standalone/releases/download"

pw_err *pw_pins_load(const char *path, pw_pins **out);
pw_err *pw_pins_parse(const char *name, const char *text, pw_pins **out);
void pw_pins_free(pw_pins **p);
const char *pw_pins_source(const pw_pins *p); /* the file it was read from */
size_t pw_pins_count(const pw_pins *p);
const pw_pin *pw_pins_at(const pw_pins *p, size_t i);
/* The pin for platform with version (NULL: the newest version, then the
 * newest release). PW_ERR_NOTFOUND naming what the table has otherwise. */
pw_err *pw_pins_find(const pw_pins *p, const char *platform, const char *version, const pw_pin **out);

/* Compare dotted versions numerically ("3.12.9" < "3.12.13"). */
int pw_pins_version_cmp(const char *a, const char *b);
/* URL of pin with the upstream prefix replaced by mirror (NULL: unchanged). */
char *pw_pins_url(const pw_pin *pin, const char *mirror);
/* File name of the archive, the last path component of its URL. */
char *pw_pins_file_name(const pw_pin *pin);

/* From upstream's SHA256SUMS ("<sha256>  <file name>" lines) to a pins
 * table: the install_only .tar.gz archives of the supported platforms
 * (optionally of one version), url = base_url/release/<name, '+' as %2B>,
 * size from the archive of that name in archives_dir (whose sha256 must be
 * the listed one: else PW_ERR_FAILED), else from sizes ("<bytes> <file
 * name>" lines), else "-". The table's header comment names the release,
 * the SHA256SUMS it came from (and its sha256 when given) and where the
 * sizes came from. A malformed line is PW_ERR_USAGE naming name:line.
 * *tsv is malloc'd. */
typedef struct pw_pins_import_opts {
	const char *sums_name;   /* for messages and the header */
	const char *release;     /* "20260414" */
	const char *base_url;    /* NULL: PW_PINS_UPSTREAM_PREFIX */
	const char *version;     /* NULL: every version listed */
	const char *sizes_name;
	const char *sizes;       /* text of the sizes listing, or NULL */
	const char *archives_dir; /* a folder holding (some of) the archives, or NULL */
	const char *sums_sha256; /* the SHA256SUMS file's own sha256 (for the header), or NULL */
} pw_pins_import_opts;
pw_err *pw_pins_import(const char *sums, const pw_pins_import_opts *o, char **tsv, size_t *count);

/* This machine's target triple from uname(2) and the C library, or
 * PW_ERR_REFUSED naming the supported platforms. sysname/machine may be
 * given for tests (NULL: from uname). */
pw_err *pw_platform_detect(const char *sysname, const char *machine, char **triple);

#endif
