/*
 * libcurl and libarchive are loaded on first use instead of at exec. The
 * TUI and most commands never download or unpack anything, and the two
 * libraries with what they pull in (TLS, HTTP/2, SSH, LDAP, XML, ICU,
 * several compressors) were two thirds of pyward's resident memory.
 *
 * The core calls both libraries by their own names as usual: curl_shim.c
 * and archive_shim.c define those names and forward each call to the
 * library once it is loaded. Callers that need a library ask for it first,
 * so a missing library is an error with a message, not a crash.
 */
#ifndef PW_LIBLOAD_H
#define PW_LIBLOAD_H

#include "err.h"

/* Load libcurl (once per process) and run curl_global_init. */
pw_err *pw_libcurl_ready(void);

/* Load libarchive (once per process). */
pw_err *pw_libarchive_ready(void);

/* For the shims: dlopen soname, resolving every symbol now. NULL on
 * failure, with *why set to a message (allocated). */
void *pw_lib_open(const char *soname, char **why);

/* The message for a library that lacks the symbol name (allocated). */
char *pw_lib_missing_symbol(const char *name);

/* The error both ready functions return when their library is missing. */
pw_err *pw_lib_error(const char *soname, const char *why);

#endif
