/*
 * Who is calling. On a UNIX socket, the peer's uid (SO_PEERCRED): file
 * permissions already decided who may connect. On TCP, a bearer token from
 * the --token-file: one "NAME TOKEN" per line ('#' comments), compared in
 * constant time (a hash of each, all compared every time), the caller
 * being the token's name.
 */
#ifndef PW_API_AUTH_H
#define PW_API_AUTH_H

#include "err.h"

#include <stdbool.h>
#include <sys/types.h>

typedef struct pw_api_tokens pw_api_tokens;

/* Read the token file. Refused when others may read or anyone but its
 * owner may write it, a line is malformed, a token is shorter than 16
 * bytes, or a name repeats. */
pw_err *pw_api_tokens_load(const char *path, pw_api_tokens **out);
void pw_api_tokens_free(pw_api_tokens **t);
size_t pw_api_tokens_count(const pw_api_tokens *t);
/* The name of the token in an "Authorization: Bearer TOKEN" value, or NULL. */
const char *pw_api_tokens_match(const pw_api_tokens *t, const char *authorization);

/* The uid and pid of the process at the other end of a UNIX socket. */
bool pw_api_peer_cred(int fd, uid_t *uid, pid_t *pid);

#endif
