/*
 * Error values. A function that can fail returns a pw_err * (NULL means
 * success); the caller owns it and frees it with pw_err_free(). Each error
 * has a code (its category, which decides the exit status), a message saying
 * what went wrong, and an optional hint saying what to do next. Core never
 * calls exit() and never prints: front ends render errors.
 */
#ifndef PW_ERR_H
#define PW_ERR_H

typedef enum pw_errcode {
	PW_ERR_FAILED = 1,      /* the operation failed (exit 1) */
	PW_ERR_USAGE,           /* bad arguments or input from the caller (exit 2) */
	PW_ERR_REFUSED,         /* policy, confinement or missing consent (exit 3) */
	PW_ERR_TIMEOUT,         /* stopped by its time budget (exit 4) */
	PW_ERR_CANCELLED,       /* interrupted, e.g. Ctrl-C (exit 130) */
	PW_ERR_CORRUPT,         /* a file is damaged or not ours (exit 1) */
	PW_ERR_IO,              /* system call or disk failure (exit 1) */
	PW_ERR_NETWORK,         /* network failure (exit 1) */
	PW_ERR_NOTFOUND,        /* the thing asked for does not exist (exit 1) */
} pw_errcode;

typedef struct pw_err pw_err;

pw_err *pw_err_new(pw_errcode code, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), returns_nonnull));
/* Like pw_err_new, with strerror(errnum) appended to the message. */
pw_err *pw_err_errno(pw_errcode code, int errnum, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), returns_nonnull));
/* Prefix the message with context ("reading FILE: ..."); returns e. */
pw_err *pw_err_prefix(pw_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replace the hint (NULL clears it); returns e. */
pw_err *pw_err_set_hint(pw_err *e, const char *hint);

pw_errcode pw_err_code(const pw_err *e);
const char *pw_err_message(const pw_err *e);
const char *pw_err_hint(const pw_err *e);   /* NULL when there is none */
const char *pw_err_code_name(pw_errcode code); /* stable ASCII name for --json */
int pw_err_exit_status(const pw_err *e);    /* 0 for NULL */

void pw_err_free(pw_err *e);
/* Free *e and set it to NULL. */
void pw_err_clear(pw_err **e);

#endif
