/* dlopen with a message a person can act on; see libload.h for why. */
#include "config.h"

#include "i18n.h"
#include "libload.h"
#include "xalloc.h"

#include <dlfcn.h>

void *pw_lib_open(const char *soname, char **why)
{
	/* RTLD_NOW: a library missing a symbol fails here, not mid-download. */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *msg = dlerror();
		*why = xstrdup(msg ? msg : "dlopen failed");
	}
	return h;
}

pw_err *pw_lib_error(const char *soname, const char *why)
{
	return pw_err_new(PW_ERR_FAILED, _("reinstall the library (or pyward's package), then try again"),
			  _("cannot load %s: %s"), soname, why);
}

char *pw_lib_missing_symbol(const char *name)
{
	return xasprintf(_("it lacks %s (the library is older than pyward was built for)"), name);
}
