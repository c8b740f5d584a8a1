/*
 * Guarded extraction and file manifests, against real archives: the group
 * setup runs tests/fixtures/make_hostile.py into a private temporary
 * directory T, every test extracts into T/NAME, and the hostile archives'
 * escape targets (T/evil, T/outside/..., /tmp/pyward-hostile-evil) are
 * checked never to appear.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "decoder.h"
#include "extract.h"
#include "manifest.h"
#include "cancel.h"
#include "err.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MIB ((int64_t)1 << 20)
#define ABS_EVIL "/tmp/pyward-hostile-evil"
#define SHA_PYTHON3 "c7130b3677b83e3aba9e82a9c24dcf949b9ae96957a5ff64be3521adcd7a8a13"
#define SHA_LINK "c1cc69e61c0f1c7ade8df0f2994e582e7c1f2c57d1ec192a0baf9f96b7739d9d"
#define OK_ENTRIES 13
#define OK_BYTES 53 /* 23 + 5 + 11 + 6 + 8; the hardlink adds no data */

static char g_tmp[64];
static char g_fx[128];
static char g_outside[128];

/* ---------------------------------------------------------------- helpers */

/* Declare char var[] holding T/rel, for paths kept across calls. */
#define TPATH(var, rel) \
	char var[PATH_MAX]; \
	snprintf(var, sizeof var, "%s/%s", g_tmp, rel)

/* T/rel: for immediate use only (see tl_path). */
static const char *tpath(const char *rel)
{
	return tl_path(g_tmp, rel);
}

