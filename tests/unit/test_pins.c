/* Unit tests: the runtime pins table and platform detection. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "digest.h"
#include "pins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H "version\trelease\tplatform\turl\tsha256\tsize\n"
#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define UP PW_PINS_UPSTREAM_PREFIX

static const char good[] =
	"# comment\n" H
	"3.12.9\t20250317\tx86_64-unknown-linux-gnu\t" UP "/20250317/cpython-3.12.9%2B20250317-x86_64-unknown-linux-gnu-install_only.tar.gz\t" SHA_A "\t-\n"
	"\n"
	"3.12.13\t20260414\tx86_64-unknown-linux-gnu\t" UP "/20260414/cpython-3.12.13%2B20260414-x86_64-unknown-linux-gnu-install_only.tar.gz\t" SHA_B "\t31457280\n"
	"3.12.13\t20260414\taarch64-apple-darwin\thttps://example.org/a.tar.gz\t" SHA_A "\t-\n";

static void test_parse_good_table(void **state)
{
	(void)state;
	pw_pins *p = NULL;
	assert_null(pw_pins_parse("t.tsv", good, &p));
	assert_int_equal(pw_pins_count(p), 3);
	const pw_pin *pin = pw_pins_at(p, 1);
	assert_string_equal(pin->version, "3.12.13");
	assert_int_equal(pin->size, 31457280);
	assert_int_equal(pin->line, 5);
	assert_int_equal(pw_pins_at(p, 0)->size, -1);
	assert_null(pw_pins_at(p, 3));
	pw_pins_free(&p);
	assert_null(p);
}

static void test_find_newest_and_exact(void **state)
{
	(void)state;
	pw_pins *p = NULL;
	assert_null(pw_pins_parse("t.tsv", good, &p));
	const pw_pin *pin = NULL;
	assert_null(pw_pins_find(p, "x86_64-unknown-linux-gnu", NULL, &pin));
	assert_string_equal(pin->version, "3.12.13"); /* 13 > 9 numerically */
	assert_null(pw_pins_find(p, "x86_64-unknown-linux-gnu", "3.12.9", &pin));
	assert_string_equal(pin->sha256, SHA_A);
	pw_err *e = pw_pins_find(p, "x86_64-unknown-linux-gnu", "3.11.0", &pin);
	assert_int_equal(pw_err_code(e), PW_ERR_NOTFOUND);
	assert_non_null(strstr(pw_err_message(e), "3.12.9, 3.12.13"));
	pw_err_free(e);
	e = pw_pins_find(p, "riscv64-unknown-linux-gnu", NULL, &pin);
	assert_non_null(strstr(pw_err_message(e), "no pin for riscv64"));
	pw_err_free(e);
	pw_pins_free(&p);
}

static void expect_bad(const char *text, const char *where, const char *what)
{
	pw_pins *p = NULL;
	pw_err *e = pw_pins_parse("bad.tsv", text, &p);
	assert_non_null(e);
	assert_null(p);
	assert_non_null(strstr(pw_err_message(e), where));
	if (what && !strstr(pw_err_message(e), what))
		fail_msg("message '%s' lacks '%s'", pw_err_message(e), what);
	pw_err_free(e);
}

static void test_malformed_tables_name_the_line(void **state)
{
	(void)state;
	expect_bad("", "bad.tsv", "no header");
	expect_bad("version\trelease\tplatform\turl\tsize\tsha256\n", "bad.tsv:1", "header");
	expect_bad(H "3.12.13\t20260414\tx\thttps://e/x\t" SHA_A "\n", "bad.tsv:2", "6 tab-separated");
	expect_bad(H "3.12.13\t20260414\tx\thttps://e/x\tABC\t-\n", "bad.tsv:2", "sha256");
	expect_bad(H "3.12.13\t20260414\tx\thttps://e/x\t" SHA_B "\t12kb\n", "bad.tsv:2", "size");
	expect_bad(H "# c\n3.x\t20260414\tx\thttps://e/x\t" SHA_B "\t-\n", "bad.tsv:3", "version");
	expect_bad(H "3.12.1\t2026-04\tx\thttps://e/x\t" SHA_B "\t-\n", "bad.tsv:2", "release");
	expect_bad(H "3.12.1\t1\tx\tftp://e/x\t" SHA_B "\t-\n", "bad.tsv:2", "url");
	expect_bad(H, "bad.tsv", "no pins");
	expect_bad(H "3.12.1\t1\tx\thttps://e/x\t" SHA_B "\t-\textra\n", "bad.tsv:2", "6 tab-separated");
}

