/* libcurl and libarchive are loaded on first use: the binary does not map
 * them until asked, a missing library is an error naming it, and the
 * forwarding definitions pass every argument kind through unchanged. */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <archive.h>
#include "libload.h"
#include "testlib.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when a file whose name starts with prefix is mapped in this process. */
static bool mapped(const char *prefix)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		const char *slash = strrchr(line, '/');
		found = slash && strncmp(slash + 1, prefix, strlen(prefix)) == 0;
	}
	fclose(f);
	return found;
}

/* Must run first: nothing before it has asked for either library. */
static void test_not_mapped_until_asked(void **state)
{
	(void)state;
	assert_true(mapped("libcmocka.so")); /* linked: the check can see a library */
	assert_false(mapped("libcurl.so"));
	assert_false(mapped("libarchive.so"));
	pw_err *e = pw_libarchive_ready();
	assert_null(e);
	assert_true(mapped("libarchive.so"));
	assert_false(mapped("libcurl.so"));
	e = pw_libcurl_ready();
	assert_null(e);
	assert_true(mapped("libcurl.so"));
}

static void test_missing_library_is_named(void **state)
{
	(void)state;
	char *why = NULL;
	assert_null(pw_lib_open("libpyward-no-such-library.so.9", &why));
	assert_non_null(why);
	assert_non_null(strstr(why, "libpyward-no-such-library.so.9"));
	pw_err *e = pw_lib_error("libpyward-no-such-library.so.9", why);
	assert_non_null(strstr(pw_err_message(e), "cannot load libpyward-no-such-library.so.9"));
	assert_non_null(pw_err_hint(e));
	pw_err_free(e);
	free(why);
	char *lack = pw_lib_missing_symbol("curl_new_thing");
	assert_non_null(strstr(lack, "curl_new_thing"));
	free(lack);
}

struct sink {
	size_t bytes;
	int calls;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	(void)p;
	struct sink *s = ud;
	s->bytes += size * n;
	s->calls++;
	return size * n;
}

/* A long, a string, a function, a pointer and a curl_off_t option, and
 * answers through long and curl_off_t pointers, on a file:// transfer. */
static void test_curl_arguments_pass_through(void **state)
{
	(void)state;
	assert_null(pw_libcurl_ready());
	char dir[4096], url[8192];
	assert_int_equal(tl_make_temp_dir(dir, sizeof dir, "libload"), 0);
	char *text = malloc(5000);
	memset(text, 'x', 4999);
	text[4999] = '\0';
	const char *file = tl_path(dir, "body.txt");
	tl_write_text(file, text);
	free(text);
	snprintf(url, sizeof url, "file://%s", file);

	struct sink s = { 0 };
	CURL *c = curl_easy_init();
	assert_non_null(c);
	assert_int_equal(curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L), CURLE_OK);
	assert_int_equal(curl_easy_setopt(c, CURLOPT_URL, url), CURLE_OK);
	assert_int_equal(curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body), CURLE_OK);
	assert_int_equal(curl_easy_setopt(c, CURLOPT_WRITEDATA, &s), CURLE_OK);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	assert_int_equal(s.bytes, 4999);
	assert_true(s.calls >= 1);
	curl_off_t got = -1;
	assert_int_equal(curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &got), CURLE_OK);
	assert_int_equal(got, 4999);

	/* An off_t offset: the transfer resumes at byte 4000. */
	s.bytes = 0;
	assert_int_equal(curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)4000), CURLE_OK);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	assert_int_equal(s.bytes, 999);
	long code = -1;
	assert_int_equal(curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), CURLE_OK);
	assert_int_equal(code, 0); /* file:// has no status */
	assert_non_null(strstr(curl_easy_strerror(CURLE_FILESIZE_EXCEEDED), "size"));
	curl_easy_cleanup(c);

	CURLU *u = curl_url();
	assert_int_equal(curl_url_set(u, CURLUPART_URL, "https://localhost:8443/a/b?c=d", 0), CURLUE_OK);
	char *host = NULL;
	assert_int_equal(curl_url_get(u, CURLUPART_HOST, &host, 0), CURLUE_OK);
	assert_string_equal(host, "localhost");
	curl_free(host);
	curl_url_cleanup(u);
	tl_remove_tree(dir);
}

/* archive_set_error is variadic: the message is formatted before it is handed on. */
static void test_archive_error_formats(void **state)
{
	(void)state;
	assert_null(pw_libarchive_ready());
	struct archive *a = archive_read_new();
	assert_non_null(a);
	archive_set_error(a, 42, "entry %d of %s", 7, "x.tar");
	assert_string_equal(archive_error_string(a), "entry 7 of x.tar");
	assert_int_equal(archive_errno(a), 42);
	assert_int_equal(archive_read_free(a), ARCHIVE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_mapped_until_asked),
		cmocka_unit_test(test_missing_library_is_named),
		cmocka_unit_test(test_curl_arguments_pass_through),
		cmocka_unit_test(test_archive_error_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