static const char *fixture(const char *name)
{
	static char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s/%s.tar.gz", g_fx, name);
	return buf;
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static size_t count_dir(const char *path)
{
	DIR *d = opendir(path);
	assert_non_null(d);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Nothing escaped: T holds only fx/ and an empty outside/, and the absolute
 * target does not exist. */
static void assert_nothing_outside(void)
{
	DIR *d = opendir(g_tmp);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")
			&& strcmp(de->d_name, "fx") && strcmp(de->d_name, "outside"))
			fail_msg("unexpected %s/%s", g_tmp, de->d_name);
	closedir(d);
	assert_int_equal(count_dir(g_outside), 0);
	assert_false(tl_exists(ABS_EVIL));
}

static pw_err *extract(const char *archive, const char *dest, pw_extract_result *res)
{
	pw_extract_opts o = { .archive = fixture(archive), .dest = dest };
	return pw_extract(&o, res);
}

static void extract_ok(const char *dest)
{
	pw_extract_result res;
	pw_err *e = extract("ok", dest, &res);
	if (e)
		fail_msg("extracting ok.tar.gz: %s", pw_err_message(e));
	assert_int_equal(res.entries, OK_ENTRIES);
	assert_int_equal(res.bytes, OK_BYTES);
}

static void remove_tree(const char *path)
{
	pw_err *e = pw_extract_remove_tree(path);
	if (e)
		fail_msg("removing %s: %s", path, pw_err_message(e));
}

struct seen {
	int calls;
	bool stage_ok;
	int64_t done, total;
	pw_cancel *cancel_on_first;
};

static void on_progress(void *ud, const pw_progress *p)
{
	struct seen *s = ud;
	if (s->calls++ == 0 && s->cancel_on_first)
		pw_cancel_raise(s->cancel_on_first);
	s->stage_ok = (s->calls == 1 || s->stage_ok) && strcmp(p->stage, "extract") == 0;
	assert_true(p->done <= p->total);
	s->done = p->done;
	s->total = p->total;
}

/* ------------------------------------------------------------- good ones */

static void test_ok_archive(void **state)
{
	(void)state;
	struct seen seen = { 0 };
	pw_events ev = { .progress = on_progress, .ud = &seen };
	TPATH(dest, "ok");
	pw_extract_result res;
	pw_extract_opts o = { .archive = fixture("ok"), .dest = dest, .events = &ev };
	pw_err *e = pw_extract(&o, &res);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(res.entries, OK_ENTRIES);
	assert_int_equal(res.bytes, OK_BYTES);

	struct stat st;
	assert_string_equal(read_text(tpath("ok/python/bin/python3")), "#!/bin/sh\necho python3\n");
	assert_int_equal(lstat(tpath("ok/python/bin/python3"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_mtime, 1700000000);
	assert_string_equal(read_text(tpath("ok/python/lib/x.py")), "print('x')\n");
	assert_string_equal(read_text(tpath("ok/python/share/doc/README")), "read me\n");

	char link[64];
	ssize_t n = readlink(tpath("ok/python/bin/python"), link, sizeof link - 1);
	assert_int_equal(n, 7);
	link[n] = '\0';
	assert_string_equal(link, "python3");
	assert_int_equal(lstat(tpath("ok/python/include"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	struct stat a, b;
	assert_int_equal(lstat(tpath("ok/python/lib/x.py"), &a), 0);
	assert_int_equal(lstat(tpath("ok/python/lib/x_link.py"), &b), 0);
	assert_true(S_ISREG(b.st_mode));
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_nlink, 2);

	assert_int_equal(lstat(tpath("ok/python/bin/suid"), &st), 0);
	assert_int_equal(st.st_mode & 06000, 0);
	assert_int_equal(st.st_mode & 07777, 0755);

	struct stat arc;
	assert_int_equal(stat(fixture("ok"), &arc), 0);
	assert_true(seen.calls >= 2);
	assert_true(seen.stage_ok);
	assert_int_equal(seen.total, arc.st_size);
	assert_int_equal(seen.done, arc.st_size);

	remove_tree(dest);
	assert_nothing_outside();
}

/* The bomb's 64 MiB fits a limit of exactly 64 MiB, not one byte less. */
static void test_limit_is_exact(void **state)
{
	(void)state;
	TPATH(dest, "bomb-fits");
	pw_extract_result res;
	pw_extract_opts o = { .archive = fixture("bomb"), .dest = dest, .max_bytes = 64 * MIB };
	pw_err *e = pw_extract(&o, &res);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(res.bytes, 64 * MIB);
	remove_tree(dest);

	o.max_bytes = 64 * MIB - 1;
	e = pw_extract(&o, &res);
	assert_int_equal(pw_err_code(e), PW_ERR_REFUSED);
	assert_non_null(strstr(pw_err_message(e), "67108863 bytes"));
	pw_err_free(e);
	assert_false(tl_exists(dest));
	assert_nothing_outside();
}

/* 2000 files and their directory are 2001 entries: a limit of 2001 passes. */
static void test_entry_limit_is_exact(void **state)
{
	(void)state;
	TPATH(dest, "many-fits");
	pw_extract_result res;
	pw_extract_opts o = { .archive = fixture("many"), .dest = dest, .max_entries = 2001 };
	pw_err *e = pw_extract(&o, &res);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(res.entries, 2001);
	assert_int_equal(res.bytes, 0);
	remove_tree(dest);
	assert_nothing_outside();
}

/* ------------------------------------------------------------ short write */

/* A write(2) that fails part-way (here EFBIG from RLIMIT_FSIZE; a full disk
 * fails the same way) is an error, not a file silently left short: run in
 * a child so the limit stays there. */
static void test_short_write_fails(void **state)
{
	(void)state;
	char cmd[PATH_MAX * 6];
	TPATH(src, "big-src");
	TPATH(arc, "big.tar.gz");
	snprintf(cmd, sizeof cmd,
		 "mkdir -p '%s/python' && head -c 300000 /dev/urandom > '%s/python/data' && "
		 "tar -czf '%s' -C '%s' python", src, src, arc, src);
	assert_int_equal(system(cmd), 0);
	TPATH(dest, "short");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = { 100000, 100000 };
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &lim);
		pw_extract_opts o = { .archive = arc, .dest = dest };
		pw_extract_result res;
		pw_err *e = pw_extract(&o, &res);
		bool ok = e && pw_err_code(e) == PW_ERR_IO && strstr(pw_err_message(e), "'python/data'") &&
			  strstr(pw_err_message(e), "too large") && !res.disk_full && !tl_exists(dest);
		if (!ok)
			fprintf(stderr, "got: %s\n", e ? pw_err_message(e) : "no error");
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(tl_wait_child(pid), 0);
	assert_false(tl_exists(dest));
	tl_remove_tree(src);
	assert_int_equal(unlink(arc), 0);
	assert_nothing_outside();
}

/* ---------------------------------------------------------------- stream */

/* A read callback handing out the file in small pieces, optionally failing
 * after stop_after bytes (a download that broke off). */
struct chunks {
	FILE *f;
	size_t piece;
	long stop_after;
	long given;
};

static ssize_t read_chunks(void *ud, void *buf, size_t len)
{
	struct chunks *c = ud;
	if (c->stop_after >= 0 && c->given >= c->stop_after)
		return -1;
	size_t n = fread(buf, 1, len < c->piece ? len : c->piece, c->f);
	c->given += (long)n;
	return (ssize_t)n;
}

static pw_err *extract_stream(const char *archive, const char *dest, long stop_after, int64_t max_bytes,
			      pw_extract_result *res)
{
	struct chunks c = { fopen(archive, "rb"), 1000, stop_after, 0 };
	assert_non_null(c.f);
	pw_extract_opts o = { .archive = archive, .dest = dest, .read = read_chunks, .read_ud = &c,
			      .stream_size = -1, .max_bytes = max_bytes };
	pw_err *e = pw_extract(&o, res);
	fclose(c.f);
	return e;
}

/* The bytes may come from a callback (a download still arriving) in pieces
 * of any size; the decompression thread gives the same tree. */
static void test_stream_pieces(void **state)
{
	(void)state;
	TPATH(dest, "streamed");
	pw_extract_result res;
	pw_err *e = extract_stream(fixture("ok"), dest, -1, 0, &res);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(res.entries, OK_ENTRIES);
	assert_int_equal(res.bytes, OK_BYTES);
	assert_string_equal(read_text(tpath("streamed/python/lib/x.py")), "print('x')\n");
	remove_tree(dest);
	assert_nothing_outside();
}

/* A stream that stops mid-way is a read error, and nothing is left. */
static void test_stream_stops(void **state)
{
	(void)state;
	TPATH(dest, "stopped");
	pw_extract_result res;
	pw_err *e = extract_stream(fixture("many"), dest, 3000, 0, &res);
	assert_int_equal(pw_err_code(e), PW_ERR_CORRUPT);
	if (!strstr(pw_err_message(e), "cannot read archive"))
		fail_msg("%s", pw_err_message(e));
	pw_err_free(e);
	assert_false(tl_exists(dest));
	assert_nothing_outside();
}

/* A bomb arriving through a stream is stopped by the byte limit, and the
 * decompression thread, blocked on a full ring, is told to stop too. */
static void test_stream_bomb(void **state)
{
	(void)state;
	TPATH(dest, "stream-bomb");
	pw_extract_result res;
	pw_err *e = extract_stream(fixture("bomb"), dest, -1, 8 * MIB, &res);
	assert_int_equal(pw_err_code(e), PW_ERR_REFUSED);
	assert_non_null(strstr(pw_err_message(e), "would exceed the limit of 8 MiB"));
	pw_err_free(e);
	assert_false(tl_exists(dest));
	assert_nothing_outside();
}

/* An uncompressed tar passes through the decompression thread unchanged;
 * the guards are the same (a hostile plain tar is refused). */
static void test_plain_tar(void **state)
{
	(void)state;
	char tar[PATH_MAX], cmd[PATH_MAX * 2 + 32];
	const char *kinds[] = { "ok", "dotdot" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(tar, sizeof tar, "%s/%s.tar", g_tmp, kinds[i]);
		snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", fixture(kinds[i]), tar);
		assert_int_equal(system(cmd), 0);
		TPATH(dest, "plain");
		pw_extract_result res;
		pw_extract_opts o = { .archive = tar, .dest = dest };
		pw_err *e = pw_extract(&o, &res);
		if (i == 0) {
			if (e)
				fail_msg("%s", pw_err_message(e));
			assert_int_equal(res.entries, OK_ENTRIES);
			assert_int_equal(res.bytes, OK_BYTES);
			remove_tree(dest);
		} else {
			assert_int_equal(pw_err_code(e), PW_ERR_REFUSED);
			assert_non_null(strstr(pw_err_message(e), "has a '..' component"));
			pw_err_free(e);
			assert_false(tl_exists(dest));
		}
		assert_int_equal(unlink(tar), 0);
	}
	assert_nothing_outside();
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const pw_manifest_entry *)a)->path, ((const pw_manifest_entry *)b)->path);
}

/* ISA-L (when the build has it) and libarchive's zlib decode the gzip:
 * both give the same tree and manifest (sorted first: the API leaves its
 * order open), and both refuse a truncated stream
 * and a tar whose sizes lie, with nothing left behind. */
static void test_both_gzip_decoders(void **state)
{
	(void)state;
	pw_manifest m[2] = { { 0 }, { 0 } };
	for (int isal = 1; isal >= 0; isal--) {
		pw_decoder_use_isal(isal);
		TPATH(dest, "decoders");
		pw_extract_result res;
		pw_extract_opts o = { .archive = fixture("ok"), .dest = dest, .manifest = &m[isal] };
		pw_err *e = pw_extract(&o, &res);
		if (e)
			fail_msg("isal %d: %s", isal, pw_err_message(e));
		assert_int_equal(res.entries, OK_ENTRIES);
		assert_int_equal(res.bytes, OK_BYTES);
		/* what was recorded while writing is what is on disk */
		pw_manifest disk;
		assert_null(pw_manifest_build(dest, &disk));
		qsort(m[isal].items, m[isal].count, sizeof *m[isal].items, by_path);
		assert_int_equal(disk.count, m[isal].count);
		for (size_t i = 0; i < disk.count; i++) {
			assert_string_equal(disk.items[i].path, m[isal].items[i].path);
			assert_string_equal(disk.items[i].sha256, m[isal].items[i].sha256);
			assert_int_equal(disk.items[i].size, m[isal].items[i].size);
			assert_int_equal(disk.items[i].mode, m[isal].items[i].mode);
		}
		pw_manifest_clear(&disk);
		remove_tree(dest);
		const char *damaged[] = { "truncated", "lying_size" };
		for (size_t i = 0; i < 2; i++) {
			o = (pw_extract_opts){ .archive = fixture(damaged[i]), .dest = dest };
			e = pw_extract(&o, &res);
			if (pw_err_code(e) != PW_ERR_CORRUPT || !strstr(pw_err_message(e), "cannot read archive"))
				fail_msg("isal %d, %s: %s", isal, damaged[i], e ? pw_err_message(e) : "extracted");
			pw_err_free(e);
			assert_false(tl_exists(dest));
		}
	}
	pw_decoder_use_isal(true);
	assert_int_equal(m[0].count, m[1].count);
	for (size_t i = 0; i < m[0].count; i++) {
		assert_string_equal(m[0].items[i].path, m[1].items[i].path);
		assert_string_equal(m[0].items[i].sha256, m[1].items[i].sha256);
		assert_int_equal(m[0].items[i].size, m[1].items[i].size);
	}
	pw_manifest_clear(&m[0]);
	pw_manifest_clear(&m[1]);
	assert_nothing_outside();
}

/* --------------------------------------------------------------- hostile */

struct hostile {
	const char *archive;
	pw_errcode code;
	const char *needle;     /* in the message */
	int64_t max_bytes;
	int64_t max_entries;
	const char *root;       /* the install's top folder, as the runtime passes it */
};

static struct hostile cases[] = {
	{ "abs", PW_ERR_REFUSED, "has an absolute path", 0, 0, NULL },
	{ "dotdot", PW_ERR_REFUSED, "'python/../../evil' has a '..' component", 0, 0, NULL },
	{ "symlink_out", PW_ERR_REFUSED, "pointing outside the archive ('../../outside')", 0, 0, NULL },
	{ "symlink_abs", PW_ERR_REFUSED, "symlink to an absolute path ('/etc/passwd')", 0, 0, NULL },
	{ "symlink_then_write", PW_ERR_REFUSED, "'python/d/e' would be written through 'python/d'", 0, 0, NULL },
	{ "symlink_chain", PW_ERR_REFUSED, "'..' after a name", 0, 0, NULL },
	{ "hardlink_out", PW_ERR_REFUSED, "hardlink whose target '../../etc/passwd' has a '..'", 0, 0, NULL },
	{ "hardlink_missing", PW_ERR_REFUSED, "not a file extracted earlier", 0, 0, NULL },
	{ "hardlink_via_link", PW_ERR_REFUSED, "written through 'python/inc'", 0, 0, NULL },
	{ "duplicate", PW_ERR_REFUSED, "would replace an earlier entry", 0, 0, NULL },
	{ "duplicate_file", PW_ERR_REFUSED, "'python/a' would replace an earlier entry", 0, 0, NULL },
	{ "file_then_child", PW_ERR_REFUSED, "'python/d/e' would be written through 'python/d'", 0, 0, NULL },
	{ "file_then_dir", PW_ERR_REFUSED, "'python/d/' would replace an earlier entry", 0, 0, NULL },
	{ "device", PW_ERR_REFUSED, "is a character device", 0, 0, NULL },
	{ "fifo", PW_ERR_REFUSED, "is a FIFO", 0, 0, NULL },
	{ "longpath", PW_ERR_REFUSED, "longer than 1024 bytes", 0, 0, NULL },
	{ "longname", PW_ERR_REFUSED, "component longer than 255 bytes", 0, 0, NULL },
	{ "bomb", PW_ERR_REFUSED, "'python/zeros' would exceed the limit of 8 MiB", 8 * MIB, 0, NULL },
	{ "many", PW_ERR_REFUSED, "'python/f0999' exceeds the limit of 1000 entries", 0, 1000, NULL },
	{ "notgzip", PW_ERR_CORRUPT, "cannot read archive", 0, 0, NULL },
	{ "truncated", PW_ERR_CORRUPT, "cannot read archive", 0, 0, NULL },
	{ "lying_size", PW_ERR_CORRUPT, "cannot read archive", 0, 0, NULL },
	{ "hardlink_data", PW_ERR_REFUSED, "'python/lib/h.py' is a hardlink that carries 13 bytes of data", 0, 0, NULL },
	/* judged from python/, which becomes versions/NAME beside the other installs */
	{ "root_climb", PW_ERR_REFUSED, "'python/cur' is a symlink pointing outside the archive ('../current/lib')",
	  0, 0, "python" },
	{ "root_marker", PW_ERR_REFUSED, "'python/.pyward-runtime.json' is a symlink pointing outside", 0, 0, "python" },
	{ "root_deep", PW_ERR_REFUSED, "'python/lib/python3/ssl.py' is a symlink pointing outside", 0, 0, "python" },
	{ "root_outside", PW_ERR_REFUSED, "'other/x' lies outside the archive's top folder 'python/'", 0, 0, "python" },
	{ "root_not_dir", PW_ERR_REFUSED, "'python' is the archive's top folder 'python/' but not a directory", 0, 0,
	  "python" },
	{ "root_hardlink", PW_ERR_REFUSED, "'x' lies outside the archive's top folder", 0, 0, "python" },
	/* 300 files with the writer threads when the link comes */
	{ "pool_then_link", PW_ERR_REFUSED, "'python/lib2/f000' would be written through 'python/lib2'", 0, 0,
	  "python" },
};

static void test_hostile(void **state)
{
	const struct hostile *h = *state;
	char name[64];
	snprintf(name, sizeof name, "d-%s", h->archive);
	TPATH(dest, name);
	pw_extract_result res = { 7, 7, true };
	pw_extract_opts o = {
		.archive = fixture(h->archive), .dest = dest,
		.max_bytes = h->max_bytes, .max_entries = h->max_entries, .root = h->root,
	};
	pw_err *e = pw_extract(&o, &res);
	assert_non_null(e);
	const char *msg = pw_err_message(e);
	if (pw_err_code(e) != h->code || !strstr(msg, h->needle))
		fail_msg("%s: got %s: %s", h->archive, pw_err_code_name(pw_err_code(e)), msg);
	if (h->code == PW_ERR_REFUSED)
		assert_non_null(strstr(msg, "the archive was rejected and nothing was installed"));
	assert_non_null(pw_err_hint(e));
	pw_err_free(e);
	assert_int_equal(res.entries, 0);
	assert_int_equal(res.bytes, 0);
	assert_false(res.disk_full);
	assert_false(tl_exists(dest));
	assert_nothing_outside();
}

/* Without a root the same links stay inside dest, and are allowed: the
 * refusals above come from judging them against python/. */
static void test_root_links_allowed_without_root(void **state)
{
	(void)state;
	const char *names[] = { "root_climb", "root_marker", "root_deep" };
	for (size_t i = 0; i < 3; i++) {
		TPATH(dest, "noroot");
		pw_err *e = extract(names[i], dest, NULL);
		if (e)
			fail_msg("%s: %s", names[i], pw_err_message(e));
		remove_tree(dest);
	}
	assert_nothing_outside();
}

/* Group and other lose write on everything: files 0666/0777/0664 and
 * folders 0777/01777 of a machine-shared runtime are not writable by all. */
static void test_world_writable_masked(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		mode_t mode;
	} want[] = {
		{ "ww/python", 0755 }, { "ww/python/tmp", 0755 }, { "ww/python/a", 0644 },
		{ "ww/python/b", 0755 }, { "ww/python/c", 0644 },
	};
	TPATH(dest, "ww");
	pw_manifest m = { 0 };
	pw_extract_opts o = { .archive = fixture("world_writable"), .dest = dest, .manifest = &m, .root = "python" };
	pw_err *e = pw_extract(&o, NULL);
	if (e)
		fail_msg("%s", pw_err_message(e));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct stat st;
		assert_int_equal(lstat(tpath(want[i].path), &st), 0);
		if ((st.st_mode & 07777) != want[i].mode)
			fail_msg("%s: mode %o, want %o", want[i].path, (unsigned)(st.st_mode & 07777),
				 (unsigned)want[i].mode);
	}
	for (size_t i = 0; i < m.count; i++)
		assert_int_equal(m.items[i].mode & 022, 0); /* the manifest says what is on disk */
	pw_manifest_clear(&m);
	remove_tree(dest);
	assert_nothing_outside();
}

