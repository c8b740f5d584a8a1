/* Unit tests: dist-info reading, package differences, PEP 440 order,
 * RECORD lines and checks, and package changes in a real catalog file. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "catalog.h"
#include "distinfo.h"
#include "pkgdb.h"
#include "pkgdiff.h"
#include "pkgname.h"
#include "recordcheck.h"
#include "testlib.h"
#include "undo.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_version_order(void **state)
{
	(void)state;
	static const char *const ascending[] = {
		"0.9", "1.0.dev1", "1.0a1", "1.0a2.dev0", "1.0a2", "1.0b1", "1.0rc1", "1.0", "1.0+local",
		"1.0.post1", "1.0.1", "1.1", "1.10", "2!0.1",
	};
	size_t n = sizeof ascending / sizeof ascending[0];
	for (size_t i = 0; i + 1 < n; i++) {
		assert_true(pw_version_cmp(ascending[i], ascending[i + 1]) < 0);
		assert_true(pw_version_cmp(ascending[i + 1], ascending[i]) > 0);
	}
	assert_int_equal(pw_version_cmp("1.0", "1.0.0"), 0);
	assert_int_equal(pw_version_cmp("1.0c1", "1.0rc1"), 0);
	assert_int_equal(pw_version_cmp("1.0-1", "1.0.post1"), 0);
	assert_true(pw_version_cmp("banana", "1.0") < 0); /* not PEP 440: before those that are */
}

static void test_key(void **state)
{
	(void)state;
	static const char *const table[][2] = {
		{ "Foo__Bar.-baz", "foo-bar-baz" },
		{ "pwtest_alpha", "pwtest-alpha" },
		{ "PWTest-Alpha", "pwtest-alpha" },
		{ "a..b__c--d", "a-b-c-d" },
		{ "A-_.-B", "a-b" },
		{ "already-normal", "already-normal" },
		{ "zope.interface", "zope-interface" },
		{ "x.", "x-" },     /* as packaging's canonicalize_name: ends are kept */
		{ "_lead", "-lead" },
		{ "--", "-" },
		{ "", "" },
		{ "\xc3\x89" "COLE", "\xc3\x89" "cole" }, /* only ASCII is lowered */
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		char *got = pw_pkgname_key(table[i][0]);
		if (strcmp(got, table[i][1]) != 0)
			fail_msg("key(\"%s\"): expected \"%s\", got \"%s\"", table[i][0], table[i][1], got);
		free(got);
	}
	assert_null(pw_pkgname_key(NULL));
	/* the length form keys only the bytes it is given and says how long the key is */
	char out[16];
	assert_int_equal(pw_pkgname_key_to("Foo..Bar-1.0", 8, out), 7);
	assert_string_equal(out, "foo-bar");
}

