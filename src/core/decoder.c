/*
 * Decompression worker and its ring of decoded chunks.
 *
 * The worker owns the slot it fills until it publishes it; the reader owns
 * the slot it last returned until its next call. A full ring makes the
 * worker wait, so memory stays at SLOTS * SLOT_SIZE however large the
 * archive unpacks (the extractor's limits stop a bomb, then stop us).
 */
#include "config.h"

#include "decoder.h"
#include "i18n.h"
#include "libload.h"
#include "stagetime.h"
#include "xalloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 8
#define SLOT_SIZE (128 * 1024)
#define SOURCE_BLOCK (256 * 1024)
#define MAGIC_BYTES 3 /* gzip: 1f 8b, then 08 for deflate */

struct pw_decoder {
	char *path;
	ssize_t (*read)(void *ud, void *buf, size_t len);
	void *ud;
	int fd;               /* the file at path, when read is not set */
	unsigned char *source_buf;
	size_t pending;       /* read to look at the format, not yet decoded */
	char *message;        /* why the source failed, or libarchive's error kept past its handle */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t data, space;
	unsigned char *slot[SLOTS];
	size_t len[SLOTS];
	size_t first, count;  /* published slots, the reader's included */
	bool holding;         /* the reader holds slot[first] */
	bool done, stop;
	char *error;
	int64_t consumed;
};

/* ---------------------------------------------------------------- worker */

static bool told_to_stop(pw_decoder *d)
{
	pthread_mutex_lock(&d->mu);
	bool stop = d->stop;
	pthread_mutex_unlock(&d->mu);
	return stop;
}

/* The next compressed bytes into buf: the count, 0 at the end, -1 when
 * the source failed (d->message may say why) or we were told to stop. */
static ssize_t source_fill_at(pw_decoder *d, unsigned char *buf, size_t len)
{
	if (told_to_stop(d))
		return -1;
	if (d->read)
		return d->read(d->ud, buf, len);
	ssize_t n;
	do
		n = read(d->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		free(d->message);
		d->message = xasprintf(_("cannot read %s: %s"), d->path, strerror(errno));
	}
	return n;
}

static ssize_t source_fill(pw_decoder *d)
{
	return source_fill_at(d, d->source_buf, SOURCE_BLOCK);
}

/* Wait for a free slot; NULL when told to stop. */
static unsigned char *free_slot(pw_decoder *d)
{
	pthread_mutex_lock(&d->mu);
	while (d->count == SLOTS && !d->stop)
		pthread_cond_wait(&d->space, &d->mu);
	unsigned char *s = d->stop ? NULL : d->slot[(d->first + d->count) % SLOTS];
	pthread_mutex_unlock(&d->mu);
	return s;
}

static void publish(pw_decoder *d, size_t n, int64_t consumed)
{
	pthread_mutex_lock(&d->mu);
	d->len[(d->first + d->count) % SLOTS] = n;
	d->count++;
	d->consumed = consumed;
	pthread_cond_signal(&d->data);
	pthread_mutex_unlock(&d->mu);
}

static void finish(pw_decoder *d, const char *error)
{
	pw_stage_mark("extract: decoder done");
	pthread_mutex_lock(&d->mu);
	d->done = true;
	if (error)
		d->error = xstrdup(error);
	pthread_cond_signal(&d->data);
	pthread_mutex_unlock(&d->mu);
}

/* ------------------------------------------------- libarchive's decoders */

static const char *why(struct archive *a)
{
	const char *s = archive_error_string(a);
	return s ? s : _("unknown error");
}

/* libarchive's input: first the bytes the worker already read to look at
 * the format, then the rest of the source. */
static la_ssize_t source_read(struct archive *a, void *ud, const void **buf)
{
	pw_decoder *d = ud;
	ssize_t n = (ssize_t)d->pending;
	d->pending = 0;
	if (n == 0)
		n = source_fill(d);
	if (n < 0) {
		archive_set_error(a, -1, "%s", d->message ? d->message : _("the archive stream stopped"));
		return -1;
	}
	*buf = d->source_buf;
	return n;
}

static int open_source(pw_decoder *d, struct archive *a)
{
	/* Only decoders libarchive runs in-process: no external programs on
	 * untrusted input. */
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_format_raw(a);
	return archive_read_open(a, d, NULL, source_read, NULL);
}

