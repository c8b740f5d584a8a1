/*
 * The ISA-L inflate calls the decoder makes, forwarded to libisal loaded
 * on first use (libload.h says why). Unlike libcurl and libarchive, ISA-L
 * is optional: when it cannot be loaded, gzip is inflated by libarchive's
 * zlib, which gives the same bytes at about half the speed.
 */
#include "config.h"

#include <isa-l/igzip_lib.h>

#include "libload.h"

#include <dlfcn.h>
#include <stddef.h>

/* X: returns a value (fail: what to return when libisal is missing); V: void. */
#define ISAL_CALLS(X, V)                                                        \
	V(isal_inflate_init, (struct inflate_state * s), (s))                   \
	V(isal_inflate_reset, (struct inflate_state * s), (s))                  \
	X(int, isal_inflate, (struct inflate_state * s), (s), ISAL_INVALID_STATE)

static struct {
	ISAL_CALLS(PW_SHIM_SLOT, PW_SHIM_VSLOT)
} api;

static const char *resolve_all(void *handle)
{
	ISAL_CALLS(PW_SHIM_RESOLVE_X, PW_SHIM_RESOLVE_V)
	return NULL;
}

static pw_lazy_lib lib = { .soname = PW_LIBISAL_SONAME, .resolve = resolve_all };

bool pw_libisal_ready(void)
{
	return pw_lazy_lib_ready(&lib);
}

ISAL_CALLS(PW_SHIM_FORWARD_X, PW_SHIM_FORWARD_V)
