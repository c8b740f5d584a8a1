/* Error values: code, message, hint. */
#include "config.h"

#include "err.h"
#include "redact.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct pw_err {
	pw_errcode code;
	char *message;
	char *hint;
};

static pw_err *err_alloc(pw_errcode code, const char *hint, char *message)
{
	pw_err *e = xcalloc(1, sizeof *e);
	e->code = code;
	/* Messages travel everywhere (screens, logs, the catalog): no URL's
	 * password may ride along. */
	e->message = pw_redact_text(message);
	free(message);
	e->hint = hint ? pw_redact_text(hint) : NULL;
	return e;
}

pw_err *pw_err_new(pw_errcode code, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	return err_alloc(code, hint, msg);
}

pw_err *pw_err_errno(pw_errcode code, int errnum, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *head = xvasprintf(fmt, ap);
	va_end(ap);
	char *msg = xasprintf("%s: %s", head, strerror(errnum));
	free(head);
	return err_alloc(code, hint, msg);
}

pw_err *pw_err_prefix(pw_err *e, const char *fmt, ...)
{
	if (!e)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	char *head = xvasprintf(fmt, ap);
	va_end(ap);
	char *msg = xasprintf("%s: %s", head, e->message);
	free(head);
	free(e->message);
	e->message = pw_redact_text(msg);
	free(msg);
	return e;
}

pw_err *pw_err_set_hint(pw_err *e, const char *hint)
{
	if (!e)
		return NULL;
	free(e->hint);
	e->hint = hint ? pw_redact_text(hint) : NULL;
	return e;
}

pw_errcode pw_err_code(const pw_err *e)
{
	return e ? e->code : 0;
}

const char *pw_err_message(const pw_err *e)
{
	return e ? e->message : "";
}

const char *pw_err_hint(const pw_err *e)
{
	return e ? e->hint : NULL;
}

const char *pw_err_code_name(pw_errcode code)
{
	switch (code) {
	case PW_ERR_FAILED: return "failed";
	case PW_ERR_USAGE: return "usage";
	case PW_ERR_REFUSED: return "refused";
	case PW_ERR_TIMEOUT: return "timeout";
	case PW_ERR_CANCELLED: return "cancelled";
	case PW_ERR_CORRUPT: return "corrupt";
	case PW_ERR_IO: return "io";
	case PW_ERR_NETWORK: return "network";
	case PW_ERR_NOTFOUND: return "not-found";
	}
	return "failed";
}

int pw_err_exit_status(const pw_err *e)
{
	if (!e)
		return 0;
	switch (e->code) {
	case PW_ERR_USAGE: return 2;
	case PW_ERR_REFUSED: return 3;
	case PW_ERR_TIMEOUT: return 4;
	case PW_ERR_CANCELLED: return 130;
	default: return 1;
	}
}

void pw_err_free(pw_err *e)
{
	if (!e)
		return;
	free(e->message);
	free(e->hint);
	free(e);
}

void pw_err_clear(pw_err **e)
{
	if (!e)
		return;
	pw_err_free(*e);
	*e = NULL;
}
