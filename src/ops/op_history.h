/*
 * The history's operations: list them, show one operation with its attempts and
 * package changes; undo one (history.undo); export all of them (streamed);
 * prune old ones (history.prune); check the whole file; and venv verify (venv.verify), the
 * rpm -V of an environment. Each result's JSON is built here once.
 */
#ifndef PW_OPS_OP_HISTORY_H
#define PW_OPS_OP_HISTORY_H

#include "ops/ctx.h"
#include "ops/op.h"

#include "catalog.h"
#include "history_admin.h"
#include "pip.h"
#include "pkgdiff.h"
#include "recordcheck.h"
#include "undo.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Package changes as objects: name, action, old_version, new_version, installer, source. */
json_t *pw_json_pkg_changes(const pw_pkg_changes *ch);
/* One operation as the history lists it (id, kind, target, outcome, …). */
json_t *pw_json_op_summary(const pw_op_rec *op);
/* The same with attempts, environment, packages, undo_of and note (show, export). */
json_t *pw_json_op_full(const pw_op_rec *op, const pw_attempt_list *att, const char *env, const pw_pkg_changes *ch);

/* ---- list: the operations f matches, newest first, read from the catalog
 * (read only: any mode). Every front end lists through it. */
pw_err *pw_op_history_list(const pw_ops_ctx *ctx, const pw_op_filter *f, pw_op_list *out);
/* {"schema": 1, "operations": [pw_json_op_summary, ...]}; the CLI writes the
 * same document one operation at a time. */
json_t *pw_op_history_list_json(const pw_op_list *ops);

/* ---- show */
typedef struct pw_op_history_show_result {
	pw_op_rec op;
	pw_attempt_list attempts;
	char *env;               /* NULL when no package changes were recorded */
	pw_pkg_changes changes;
} pw_op_history_show_result;
pw_err *pw_op_history_show(const pw_ops_ctx *ctx, int64_t id, pw_op_history_show_result *r);
json_t *pw_op_history_show_json(const pw_op_history_show_result *r);
void pw_op_history_show_clear(pw_op_history_show_result *r);

/* ---- undo: plan, refusals (a later change of the same packages, drift,
 * a gone environment, a runtime install), consent (the plan's lines), pip. */
typedef struct pw_op_history_undo_request {
	int64_t id;
	bool dry_run;            /* the plan only: nothing recorded, nothing run */
	bool force;              /* go ahead despite later operations or drift */
	const char *index;       /* for reinstalling old versions, else the index_url setting */
	const char *proxy;
} pw_op_history_undo_request;

typedef struct pw_op_history_undo_result {
	char *kind;              /* the undone operation's kind */
	char *env;
	pw_pkg_changes recorded; /* what it changed */
	pw_undo_plan plan;
	int64_t *later;          /* operations after it that changed the same packages */
	size_t later_count;
	int64_t operation;       /* the history.undo operation; 0: none recorded */
	pw_pip_result uninstall, install;
	pw_pkg_changes changed;  /* what the undo changed */
	bool dry_run;
} pw_op_history_undo_result;

/* Filled as far as it got, also on error (a refusal keeps the plan and
 * the operations in the way, to be shown). */
pw_err *pw_op_history_undo(const pw_ops_ctx *ctx, const pw_op_history_undo_request *rq, const pw_op_io *io,
			   pw_op_history_undo_result *r);
/* The plan as the consent shows it: one line per step, then what is in the way. */
size_t pw_op_history_undo_lines(const pw_op_history_undo_result *r, char ***lines);
json_t *pw_op_history_undo_json(const pw_op_history_undo_result *r, int64_t id, const pw_err *e);
void pw_op_history_undo_clear(pw_op_history_undo_result *r);

/* An HTTP API job as export writes it (apijobs.h). */
json_t *pw_json_apijob(const pw_apijob_rec *r);

/* ---- export: every operation at or after since, oldest first, as
 * pw_json_op_full objects (with "api_job" when an API job ran it), then
 * each API job that ran no operation as {"api_job": {...}}, handed to fn
 * (which may stop it with an error). */
typedef pw_err *(*pw_op_export_fn)(json_t *operation, void *ud);
pw_err *pw_op_history_export(const pw_ops_ctx *ctx, const char *since, const pw_op_io *io, pw_op_export_fn fn,
			     void *ud);

/* ---- prune: consent, then one transaction (history_admin.h). */
pw_err *pw_op_history_prune(const pw_ops_ctx *ctx, const char *before, const pw_op_io *io, pw_prune_result *r);
json_t *pw_op_history_prune_json(const pw_prune_result *r, const char *before);

/* ---- check: the whole catalog for damage (history_admin.h), read-only
 * and not recorded, so it runs on a damaged file, a copy, or for a user who
 * may only read. damaged: the caller exits 1. */
typedef struct pw_op_history_check_result {
	char *catalog;
	pw_history_check_result check;
	bool damaged;
} pw_op_history_check_result;
pw_err *pw_op_history_check(const pw_ops_ctx *ctx, const pw_op_io *io, pw_op_history_check_result *r);
json_t *pw_op_history_check_json(const pw_op_history_check_result *r);
/* What a damaged catalog means for the person (how many problems, what to
 * do), the same words in every front end; NULL when the check found none. */
pw_err *pw_op_history_check_damage(const pw_op_history_check_result *r);
void pw_op_history_check_clear(pw_op_history_check_result *r);

/* ---- venv verify: RECORD against the files (recordcheck.h), recorded as venv.verify. */
typedef struct pw_op_venv_verify_result {
	char *venv;
	pw_rc_report report;
	bool differs;            /* modified, missing or unexpected files */
} pw_op_venv_verify_result;
pw_err *pw_op_venv_verify(const pw_ops_ctx *ctx, const char *venv, const pw_op_io *io, pw_op_venv_verify_result *r);
json_t *pw_op_venv_verify_json(const pw_op_venv_verify_result *r);
void pw_op_venv_verify_clear(pw_op_venv_verify_result *r);

#endif
