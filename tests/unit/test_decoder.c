/*
 * The decompression worker (src/core/decoder.c): gzip through ISA-L and
 * through libarchive's zlib must give the same bytes and refuse the same
 * damage, whether the compressed bytes come from a file or from a stream
 * in pieces of any size (a download still arriving). The gzip files are
 * made by gzip(1) from a payload this test writes.
 */
#include "config.h"

#include "decoder.h"

#include "testlib.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define PAYLOAD_SIZE (3 * 1024 * 1024 + 777)
/* zeros.gz ends in this many zero bytes: its last few hundred compressed
 * bytes unpack to far more than one ring slot, so input runs out while
 * output is still owed. */
#define ZEROS_TAIL (2 * 1024 * 1024 + 3)

static char g_tmp[PATH_MAX];
static unsigned char *g_payload;

/* Compressible but not trivial: words from a small table, picked by a
 * fixed linear congruential sequence, so a failure reproduces. */
static void make_payload(void)
{
	static const char *const words[] = { "import ", "def ", "return ", "self", ".py\n", "    ",
					     "python3.11/", "lib", "(x, y)", "# comment\n", "\x00\x01\xfe" };
	g_payload = malloc(PAYLOAD_SIZE);
	assert_non_null(g_payload);
	uint32_t r = 12345;
	size_t at = 0;
	while (at < PAYLOAD_SIZE) {
		r = r * 1103515245u + 12345u;
		const char *w = words[(r >> 16) % (sizeof words / sizeof words[0])];
		size_t n = strlen(w) ? strlen(w) : 1;
		for (size_t i = 0; i < n && at < PAYLOAD_SIZE; i++)
			g_payload[at++] = (unsigned char)(w[i] ^ ((r >> 8) & 1 ? 0 : (r >> 24) & 0x3));
	}
}

static void write_bytes(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void sh(const char *cmd)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	if (tl_run(argv) != 0)
		fail_msg("fixture command failed: %s", cmd);
}

static long file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (long)st.st_size;
}

/* one.gz: the payload in one member; three.gz: in three members, as
 * `cat a.gz b.gz c.gz` gives; trailing.gz: one member and 512 zero bytes;
 * zeros.gz: the payload then ZEROS_TAIL zero bytes, in one member;
 * badcrc.gz: one member with its CRC-32 flipped; short.gz: one member cut
 * 100 bytes before its end; plain: the payload itself. */
