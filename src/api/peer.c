/* The caller on a UNIX socket connection (peer.h). */
#include "config.h"

#include "api/peer.h"

#include "xalloc.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>

struct pw_api_peer {
	pw_api_user_lookup lookup;
	bool named;
	uid_t uid;
	char user[64];
};

void pw_api_user_of_uid(uid_t uid, char *out, size_t size)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(out, size, "%s", res->pw_name);
	else
		snprintf(out, size, "%lu", (unsigned long)uid);
}

pw_api_peer *pw_api_peer_new(pw_api_user_lookup lookup)
{
	pw_api_peer *p = xcalloc(1, sizeof *p);
	p->lookup = lookup ? lookup : pw_api_user_of_uid;
	return p;
}

void pw_api_peer_free(pw_api_peer *p)
{
	free(p);
}

void pw_api_peer_name(pw_api_peer *p, uid_t uid, char *out, size_t size)
{
	if (!p->named || p->uid != uid) {
		p->lookup(uid, p->user, sizeof p->user);
		p->uid = uid;
		p->named = true;
	}
	snprintf(out, size, "%s", p->user);
}