/* A small archive that unpacks huge stops at the first write that would
 * leave less than the margin free on a small file system (a tmpfs, root
 * only), with "disk full" and the real limits, not at ENOSPC. */
static void test_space_guard(void **state)
{
	(void)state;
	TPATH(mnt, "small");
	assert_int_equal(mkdir(mnt, 0755), 0);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=24m tmpfs '%s' 2>/dev/null", mnt);
	if (geteuid() != 0 || system(cmd) != 0) {
		rmdir(mnt);
		skip(); /* mounting a small file system needs root */
	}
	TPATH(dest, "small/bomb");
	pw_extract_result res;
	pw_extract_opts o = { .archive = fixture("bomb"), .dest = dest };
	pw_err *e = pw_extract(&o, &res);
	const char *msg = e ? pw_err_message(e) : "extracted";
	bool ok = pw_err_code(e) == PW_ERR_IO && res.disk_full &&
		  strstr(msg, "disk full: writing 'python/zeros' into") &&
		  strstr(msg, "would leave less than 1 MiB free") &&
		  strstr(msg, "pyward unpacks at most 100000 entries and 2048 MiB");
	snprintf(cmd, sizeof cmd, "umount '%s'", mnt);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(rmdir(mnt), 0);
	if (!ok)
		fail_msg("%s", msg);
	pw_err_free(e);
	assert_nothing_outside();
}