/* Copy decoded bytes into slots until the end, an error or a stop. */
static const char *pump_libarchive(pw_decoder *d)
{
	struct archive *a = archive_read_new();
	const char *error = NULL;
	struct archive_entry *ae;
	int r = open_source(d, a) == ARCHIVE_OK ? archive_read_next_header(a, &ae) : ARCHIVE_FATAL;
	if (r < ARCHIVE_WARN && r != ARCHIVE_EOF)
		error = why(a);
	while (!error && r != ARCHIVE_EOF) { /* EOF here: empty input, nothing to decode */
		unsigned char *s = free_slot(d);
		if (!s)
			break;
		la_ssize_t n = archive_read_data(a, s, SLOT_SIZE);
		if (n == 0)
			break;
		if (n < 0 && n != ARCHIVE_WARN && n != ARCHIVE_RETRY)
			error = why(a);
		else if (n > 0)
			publish(d, (size_t)n, archive_filter_bytes(a, -1));
	}
	/* the message lives in the archive: keep a copy before freeing it */
	if (error) {
		char *kept = xstrdup(error);
		free(d->message);
		d->message = kept;
		error = kept;
	}
	archive_read_free(a);
	return error;
}

/* ---------------------------------------------------------------- ISA-L */

#ifdef HAVE_ISAL
static bool isal_enabled = true;

static bool is_gzip(const unsigned char *b, size_t n)
{
	return n >= MAGIC_BYTES && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8;
}

static const char *isal_failure(int rc)
{
	switch (rc) {
	case ISAL_INCORRECT_CHECKSUM:
		return _("the gzip data does not match its checksum: the archive is damaged");
	case ISAL_INVALID_WRAPPER:
	case ISAL_UNSUPPORTED_METHOD:
		return _("the gzip header is damaged");
	default:
		return _("the gzip data is damaged");
	}
}

/* More input for the inflater, after the LEFT bytes it has not taken yet
 * (moved to the front): false with *error set when the source failed. */
static bool refill(pw_decoder *d, struct inflate_state *st, bool *at_end, int64_t *consumed,
		   const char **error)
{
	size_t left = st->avail_in;
	memmove(d->source_buf, st->next_in, left);
	ssize_t n = source_fill_at(d, d->source_buf + left, SOURCE_BLOCK - left);
	if (n < 0) {
		*error = d->message ? d->message : _("the archive stream stopped");
		return false;
	}
	*at_end = n == 0;
	*consumed += n;
	st->next_in = d->source_buf;
	st->avail_in = (uint32_t)(left + (size_t)n);
	return true;
}

/*
 * gzip with ISA-L: the same bytes libarchive's zlib would give (members
 * one after another, each checked against its CRC-32 and length), in
 * about half the time, which is most of what extracting a runtime costs.
 * After the last member, bytes that do not start another member are left
 * alone, as libarchive does: the archive's SHA-256 covers every byte.
 */
static const char *pump_isal(pw_decoder *d, struct inflate_state *st)
{
	int64_t consumed = (int64_t)d->pending;
	isal_inflate_init(st);
	st->crc_flag = ISAL_GZIP;
	st->next_in = d->source_buf;
	st->avail_in = (uint32_t)d->pending;
	d->pending = 0;
	bool at_end = false, last_member_done = false;
	const char *error = NULL;
	while (!last_member_done) {
		unsigned char *s = free_slot(d);
		if (!s)
			return NULL;
		st->next_out = s;
		st->avail_out = SLOT_SIZE;
		while (st->avail_out > 0) {
			if (st->block_state == ISAL_BLOCK_FINISH) {
				/* enough bytes to tell whether another member follows */
				while (st->avail_in < MAGIC_BYTES && !at_end)
					if (!refill(d, st, &at_end, &consumed, &error))
						return error;
				if (!is_gzip(st->next_in, st->avail_in)) {
					last_member_done = true;
					break;
				}
				isal_inflate_reset(st);
				st->crc_flag = ISAL_GZIP;
			}
			if (st->avail_in == 0 && !at_end) {
				if (!refill(d, st, &at_end, &consumed, &error))
					return error;
				continue;
			}
			/* Called at the end of the input too: bytes ISA-L decoded
			 * but could not hand out (the slot was full) come now. */
			uint32_t out_before = st->avail_out, in_before = st->avail_in;
			int rc = isal_inflate(st);
			if (rc < 0)
				return isal_failure(rc);
			if (rc == ISAL_NEED_DICT)
				return isal_failure(ISAL_INVALID_WRAPPER);
			if (st->avail_out == out_before && st->avail_in == in_before &&
			    st->block_state != ISAL_BLOCK_FINISH) {
				/* no progress: more input, or the end came too soon */
				if (st->avail_in == 0 && at_end)
					return _("the gzip data ends early: the archive is truncated");
				if (st->avail_in > 0)
					return isal_failure(ISAL_INVALID_BLOCK); /* never spin */
			}
		}
		if (st->avail_out < SLOT_SIZE)
			publish(d, SLOT_SIZE - st->avail_out, consumed);
	}
	return NULL;
}

