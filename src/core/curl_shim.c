/*
 * The libcurl calls the core makes, forwarded to libcurl loaded on first
 * use (libload.h says why). Each definition keeps libcurl's name and
 * prototype, so the callers read as plain libcurl code and keep the
 * header's type checks; only this file sees the function pointers.
 */
#include "config.h"

#define CURL_DISABLE_TYPECHECK /* the header would turn setopt into a macro */
#include <curl/curl.h>

#include "i18n.h"
#include "libload.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>

/* X: returns a value (fail: what to return when libcurl is missing); V: void. */
#define CURL_CALLS(X, V)                                                                          \
	X(CURLcode, curl_global_init, (long flags), (flags), CURLE_FAILED_INIT)                   \
	X(CURL *, curl_easy_init, (void), (), NULL)                                               \
	X(CURLcode, curl_easy_perform, (CURL * h), (h), CURLE_FAILED_INIT)                        \
	V(curl_easy_cleanup, (CURL * h), (h))                                                     \
	X(const char *, curl_easy_strerror, (CURLcode c), (c), "libcurl could not be loaded")     \
	V(curl_free, (void *p), (p))                                                              \
	X(CURLU *, curl_url, (void), (), NULL)                                                    \
	V(curl_url_cleanup, (CURLU * u), (u))                                                     \
	X(CURLUcode, curl_url_set, (CURLU * u, CURLUPart what, const char *part, unsigned int f), \
	  (u, what, part, f), CURLUE_OUT_OF_MEMORY)                                               \
	X(CURLUcode, curl_url_get, (CURLU * u, CURLUPart what, char **part, unsigned int f),     \
	  (u, what, part, f), CURLUE_OUT_OF_MEMORY)

static struct {
	CURL_CALLS(PW_SHIM_SLOT, PW_SHIM_VSLOT)
	CURLcode (*curl_easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*curl_easy_getinfo)(CURL *, CURLINFO, ...);
} api;

static CURLcode init_rc = CURLE_FAILED_INIT;

static const char *resolve_all(void *handle)
{
	CURL_CALLS(PW_SHIM_RESOLVE_X, PW_SHIM_RESOLVE_V)
	PW_SHIM_RESOLVE(curl_easy_setopt);
	PW_SHIM_RESOLVE(curl_easy_getinfo);
	return NULL;
}

/* curl_global_init is not thread-safe: it runs here, once, for every thread
 * (through the table: the forwarding definitions would wait for this load). */
static void global_init(void)
{
	init_rc = api.curl_global_init(CURL_GLOBAL_DEFAULT);
}

static pw_lazy_lib lib = { .soname = PW_LIBCURL_SONAME, .resolve = resolve_all, .loaded = global_init };

pw_err *pw_libcurl_ready(void)
{
	if (!pw_lazy_lib_ready(&lib))
		return pw_lib_error(lib.soname, lib.error);
	if (init_rc != CURLE_OK)
		return pw_err_new(PW_ERR_FAILED, NULL, _("cannot initialise libcurl: %s"),
				  api.curl_easy_strerror(init_rc));
	return NULL;
}

CURL_CALLS(PW_SHIM_FORWARD_X, PW_SHIM_FORWARD_V)

/* setopt and getinfo take one more argument whose type the option's number
 * range tells, as libcurl itself reads it. */
CURLcode curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	if (!pw_lazy_lib_ready(&lib))
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, opt);
	CURLcode rc;
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = api.curl_easy_setopt(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = api.curl_easy_setopt(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = api.curl_easy_setopt(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = api.curl_easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		rc = api.curl_easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	if (!pw_lazy_lib_ready(&lib))
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, info);
	void *out = va_arg(ap, void *); /* every CURLINFO answer goes through a pointer */
	va_end(ap);
	return api.curl_easy_getinfo(h, info, out);
}
