/*
 * The libmicrohttpd calls the HTTP API makes, forwarded to the library
 * loaded on first use (core/libload.h says why: it and the GnuTLS it pulls
 * in would cost every other command time at exec). Each definition keeps
 * libmicrohttpd's name and prototype, so the server reads as plain
 * libmicrohttpd code; pw_api_mhd_ready() must succeed before the first.
 */
#include "config.h"

#include "api/mhd.h"

#include "libload.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>

/* X: returns a value (fail: what to return when the library is missing); V: void. */
#define MHD_CALLS(X, V)                                                                              \
	X(struct MHD_Daemon *, MHD_start_daemon_va,                                                   \
	  (unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,            \
	   MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap),                                   \
	  (flags, port, apc, apc_cls, dh, dh_cls, ap), NULL)                                          \
	V(MHD_stop_daemon, (struct MHD_Daemon * d), (d))                                              \
	X(const char *, MHD_lookup_connection_value,                                                  \
	  (struct MHD_Connection * c, enum MHD_ValueKind kind, const char *key), (c, kind, key), NULL) \
	X(const union MHD_ConnectionInfo *, MHD_get_connection_info,                                  \
	  (struct MHD_Connection * c, enum MHD_ConnectionInfoType t, ...), (c, t), NULL)              \
	X(struct MHD_Response *, MHD_create_response_from_buffer,                                     \
	  (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode), NULL)  \
	X(struct MHD_Response *, MHD_create_response_from_callback,                                   \
	  (uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls,            \
	   MHD_ContentReaderFreeCallback crfc),                                                       \
	  (size, block_size, crc, crc_cls, crfc), NULL)                                               \
	X(enum MHD_Result, MHD_add_response_header,                                                   \
	  (struct MHD_Response * r, const char *header, const char *content), (r, header, content),   \
	  MHD_NO)                                                                                     \
	X(enum MHD_Result, MHD_queue_response,                                                        \
	  (struct MHD_Connection * c, unsigned int status, struct MHD_Response *r), (c, status, r),   \
	  MHD_NO)                                                                                     \
	V(MHD_destroy_response, (struct MHD_Response * r), (r))                                     \
	X(const union MHD_DaemonInfo *, MHD_get_daemon_info,                                         \
	  (struct MHD_Daemon * d, enum MHD_DaemonInfoType t, ...), (d, t), NULL)                      \
	X(int, MHD_get_connection_values_n,                                                           \
	  (struct MHD_Connection * c, enum MHD_ValueKind kind, MHD_KeyValueIteratorN it, void *it_cls), \
	  (c, kind, it, it_cls), -1)                                                                  \
	X(size_t, MHD_http_unescape, (char *val), (val), 0)

static struct {
	MHD_CALLS(PW_SHIM_SLOT, PW_SHIM_VSLOT)
} api;

static const char *resolve_all(void *handle)
{
	MHD_CALLS(PW_SHIM_RESOLVE_X, PW_SHIM_RESOLVE_V)
	return NULL;
}

static pw_lazy_lib lib = { .soname = PW_LIBMHD_SONAME, .resolve = resolve_all };

pw_err *pw_api_mhd_ready(void)
{
	return pw_lazy_lib_ready(&lib) ? NULL : pw_lib_error(lib.soname, lib.error);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

MHD_CALLS(PW_SHIM_FORWARD_X, PW_SHIM_FORWARD_V)
