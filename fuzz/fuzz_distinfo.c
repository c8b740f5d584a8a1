/* Fuzz target: a dist-info folder's METADATA head, INSTALLER and
 * direct_url.json (the input split at its first two NUL bytes), read
 * through pw_distinfo_read_site from a private temporary site-packages. */
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

static char site[64];
static char info[128];

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
	if (!site[0]) {
		snprintf(site, sizeof site, "/tmp/pw-fuzz-distinfo.XXXXXX");
		if (!mkdtemp(site))
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
	pw_distset before = { 0 }, after = { 0 };
	pw_err *e = pw_distinfo_read_site(site, &before);
	if (e) {
		pw_err_free(e);
		return 0;
	}
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