/* site/NAME-VERSION.dist-info with METADATA (and INSTALLER, direct_url.json when given). */
static void make_dist(const char *site, const char *name, const char *version, const char *installer,
		      const char *direct_url)
{
	char dir[PATH_MAX], text[512];
	tl_textf(dir, sizeof dir, "%s/%s-%s.dist-info", site, name, version);
	assert_int_equal(mkdir(dir, 0755), 0);
	tl_textf(text, sizeof text, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nName: not-this\n", name, version);
	tl_write_text(tl_path(dir, "METADATA"), text);
	tl_write_text(tl_path(dir, "RECORD"), "");
	if (installer)
		tl_write_text(tl_path(dir, "INSTALLER"), installer);
	if (direct_url)
		tl_write_text(tl_path(dir, "direct_url.json"), direct_url);
}

static void make_env(char *root, size_t n, char *site, size_t sn)
{
	assert_int_equal(tl_make_temp_dir(root, n, "pkgaudit"), 0);
	tl_textf(site, sn, "%s/lib", root);
	assert_int_equal(mkdir(site, 0755), 0);
	tl_textf(site, sn, "%s/lib/python3.11", root);
	assert_int_equal(mkdir(site, 0755), 0);
	tl_textf(site, sn, "%s/lib/python3.11/site-packages", root);
	assert_int_equal(mkdir(site, 0755), 0);
}

static void test_read_and_diff(void **state)
{
	(void)state;
	char root[PATH_MAX], site[PATH_MAX], dir[PATH_MAX];
	make_env(root, sizeof root, site, sizeof site);
	make_dist(site, "Alpha_Pkg", "1.0", "pip\n", NULL);
	make_dist(site, "beta", "2.0", "pip", "{\"url\": \"file:///src/beta\", \"dir_info\": {\"editable\": true}}");
	make_dist(site, "gamma", "3.0", NULL, NULL);
	make_dist(site, "same", "1.0", "pip", NULL);
	tl_textf(dir, sizeof dir, "%s/broken-1.0.dist-info", site);
	assert_int_equal(mkdir(dir, 0755), 0); /* no METADATA: skipped */

	pw_distset before = { 0 }, after = { 0 };
	assert_null(pw_distinfo_read(root, &before));
	assert_int_equal(before.count, 4);
	const pw_dist *a = pw_distset_find(&before, "alpha-pkg");
	assert_non_null(a);
	assert_string_equal(a->name, "Alpha_Pkg");
	assert_string_equal(a->installer, "pip");
	const pw_dist *b = pw_distset_find(&before, "BETA");
	assert_string_equal(b->source, "editable file:///src/beta");
	assert_null(pw_distset_find(&before, "broken"));

	tl_sleep_ms(30); /* past the kernel's coarse timestamps: "same" gets a new change time */
	/* upgrade alpha, downgrade beta, remove gamma, install delta, reinstall same */
	tl_remove_tree(tl_path(site, "Alpha_Pkg-1.0.dist-info"));
	make_dist(site, "Alpha_Pkg", "1.1", "pip", NULL);
	tl_remove_tree(tl_path(site, "beta-2.0.dist-info"));
	make_dist(site, "beta", "1.9", "pip", NULL);
	tl_remove_tree(tl_path(site, "gamma-3.0.dist-info"));
	make_dist(site, "delta", "0.1", "pip", NULL);
	tl_remove_tree(tl_path(site, "same-1.0.dist-info"));
	make_dist(site, "same", "1.0", "pip", NULL);
	assert_null(pw_distinfo_read(root, &after));

	pw_pkg_changes ch = { 0 };
	pw_pkgdiff(&before, &after, &ch);
	assert_int_equal(ch.count, 5);
	const char *expect[][3] = {
		{ "upgraded", "1.0", "1.1" }, { "downgraded", "2.0", "1.9" }, { "installed", NULL, "0.1" },
		{ "removed", "3.0", NULL }, { "reinstalled", "1.0", "1.0" },
	};
	for (size_t i = 0; i < ch.count; i++) {
		assert_string_equal(pw_pkg_action_name(ch.items[i].action), expect[i][0]);
		if (expect[i][1])
			assert_string_equal(ch.items[i].old_version, expect[i][1]);
		else
			assert_null(ch.items[i].old_version);
		if (expect[i][2])
			assert_string_equal(ch.items[i].new_version, expect[i][2]);
		else
			assert_null(ch.items[i].new_version);
	}

	/* Recorded in a real catalog file and read back; the later-change query. */
	pw_catalog *c = NULL;
	assert_null(pw_catalog_open(tl_path(root, "catalog.sqlite3"), PW_CATALOG_READ_WRITE, &c));
	pw_op_start os = { .kind = "venv.install", .target = root, .args = "test" };
	int64_t op1 = 0, op2 = 0;
	assert_null(pw_catalog_op_begin(c, &os, &op1));
	assert_null(pw_pkgdb_record(c, op1, root, &ch));
	assert_null(pw_catalog_op_finish(c, op1, PW_OUTCOME_OK, NULL));
	assert_null(pw_catalog_op_begin(c, &os, &op2));
	pw_pkg_changes later = { 0 };
	pw_pkg_changes_add(&later, PW_PKG_UPGRADED, "ALPHA.pkg", "1.1", "1.2", "pip", NULL);
	assert_null(pw_pkgdb_record(c, op2, root, &later));
	assert_null(pw_catalog_op_finish(c, op2, PW_OUTCOME_OK, NULL));

	char *env = NULL;
	pw_pkg_changes back = { 0 };
	assert_null(pw_pkgdb_changes(c, op1, &env, &back));
	assert_string_equal(env, root);
	assert_int_equal(back.count, 5);
	int64_t *ids = NULL;
	size_t nids = 0;
	assert_null(pw_pkgdb_later(c, op1, root, &back, &ids, &nids));
	assert_int_equal(nids, 1);
	assert_int_equal(ids[0], op2);
	free(ids);
	assert_null(pw_pkgdb_later(c, op1, "/elsewhere", &back, &ids, &nids));
	assert_int_equal(nids, 0);
	free(ids);

	pw_op_filter f = { .package = "alpha_pkg", .limit = -1 };
	pw_op_list l = { 0 };
	assert_null(pw_catalog_ops_query(c, &f, &l));
	assert_int_equal(l.count, 2);
	assert_int_equal(l.items[0].id, op2); /* newest first */
	pw_op_list_clear(&l);
	f.package = "nothing-like-it";
	assert_null(pw_catalog_ops_query(c, &f, &l));
	assert_int_equal(l.count, 0);
	pw_catalog_close(&c);

	/* A read-only reader of the same file sees the same. */
	assert_null(pw_catalog_open(tl_path(root, "catalog.sqlite3"), PW_CATALOG_READ_ONLY, &c));
	pw_pkg_changes ro = { 0 };
	assert_null(pw_pkgdb_changes(c, op2, NULL, &ro));
	assert_int_equal(ro.count, 1);
	assert_string_equal(ro.items[0].name, "ALPHA.pkg");
	pw_pkg_changes_clear(&ro);
	pw_catalog_close(&c);

	free(env);
	pw_pkg_changes_clear(&back);
	pw_pkg_changes_clear(&later);
	pw_pkg_changes_clear(&ch);
	pw_distset_clear(&before);
	pw_distset_clear(&after);
	tl_remove_tree(root);
}

/* What a hostile or odd site-packages holds is read safely: a FIFO under a
 * file's name reads as empty (the read used to block on it for ever), a
 * symlinked dist-info folder or file is not followed, Name and Version
 * after a long header block are found, and hundreds of long names (more
 * strings than one of the set's chunks holds) all come back intact. */
static void hang_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "the dist-info read hung on a FIFO\n";
	(void)!write(2, msg, sizeof msg - 1);
	_exit(1);
}

