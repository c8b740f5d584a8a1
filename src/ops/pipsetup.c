/* What every pip run from the CLI shares: environment, mirrors, proxy ports. */
#include "config.h"

#include "ops/pipsetup.h"

#include "i18n.h"
#include "venv.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Environment for every child: caches and temporary files stay in the workspace. */
static void env_put(pw_child_env *ce, const char *name, const char *value)
{
	if (value && ce->n < 15)
		ce->vars[ce->n++] = xasprintf("%s=%s", name, value);
}

pw_err *pw_child_env_make(const pw_ops_ctx *ctx, pw_child_env *ce)
{
	char *cache = NULL, *tmp = NULL;
	pw_err *e = pw_venv_workspace_state(ctx->workspace, &cache, &tmp);
	if (e)
		return e;
	memset(ce, 0, sizeof *ce);
	env_put(ce, "PIP_CACHE_DIR", cache);
	env_put(ce, "TMPDIR", tmp);
	env_put(ce, "TMP", tmp);
	env_put(ce, "TEMP", tmp);
	env_put(ce, "PYTHONNOUSERSITE", "1");
	env_put(ce, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
	/* pip's own configuration, passed on when the caller set it. */
	static const char *const pass[] = { "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT",
					    "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE" };
	for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
		env_put(ce, pass[i], getenv(pass[i]));
	free(cache);
	free(tmp);
	return NULL;
}

void pw_child_env_clear(pw_child_env *ce)
{
	for (size_t i = 0; i < ce->n; i++)
		free(ce->vars[i]);
	ce->n = 0;
}

/* ---------------------------------------------------------------- mirrors and ports */

static void split_list(const char *text, char ***out, size_t *count)
{
	char *copy = xstrdup(text), *save = NULL;
	for (char *t = strtok_r(copy, " ,\t\n", &save); t; t = strtok_r(NULL, " ,\t\n", &save)) {
		*out = xrealloc(*out, (*count + 2) * sizeof **out);
		(*out)[(*count)++] = xstrdup(t);
		(*out)[*count] = NULL;
	}
	free(copy);
}

char **pw_ops_mirrors(const pw_ops_ctx *ctx)
{
	char **list = NULL;
	size_t n = 0;
	const char *env = getenv("PYWARD_MIRRORS");
	const char *conf = pw_settings_get(ctx->settings, "mirrors");
	if (env && *env) {
		split_list(env, &list, &n);
	} else if (conf) {
		split_list(conf, &list, &n);
	} else {
		char *path = pw_ops_data_file("mirrors.conf");
		FILE *f = fopen(path, "r");
		char line[1024];
		while (f && fgets(line, sizeof line, f))
			if (line[strspn(line, " \t")] != '#')
				split_list(line, &list, &n);
		if (f)
			fclose(f);
		free(path);
	}
	if (!list)
		list = xcalloc(1, sizeof *list);
	return list;
}

void pw_ops_list_free(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

size_t pw_ops_proxy_ports(const pw_ops_ctx *ctx, int *ports, size_t cap)
{
	static const int defaults[] = { 7890, 7891, 10809, 10808, 8888 };
	const char *text = getenv("PYWARD_PROXY_PORTS");
	if (!text || !*text)
		text = pw_settings_get(ctx->settings, "proxy_ports");
	if (!text) {
		memcpy(ports, defaults, sizeof defaults);
		return sizeof defaults / sizeof defaults[0];
	}
	size_t n = 0;
	char **items = NULL;
	size_t count = 0;
	split_list(text, &items, &count);
	for (size_t i = 0; i < count && n < cap; i++) {
		long p = strtol(items[i], NULL, 10);
		if (p > 0 && p < 65536)
			ports[n++] = (int)p;
	}
	pw_ops_list_free(items);
	return n;
}
