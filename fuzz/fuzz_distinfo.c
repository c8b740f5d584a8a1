/* Fuzz target: a dist-info folder's METADATA head, INSTALLER and
 * direct_url.json (the input split at its first two NUL bytes), read
 * through pw_distinfo_read from a private temporary environment, then read
 * again with pw_distinfo_reread, which must agree (nothing changed). */
/* sources: distinfo.c pkgname.c pkgdiff.c err.c redact.c xalloc.c */
#include "config.h"

#include "distinfo.h"
#include "pkgdiff.h"
#include "xalloc.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char env[64];
static char site[128];
static char info[192];

static void put(const char *name, const char *bytes, size_t n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", info, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	if (n && write(fd, bytes, n) != (ssize_t)n)
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!env[0]) {
		snprintf(env, sizeof env, "/tmp/pw-fuzz-distinfo.XXXXXX");
		if (!mkdtemp(env))
			abort();
		snprintf(site, sizeof site, "%s/lib", env);
		if (mkdir(site, 0700) != 0)
			abort();
		snprintf(site, sizeof site, "%s/lib/python3.11", env);
		if (mkdir(site, 0700) != 0)
			abort();
		snprintf(site, sizeof site, "%s/lib/python3.11/site-packages", env);
		if (mkdir(site, 0700) != 0)
			abort();
		snprintf(info, sizeof info, "%s/x-1.0.dist-info", site);
		if (mkdir(info, 0700) != 0)
			abort();
	}
	const char *p = (const char *)data, *end = p + size;
	const char *parts[3] = { p, NULL, NULL };
	size_t lens[3] = { size, 0, 0 };
	for (int k = 1; k < 3; k++) {
		const char *z = memchr(parts[k - 1], '\0', lens[k - 1]);
		if (!z)
			break;
		lens[k - 1] = (size_t)(z - parts[k - 1]);
		parts[k] = z + 1;
		lens[k] = (size_t)(end - parts[k]);
	}
	put("METADATA", parts[0], lens[0]);
	put("INSTALLER", parts[1] ? parts[1] : "", lens[1]);
	put("direct_url.json", parts[2] ? parts[2] : "", lens[2]);
	pw_distset before = { 0 }, after = { 0 }, again = { 0 };
	pw_err *e = pw_distinfo_read(env, &before);
	if (e) {
		pw_err_free(e);
		return 0;
	}
	e = pw_distinfo_reread(env, &before, &again);
	if (e || again.count != before.count)
		abort(); /* the second read of an unchanged folder finds what the first did */
	for (size_t i = 0; i < before.count; i++) {
		const pw_dist *a = &before.items[i], *b = &again.items[i];
		if (strcmp(a->name, b->name) || strcmp(a->version, b->version) || strcmp(a->key, b->key) ||
		    a->stamp != b->stamp || !a->installer != !b->installer || !a->source != !b->source ||
		    (a->installer && strcmp(a->installer, b->installer)) || (a->source && strcmp(a->source, b->source)))
			abort();
	}
	pw_distset_clear(&again);
	for (size_t i = 0; i < before.count; i++)
		if (!pw_distset_find(&before, before.items[i].name))
			abort(); /* a distribution read is found again by its own name */
	pw_pkg_changes ch;
	pw_pkgdiff(&before, &after, &ch);
	if (ch.count != before.count)
		abort();
	pw_pkg_changes_clear(&ch);
	pw_distset_clear(&before);
	return 0;
}
