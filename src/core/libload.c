/* dlopen with a message a person can act on; see libload.h for why. */
#include "config.h"

#include "i18n.h"
#include "libload.h"
#include "xalloc.h"

#include <dlfcn.h>
#include <pthread.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

bool pw_lazy_lib_ready(pw_lazy_lib *l)
{
	/* After the first load this is one atomic read: it runs on every call. */
	if (!atomic_load_explicit(&l->tried, memory_order_acquire)) {
		pthread_mutex_lock(&load_lock);
		if (!atomic_load_explicit(&l->tried, memory_order_relaxed)) {
			void *h = pw_lib_open(l->soname, &l->error);
			const char *missing = h ? l->resolve(h) : NULL;
			if (missing)
				l->error = pw_lib_missing_symbol(missing);
			if (!l->error && l->loaded)
				l->loaded();
			atomic_store_explicit(&l->tried, true, memory_order_release);
		}
		pthread_mutex_unlock(&load_lock);
	}
	return l->error == NULL;
}

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