static void test_read_hostile_and_large(void **state)
{
	(void)state;
	char root[PATH_MAX], site[PATH_MAX], dir[PATH_MAX], outside[PATH_MAX], name[300];
	make_env(root, sizeof root, site, sizeof site);
	make_dist(site, "fifo-installer", "1.0", NULL, NULL);
	tl_textf(dir, sizeof dir, "%s/fifo-installer-1.0.dist-info", site);
	assert_int_equal(mkfifo(tl_path(dir, "INSTALLER"), 0600), 0);
	assert_int_equal(mkfifo(tl_path(dir, "direct_url.json"), 0600), 0);
	tl_textf(dir, sizeof dir, "%s/fifo-meta-1.0.dist-info", site);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkfifo(tl_path(dir, "METADATA"), 0600), 0);

	/* a dist-info folder that is a link to one outside, and a linked INSTALLER */
	tl_textf(outside, sizeof outside, "%s/outside", root);
	assert_int_equal(mkdir(outside, 0755), 0);
	make_dist(outside, "elsewhere", "9.9", "evil", NULL);
	tl_textf(dir, sizeof dir, "%s/elsewhere-9.9.dist-info", outside);
	assert_int_equal(symlink(dir, tl_path(site, "elsewhere-9.9.dist-info")), 0);
	make_dist(site, "linked-installer", "1.0", NULL, NULL);
	tl_textf(dir, sizeof dir, "%s/linked-installer-1.0.dist-info", site);
	assert_int_equal(symlink(tl_path(outside, "elsewhere-9.9.dist-info/INSTALLER"), tl_path(dir, "INSTALLER")), 0);

	/* Name and Version after 6 KiB of other headers */
	tl_textf(dir, sizeof dir, "%s/late-1.0.dist-info", site);
	assert_int_equal(mkdir(dir, 0755), 0);
	size_t cap = 8192, len = 0;
	char *meta = malloc(cap);
	len += (size_t)snprintf(meta, cap, "Metadata-Version: 2.1\n");
	while (len < 6144)
		len += (size_t)snprintf(meta + len, cap - len, "Classifier: Programming Language :: Python :: 3\n");
	snprintf(meta + len, cap - len, "Name: Late\nVersion: 1.0\n\nbody\n");
	tl_write_text(tl_path(dir, "METADATA"), meta);
	free(meta);

	/* 300 names of 200 characters each: more strings than one chunk holds */
	for (int i = 0; i < 300; i++) {
		int n = snprintf(name, sizeof name, "long%03d_", i);
		memset(name + n, 'x', 200 - (size_t)n);
		name[200] = '\0';
		make_dist(site, name, "2.0", "pip", i % 3 ? NULL : "{\"url\": \"https://example.invalid/a.whl\"}");
	}

	signal(SIGALRM, hang_alarm);
	alarm(20);
	pw_distset set = { 0 };
	assert_null(pw_distinfo_read(root, &set));
	alarm(0);
	assert_int_equal(set.count, 300 + 3); /* fifo-installer, linked-installer, late */
	const pw_dist *d = pw_distset_find(&set, "fifo-installer");
	assert_non_null(d);
	assert_null(d->installer);
	assert_null(d->source);
	assert_null(pw_distset_find(&set, "fifo-meta"));
	assert_null(pw_distset_find(&set, "elsewhere"));
	d = pw_distset_find(&set, "linked-installer");
	assert_non_null(d);
	assert_null(d->installer); /* not "evil" */
	d = pw_distset_find(&set, "LATE");
	assert_non_null(d);
	assert_string_equal(d->version, "1.0");
	for (int i = 0; i < 300; i++) {
		int n = snprintf(name, sizeof name, "long%03d_", i);
		memset(name + n, 'x', 200 - (size_t)n);
		name[200] = '\0';
		d = pw_distset_find(&set, name);
		if (!d || strcmp(d->name, name) != 0 || strcmp(d->version, "2.0") != 0 || strcmp(d->installer, "pip") != 0)
			fail_msg("distribution %d did not come back intact", i);
		if (i % 3 == 0 ? !d->source || strcmp(d->source, "https://example.invalid/a.whl") != 0 : d->source != NULL)
			fail_msg("distribution %d: wrong source", i);
		assert_int_equal(strncmp(d->key, "long", 4), 0);
	}
	pw_distset_clear(&set);
	tl_remove_tree(root);
}

