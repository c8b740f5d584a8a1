/* PEP 503 name normalization (see pkgname.h). */
#include "config.h"

#include "pkgname.h"

#include "xalloc.h"

#include <string.h>

size_t pw_pkgname_key_to(const char *name, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		if (ch == '-' || ch == '_' || ch == '.') {
			if (o == 0 || out[o - 1] != '-')
				out[o++] = '-';
			continue;
		}
		/* ASCII only (names are ASCII): a key must not depend on the locale */
		out[o++] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
	}
	out[o] = '\0';
	return o;
}

char *pw_pkgname_key(const char *name)
{
	if (!name)
		return NULL;
	size_t n = strlen(name);
	char *k = xmalloc(n + 1);
	pw_pkgname_key_to(name, n, k);
	return k;
}