static int setup(void **state)
{
	(void)state;
	if (tl_make_temp_dir(g_tmp, sizeof g_tmp, "pw-decoder") < 0)
		return -1;
	make_payload();
	write_bytes(tl_path(g_tmp, "plain"), g_payload, PAYLOAD_SIZE);
	size_t third = PAYLOAD_SIZE / 3;
	write_bytes(tl_path(g_tmp, "p1"), g_payload, third);
	write_bytes(tl_path(g_tmp, "p2"), g_payload + third, third);
	write_bytes(tl_path(g_tmp, "p3"), g_payload + 2 * third, PAYLOAD_SIZE - 2 * third);
	char cmd[PATH_MAX * 4];
	tl_textf(cmd, sizeof cmd,
		 "cd '%s' && gzip -9 -n -c plain > one.gz && "
		 "gzip -1 -n -c p1 > three.gz && gzip -6 -n -c p2 >> three.gz && gzip -n -c p3 >> three.gz && "
		 "cp one.gz trailing.gz && head -c 512 /dev/zero >> trailing.gz && "
		 "{ cat plain; head -c %d /dev/zero; } | gzip -9 -n -c > zeros.gz && "
		 "cp one.gz badcrc.gz && cp one.gz short.gz && "
		 "head -c 200000 plain | gzip -6 -n -c > small.gz",
		 g_tmp, ZEROS_TAIL);
	sh(cmd);
	/* the trailer is CRC-32 then ISIZE, 4 bytes each, little-endian */
	const char *bad = tl_path(g_tmp, "badcrc.gz");
	FILE *f = fopen(bad, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, file_size(bad) - 8, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, file_size(bad) - 8, SEEK_SET), 0);
	fputc(c ^ 0x5a, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(truncate(tl_path(g_tmp, "short.gz"), file_size(tl_path(g_tmp, "short.gz")) - 100), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pw_decoder_use_isal(true);
	tl_remove_tree(g_tmp);
	free(g_payload);
	return 0;
}

/* A stream handing out PIECE bytes at a time from a file. */
struct pieces {
	FILE *f;
	size_t piece;
};

static ssize_t read_pieces(void *ud, void *buf, size_t len)
{
	struct pieces *p = ud;
	size_t n = fread(buf, 1, len < p->piece ? len : p->piece, p->f);
	return ferror(p->f) ? -1 : (ssize_t)n;
}

/* Decode name (from the file when piece is 0, else as a stream); returns
 * the bytes (malloc'd, *n their count) or NULL with *error the message. */
static unsigned char *decode_cap(const char *name, size_t piece, size_t *n, char *error, size_t error_size,
				 size_t expected)
{
	struct pieces p = { NULL, piece };
	pw_decoder *d;
	if (piece) {
		p.f = fopen(tl_path(g_tmp, name), "rb");
		assert_non_null(p.f);
		d = pw_decoder_start(NULL, read_pieces, &p);
	} else {
		d = pw_decoder_start(tl_path(g_tmp, name), NULL, NULL);
	}
	assert_non_null(d);
	size_t cap = expected + 4096, len = 0;
	unsigned char *out = malloc(cap);
	assert_non_null(out);
	for (;;) {
		const void *buf;
		ssize_t got = pw_decoder_next(d, &buf);
		if (got < 0) {
			tl_textf(error, error_size, "%s", pw_decoder_error(d) ? pw_decoder_error(d) : "(none)");
			free(out);
			out = NULL;
			break;
		}
		if (got == 0)
			break;
		assert_true(len + (size_t)got <= cap);
		memcpy(out + len, buf, (size_t)got);
		len += (size_t)got;
	}
	pw_decoder_free(&d);
	assert_null(d);
	if (p.f)
		fclose(p.f);
	*n = len;
	return out;
}

static unsigned char *decode(const char *name, size_t piece, size_t *n, char *error, size_t error_size)
{
	return decode_cap(name, piece, n, error, error_size, PAYLOAD_SIZE);
}

static void assert_payload(const char *name, size_t piece)
{
	size_t n;
	char error[512];
	unsigned char *out = decode(name, piece, &n, error, sizeof error);
	if (!out)
		fail_msg("%s (piece %zu): %s", name, piece, error);
	if (n != PAYLOAD_SIZE || memcmp(out, g_payload, PAYLOAD_SIZE) != 0)
		fail_msg("%s (piece %zu): %zu bytes, not the payload", name, piece, n);
	free(out);
}

static const size_t pieces[] = { 0, 1, 7, 4096, 65536, 1 << 20 };

/* zeros.gz decodes to the payload and the zeros after it. */
static void assert_payload_and_zeros(size_t piece)
{
	size_t n;
	char error[512];
	unsigned char *out = decode_cap("zeros.gz", piece, &n, error, sizeof error, PAYLOAD_SIZE + ZEROS_TAIL);
	if (!out)
		fail_msg("zeros.gz (piece %zu): %s", piece, error);
	assert_int_equal(n, PAYLOAD_SIZE + ZEROS_TAIL);
	assert_memory_equal(out, g_payload, PAYLOAD_SIZE);
	for (size_t i = PAYLOAD_SIZE; i < n; i++)
		if (out[i])
			fail_msg("zeros.gz (piece %zu): byte %zu is %d", piece, i, out[i]);
	free(out);
}
#define NPIECES (sizeof pieces / sizeof pieces[0])

/* Every good input, in every piece size, with and without ISA-L. Pieces
 * of 1 and 7 bytes split every gzip header and trailer, the start of
 * each next member included. */
static void test_same_bytes(void **state)
{
	(void)state;
	const char *names[] = { "one.gz", "three.gz", "trailing.gz", "plain" };
	for (int isal = 1; isal >= 0; isal--) {
		pw_decoder_use_isal(isal);
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			for (size_t k = 0; k < NPIECES; k++) {
				/* a byte at a time through the whole payload is slow
				 * under sanitizers: once per mode is enough */
				if (pieces[k] == 1 && i != 1)
					continue;
				assert_payload(names[i], pieces[k]);
			}
		for (size_t k = 0; k < NPIECES; k++)
			if (pieces[k] != 1)
				assert_payload_and_zeros(pieces[k]);
	}
	pw_decoder_use_isal(true);
}

static void assert_refused(const char *name, size_t piece, const char *isal_needle)
{
	size_t n;
	char error[512] = "";
	unsigned char *out = decode(name, piece, &n, error, sizeof error);
	if (out)
		fail_msg("%s (piece %zu) was decoded (%zu bytes) instead of refused", name, piece, n);
	assert_true(strlen(error) > 0);
	if (isal_needle && !strstr(error, isal_needle))
		fail_msg("%s (piece %zu): '%s' does not say '%s'", name, piece, error, isal_needle);
}

/* A member cut short is refused either way, and ISA-L says so. A flipped
 * CRC-32 is refused by ISA-L; libarchive's gzip reader does not check the
 * trailer (the archive's pinned SHA-256 is the gate that catches it), so
 * that case is only asserted with ISA-L. */
static void test_damage_refused(void **state)
{
	(void)state;
	for (int isal = 1; isal >= 0; isal--) {
		pw_decoder_use_isal(isal);
#ifdef HAVE_ISAL
		const bool says = isal;
#else
		const bool says = false;
#endif
		for (size_t k = 0; k < NPIECES; k++) {
			if (pieces[k] == 1)
				continue;
			if (says)
				assert_refused("badcrc.gz", pieces[k], "does not match its checksum");
			assert_refused("short.gz", pieces[k], says ? "ends early" : NULL);
		}
	}
	pw_decoder_use_isal(true);
}

/* Damaged gzip of every kind the decoders can meet before the archive's
 * hash is known (the stream is inflated while it downloads): bytes flipped
 * at pseudo-random places and the stream cut at many lengths. Each decode
 * ends, with bytes or with an error that says something; under the
 * sanitizers this is the memory-safety test of both paths. */
static void test_damaged_inputs_end_cleanly(void **state)
{
	(void)state;
	FILE *f = fopen(tl_path(g_tmp, "small.gz"), "rb");
	assert_non_null(f);
	unsigned char good[65536 * 2];
	size_t n = fread(good, 1, sizeof good, f);
	fclose(f);
	assert_true(n > 1000 && n < sizeof good);
	uint32_t r = 2024;
	int refused[2] = { 0, 0 }, cases = 0;
	for (int k = 0; k < 120; k++) {
		unsigned char bad[sizeof good];
		memcpy(bad, good, n);
		size_t len = n;
		r = r * 1103515245u + 12345u;
		if (k % 3 == 2) {
			len = (r >> 8) % n; /* cut */
		} else {
			for (int flips = 1 + (int)((r >> 24) % 4); flips > 0; flips--) {
				r = r * 1103515245u + 12345u;
				bad[(r >> 8) % n] ^= (unsigned char)(1u << ((r >> 4) % 8));
			}
		}
		write_bytes(tl_path(g_tmp, "bad.gz"), bad, len);
		for (int isal = 1; isal >= 0; isal--) {
			pw_decoder_use_isal(isal);
			size_t got;
			char error[512] = "";
			unsigned char *out = decode_cap("bad.gz", k % 2 ? 0 : 1000, &got, error, sizeof error,
							PAYLOAD_SIZE);
			cases += isal;
			if (out)
				assert_true(got <= PAYLOAD_SIZE);
			else
				refused[isal]++, assert_true(strlen(error) > 0);
			free(out);
		}
	}
	pw_decoder_use_isal(true);
	/* every cut stream is refused either way */
	assert_true(refused[0] >= 40);
#ifdef HAVE_ISAL
	/* ISA-L checks each member's CRC-32 too, so it notices most flips (not
	 * one in the header's mtime or flags); libarchive's reader does not */
	assert_true(refused[1] > cases * 3 / 4);
	assert_true(refused[1] >= refused[0]);
#endif
}

/* A file that cannot be opened is an error naming it. */
static void test_missing_file(void **state)
{
	(void)state;
	size_t n;
	char error[512] = "";
	assert_null(decode("no-such.gz", 0, &n, error, sizeof error));
	if (!strstr(error, "no-such.gz") || !strstr(error, "cannot open"))
		fail_msg("%s", error);
}

#ifdef HAVE_ISAL
static bool isal_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "libisal") != NULL;
	fclose(f);
	return found;
}

/* The fast path is really taken: ISA-L is loaded by the first gzip
 * decoded with it on, not by plain input or with it off. */
static void test_isal_loaded_on_use(void **state)
{
	(void)state;
	assert_false(isal_mapped());
	assert_payload("plain", 0);
	pw_decoder_use_isal(false);
	assert_payload("one.gz", 0);
	assert_false(isal_mapped());
	pw_decoder_use_isal(true);
	assert_payload("one.gz", 0);
	assert_true(isal_mapped());
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef HAVE_ISAL
		cmocka_unit_test(test_isal_loaded_on_use),
#endif
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_damage_refused),
		cmocka_unit_test(test_damaged_inputs_end_cleanly),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