/* ---------------------------------------------------------- writer pool */

/* What was recorded while writing is what is on disk. */
static void assert_manifest_is_disk(const char *root, pw_manifest *m)
{
	pw_manifest disk;
	pw_err *e = pw_manifest_build(root, &disk);
	if (e)
		fail_msg("%s", pw_err_message(e));
	qsort(m->items, m->count, sizeof *m->items, by_path);
	assert_int_equal(disk.count, m->count);
	for (size_t i = 0; i < disk.count; i++) {
		assert_string_equal(disk.items[i].path, m->items[i].path);
		if (strcmp(disk.items[i].sha256, m->items[i].sha256) != 0)
			fail_msg("%s: recorded %s, on disk %s", m->items[i].path, m->items[i].sha256,
				 disk.items[i].sha256);
		assert_int_equal(disk.items[i].size, m->items[i].size);
		assert_int_equal(disk.items[i].mode, m->items[i].mode);
	}
	pw_manifest_clear(&disk);
}

/* A listing of a tree: every name with its type, mode, size, link target
 * and (except folders, whose times pyward does not restore) mtime. */
static void list_tree(const char *root, const char *out)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && { find . -type d -printf '%%p %%y %%m\n'; "
		 "find . ! -type d -printf '%%p %%y %%m %%s %%l %%T@ %%n\n'; } | sort > '%s'", root, out);
	assert_int_equal(system(cmd), 0);
}

