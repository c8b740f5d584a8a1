/*
 * A set of names (byte strings, looked up by pointer and length so that a
 * path's prefixes need no copies), each with a small non-zero value. The
 * extractor keeps every path it has written here with its kind, and judges
 * later entries against it instead of against the disk, which writer
 * threads may not have reached yet.
 */
#ifndef PW_NAMESET_H
#define PW_NAMESET_H

#include <stddef.h>

typedef struct pw_nameset pw_nameset;

pw_nameset *pw_nameset_new(void);
/* The value stored for name[0..len), 0 when absent. */
int pw_nameset_get(const pw_nameset *s, const char *name, size_t len);
/* Store value (non-zero) for name[0..len), replacing an earlier one. */
void pw_nameset_put(pw_nameset *s, const char *name, size_t len, int value);
void pw_nameset_free(pw_nameset **s);

#endif
