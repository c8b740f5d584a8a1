/*
 * The libarchive calls the core makes, forwarded to libarchive loaded on
 * first use (libload.h says why; curl_shim.c is the same for libcurl).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>

#include "libload.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

#define A struct archive *
#define E struct archive_entry *

/* X: returns a value (fail: what to return when libarchive is missing); V: void. */
#define ARCHIVE_CALLS(X, V)                                                                      \
	X(A, archive_read_new, (void), (), NULL)                                                 \
	X(int, archive_read_free, (A a), (a), ARCHIVE_FATAL)                                     \
	X(int, archive_read_support_format_tar, (A a), (a), ARCHIVE_FATAL)                       \
	X(int, archive_read_support_format_zip, (A a), (a), ARCHIVE_FATAL)                       \
	X(int, archive_read_support_format_raw, (A a), (a), ARCHIVE_FATAL)                       \
	X(int, archive_read_support_filter_gzip, (A a), (a), ARCHIVE_FATAL)                      \
	X(int, archive_read_support_filter_bzip2, (A a), (a), ARCHIVE_FATAL)                     \
	X(int, archive_read_support_filter_xz, (A a), (a), ARCHIVE_FATAL)                        \
	X(int, archive_read_support_filter_zstd, (A a), (a), ARCHIVE_FATAL)                      \
	X(int, archive_read_open_filename, (A a, const char *f, size_t block), (a, f, block),    \
	  ARCHIVE_FATAL)                                                                         \
	X(int, archive_read_open,                                                                \
	  (A a, void *ud, archive_open_callback *o, archive_read_callback *r,                     \
	   archive_close_callback *c),                                                           \
	  (a, ud, o, r, c), ARCHIVE_FATAL)                                                       \
	X(int, archive_read_next_header, (A a, E *e), (a, e), ARCHIVE_FATAL)                     \
	X(la_ssize_t, archive_read_data, (A a, void *b, size_t n), (a, b, n), ARCHIVE_FATAL)    \
	X(int, archive_read_data_block, (A a, const void **b, size_t *n, la_int64_t *off),       \
	  (a, b, n, off), ARCHIVE_FATAL)                                                         \
	X(la_int64_t, archive_filter_bytes, (A a, int n), (a, n), -1)                            \
	X(int, archive_errno, (A a), (a), 0)                                                     \
	X(const char *, archive_error_string, (A a), (a), "libarchive could not be loaded")     \
	X(const char *, archive_entry_pathname, (E e), (e), NULL)                                \
	X(const char *, archive_entry_symlink, (E e), (e), NULL)                                 \
	X(const char *, archive_entry_hardlink, (E e), (e), NULL)                                \
	X(__LA_MODE_T, archive_entry_filetype, (E e), (e), 0)                                    \
	X(__LA_MODE_T, archive_entry_perm, (E e), (e), 0)                                        \
	X(la_int64_t, archive_entry_size, (E e), (e), 0)                                         \
	X(int, archive_entry_size_is_set, (E e), (e), 0)                                         \
	X(time_t, archive_entry_mtime, (E e), (e), 0)                                            \
	X(long, archive_entry_mtime_nsec, (E e), (e), 0)                                         \
	X(int, archive_entry_mtime_is_set, (E e), (e), 0)

static struct {
	ARCHIVE_CALLS(PW_SHIM_SLOT, PW_SHIM_VSLOT)
	void (*archive_set_error)(A, int, const char *, ...);
} api;

static const char *resolve_all(void *handle)
{
	ARCHIVE_CALLS(PW_SHIM_RESOLVE_X, PW_SHIM_RESOLVE_V)
	PW_SHIM_RESOLVE(archive_set_error);
	return NULL;
}

static pw_lazy_lib lib = { .soname = PW_LIBARCHIVE_SONAME, .resolve = resolve_all };

pw_err *pw_libarchive_ready(void)
{
	return pw_lazy_lib_ready(&lib) ? NULL : pw_lib_error(lib.soname, lib.error);
}

ARCHIVE_CALLS(PW_SHIM_FORWARD_X, PW_SHIM_FORWARD_V)

/* A va_list cannot be handed on to a variadic function: format here. */
void archive_set_error(A a, int err, const char *fmt, ...)
{
	if (!pw_lazy_lib_ready(&lib))
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	api.archive_set_error(a, err, "%s", msg);
}