/* 1,800 files of many sizes, 30 folders (four 0555, some made on the
 * way), links and hardlinks in each, one file too large for a writer:
 * the writer threads (flushing each file and folder) give the tree that
 * tar gives (names, types, modes, sizes, times, bytes, hardlinks), and
 * the same manifest as no writers. */
static void test_pool_tree(void **state)
{
	(void)state;
	const int writers[2] = { -1, 4 };
	pw_manifest m[2] = { { 0 }, { 0 } };
	char ref[PATH_MAX], cmd[PATH_MAX * 5];
	snprintf(ref, sizeof ref, "%s/pool-tar", g_tmp);
	assert_int_equal(mkdir(ref, 0755), 0);
	snprintf(cmd, sizeof cmd, "tar -xzf '%s' -C '%s' && chmod -R u+w '%s'", fixture("pool"), ref, ref);
	assert_int_equal(system(cmd), 0);
	char want[PATH_MAX], got[PATH_MAX];
	snprintf(want, sizeof want, "%s/pool-tar.list", g_tmp);
	snprintf(got, sizeof got, "%s/pool-got.list", g_tmp);
	snprintf(cmd, sizeof cmd, "chmod 0555 '%s'/python/d03 '%s'/python/d10 '%s'/python/d17 '%s'/python/d24",
		 ref, ref, ref, ref);
	assert_int_equal(system(cmd), 0);
	list_tree(ref, want);
	for (int i = 0; i < 2; i++) {
		TPATH(dest, i ? "pool-4" : "pool-none");
		pw_extract_result res;
		/* the writers' run also flushes every file and folder, as runtime install asks */
		pw_extract_opts o = { .archive = fixture("pool"), .dest = dest, .writers = writers[i],
				      .manifest = &m[i], .root = "python", .flush = i == 1 };
		pw_err *e = pw_extract(&o, &res);
		if (e)
			fail_msg("writers %d: %s", writers[i], pw_err_message(e));
		assert_int_equal(res.entries, 1 + 30 * 63 + 2);
		assert_manifest_is_disk(dest, &m[i]);
		list_tree(dest, got);
		snprintf(cmd, sizeof cmd, "diff '%s' '%s' >&2 && diff -r --no-dereference '%s' '%s' >&2", want, got,
			 ref, dest);
		if (system(cmd) != 0)
			fail_msg("writers %d: the tree differs from tar's (diff above)", writers[i]);
		struct stat a, b;
		assert_int_equal(lstat(tpath(i ? "pool-4/python/d29/hard" : "pool-none/python/d29/hard"), &a), 0);
		assert_int_equal(lstat(tpath(i ? "pool-4/python/d29/f001" : "pool-none/python/d29/f001"), &b), 0);
		assert_int_equal(a.st_ino, b.st_ino);
		remove_tree(dest);
	}
	assert_int_equal(m[0].count, m[1].count);
	for (size_t i = 0; i < m[0].count; i++) {
		assert_string_equal(m[0].items[i].path, m[1].items[i].path);
		assert_string_equal(m[0].items[i].sha256, m[1].items[i].sha256);
	}
	pw_manifest_clear(&m[0]);
	pw_manifest_clear(&m[1]);
	remove_tree(ref);
	assert_int_equal(unlink(want), 0);
	assert_int_equal(unlink(got), 0);
	assert_nothing_outside();
}

