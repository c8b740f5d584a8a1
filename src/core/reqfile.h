/*
 * Requirement files, read by pyward itself rather than handed to pip: pip
 * would follow a nested "-r /anywhere" (echoing that file into the
 * catalog), install "-e file:///outside", clone "-e git+https://...". Each
 * line is judged by the rules the command line has: local paths and file:
 * URLs only inside the allowed roots, VCS URLs and remote editables refused.
 * What is left is handed to pip as a flat file pyward wrote, with every path
 * made absolute, and the index options as what they are (index, extra
 * indexes, find-links, trusted hosts), for pip's environment.
 *
 * Understood: -r/--requirement, -c/--constraint (recursively, relative to
 * the file that names them), -e/--editable (also --editable=X),
 * -i/--index-url, --extra-index-url, -f/--find-links, --trusted-host,
 * --no-index, --pre, --prefer-binary, --only-binary, --no-binary, a
 * requirement's --hash options, comments and line continuations. Any other
 * option is refused with the line that holds it.
 */
#ifndef PW_REQFILE_H
#define PW_REQFILE_H

#include "err.h"
#include "guard.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pw_reqs {
	char **lines;          /* requirement lines for pip (paths absolute) */
	size_t nlines;
	char **constraints;    /* constraint lines, the same rules */
	size_t nconstraints;
	char *index_url;       /* -i/--index-url (the last one), or NULL */
	char **extra_index;    /* --extra-index-url */
	size_t nextra;
	char **find_links;     /* -f/--find-links (paths absolute) */
	size_t nfind;
	char **trusted_hosts;  /* --trusted-host */
	size_t ntrusted;
	char **pip_flags;      /* --pre, --prefer-binary, --only-binary=X, --no-binary=X */
	size_t nflags;
	bool no_index;
	char *project;         /* the first named project, for the index probe */
} pw_reqs;

/* How files are read and paths judged: the guard-backed pair below, or a
 * test's or fuzzer's own. open: text and absolute path of name as written
 * in a file whose folder is dir. local: an absolute, confined form of a
 * local path (relative to the workspace). */
typedef struct pw_reqs_io {
	pw_err *(*open)(void *ud, const char *dir, const char *name, char **abs, char **text);
	pw_err *(*local)(void *ud, const char *path, char **abs);
	void *ud;
} pw_reqs_io;

/* Parse text (the file at abs path name, in folder dir) into out (which
 * may already hold earlier files' lines). */
pw_err *pw_reqs_parse_text(const pw_reqs_io *io, const char *name, const char *dir, const char *text,
			   pw_reqs *out);
/* Read path (relative to the workspace) and every file it includes, each
 * confined by g. */
pw_err *pw_reqs_parse_file(const pw_guard *g, const char *path, pw_reqs *out);
/* One requirement as written on a command line, by the same rules: *line
 * is what pip should get (a local path made absolute). */
pw_err *pw_reqs_check_spec(const pw_guard *g, const char *spec, char **line);
void pw_reqs_clear(pw_reqs *r);

#endif
