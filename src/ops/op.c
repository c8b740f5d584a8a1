/* Consent helpers shared by every operation. */
#include "config.h"

#include "ops/op.h"

#include "err.h"
#include "i18n.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

pw_err *pw_op_ask(const pw_op_io *io, const pw_consent *what, const char *declined)
{
	pw_consent_answer a = io && io->consent ? io->consent(what, io->consent_ud) : PW_CONSENT_CANNOT_ASK;
	if (a == PW_CONSENT_YES)
		return NULL;
	if (a == PW_CONSENT_NO)
		return pw_err_new(PW_ERR_REFUSED, NULL, "%s", declined);
	if (io && io->cannot_ask)
		return pw_err_new(PW_ERR_REFUSED, NULL, "%s: %s", what->doing, io->cannot_ask);
	return pw_err_new(PW_ERR_REFUSED, _("pass --yes to consent, or run it on a terminal"),
			  _("%s needs consent and there is no terminal to ask"), what->doing);
}

pw_consent_answer pw_consent_given(const pw_consent *what, void *kind)
{
	return kind && strcmp(what->kind, kind) == 0 ? PW_CONSENT_YES : PW_CONSENT_NO;
}

pw_consent_answer pw_consent_if_seen(const pw_consent *what, void *ud)
{
	const pw_consent_seen *s = ud;
	if (!s || s->line_count != what->line_count)
		return PW_CONSENT_NO;
	for (size_t i = 0; i < s->line_count; i++)
		if (strcmp(s->lines[i], what->lines[i]) != 0)
			return PW_CONSENT_NO;
	return PW_CONSENT_YES;
}

void pw_consent_seen_set(pw_consent_seen *s, const char *const *lines, size_t n)
{
	pw_consent_seen_clear(s);
	s->lines = xcalloc(n ? n : 1, sizeof *s->lines);
	for (size_t i = 0; i < n; i++)
		s->lines[i] = xstrdup(lines[i]);
	s->line_count = n;
}

void pw_consent_seen_clear(pw_consent_seen *s)
{
	for (size_t i = 0; i < s->line_count; i++)
		free(s->lines[i]);
	free(s->lines);
	s->lines = NULL;
	s->line_count = 0;
}