/* A writer thread that runs out of space (a 6 MiB tmpfs, the space guard
 * off so the kernel's ENOSPC is what stops it) fails the extraction: the
 * reading thread stops early (most of the 16 MB archive is never read),
 * the error says disk full and names the file, and nothing is left on the
 * file system. Root only (it mounts). */
static void test_pool_writer_disk_full(void **state)
{
	(void)state;
	TPATH(mnt, "full");
	assert_int_equal(mkdir(mnt, 0755), 0);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=6m tmpfs '%s' 2>/dev/null", mnt);
	if (geteuid() != 0 || system(cmd) != 0) {
		rmdir(mnt);
		skip();
	}
	TPATH(dest, "full/tree");
	struct stat arc;
	assert_int_equal(stat(fixture("pool_full"), &arc), 0);
	struct chunks c = { fopen(fixture("pool_full"), "rb"), 65536, -1, 0 };
	assert_non_null(c.f);
	pw_extract_result res;
	pw_manifest m = { 0 };
	pw_extract_opts o = { .archive = fixture("pool_full"), .dest = dest, .read = read_chunks, .read_ud = &c,
			      .stream_size = arc.st_size, .min_free = -1, .writers = 3, .manifest = &m };
	pw_err *e = pw_extract(&o, &res);
	fclose(c.f);
	const char *msg = e ? pw_err_message(e) : "extracted";
	bool ok = pw_err_code(e) == PW_ERR_IO && res.disk_full && strstr(msg, "disk full: no space left to write 'python/f") &&
		  strstr(msg, "No space left on device") && pw_err_hint(e) && !tl_exists(dest) && count_dir(mnt) == 0 &&
		  m.count == 0 && res.entries == 0;
	long given = c.given;
	snprintf(cmd, sizeof cmd, "umount '%s'", mnt);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(rmdir(mnt), 0);
	if (!ok)
		fail_msg("%s", msg);
	if (given >= arc.st_size * 3 / 4)
		fail_msg("read %ld of %lld bytes: the reader did not stop when the writer failed", given,
			 (long long)arc.st_size);
	pw_err_free(e);
	assert_nothing_outside();
}

/* --------------------------------------------------------------- callers */

static void test_dest_must_not_exist(void **state)
{
	(void)state;
	TPATH(dest, "exists");
	assert_int_equal(mkdir(dest, 0700), 0);
	tl_write_text(tpath("exists/keep"), "mine\n");
	pw_err *e = extract("ok", dest, NULL);
	assert_int_equal(pw_err_code(e), PW_ERR_IO);
	assert_non_null(strstr(pw_err_message(e), dest));
	pw_err_free(e);
	assert_int_equal(count_dir(dest), 1);
	assert_string_equal(read_text(tpath("exists/keep")), "mine\n");
	remove_tree(dest);
	assert_nothing_outside();
}