static void test_version_compare(void **state)
{
	(void)state;
	assert_true(pw_pins_version_cmp("3.12.9", "3.12.13") < 0);
	assert_true(pw_pins_version_cmp("3.12.13", "3.12.9") > 0);
	assert_int_equal(pw_pins_version_cmp("3.12.13", "3.12.13"), 0);
	assert_true(pw_pins_version_cmp("3.12", "3.12.1") < 0);
	assert_true(pw_pins_version_cmp("3.13.0", "3.12.99") > 0);
}

static void test_mirror_and_file_name(void **state)
{
	(void)state;
	pw_pins *p = NULL;
	assert_null(pw_pins_parse("t.tsv", good, &p));
	const pw_pin *pin = pw_pins_at(p, 1);
	char *u = pw_pins_url(pin, "https://mirror.example/pbs/");
	assert_string_equal(u, "https://mirror.example/pbs/20260414/cpython-3.12.13%2B20260414-x86_64-unknown-linux-gnu-install_only.tar.gz");
	free(u);
	u = pw_pins_url(pin, NULL);
	assert_string_equal(u, pin->url);
	free(u);
	u = pw_pins_url(pw_pins_at(p, 2), "https://mirror.example");
	assert_string_equal(u, "https://example.org/a.tar.gz"); /* not an upstream URL: unchanged */
	free(u);
	char *n = pw_pins_file_name(pin);
	assert_string_equal(n, "cpython-3.12.13%2B20260414-x86_64-unknown-linux-gnu-install_only.tar.gz");
	free(n);
	pw_pins_free(&p);
}

static void test_shipped_table_is_valid(void **state)
{
	(void)state;
	const char *top = getenv("TOP_SRCDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/data/runtime-pins.tsv", top ? top : ".");
	pw_pins *p = NULL;
	pw_err *e = pw_pins_load(path, &p);
	if (e)
		fail_msg("%s", pw_err_message(e));
	static const char *const platforms[] = {
		"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-apple-darwin",
		"aarch64-apple-darwin", "x86_64-pc-windows-msvc",
	};
	for (size_t i = 0; i < 5; i++) {
		const pw_pin *pin = NULL;
		assert_null(pw_pins_find(p, platforms[i], NULL, &pin));
		assert_string_equal(pin->version, "3.12.13");
		assert_non_null(strstr(pin->url, "install_only.tar.gz"));
	}
	/* The header says which release and which SHA256SUMS each row came
	 * from: upstream's SHA256SUMS of every release in the table. */
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char header[8192] = "", line[1024];
	while (fgets(line, sizeof line, f) && line[0] == '#')
		strncat(header, line, sizeof header - strlen(header) - 1);
	fclose(f);
	for (size_t i = 0; i < pw_pins_count(p); i++) {
		char want[512];
		snprintf(want, sizeof want, "%s/%s/SHA256SUMS", PW_PINS_UPSTREAM_PREFIX, pw_pins_at(p, i)->release);
		if (!strstr(header, want))
			fail_msg("the shipped table's header does not name %s", want);
	}
	assert_non_null(strstr(header, "pyward pins import"));
	pw_pins_free(&p);
}

static void test_platform_detection(void **state)
{
	(void)state;
	char *t = NULL;
	assert_null(pw_platform_detect("Darwin", "arm64", &t));
	assert_string_equal(t, "aarch64-apple-darwin");
	free(t);
	assert_null(pw_platform_detect("Darwin", "x86_64", &t));
	assert_string_equal(t, "x86_64-apple-darwin");
	free(t);
	assert_null(pw_platform_detect("MINGW64_NT-10.0", "x86_64", &t));
	assert_string_equal(t, "x86_64-pc-windows-msvc");
	free(t);
	pw_err *e = pw_platform_detect("Linux", "riscv64", &t);
	assert_int_equal(pw_err_code(e), PW_ERR_REFUSED);
	assert_non_null(strstr(pw_err_message(e), "supported: x86_64-unknown-linux-gnu"));
	pw_err_free(e);
	e = pw_platform_detect("FreeBSD", "amd64", &t);
	assert_non_null(e);
	pw_err_free(e);
	assert_null(pw_platform_detect(NULL, NULL, &t)); /* this machine (glibc Linux) */
	assert_non_null(strstr(t, "-unknown-linux-gnu"));
	free(t);
}


#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"
#define H3 "3333333333333333333333333333333333333333333333333333333333333333"

/* A SHA256SUMS in upstream's form: only the install_only .tar.gz archives
 * of supported platforms of the release become pins; sizes from a listing;
 * the result is a table the parser takes; a bad line names its number. */
