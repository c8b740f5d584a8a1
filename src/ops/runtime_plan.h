/*
 * The runtime install's plan: which pin (pins file, --version, platform),
 * from where (mirror from option, environment or settings), how big
 * (pinned, the archive's size, or asked of the server), where it goes, the
 * consent text, and the call into core inside the caller's catalog
 * operation. Used by op_runtime.c, which every front end calls.
 * Threading: any thread; the plan is owned by its caller.
 */
#ifndef PW_OPS_RUNTIME_PLAN_H
#define PW_OPS_RUNTIME_PLAN_H

#include "ops/ctx.h"

#include "cancel.h"
#include "events.h"
#include "pins.h"
#include "runtime.h"

#include <stdbool.h>
#include <stdint.h>

/* What was asked for (all may be NULL: the defaults). */
typedef struct pw_runtime_request {
	const char *version;
	const char *pins_file;  /* operator-supplied --pins */
	const char *mirror;
	const char *archive;    /* a local archive instead of a download */
	const char *cacert;
	/* install */
	bool dry_run;           /* only the plan, without asking the server or checking space */
	bool plan_only;         /* the plan as a real install makes it (size asked, space checked), then stop */
	const struct pw_runtime_plan *plan; /* a plan_only result to install (NULL: plan anew) */
	bool no_baseline;       /* the runtime alone, without its baseline step */
	/* the baseline (of an install too) */
	const char *requirements; /* NULL: $PYWARD_BASELINE, the `baseline` setting, the shipped file */
	const char *index;        /* the first index of the attempt chain (NULL: settings) */
} pw_runtime_request;

typedef struct pw_runtime_plan {
	pw_pins *pins;
	const pw_pin *pin;
	char *url;       /* mirror applied */
	int64_t size;    /* bytes to download, -1 when unknown */
	char *dest;
	char *baseline;        /* the requirements file of the install's baseline step; NULL: none */
	char *baseline_names;  /* what it lists, for the consent */
	bool same_is_current;  /* this pin's release is installed and current: nothing to download */
	char *current_version; /* another installed runtime, which becomes the previous one; NULL: none */
} pw_runtime_plan;

#define PW_RUNTIME_PLAN_LINES 6

/* The pin for this machine from the request's pins file (or the shipped one). */
pw_err *pw_runtime_plan_pin(const pw_ops_ctx *ctx, const pw_runtime_request *rq, pw_pins **pins, const pw_pin **pin);
/* Fill plan; probe_size asks the server for an unpinned size (network). */
pw_err *pw_runtime_plan_make(const pw_ops_ctx *ctx, const pw_runtime_request *rq, bool probe_size, pw_runtime_plan *plan);
void pw_runtime_plan_clear(pw_runtime_plan *plan);
const char *pw_runtime_plan_cacert(const pw_ops_ctx *ctx, const pw_runtime_request *rq);
/* "cpython VERSION PLATFORM": the catalog operation's target. */
char *pw_runtime_plan_target(const pw_runtime_plan *plan);
/* The consent statement: what, from, size, sha256, pinned, into (xasprintf'd
 * lines; free each). */
void pw_runtime_plan_describe(const pw_runtime_request *rq, const pw_runtime_plan *plan,
			      char *lines[PW_RUNTIME_PLAN_LINES]);
/* What is installed now, for the consent ("now: ..."): an xasprintf'd
 * line, or NULL when no runtime is installed. */
char *pw_runtime_plan_now(const pw_runtime_plan *plan);
/* Size for people: "12.3 MB", or "unknown size". */
void pw_runtime_plan_mb(int64_t bytes, char *buf, size_t size);
/* pw_runtime_install with the plan, inside the caller's operation op. */
pw_err *pw_runtime_plan_install(const pw_ops_ctx *ctx, const pw_runtime_request *rq, const pw_runtime_plan *plan,
				pw_catalog *cat, int64_t op, const pw_cancel *cancel, const pw_events *events,
				pw_runtime_install_result *result);


#endif