static void test_missing_archive(void **state)
{
	(void)state;
	TPATH(dest, "none");
	pw_extract_opts o = { .archive = tpath("no-such.tar.gz"), .dest = dest };
	pw_err *e = pw_extract(&o, NULL);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	pw_err_free(e);
	assert_false(tl_exists(dest));
	e = pw_extract(NULL, NULL);
	assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
	pw_err_free(e);
}

static void test_cancel_before(void **state)
{
	(void)state;
	pw_cancel *c = pw_cancel_new();
	pw_cancel_raise(c);
	TPATH(dest, "cancelled");
	pw_extract_opts o = { .archive = fixture("ok"), .dest = dest, .cancel = c };
	pw_err *e = pw_extract(&o, NULL);
	assert_int_equal(pw_err_code(e), PW_ERR_CANCELLED);
	pw_err_free(e);
	assert_false(tl_exists(dest));
	pw_cancel_free(&c);
	assert_nothing_outside();
}

/* Raised once extraction has started (from the first progress report). */
static void test_cancel_during(void **state)
{
	(void)state;
	pw_cancel *c = pw_cancel_new();
	struct seen seen = { .cancel_on_first = c };
	pw_events ev = { .progress = on_progress, .ud = &seen };
	TPATH(dest, "cancelled");
	pw_extract_opts o = { .archive = fixture("many"), .dest = dest, .cancel = c, .events = &ev };
	pw_err *e = pw_extract(&o, NULL);
	assert_int_equal(pw_err_code(e), PW_ERR_CANCELLED);
	pw_err_free(e);
	assert_true(seen.calls >= 1);
	assert_false(tl_exists(dest));
	pw_cancel_free(&c);
	assert_nothing_outside();
}

static void test_remove_tree_keeps_link_targets(void **state)
{
	(void)state;
	TPATH(keep, "target/keep");
	assert_int_equal(mkdir(tpath("target"), 0755), 0);
	tl_write_text(keep, "keep\n");
	assert_int_equal(mkdir(tpath("rt"), 0755), 0);
	assert_int_equal(mkdir(tpath("rt/a"), 0755), 0);
	assert_int_equal(mkdir(tpath("rt/a/b"), 0755), 0);
	tl_write_text(tpath("rt/a/b/file"), "x\n");
	assert_int_equal(symlink(tpath("target"), tpath("rt/abs")), 0);
	assert_int_equal(symlink("../../target", tpath("rt/a/rel")), 0);
	assert_int_equal(mkdir(tpath("rt/ro"), 0755), 0);
	tl_write_text(tpath("rt/ro/f"), "f\n");
	assert_int_equal(chmod(tpath("rt/ro"), 0555), 0);
	assert_int_equal(mkdir(tpath("rt/closed"), 0000), 0);

	remove_tree(tpath("rt"));
	assert_false(tl_exists(tpath("rt")));
	assert_string_equal(read_text(keep), "keep\n");

	/* the top itself a link: only the link goes */
	assert_int_equal(symlink(tpath("target"), tpath("toplink")), 0);
	remove_tree(tpath("toplink"));
	assert_false(tl_exists(tpath("toplink")));
	assert_string_equal(read_text(keep), "keep\n");

	remove_tree(tpath("gone")); /* absent: fine */
	remove_tree(tpath("target"));
	assert_nothing_outside();
}

/* -------------------------------------------------------------- manifest */

static const char *const ok_files[] = {
	"python/bin/python", "python/bin/python3", "python/bin/suid", "python/include",
	"python/lib/x.py", "python/lib/x_link.py", "python/lib/y.py", "python/share/doc/README",
};

static void test_manifest_build(void **state)
{
	(void)state;
	TPATH(root, "m1");
	extract_ok(root);
	pw_manifest m;
	pw_err *e = pw_manifest_build(root, &m);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(m.count, sizeof ok_files / sizeof ok_files[0]);
	for (size_t i = 0; i < m.count; i++) {
		assert_string_equal(m.items[i].path, ok_files[i]);
		if (i)
			assert_true(strcmp(m.items[i - 1].path, m.items[i].path) < 0);
	}
	assert_int_equal(m.total_bytes, 23 + 5 + 11 + 11 + 6 + 8);

	const pw_manifest_entry *py = &m.items[1], *link = &m.items[0];
	assert_string_equal(py->sha256, SHA_PYTHON3);
	assert_int_equal(py->size, 23);
	assert_true(S_ISREG(py->mode));
	assert_int_equal(py->mode & 07777, 0755);
	assert_true(S_ISLNK(link->mode));
	assert_int_equal(link->size, 7);
	assert_string_equal(link->sha256, SHA_LINK);

	pw_manifest_clear(&m);
	assert_int_equal(m.count, 0);
	assert_null(m.items);
	remove_tree(root);
	assert_nothing_outside();
}

