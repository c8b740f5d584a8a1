/*
 * HTTPS download into a cache file while hashing (libcurl + SHA256 in one
 * pass). The bytes land in DEST.part; an interrupted download resumes with a
 * Range request (the hash state rebuilt from the bytes already on disk); a
 * server that ignores Range (200 instead of 206) restarts cleanly. TLS
 * verification is always on. Redirects are followed; proxies from the
 * environment are honoured; a connect timeout and a low-speed abort stop a
 * stalled server. On success DEST.part is renamed to DEST only when the
 * hash equals expected_sha256 (when given); a mismatch removes the file.
 */
#ifndef PW_FETCH_H
#define PW_FETCH_H

#include "cancel.h"
#include "err.h"
#include "events.h"

#include <stdint.h>

typedef struct pw_fetch_opts {
	const char *url;
	const char *dest;              /* final path; DEST.part while in progress */
	const char *expected_sha256;   /* NULL: no check (the caller checks) */
	const char *ca_file;           /* NULL: the system store (SSL_CERT_FILE honoured) */
	int connect_timeout_s;         /* 0: default 15 */
	int low_speed_time_s;          /* abort below 1 byte/s for this long; 0: default 30 */
	int64_t deadline_ms;           /* pw_clock_mono_ms() value; 0: none */
	const pw_cancel *cancel;
	const pw_events *events;       /* progress with stage "download" */
} pw_fetch_opts;

typedef struct pw_fetch_result {
	char sha256[65];
	int64_t bytes;        /* size of DEST */
	int64_t resumed_from; /* bytes kept from an earlier .part (0: fresh) */
	/* times the .part was emptied and started again from byte zero during
	 * this call (a server that ignored Range, a local copy redone): a
	 * reader following the .part as it grows read bytes that are gone */
	int restarts;
	long http_status;     /* last status seen, 0 for file:// */
	char effective_url[1024]; /* after redirects */
} pw_fetch_result;

/* Errors are PW_ERR_NETWORK (DNS, refused, reset, TLS, stalled, HTTP status:
 * the message names the URL and status and the hint says what to do),
 * PW_ERR_CORRUPT (hash mismatch: expected and actual in the message),
 * PW_ERR_IO (disk, e.g. full), PW_ERR_CANCELLED (the .part is kept),
 * PW_ERR_TIMEOUT (deadline; the .part is kept). */
pw_err *pw_fetch(const pw_fetch_opts *opts, pw_fetch_result *res);

/* url as it may be shown or recorded: any user:password@ in its authority
 * becomes "***@"; scheme, host, port, path and query stay exactly as
 * written. Anything else (a file path, an unparsable string) is returned
 * as is. Never NULL. */
char *pw_fetch_url_shown(const char *url);

/* The host of url, as a resolver takes it (IPv6 without brackets, no
 * credentials, no port); NULL when it does not parse. Parsed by libcurl. */
char *pw_fetch_url_host(const char *url);

/* HEAD (or a ranged GET) to learn the size before asking for consent;
 * -1 when the server does not say. */
pw_err *pw_fetch_probe_size(const char *url, const char *ca_file, int timeout_s, int64_t *size);

#endif
