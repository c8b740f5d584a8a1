/* Unit tests: the API names a UNIX socket peer once per connection, and
 * never gives one uid's name to another. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "api/peer.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int lookups;

static void counting_lookup(uid_t uid, char *out, size_t size)
{
	lookups++;
	snprintf(out, size, "user%lu", (unsigned long)uid);
}

static void test_one_lookup_per_connection(void **state)
{
	(void)state;
	lookups = 0;
	pw_api_peer *p = pw_api_peer_new(counting_lookup);
	char name[64];
	for (int i = 0; i < 5; i++) {
		pw_api_peer_name(p, 1000, name, sizeof name);
		assert_string_equal(name, "user1000");
	}
	assert_int_equal(lookups, 1);
	pw_api_peer_free(p);
}

/* Connections keep their own names: two peers, requests interleaved. */
static void test_connections_never_share(void **state)
{
	(void)state;
	lookups = 0;
	pw_api_peer *a = pw_api_peer_new(counting_lookup), *b = pw_api_peer_new(counting_lookup);
	char na[64], nb[64];
	for (int i = 0; i < 3; i++) {
		pw_api_peer_name(a, 1000, na, sizeof na);
		pw_api_peer_name(b, 65534, nb, sizeof nb);
		assert_string_equal(na, "user1000");
		assert_string_equal(nb, "user65534");
	}
	assert_int_equal(lookups, 2);
	pw_api_peer_free(a);
	pw_api_peer_free(b);
}

/* The name is keyed by the uid the kernel gives for each request: another
 * uid on the same connection (which the kernel never reports) is looked
 * up again rather than given the first one's name. */
static void test_keyed_by_uid(void **state)
{
	(void)state;
	lookups = 0;
	pw_api_peer *p = pw_api_peer_new(counting_lookup);
	char name[64];
	pw_api_peer_name(p, 0, name, sizeof name);
	assert_string_equal(name, "user0");
	pw_api_peer_name(p, 65534, name, sizeof name);
	assert_string_equal(name, "user65534");
	pw_api_peer_name(p, 0, name, sizeof name);
	assert_string_equal(name, "user0");
	assert_int_equal(lookups, 3);
	pw_api_peer_free(p);
}

/* The real lookup: this process's uid by name, an unknown uid by number. */
static void test_real_lookup(void **state)
{
	(void)state;
	pw_api_peer *p = pw_api_peer_new(NULL);
	char name[64];
	pw_api_peer_name(p, 0, name, sizeof name);
	assert_string_equal(name, "root");
	pw_api_peer_name(p, 3999999999u, name, sizeof name);
	assert_string_equal(name, "3999999999");
	pw_api_peer_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_lookup_per_connection),
		cmocka_unit_test(test_connections_never_share),
		cmocka_unit_test(test_keyed_by_uid),
		cmocka_unit_test(test_real_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
