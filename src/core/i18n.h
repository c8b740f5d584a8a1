/* Gettext glue: every string meant for a person goes through _() or N_(). */
#ifndef PW_I18N_H
#define PW_I18N_H

#ifdef ENABLE_NLS
#include <libintl.h>
#define _(s) gettext(s)
#else
#define _(s) (s)
#endif
#define N_(s) (s)

#endif
