/*
 * The caller on a UNIX socket connection, named once per connection. The
 * kernel fixes a socket's peer credentials when the peer connects
 * (SO_PEERCRED), so every request on one connection comes from the same
 * uid; the passwd lookup (a read of /etc/passwd, or NSS) is then made for
 * the connection's first request only. The uid of every request is still
 * asked of the kernel and compared: a name is only ever reused for the
 * uid it was looked up for.
 */
#ifndef PW_API_PEER_H
#define PW_API_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Writes uid's user name (or the number when it has no passwd entry). */
typedef void (*pw_api_user_lookup)(uid_t uid, char *out, size_t size);
void pw_api_user_of_uid(uid_t uid, char *out, size_t size);

/* One per connection: pw_api_peer_new when it opens, _free when it closes. */
typedef struct pw_api_peer pw_api_peer;
pw_api_peer *pw_api_peer_new(pw_api_user_lookup lookup);
void pw_api_peer_free(pw_api_peer *p);

/* uid's name, looked up only when this connection has not named uid yet. */
void pw_api_peer_name(pw_api_peer *p, uid_t uid, char *out, size_t size);

#endif
