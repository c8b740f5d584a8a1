/* Gettext glue: every string meant for a person goes through _() or N_(),
 * and a sentence with a count through P_(singular, plural, n). */
#ifndef PW_I18N_H
#define PW_I18N_H

#ifdef ENABLE_NLS
#include <libintl.h>
#define _(s) gettext(s)
#define P_(s, p, n) ngettext(s, p, n)
#else
#define _(s) (s)
#define P_(s, p, n) ((n) == 1 ? (s) : (p))
#endif
#define N_(s) (s)

#endif
