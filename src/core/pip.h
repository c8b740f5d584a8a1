/*
 * Running pip through the attempt chain: the default index (or an explicit
 * one), then, only after a network failure, a probed local proxy for the
 * same index and the mirrors in order. Every attempt is kept (and recorded
 * in the catalog when one is given): index, proxy, argv, exit code, class,
 * duration, output tail. pip always runs as <venv python> -m pip.
 */
#ifndef PW_PIP_H
#define PW_PIP_H

#include "cancel.h"
#include "catalog.h"
#include "err.h"
#include "events.h"
#include "pipclass.h"
#include "runner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pw_pip_attempt {
	char *index;        /* NULL: pip's default (or the ambient PIP_INDEX_URL) */
	char *proxy;        /* NULL: none given to pip */
	char *argv;         /* the command, as text */
	int exit_code;      /* -1 when it did not exit by itself */
	pw_pip_class klass;
	const char *reason; /* the classifier's evidence (static) */
	char *probe;        /* what the index probe saw, for ambiguous output */
	int64_t duration_ms;
	char *started_at;
	char *output_tail;  /* last lines of pip's output */
	bool stopped;       /* killed by the budget or by cancel */
} pw_pip_attempt;

typedef struct pw_pip_request {
	const char *python;              /* the venv's interpreter */
	const char *const *pip_args;     /* after "-m pip", e.g. {"install", "x", NULL} */
	bool chain;                      /* false: one attempt, no index (uninstall) */
	const char *index;               /* explicit --index: no mirror chain */
	const char *proxy;               /* explicit --proxy: no probing */
	const char *const *mirrors;      /* NULL-terminated, in order */
	const int *proxy_ports;          /* probed on 127.0.0.1 after a network failure */
	size_t proxy_port_count;
	int probe_ms;                    /* per port; 0 = 400 */
	const char *project;             /* for the index probe on ambiguous output */
	const char *ca_file;             /* for the index probe */
	const char *cwd;
	const char *const *env_add;
	int64_t deadline_ms;
	const pw_cancel *cancel;
	const pw_events *events;
	pw_line_fn on_line;              /* pip's output as it arrives */
	void *line_ud;
	pw_catalog *catalog;             /* attempts recorded under operation_id */
	int64_t operation_id;
} pw_pip_request;

typedef struct pw_pip_result {
	pw_pip_attempt *attempts;
	size_t count;
	bool ok;
	char *live_proxy;   /* the probed proxy that was used, if any */
	bool bytecode_repaired; /* pip failed on cut-short bytecode, which was removed */
} pw_pip_result;

/* Run the chain. Returns NULL when an attempt succeeded; otherwise an error:
 * PW_ERR_TIMEOUT / PW_ERR_CANCELLED with a stop reason (the attempts so far,
 * the last output, likely causes and next steps), PW_ERR_NETWORK when every
 * index failed for network reasons, PW_ERR_FAILED for a failure that is not
 * the network's. The result is filled either way. */
pw_err *pw_pip_run(const pw_pip_request *rq, pw_pip_result *res);
void pw_pip_result_clear(pw_pip_result *res);

/* Probe ports on 127.0.0.1 (timeout_ms each); the first that accepts, or -1. */
int pw_pip_find_proxy(const int *ports, size_t count, int timeout_ms);
/* The ambient proxy for pip (HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy), or NULL. */
const char *pw_pip_ambient_proxy(void);

#endif
