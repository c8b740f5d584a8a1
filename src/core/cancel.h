/*
 * Cancel token: a flag one thread (or a signal handler) raises and long
 * operations poll. pw_cancel_raise() is async-signal-safe.
 */
#ifndef PW_CANCEL_H
#define PW_CANCEL_H

#include <stdbool.h>

typedef struct pw_cancel pw_cancel;

pw_cancel *pw_cancel_new(void);
void pw_cancel_free(pw_cancel **c);
void pw_cancel_raise(pw_cancel *c);
bool pw_cancel_raised(const pw_cancel *c); /* false for NULL */
void pw_cancel_reset(pw_cancel *c);

#endif
