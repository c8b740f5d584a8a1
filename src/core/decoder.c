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
#include "xalloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


#define SLOTS 8
#define SLOT_SIZE (128 * 1024)
#define SOURCE_BLOCK (256 * 1024)

struct pw_decoder {
	char *path;
	ssize_t (*read)(void *ud, void *buf, size_t len);
	void *ud;
	unsigned char *source_buf;
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

static la_ssize_t source_read(struct archive *a, void *ud, const void **buf)
{
	pw_decoder *d = ud;
	pthread_mutex_lock(&d->mu);
	bool stop = d->stop;
	pthread_mutex_unlock(&d->mu);
	ssize_t n = stop ? -1 : d->read(d->ud, d->source_buf, SOURCE_BLOCK);
	if (n < 0) {
		archive_set_error(a, -1, "%s", _("the archive stream stopped"));
		return -1;
	}
	*buf = d->source_buf;
	return n;
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
	pthread_mutex_lock(&d->mu);
	d->done = true;
	if (error)
		d->error = xstrdup(error);
	pthread_cond_signal(&d->data);
	pthread_mutex_unlock(&d->mu);
}

static const char *why(struct archive *a)
{
	const char *s = archive_error_string(a);
	return s ? s : _("unknown error");
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
	if (d->read) {
		d->source_buf = xmalloc(SOURCE_BLOCK);
		return archive_read_open(a, d, NULL, source_read, NULL);
	}
	return archive_read_open_filename(a, d->path, SOURCE_BLOCK);
}

/* Copy decoded bytes into slots until the end, an error or a stop. */
static const char *pump(pw_decoder *d, struct archive *a)
{
	struct archive_entry *ae;
	int r = archive_read_next_header(a, &ae);
	if (r == ARCHIVE_EOF)
		return NULL; /* empty input: nothing to decode */
	if (r < ARCHIVE_WARN)
		return why(a);
	for (;;) {
		unsigned char *s = free_slot(d);
		if (!s)
			return NULL;
		la_ssize_t n = archive_read_data(a, s, SLOT_SIZE);
		if (n == 0)
			return NULL;
		if (n < 0 && n != ARCHIVE_WARN && n != ARCHIVE_RETRY)
			return why(a);
		if (n > 0)
			publish(d, (size_t)n, archive_filter_bytes(a, -1));
	}
}

static void *work(void *ud)
{
	pw_decoder *d = ud;
	struct archive *a = archive_read_new();
	const char *error = open_source(d, a) == ARCHIVE_OK ? pump(d, a) : why(a);
	finish(d, error);
	archive_read_free(a);
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
	free(d->source_buf);
	free(d->error);
	free(d->path);
	free(d);
}