static void test_manifest_compare(void **state)
{
	(void)state;
	TPATH(root, "m2");
	extract_ok(root);
	pw_manifest m;
	pw_manifest_diffs d;
	assert_null(pw_manifest_build(root, &m));
	assert_null(pw_manifest_compare(&m, root, &d));
	assert_int_equal(d.count, 0);
	pw_manifest_diffs_clear(&d);

	tl_write_text(tpath("m2/python/lib/y.py"), "y = 2\n"); /* same size */
	assert_int_equal(chmod(tpath("m2/python/bin/python3"), 0700), 0);
	assert_int_equal(unlink(tpath("m2/python/bin/suid")), 0);
	tl_write_text(tpath("m2/python/new.txt"), "new\n");

	assert_null(pw_manifest_compare(&m, root, &d));
	static const struct {
		pw_manifest_diff_kind kind;
		const char *name, *path;
	} want[] = {
		{ PW_DIFF_MODE, "mode", "python/bin/python3" },
		{ PW_DIFF_MISSING, "missing", "python/bin/suid" },
		{ PW_DIFF_MODIFIED, "modified", "python/lib/y.py" },
		{ PW_DIFF_UNEXPECTED, "unexpected", "python/new.txt" },
	};
	assert_int_equal(d.count, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(d.items[i].kind, want[i].kind);
		assert_string_equal(pw_manifest_diff_name(d.items[i].kind), want[i].name);
		assert_string_equal(d.items[i].path, want[i].path);
	}
	pw_manifest_diffs_clear(&d);
	assert_int_equal(d.count, 0);
	pw_manifest_clear(&m);

	pw_err *e = pw_manifest_compare(&m, tpath("no-such-dir"), &d);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	pw_err_free(e);
	remove_tree(root);
	assert_nothing_outside();
}

/* ------------------------------------------------------------------ main */

/* Run make_hostile.py into g_fx. */
/* make_hostile.py writes the archives into T/fx. */
static int make_fixtures(void)
{
	char script[PATH_MAX];
	if (!tl_top_srcdir()) {
		fprintf(stderr, "# TOP_SRCDIR is not set\n");
		return -1;
	}
	tl_fixture_path(script, sizeof script, "make_hostile.py");
	const char *argv[] = { tl_python(), script, g_fx, NULL };
	if (tl_run(argv) != 0) {
		fprintf(stderr, "# %s %s failed\n", argv[0], script);
		return -1;
	}
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(g_tmp, sizeof g_tmp, "/tmp/pw-extract-test-XXXXXX");
	if (!mkdtemp(g_tmp))
		return -1;
	snprintf(g_fx, sizeof g_fx, "%s/fx", g_tmp);
	snprintf(g_outside, sizeof g_outside, "%s/outside", g_tmp);
	if (mkdir(g_outside, 0755) < 0)
		return -1;
	unlink(ABS_EVIL); /* so that its absence means something */
	return make_fixtures();
}

static int group_teardown(void **state)
{
	(void)state;
	pw_err *e = pw_extract_remove_tree(g_tmp);
	pw_err_free(e);
	return 0;
}

#define HOSTILE(i, label) \
	{ "hostile_" label, test_hostile, NULL, NULL, (void *)&cases[i] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok_archive),
		cmocka_unit_test(test_limit_is_exact),
		cmocka_unit_test(test_entry_limit_is_exact),
		cmocka_unit_test(test_stream_pieces),
		cmocka_unit_test(test_stream_stops),
		cmocka_unit_test(test_stream_bomb),
		cmocka_unit_test(test_plain_tar),
		cmocka_unit_test(test_both_gzip_decoders),
		cmocka_unit_test(test_short_write_fails),
		HOSTILE(0, "abs"),
		HOSTILE(1, "dotdot"),
		HOSTILE(2, "symlink_out"),
		HOSTILE(3, "symlink_abs"),
		HOSTILE(4, "symlink_then_write"),
		HOSTILE(5, "symlink_chain"),
		HOSTILE(6, "hardlink_out"),
		HOSTILE(7, "hardlink_missing"),
		HOSTILE(8, "hardlink_via_link"),
		HOSTILE(9, "duplicate"),
		HOSTILE(10, "duplicate_file"),
		HOSTILE(11, "file_then_child"),
		HOSTILE(12, "file_then_dir"),
		HOSTILE(13, "device"),
		HOSTILE(14, "fifo"),
		HOSTILE(15, "longpath"),
		HOSTILE(16, "longname"),
		HOSTILE(17, "bomb"),
		HOSTILE(18, "many"),
		HOSTILE(19, "notgzip"),
		HOSTILE(20, "truncated"),
		HOSTILE(21, "lying_size"),
		HOSTILE(22, "hardlink_data"),
		HOSTILE(23, "root_climb"),
		HOSTILE(24, "root_marker"),
		HOSTILE(25, "root_deep"),
		HOSTILE(26, "root_outside"),
		HOSTILE(27, "root_not_dir"),
		HOSTILE(28, "root_hardlink"),
		HOSTILE(29, "pool_then_link"),
		cmocka_unit_test(test_root_links_allowed_without_root),
		cmocka_unit_test(test_world_writable_masked),
		cmocka_unit_test(test_space_guard),
		cmocka_unit_test(test_pool_tree),
		cmocka_unit_test(test_pool_writer_disk_full),
		cmocka_unit_test(test_dest_must_not_exist),
		cmocka_unit_test(test_missing_archive),
		cmocka_unit_test(test_cancel_before),
		cmocka_unit_test(test_cancel_during),
		cmocka_unit_test(test_remove_tree_keeps_link_targets),
		cmocka_unit_test(test_manifest_build),
		cmocka_unit_test(test_manifest_compare),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
