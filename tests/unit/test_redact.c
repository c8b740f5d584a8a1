/* Unit tests: one redaction for every form a URL's or proxy's userinfo takes. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "err.h"
#include "redact.h"

#include <stdlib.h>
#include <string.h>

typedef struct form {
	const char *in, *out;
} form;

/* Free text: command lines, log lines, messages. */
static const form text_forms[] = {
	{ "https://user:secret@host:8443/p/a.tar.gz?x=1#f", "https://***@host:8443/p/a.tar.gz?x=1#f" },
	{ "https://user@host/p", "https://***@host/p" },
	{ "https://a:b@c@host/x", "https://***@host/x" },
	{ "HTTP://U:P@[::1]:80/", "HTTP://***@[::1]:80/" },
	{ "http://user:pa/ss@proxy:3128", "http://***@proxy:3128" },
	{ "http://user:pa#ss@proxy:3128/", "http://***@proxy:3128/" },
	{ "http://user:pa?ss@proxy:3128", "http://***@proxy:3128" },
	{ "http://user:p/a#s?s@idx.example/simple/", "http://***@idx.example/simple/" },
	{ "user:pass@proxy:3128", "***@proxy:3128" },
	{ "user:pa/ss@proxy:3128", "***@proxy:3128" },
	{ "user:pa#ss@proxy:3128", "***@proxy:3128" },
	{ "https_proxy=user:pass@proxy:3128", "https_proxy=***@proxy:3128" },
	{ "HTTPS_PROXY=http://user:pass@proxy:3128", "HTTPS_PROXY=http://***@proxy:3128" },
	{ "--proxy=user:p#w@host:3128", "--proxy=***@host:3128" },
	{ "--index=u:p@mirror.example/simple/", "--index=***@mirror.example/simple/" },
	{ "--mirror=https://u:p@mirror.example/releases", "--mirror=https://***@mirror.example/releases" },
	{ "pip install --proxy u:p@h:1 x", "pip install --proxy ***@h:1 x" },
	{ "a,https://u:p@b/x,c:d@e:1", "a,https://***@b/x,***@e:1" },
	{ "'http://u:p@h/' and \"https://x:y/z@w\"", "'http://***@h/' and \"https://***@w\"" },
	{ "from https://u:p@a/x?next=https://v:q@b/", "from https://***@a/x?next=https://***@b/" },
	{ "Looking in indexes: http://alice:****@127.0.0.1:9/simple/", "Looking in indexes: http://***@127.0.0.1:9/simple/" },
	{ "https_proxy=user:s3cret@127.0.0.1:9 is refused", "https_proxy=***@127.0.0.1:9 is refused" },
	/* Left alone: no userinfo, or a path, or '@' only in a path or query. */
	{ "https://host/path@version", "https://host/path@version" },
	{ "https://host:8443/p@v", "https://host:8443/p@v" },
	{ "https://[::1]:80/x@y", "https://[::1]:80/x@y" },
	{ "https://host?q=a@b", "https://host?q=a@b" },
	{ "https://host:8443/x", "https://host:8443/x" },
	{ "/srv/archives/user@host.tar.gz", "/srv/archives/user@host.tar.gz" },
	{ "./a:b@c", "./a:b@c" },
	{ "git@example.org:org/repo.git", "git@example.org:org/repo.git" },
	{ "pwtest-alpha==1.0 name @ file:///ws/proj", "pwtest-alpha==1.0 name @ file:///ws/proj" },
	{ "x: y@z", "x: y@z" },
	{ "", "" },
};

/* One value known to be an index or proxy: a bare user (a token) too. */
static const form value_forms[] = {
	{ "token@proxy:3128", "***@proxy:3128" },
	{ "user:pa/ss#x@proxy:3128", "***@proxy:3128" },
	{ "https://token@idx.example/simple/", "https://***@idx.example/simple/" },
	{ "https://u:p/q@idx.example/simple/", "https://***@idx.example/simple/" },
	{ "/srv/archives/user@host.tar.gz", "/srv/archives/user@host.tar.gz" },
	{ "http://127.0.0.1:3128", "http://127.0.0.1:3128" },
	{ "proxy.example:3128", "proxy.example:3128" },
};

static void check(const form *f, size_t n, char *(*fn)(const char *))
{
	for (size_t i = 0; i < n; i++) {
		char *got = fn(f[i].in);
		if (strcmp(got, f[i].out) != 0)
			print_error("in:  %s\ngot: %s\nwant: %s\n", f[i].in, got, f[i].out);
		assert_string_equal(got, f[i].out);
		free(got);
	}
}

static void test_text_forms(void **state)
{
	(void)state;
	check(text_forms, sizeof text_forms / sizeof text_forms[0], pw_redact_text);
	char *none = pw_redact_text(NULL);
	assert_string_equal(none, "");
	free(none);
}

static void test_value_forms(void **state)
{
	(void)state;
	check(value_forms, sizeof value_forms / sizeof value_forms[0], pw_redact_url);
	/* Every text form holds for a single value too. */
	for (size_t i = 0; i < sizeof text_forms / sizeof text_forms[0]; i++) {
		if (strchr(text_forms[i].in, ' ') || strchr(text_forms[i].in, ',') || strchr(text_forms[i].in, '\''))
			continue;
		char *got = pw_redact_url(text_forms[i].in);
		assert_null(strstr(got, "secret"));
		assert_null(strstr(got, "pass@"));
		free(got);
	}
}

/* An error message never carries a password, however it was made. */
static void test_error_messages(void **state)
{
	(void)state;
	pw_err *e = pw_err_new(PW_ERR_NETWORK, "try --proxy user:hint1@h:1", "cannot reach %s via %s",
			       "http://u:msg1/x@idx/simple/", "user:msg2@proxy:3128");
	assert_null(strstr(pw_err_message(e), "msg1"));
	assert_null(strstr(pw_err_message(e), "msg2"));
	assert_null(strstr(pw_err_hint(e), "hint1"));
	pw_err_prefix(e, "while asking %s", "https://a:msg3@b/");
	assert_null(strstr(pw_err_message(e), "msg3"));
	assert_non_null(strstr(pw_err_message(e), "proxy:3128"));
	pw_err_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_forms),
		cmocka_unit_test(test_value_forms),
		cmocka_unit_test(test_error_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