/* The read after an operation takes unchanged distributions from the read
 * before it (same folder, same METADATA file and change time) and reads
 * every other one: the changes come out as a full read gives them. */
static void test_reread(void **state)
{
	(void)state;
	char root[PATH_MAX], site[PATH_MAX], dir[PATH_MAX];
	make_env(root, sizeof root, site, sizeof site);
	make_dist(site, "up", "1.0", "pip", NULL);
	make_dist(site, "again", "1.0", "pip", NULL);
	make_dist(site, "kept", "1.0", "pip", "{\"url\": \"file:///src/kept\"}");
	make_dist(site, "gone", "1.0", "pip", NULL);
	pw_distset before = { 0 }, after = { 0 }, full = { 0 };
	assert_null(pw_distinfo_read(root, &before));
	assert_int_equal(before.count, 4);
	/* a reinstall is told by METADATA's inode and change time: let the
	 * clock tick past the kernel's coarse timestamps, as pip's run does */
	tl_sleep_ms(30);

	tl_remove_tree(tl_path(site, "up-1.0.dist-info"));
	make_dist(site, "up", "1.1", "pip", NULL);
	tl_remove_tree(tl_path(site, "again-1.0.dist-info"));
	make_dist(site, "again", "1.0", "uv", NULL);
	tl_remove_tree(tl_path(site, "gone-1.0.dist-info"));
	make_dist(site, "new", "0.1", "pip", NULL);
	/* kept's INSTALLER swapped for a FIFO behind pip's back: a read that
	 * opened it would find nothing there; METADATA is untouched */
	tl_textf(dir, sizeof dir, "%s/kept-1.0.dist-info", site);
	assert_int_equal(unlink(tl_path(dir, "INSTALLER")), 0);
	assert_int_equal(mkfifo(tl_path(dir, "INSTALLER"), 0600), 0);

	assert_null(pw_distinfo_reread(root, &before, &after));
	assert_null(pw_distinfo_read(root, &full));
	assert_int_equal(after.count, 4);
	const pw_dist *k = pw_distset_find(&after, "kept");
	assert_non_null(k);
	assert_string_equal(k->installer, "pip"); /* taken from before: not opened again */
	assert_string_equal(k->source, "file:///src/kept");
	assert_int_equal(k->stamp, pw_distset_find(&before, "kept")->stamp);
	assert_null(pw_distset_find(&full, "kept")->installer); /* a full read opens it */

	pw_pkg_changes ch = { 0 };
	pw_pkgdiff(&before, &after, &ch);
	static const struct { const char *name, *action, *version; } want[] = {
		{ "again", "reinstalled", "1.0" }, { "gone", "removed", NULL }, { "new", "installed", "0.1" },
		{ "up", "upgraded", "1.1" },
	};
	assert_int_equal(ch.count, 4);
	for (size_t i = 0; i < ch.count; i++) {
		assert_string_equal(ch.items[i].name, want[i].name);
		assert_string_equal(pw_pkg_action_name(ch.items[i].action), want[i].action);
		if (want[i].version)
			assert_string_equal(ch.items[i].new_version, want[i].version);
	}
	pw_pkg_changes_clear(&ch);
	assert_string_equal(pw_distset_find(&after, "again")->installer, "uv");

	/* the environment gone: nothing installed, as a full read says */
	pw_distset none = { 0 };
	tl_remove_tree(root);
	assert_null(pw_distinfo_reread(root, &after, &none));
	assert_int_equal(none.count, 0);
	pw_distset_clear(&none);
	pw_distset_clear(&before);
	pw_distset_clear(&after);
	pw_distset_clear(&full);
}

