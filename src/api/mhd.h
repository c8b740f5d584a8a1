/*
 * libmicrohttpd, loaded on first use (mhd_shim.c). Include this instead of
 * <microhttpd.h>; call pw_api_mhd_ready() before any MHD_* function.
 */
#ifndef PW_API_MHD_H
#define PW_API_MHD_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "err.h"

pw_err *pw_api_mhd_ready(void);

#endif
