/* What every pip run from the CLI shares: the children's environment, the
 * mirror list and the proxy ports to probe. */
#ifndef PW_CLI_PIPSETUP_H
#define PW_CLI_PIPSETUP_H

#include "ops/ctx.h"
#include "pip.h"

#include <stddef.h>

typedef struct pw_child_env {
	char *vars[16]; /* NULL-terminated "NAME=VALUE" */
	size_t n;
} pw_child_env;

/* PIP_CACHE_DIR and TMPDIR/TMP/TEMP under <workspace>/.pyward/, and pip's
 * own settings from the caller's environment passed on. */
pw_err *pw_child_env_make(const pw_ops_ctx *ctx, pw_child_env *ce);
void pw_child_env_clear(pw_child_env *ce);
/* $PYWARD_MIRRORS, else `mirrors` in the settings, else data/mirrors.conf;
 * NULL-terminated, free with pw_ops_list_free(). */
char **pw_ops_mirrors(const pw_ops_ctx *ctx);
void pw_ops_list_free(char **list);
/* $PYWARD_PROXY_PORTS, else `proxy_ports`, else 7890 7891 10809 10808 8888. */
size_t pw_ops_proxy_ports(const pw_ops_ctx *ctx, int *ports, size_t cap);


#endif