void pw_decoder_use_isal(bool use)
{
	isal_enabled = use;
}

/* The gzip path when the input is gzip and ISA-L could be loaded. */
static const char *pump(pw_decoder *d)
{
	if (isal_enabled && is_gzip(d->source_buf, d->pending) && pw_libisal_ready()) {
		struct inflate_state *st = xmalloc(sizeof *st);
		const char *error = pump_isal(d, st);
		free(st);
		return error;
	}
	return pump_libarchive(d);
}
#else
void pw_decoder_use_isal(bool use)
{
	(void)use;
}

static const char *pump(pw_decoder *d)
{
	return pump_libarchive(d);
}
#endif

static void *work(void *ud)
{
	pw_decoder *d = ud;
	const char *error = NULL;
	d->source_buf = xmalloc(SOURCE_BLOCK);
	if (!d->read && (d->fd = open(d->path, O_RDONLY | O_CLOEXEC)) < 0) {
		d->message = xasprintf(_("cannot open %s: %s"), d->path, strerror(errno));
		error = d->message;
	}
	/* The first bytes say which decoder is wanted (a stream may hand them
	 * out one at a time). */
	ssize_t n = 1;
	while (!error && n > 0 && d->pending < MAGIC_BYTES) {
		n = source_fill_at(d, d->source_buf + d->pending, SOURCE_BLOCK - d->pending);
		if (n > 0)
			d->pending += (size_t)n;
	}
	if (n < 0 && !error)
		error = d->message ? d->message : _("the archive stream stopped");
	else if (!error && d->pending > 0)
		error = pump(d);
	finish(d, error);
	return NULL;
}

/* ---------------------------------------------------------------- reader */

pw_decoder *pw_decoder_start(const char *path, ssize_t (*read)(void *ud, void *buf, size_t len),
			     void *ud)
{
	pw_decoder *d = xcalloc(1, sizeof *d);
	d->path = path ? xstrdup(path) : NULL;
	d->read = read;
	d->ud = ud;
	d->fd = -1;
	for (size_t i = 0; i < SLOTS; i++)
		d->slot[i] = xmalloc(SLOT_SIZE);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->data, NULL);
	pthread_cond_init(&d->space, NULL);
	if (pthread_create(&d->thread, NULL, work, d) != 0) {
		d->done = true; /* nothing to join */
		d->stop = true;
		pw_decoder_free(&d);
	}
	return d;
}

ssize_t pw_decoder_next(pw_decoder *d, const void **buf)
{
	pthread_mutex_lock(&d->mu);
	if (d->holding) {
		d->first = (d->first + 1) % SLOTS;
		d->count--;
		d->holding = false;
		pthread_cond_signal(&d->space);
	}
	while (d->count == 0 && !d->done)
		pthread_cond_wait(&d->data, &d->mu);
	ssize_t n = -1;
	if (d->count > 0) {
		d->holding = true;
		*buf = d->slot[d->first];
		n = (ssize_t)d->len[d->first];
	} else if (!d->error) {
		n = 0;
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

const char *pw_decoder_error(const pw_decoder *d)
{
	return d->error;
}

int64_t pw_decoder_consumed(pw_decoder *d)
{
	pthread_mutex_lock(&d->mu);
	int64_t n = d->consumed;
	pthread_mutex_unlock(&d->mu);
	return n;
}

void pw_decoder_free(pw_decoder **dp)
{
	pw_decoder *d = *dp;
	if (!d)
		return;
	*dp = NULL;
	pthread_mutex_lock(&d->mu);
	bool joinable = !d->stop;
	d->stop = true;
	pthread_cond_broadcast(&d->space);
	pthread_mutex_unlock(&d->mu);
	if (joinable)
		pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->data);
	pthread_cond_destroy(&d->space);
	pthread_mutex_destroy(&d->mu);
	for (size_t i = 0; i < SLOTS; i++)
		free(d->slot[i]);
	if (d->fd >= 0)
		close(d->fd);
	free(d->source_buf);
	free(d->message);
	free(d->error);
	free(d->path);
	free(d);
}
