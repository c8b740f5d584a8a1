/*
 * pins import: a pins table (the TSV of pins.h) from upstream's published
 * SHA256SUMS of one release, for the install_only archives of the
 * platforms pyward supports. This is how an operator refreshes the shipped
 * table or makes one for an internal mirror (--base-url).
 *
 * It reads the SHA256SUMS file, an optional sizes listing ("<bytes> <file
 * name>" lines) and an optional folder of archives (their sizes, each
 * checked against its listed sha256 first). Nothing is downloaded, so no
 * consent is asked. Without an output file the table is only returned (the
 * CLI prints it): no change, allowed in read-only mode, not recorded. With
 * one it is a change: refused in read-only mode, the file confined to the
 * allowed roots (full-access: anywhere; relative paths, like the inputs',
 * are taken from the current folder), written durably (a temporary file
 * beside it, flushed, renamed over it, the folder flushed) and recorded in
 * the catalog as `pins.import` with the file as its target.
 * Threading: any thread (op.h).
 */
#ifndef PW_OPS_OP_PINS_H
#define PW_OPS_OP_PINS_H

#include "ops/ctx.h"
#include "ops/op.h"

#include <jansson.h>
#include <stddef.h>

typedef struct pw_op_pins_import_request {
	const char *sums;      /* the SHA256SUMS file */
	const char *release;   /* its release, "20260414" (8 digits) */
	const char *base_url;  /* NULL: upstream's release download prefix */
	const char *version;   /* NULL: every version listed */
	const char *sizes;     /* a sizes listing file, or NULL */
	const char *archives;  /* a folder holding the archives, or NULL */
	const char *output;    /* write the table here, or NULL */
} pw_op_pins_import_request;

typedef struct pw_op_pins_import_result {
	char *tsv;             /* the table */
	size_t rows;           /* pins in it */
	size_t sized;          /* of them with a size */
	char *sums_sha256;     /* of the SHA256SUMS file read */
	char *output;          /* the file written (absolute), or NULL */
	const char *release;   /* the request's (borrowed) */
} pw_op_pins_import_result;

/* PW_ERR_USAGE for a malformed request or SHA256SUMS line (FILE:LINE),
 * PW_ERR_NOTFOUND when nothing of the release matches, PW_ERR_FAILED when
 * a local archive's sha256 differs from its line. */
pw_err *pw_op_pins_import(const pw_ops_ctx *ctx, const pw_op_pins_import_request *rq, const pw_op_io *io,
			  pw_op_pins_import_result *r);
/* {schema, release, sha256sums_sha256, rows, sized, output, pins: [{version,
 * release, platform, url, sha256, size}]} (size null when unknown). */
json_t *pw_op_pins_import_json(const pw_op_pins_import_result *r);
void pw_op_pins_import_clear(pw_op_pins_import_result *r);

#endif