static void test_record_line(void **state)
{
	(void)state;
	pw_record_line l;
	const char a[] = "pkg/__init__.py,sha256=abc,12\n";
	assert_true(pw_record_parse_line(a, strlen(a), &l));
	assert_string_equal(l.path, "pkg/__init__.py");
	assert_string_equal(l.hash, "sha256=abc");
	assert_int_equal(l.size, 12);
	pw_record_line_clear(&l);
	const char b[] = "\"odd, name.py\",,\r\n";
	assert_true(pw_record_parse_line(b, strlen(b), &l));
	assert_string_equal(l.path, "odd, name.py");
	assert_string_equal(l.hash, "");
	assert_int_equal(l.size, -1);
	pw_record_line_clear(&l);
	const char c[] = "x.py,sha256=abc,notanumber";
	assert_false(pw_record_parse_line(c, strlen(c), &l));
	assert_false(pw_record_parse_line("", 0, &l));
}

/* sha256 of "hello\n" as RECORD writes it */
#define HELLO_HASH "sha256=WJG1tSLV3whtD_CxEPvZ0hu0_HFjrzTQgoai6Eb2vgM"

static void test_record_check(void **state)
{
	(void)state;
	char root[PATH_MAX], site[PATH_MAX], pkg[PATH_MAX], rec[2048];
	make_env(root, sizeof root, site, sizeof site);
	make_dist(site, "pkg", "1.0", "pip", NULL);
	tl_textf(pkg, sizeof pkg, "%s/pkg", site);
	assert_int_equal(mkdir(pkg, 0755), 0);
	assert_int_equal(mkdir(tl_path(pkg, "__pycache__"), 0755), 0);
	tl_write_text(tl_path(pkg, "a.py"), "hello\n");
	tl_write_text(tl_path(pkg, "b.py"), "hello\n");
	tl_write_text(tl_path(pkg, "c.py"), "hellO\n");
	tl_write_text(tl_path(pkg, "stray.py"), "x");
	tl_write_text(tl_path(pkg, "__pycache__/a.cpython-311.pyc"), "x");
	tl_textf(rec, sizeof rec,
		 "pkg/a.py," HELLO_HASH ",6\n"
		 "pkg/b.py," HELLO_HASH ",7\n"
		 "pkg/c.py," HELLO_HASH ",6\n"
		 "pkg/gone.py," HELLO_HASH ",6\n"
		 "pkg/nohash.py,,\n"
		 "../../../../../../../../etc/passwd," HELLO_HASH ",6\n"
		 "pkg-1.0.dist-info/METADATA,,\n"
		 "pkg-1.0.dist-info/INSTALLER,,\n"
		 "pkg-1.0.dist-info/RECORD,,\n");
	tl_write_text(tl_path(pkg, "nohash.py"), "anything");
	tl_write_text(tl_path(site, "pkg-1.0.dist-info/RECORD"), rec);

	pw_rc_report r = { 0 };
	assert_null(pw_record_check(root, &r));
	assert_int_equal(r.count, 1);
	const pw_rc_dist *d = &r.dists[0];
	assert_int_equal(d->modified, 2);   /* b.py by size, c.py by digest */
	assert_int_equal(d->missing, 1);    /* gone.py */
	assert_int_equal(d->unexpected, 1); /* stray.py; the bytecode cache is not */
	assert_int_equal(d->unchecked, 5);  /* nohash.py, METADATA, INSTALLER, RECORD, outside the env */
	assert_int_equal(d->checked, 3);
	for (size_t i = 0; i < d->count; i++) {
		const pw_rc_file *f = &d->files[i];
		if (strstr(f->path, "/pkg/b.py"))
			assert_string_equal(f->rpm_flags, "S...?????");
		if (strstr(f->path, "/pkg/c.py"))
			assert_string_equal(f->rpm_flags, "..5.?????");
		if (strstr(f->path, "stray"))
			assert_int_equal(f->kind, PW_RC_UNEXPECTED);
		if (strstr(f->path, "passwd"))
			assert_int_equal(f->kind, PW_RC_UNCHECKED);
	}
	pw_rc_report_clear(&r);
	tl_remove_tree(root);
}

