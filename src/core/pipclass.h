/*
 * Classifying a failed pip run: was it the network (so another index or a
 * proxy may help) or not (a missing package, a conflict, a bad spec, a
 * certificate that does not verify)? A pure function over pip's exit code
 * and output, plus a direct look at the index for the cases pip's output
 * cannot tell apart (an index answering 5xx reads like an empty one).
 */
#ifndef PW_PIPCLASS_H
#define PW_PIPCLASS_H

#include <stdbool.h>

typedef enum pw_pip_class {
	PW_PIP_OK,          /* exit 0 */
	PW_PIP_NETWORK,     /* refused, reset, timed out, DNS, unreachable, proxy, TLS handshake EOF */
	PW_PIP_NOT_NETWORK, /* no matching distribution, conflict, certificate verification, build, bad spec */
	PW_PIP_AMBIGUOUS,   /* failed, and the output alone cannot tell: probe the index */
} pw_pip_class;

const char *pw_pipclass_name(pw_pip_class c); /* "ok", "network", "not-network", "ambiguous" */

/* Classify from the exit code and the combined stdout+stderr of pip.
 * *reason (may be NULL) gets a static phrase naming the evidence, e.g.
 * "urllib3 NewConnectionError (connection refused)". Order of evidence:
 * exit 0; certificate-verification markers (CERTIFICATE_VERIFY_FAILED …)
 * → not-network; a digest mismatch (THESE PACKAGES DO NOT MATCH THE
 * HASHES: a download cut short, a corrupt or stale mirror) → network, so
 * the next source is tried; network markers (Retrying banner, NewConnectionError,
 * ConnectTimeoutError, ReadTimeoutError, ProtocolError, Connection reset,
 * Name or service not known, Temporary failure in name resolution,
 * ProxyError, TLS handshake EOF …) → network, even when the output also
 * says "No matching distribution found"; other definite pip errors (no
 * match without any network evidence and with an index that listed
 * versions, ResolutionImpossible, invalid requirement, build failure)
 * → not-network; "No matching distribution found" with no versions listed
 * and no other evidence → ambiguous. */
pw_pip_class pw_pipclass_classify(int exit_code, const char *output, const char **reason);

/* Ask the index directly: GET <index_url>/<project>/ (project normalised
 * per PEP 503) through proxy (NULL: none; the environment is ignored),
 * trusting ca_file (NULL: system). DNS, connect, TLS handshake, timeout or
 * 5xx → network; 404 or a page without files → not-network; a page with
 * files → not-network too (the index is fine, so pip's failure is not the
 * network's). *detail (malloc'd) says what was seen, e.g. "HTTP 503 from
 * URL". */
pw_pip_class pw_pipclass_probe_index(const char *index_url, const char *project, const char *proxy,
				     const char *ca_file, int timeout_s, char **detail);

#endif
