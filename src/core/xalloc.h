/* Allocation helpers that abort on out-of-memory, so callers need no NULL checks. */
#ifndef PW_XALLOC_H
#define PW_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n) __attribute__((malloc, alloc_size(1), returns_nonnull));
void *xcalloc(size_t count, size_t size) __attribute__((malloc, alloc_size(1, 2), returns_nonnull));
void *xrealloc(void *p, size_t n) __attribute__((alloc_size(2), returns_nonnull));
char *xstrdup(const char *s) __attribute__((malloc, returns_nonnull));
char *xstrndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2), malloc, returns_nonnull));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0), malloc, returns_nonnull));

#endif
