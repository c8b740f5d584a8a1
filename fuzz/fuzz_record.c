/* Fuzz target: RECORD lines (CSV with quoting), PEP 440 order over the
 * fields found, and apt's lines of the changes they would make. */
/* sources: recordcheck.c distinfo.c pkgname.c pkgdiff.c digest.c err.c redact.c xalloc.c */
#include "config.h"

#include "pkgdiff.h"
#include "recordcheck.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size;
	pw_pkg_changes ch = { 0 };
	char *prev = NULL;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		pw_record_line l;
		if (pw_record_parse_line(line, n, &l)) {
			/* the path and the hash as two versions, both ways round */
			int a = pw_version_cmp(l.path, l.hash), b = pw_version_cmp(l.hash, l.path);
			if ((a < 0 && b <= 0) || (a > 0 && b >= 0) || (a == 0 && b != 0))
				abort(); /* the order must be antisymmetric */
			if (prev)
				(void)pw_version_cmp(prev, l.path);
			free(prev);
			prev = xstrdup(l.path);
			pw_pkg_changes_add(&ch, (pw_pkg_action)(n % 5), l.path, l.hash, l.path, NULL, NULL);
			pw_record_line_clear(&l);
		}
		line += n + 1;
	}
	free(prev);
	char **lines = NULL;
	size_t k = pw_pkg_changes_apt_lines(&ch, &lines);
	for (size_t i = 0; i < k; i++)
		free(lines[i]);
	free(lines);
	pw_pkg_changes_clear(&ch);
	return 0;
}
