/*
 * What `pyward venv` and the full-screen Environments pane share, so both
 * take the same path through core: where an environment's name points, the
 * managed interpreter, the package spec checks, creating an environment
 * inside a catalog operation, and one pip run with the attempt chain set up
 * from the settings (index, proxy, mirrors, proxy ports, budget).
 */
#ifndef PW_CLI_VENVOPS_H
#define PW_CLI_VENVOPS_H

#include "ops/ctx.h"
#include "ops/pipsetup.h"

#include "pip.h"
#include "venv.h"

#include <stdbool.h>
#include <stddef.h>

#define PW_VENV_BUDGET_S 120.0
#define PW_VENV_DISCOVER_BUDGET_S 60.0
#define PW_SPEC_MAX 256

/* A bare name is a folder of the workspace; anything with a slash is a path (confined). */
pw_err *pw_ops_resolve_venv(const pw_ops_ctx *ctx, const char *name_or_path, char **out);
/* The managed runtime's interpreter, or NULL when none is provisioned. */
char *pw_ops_managed_python(const pw_ops_ctx *ctx);
bool pw_ops_venv_has_pip(const char *venv);

/* What pip is given after the verb, checked: no options smuggled in as
 * specs, editables only of local folders inside the roots. */
typedef struct pw_spec_list {
	char *items[PW_SPEC_MAX];
	size_t count;
	char *project;      /* the first spec's project name, for the index probe */
	char *file_index;   /* an --index-url line of a requirements file */
	char *pip_env[4];   /* PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, PIP_TRUSTED_HOST, PIP_NO_INDEX */
	char *tmp_files[8]; /* the flat requirement files pyward wrote (removed by clear) */
	size_t ntmp;
} pw_spec_list;

/* A spec as typed: local paths and file: URLs confined and made absolute,
 * VCS URLs refused (reqfile.h), options refused. */
pw_err *pw_spec_add(const pw_ops_ctx *ctx, pw_spec_list *l, const char *spec);
pw_err *pw_spec_add_editable(const pw_ops_ctx *ctx, pw_spec_list *l, const char *path);
/* A requirements file, read by pyward with every file it includes
 * (reqfile.h); pip gets a flat copy pyward wrote into the workspace's
 * .pyward/tmp, and the file's index options through its environment. */
pw_err *pw_spec_add_requirement(const pw_ops_ctx *ctx, pw_spec_list *l, const char *path);
void pw_spec_list_clear(pw_spec_list *l);

/* An environment made inside a "venv.create" operation. */
typedef struct pw_created {
	pw_venv_create_result r;
	char *why;      /* which base interpreter and why */
	char *path;
} pw_created;

typedef struct pw_create_request {
	const char *target;            /* resolved */
	const char *python;            /* explicit interpreter, or NULL */
	pw_venv_seed seed;
	const pw_child_env *ce;
	const pw_cancel *cancel;
	const pw_events *events;
} pw_create_request;

pw_err *pw_ops_venv_create(const pw_ops_ctx *ctx, const pw_create_request *rq, pw_catalog *cat, pw_created *c);
void pw_created_clear(pw_created *c);

/* One pip run (install or uninstall) with the attempt chain, recorded
 * under operation op. */
typedef struct pw_pip_job {
	const char *verb;              /* "install" / "uninstall" */
	bool chain;                    /* install: index, local proxy, mirrors */
	bool upgrade;
	const char *index;             /* explicit, else the index_url setting */
	const char *proxy;             /* explicit, else the proxy setting */
	const pw_cancel *cancel;
	const pw_events *events;
	pw_line_fn on_line;
	void *line_ud;
} pw_pip_job;

pw_err *pw_ops_pip_run(const pw_ops_ctx *ctx, const pw_pip_job *job, const char *venv, const pw_spec_list *specs,
		       const pw_child_env *ce, pw_catalog *cat, int64_t op, pw_pip_result *res);

#endif
