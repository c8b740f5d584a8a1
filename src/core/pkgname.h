/*
 * Package names as pip compares them (PEP 503, packaging's
 * canonicalize_name): lower case, and every run of '-', '_' and '.' is one
 * '-'. The one normalization every module uses, so a name read from a
 * dist-info folder, one given to `history --package` and one put in an
 * index URL all meet.
 */
#ifndef PW_PKGNAME_H
#define PW_PKGNAME_H

#include <stddef.h>

/* The key of name[0..n) into out, which has room for n + 1 bytes; returns
 * the key's length. No allocation: the dist-info reader keys every name
 * of an environment on each read. */
size_t pw_pkgname_key_to(const char *name, size_t n, char *out);
/* The same into a new string; NULL for NULL. */
char *pw_pkgname_key(const char *name);

#endif
