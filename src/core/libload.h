/*
 * libcurl, libarchive and ISA-L are loaded on first use instead of at
 * exec. The TUI and most commands never download or unpack anything, and
 * libcurl and libarchive with what they pull in (TLS, HTTP/2, SSH, LDAP,
 * XML, ICU, several compressors) were two thirds of pyward's resident
 * memory.
 *
 * The core calls these libraries by their own names as usual: curl_shim.c,
 * archive_shim.c and isal_shim.c define those names and forward each call
 * to the library once it is loaded. Callers that need a library ask for it
 * first, so a missing library is an error with a message, not a crash.
 */
#ifndef PW_LIBLOAD_H
#define PW_LIBLOAD_H

#include "err.h"

#include <stdatomic.h>
#include <stdbool.h>

/* One library loaded on first use: what the shims have in common.
 * resolve fills the shim's table of function pointers from the handle and
 * returns the name of a missing symbol (NULL when all are there); then
 * loaded, when set, runs once (curl_global_init). */
typedef struct pw_lazy_lib {
	const char *soname;
	const char *(*resolve)(void *handle);
	void (*loaded)(void);
	atomic_bool tried;
	char *error; /* why it could not be loaded, once tried */
} pw_lazy_lib;

/* Load l once per process (thread-safe); true when it is usable. */
bool pw_lazy_lib_ready(pw_lazy_lib *l);

/* The forwarding definitions: a shim lists its calls once as
 * X(ret, name, (params), (args), fail) or V(name, (params), (args)) and
 * expands the list with these, given `api` (its table) and `lib`. */
#define PW_SHIM_SLOT(ret, name, params, args, fail) ret(*name) params;
#define PW_SHIM_VSLOT(name, params, args) void(*name) params;
#define PW_SHIM_RESOLVE(name)                                         \
	do {                                                          \
		api.name = (__typeof__(api.name))dlsym(handle, #name); \
		if (!api.name)                                        \
			return #name;                                 \
	} while (0)
#define PW_SHIM_RESOLVE_X(ret, name, params, args, fail) PW_SHIM_RESOLVE(name);
#define PW_SHIM_RESOLVE_V(name, params, args) PW_SHIM_RESOLVE(name);
#define PW_SHIM_FORWARD_X(ret, name, params, args, fail) \
	ret name params                                  \
	{                                                \
		if (!pw_lazy_lib_ready(&lib))            \
			return fail;                     \
		return api.name args;                    \
	}
#define PW_SHIM_FORWARD_V(name, params, args) \
	void name params                      \
	{                                     \
		if (pw_lazy_lib_ready(&lib))  \
			api.name args;        \
	}

/* Load libcurl (once per process) and run curl_global_init. */
pw_err *pw_libcurl_ready(void);

/* Load libarchive (once per process). */
pw_err *pw_libarchive_ready(void);

/* Load ISA-L (once per process), when the build has it (HAVE_ISAL). It
 * is optional: false means gzip is inflated by libarchive instead. */
bool pw_libisal_ready(void);

/* dlopen soname, resolving every symbol now. NULL on failure, with *why
 * set to a message (allocated). */
void *pw_lib_open(const char *soname, char **why);

/* The message for a library that lacks the symbol name (allocated). */
char *pw_lib_missing_symbol(const char *name);

/* The error for a library that could not be loaded. */
pw_err *pw_lib_error(const char *soname, const char *why);

#endif