static void test_apt_lines_and_undo_plan(void **state)
{
	(void)state;
	pw_pkg_changes ch = { 0 };
	pw_pkg_changes_add(&ch, PW_PKG_INSTALLED, "a", NULL, "1.0", "pip", NULL);
	pw_pkg_changes_add(&ch, PW_PKG_UPGRADED, "b", "1.0", "1.1", "pip", NULL);
	pw_pkg_changes_add(&ch, PW_PKG_REMOVED, "c", "2.0", NULL, "pip", NULL);
	pw_pkg_changes_add(&ch, PW_PKG_INSTALLED, "d", NULL, "0.1", "pip", NULL);
	pw_pkg_changes_add(&ch, PW_PKG_REINSTALLED, "e", "3.0", "3.0", "pip", NULL);
	char **lines = NULL;
	size_t n = pw_pkg_changes_apt_lines(&ch, &lines);
	assert_int_equal(n, 4);
	assert_string_equal(lines[0], "Install: a (1.0), d (0.1)");
	assert_string_equal(lines[1], "Upgrade: b (1.0 -> 1.1)");
	assert_string_equal(lines[2], "Reinstall: e (3.0)");
	assert_string_equal(lines[3], "Remove: c (2.0)");
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);

	/* now: a as left, b moved on to 1.2 since, c back again, d gone, e as left */
	pw_distset now = { 0 };
	now.items = calloc(4, sizeof *now.items);
	const char *names[][2] = { { "a", "1.0" }, { "b", "1.2" }, { "c", "2.0" }, { "e", "3.0" } };
	for (int i = 0; i < 4; i++) {
		now.items[i].name = strdup(names[i][0]);
		now.items[i].key = strdup(names[i][0]);
		now.items[i].version = strdup(names[i][1]);
		now.items[i].info_dir = strdup("x");
	}
	now.count = 4;
	pw_undo_plan p;
	pw_undo_plan_make(&ch, &now, &p);
	assert_int_equal(p.count, 3); /* uninstall a; install b==1.0, c==2.0 (d is gone already) */
	assert_int_equal(p.items[0].kind, PW_UNDO_UNINSTALL);
	assert_string_equal(p.items[0].name, "a");
	size_t k = 0;
	char **specs = pw_undo_specs(&p, PW_UNDO_INSTALL, &k);
	assert_int_equal(k, 2);
	assert_string_equal(specs[0], "b==1.0");
	assert_string_equal(specs[1], "c==2.0");
	for (size_t i = 0; i < k; i++)
		free(specs[i]);
	free(specs);
	assert_int_equal(p.reinstalled, 1);
	assert_int_equal(p.drift_count, 3); /* b, c and d are not as the operation left them */
	assert_non_null(strstr(p.drift[0], "b: the operation left 1.1, now 1.2"));
	pw_undo_plan_clear(&p);
	for (int i = 0; i < 4; i++) { /* made here, not by a read: the set's clear does not own them */
		free(now.items[i].name);
		free(now.items[i].key);
		free(now.items[i].version);
		free(now.items[i].info_dir);
	}
	pw_distset_clear(&now);
	pw_pkg_changes_clear(&ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_order),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_read_and_diff),
		cmocka_unit_test(test_read_hostile_and_large),
		cmocka_unit_test(test_reread),
		cmocka_unit_test(test_record_line),
		cmocka_unit_test(test_record_check),
		cmocka_unit_test(test_apt_lines_and_undo_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
