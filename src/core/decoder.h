/*
 * Decompression on its own thread: an archive's compression layers (gzip
 * by ISA-L when it is there; bzip2, xz, zstd and gzip otherwise as
 * libarchive decodes them in-process) are peeled off by a worker, and the
 * plain bytes handed out in order through a small bounded ring, so that
 * inflating and writing files use two cores, as `tar -xzf` does with its
 * gzip child. Input that is not compressed passes through unchanged. The
 * reader sees exactly the bytes the worker decoded; nothing about the
 * archive's contents is decided here.
 */
#ifndef PW_DECODER_H
#define PW_DECODER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pw_decoder pw_decoder;

/* The worker reads the file at path, or, when read is set, calls
 * read(ud, buf, len) for the compressed bytes (the number read, 0 at the
 * end, -1 to stop). NULL when no thread could be started. */
pw_decoder *pw_decoder_start(const char *path, ssize_t (*read)(void *ud, void *buf, size_t len),
			     void *ud);

/* The next decoded bytes: *buf stays valid until the next call. Returns
 * the count, 0 at the end, or -1 on an error (see pw_decoder_error). */
ssize_t pw_decoder_next(pw_decoder *d, const void **buf);

/* What stopped the worker, or NULL. */
const char *pw_decoder_error(const pw_decoder *d);

/* Compressed bytes consumed so far (for progress). */
int64_t pw_decoder_consumed(pw_decoder *d);

/* gzip is inflated with ISA-L when the build has it and it loads (about
 * twice zlib's speed), else by libarchive. Tests turn ISA-L off to check
 * that both give the same bytes and the same refusals. */
void pw_decoder_use_isal(bool use);

/* Stop the worker (it may not have reached the end), wait for it, free. */
void pw_decoder_free(pw_decoder **d);

#endif