static void test_import_sha256sums(void **state)
{
	(void)state;
	const char *sums =
		H1 "  cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-install_only.tar.gz\n"
		H2 "  cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-install_only_stripped.tar.gz\n"
		H2 "  cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-debug-full.tar.zst\n"
		H2 "  cpython-3.12.13+20260414-i686-unknown-linux-gnu-install_only.tar.gz\n"
		H3 "  cpython-3.13.5+20260414-aarch64-apple-darwin-install_only.tar.gz\n"
		H3 "  cpython-3.12.13+20250101-aarch64-apple-darwin-install_only.tar.gz\n";
	const char *sizes = "31000000 cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-install_only.tar.gz\n";
	pw_pins_import_opts o = { .sums_name = "SHA256SUMS", .release = "20260414", .sizes_name = "sizes.txt",
				  .sizes = sizes };
	char *tsv = NULL;
	size_t n = 0;
	pw_err *e = pw_pins_import(sums, &o, &tsv, &n);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(n, 2);
	assert_non_null(strstr(tsv, "release 20260414, from SHA256SUMS"));
	assert_non_null(strstr(tsv, "3.12.13\t20260414\tx86_64-unknown-linux-gnu\t" PW_PINS_UPSTREAM_PREFIX
				    "/20260414/cpython-3.12.13%2B20260414-x86_64-unknown-linux-gnu-install_only.tar.gz\t" H1
				    "\t31000000\n"));
	assert_non_null(strstr(tsv, "\t" H3 "\t-\n"));
	pw_pins *p = NULL;
	assert_null(pw_pins_parse("imported", tsv, &p));
	assert_int_equal(pw_pins_count(p), 2);
	pw_pins_free(&p);
	free(tsv);

	o.version = "3.13.5";
	o.base_url = "https://mirror.example/pbs";
	assert_null(pw_pins_import(sums, &o, &tsv, &n));
	assert_int_equal(n, 1);
	assert_non_null(strstr(tsv, "https://mirror.example/pbs/20260414/cpython-3.13.5%2B20260414-aarch64"));
	free(tsv);

	e = pw_pins_import(H1 "  ok-name.tar.gz\nnot a checksum line\n", &o, &tsv, &n);
	assert_int_equal(pw_err_code(e), PW_ERR_USAGE);
	assert_non_null(strstr(pw_err_message(e), "SHA256SUMS:2:"));
	pw_err_free(e);
	assert_null(tsv);
}

/* Sizes from a folder of archives, each hashed against its line first. */
static void test_import_local_archives(void **state)
{
	(void)state;
	char dir[] = "/tmp/pyward-pins-XXXXXX";
	assert_non_null(mkdtemp(dir));
	static const char name[] = "cpython-3.12.13+20260414-x86_64-unknown-linux-gnu-install_only.tar.gz";
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("seven b", f);
	fclose(f);
	char hex[PW_SHA256_HEX_LEN + 1];
	int64_t n = 0;
	assert_null(pw_sha256_file(path, hex, &n));
	char sums[1024];
	snprintf(sums, sizeof sums, "%s  %s\n" SHA_A "  cpython-3.12.13+20260414-aarch64-apple-darwin-install_only.tar.gz\n",
		 hex, name);
	pw_pins_import_opts o = { .sums_name = "SUMS", .release = "20260414", .archives_dir = dir,
				  .sums_sha256 = SHA_B };
	char *tsv = NULL;
	size_t count = 0;
	pw_err *e = pw_pins_import(sums, &o, &tsv, &count);
	if (e)
		fail_msg("%s", pw_err_message(e));
	assert_int_equal(count, 2);
	assert_non_null(strstr(tsv, hex));
	assert_non_null(strstr(tsv, "\t7\n"));       /* the local file's size */
	assert_non_null(strstr(tsv, SHA_A "\t-\n")); /* no local file: unknown */
	assert_non_null(strstr(tsv, "that SHA256SUMS has sha256 " SHA_B " (upstream publishes it as " UP
				    "/20260414/SHA256SUMS)"));
	assert_non_null(strstr(tsv, "sizes from the archives in"));
	free(tsv);
	/* another file under that name: refused, nothing made */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("tampered", f);
	fclose(f);
	e = pw_pins_import(sums, &o, &tsv, &count);
	assert_int_equal(pw_err_code(e), PW_ERR_FAILED);
	assert_non_null(strstr(pw_err_message(e), "but SUMS:1 lists"));
	assert_null(tsv);
	pw_err_free(e);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good_table),
		cmocka_unit_test(test_find_newest_and_exact),
		cmocka_unit_test(test_malformed_tables_name_the_line),
		cmocka_unit_test(test_version_compare),
		cmocka_unit_test(test_mirror_and_file_name),
		cmocka_unit_test(test_import_sha256sums),
		cmocka_unit_test(test_import_local_archives),
		cmocka_unit_test(test_shipped_table_is_valid),
		cmocka_unit_test(test_platform_detection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
