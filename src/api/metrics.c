/*
 * GET /metrics: the Prometheus text format (version 0.0.4), from the
 * catalog (operations, attempts, the last verification), the runtime's
 * state on disk and this server's own counters. Fleets scrape every box
 * and alert on a runtime that fails verify.
 */
#include "config.h"

#include "api/jobs.h"
#include "api/metrics.h"
#include "api/reply.h"

#include "audit.h"
#include "catalog_stats.h"
#include "clock.h"
#include "paths.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label value: backslash, double quote and newline escaped. */
static void put_value(FILE *f, const char *v)
{
	fputc('"', f);
	for (const char *p = v ? v : ""; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void runtime_metrics(FILE *f, const char *box_root, const pw_catalog_stats *st)
{
	pw_runtime_info info;
	pw_err *e = pw_runtime_status(box_root, &info);
	bool installed = !e && info.state == PW_RUNTIME_INSTALLED;
	head(f, "pyward_runtime_installed", "gauge", "1 when the managed runtime is installed and whole, else 0.");
	fprintf(f, "pyward_runtime_installed %d\n", installed ? 1 : 0);
	head(f, "pyward_runtime_info", "gauge", "The managed runtime in use (absent when none is installed).");
	if (installed) {
		fputs("pyward_runtime_info{version=", f);
		put_value(f, info.version);
		fputs(",release=", f);
		put_value(f, info.release);
		fputs(",platform=", f);
		put_value(f, info.platform);
		fputs(",sha256=", f);
		put_value(f, info.sha256);
		fputs("} 1\n", f);
	}
	if (!e)
		pw_runtime_info_clear(&info);
	pw_err_free(e);
	head(f, "pyward_runtime_verify_ok", "gauge",
	     "1 when the last runtime verification passed, 0 when it failed (absent: never verified).");
	head(f, "pyward_runtime_verify_timestamp_seconds", "gauge", "When the last runtime verification finished.");
	if (st->verify_outcome) {
		fprintf(f, "pyward_runtime_verify_ok %d\n", strcmp(st->verify_outcome, PW_OUTCOME_OK) == 0 ? 1 : 0);
		fprintf(f, "pyward_runtime_verify_timestamp_seconds %lld\n",
			(long long)pw_clock_iso_to_unix(st->verify_finished_at));
	}
}

static void catalog_metrics(FILE *f, const pw_catalog_stats *st)
{
	head(f, "pyward_operations_total", "counter", "Finished operations in the catalog, by kind and outcome.");
	for (size_t i = 0; i < st->op_count; i++) {
		if (strcmp(st->ops[i].key2, PW_OUTCOME_RUNNING) == 0)
			continue;
		fputs("pyward_operations_total{kind=", f);
		put_value(f, st->ops[i].key);
		fputs(",outcome=", f);
		put_value(f, st->ops[i].key2);
		fprintf(f, "} %lld\n", (long long)st->ops[i].count);
	}
	head(f, "pyward_operations_running", "gauge", "Operations running now, by kind.");
	for (size_t i = 0; i < st->op_count; i++) {
		if (strcmp(st->ops[i].key2, PW_OUTCOME_RUNNING) != 0)
			continue;
		fputs("pyward_operations_running{kind=", f);
		put_value(f, st->ops[i].key);
		fprintf(f, "} %lld\n", (long long)st->ops[i].count);
	}
	head(f, "pyward_attempts_total", "counter", "pip attempts in the catalog, by class.");
	for (size_t i = 0; i < st->attempt_count; i++) {
		fputs("pyward_attempts_total{class=", f);
		put_value(f, st->attempts[i].key);
		fprintf(f, "} %lld\n", (long long)st->attempts[i].count);
	}
}

static void server_metrics(FILE *f, pw_api_server *srv)
{
	head(f, "pyward_jobs_running", "gauge", "Jobs this server is running.");
	fprintf(f, "pyward_jobs_running %u\n", pw_api_jobs_running(srv->jobs));
	head(f, "pyward_audit_events_total", "counter", "Audit events this server sent to the journal or syslog.");
	fprintf(f, "pyward_audit_events_total %llu\n", (unsigned long long)pw_audit_sent());
	head(f, "pyward_audit_failures_total", "counter",
	     "Audit events this server could not send (the operations went on).");
	fprintf(f, "pyward_audit_failures_total %llu\n", (unsigned long long)pw_audit_failures());
	head(f, "pyward_http_requests_total", "counter", "HTTP requests this server received.");
	fprintf(f, "pyward_http_requests_total %llu\n", (unsigned long long)atomic_load(&srv->requests));
	head(f, "pyward_http_refused_total", "counter", "HTTP requests refused, by reason.");
	fprintf(f, "pyward_http_refused_total{reason=\"auth\"} %llu\n", (unsigned long long)atomic_load(&srv->refused_auth));
	fprintf(f, "pyward_http_refused_total{reason=\"limit\"} %llu\n",
		(unsigned long long)atomic_load(&srv->refused_limits));
	head(f, "pyward_http_connections", "gauge", "Open HTTP connections.");
	fprintf(f, "pyward_http_connections %u\n", pw_api_connections(srv));
	head(f, "pyward_build_info", "gauge", "pyward's version.");
	fprintf(f, "pyward_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
}

enum MHD_Result pw_api_metrics(pw_api_request *r)
{
	pw_api_server *srv = r->srv;
	char *path = pw_paths_catalog(srv->box_root);
	pw_catalog *cat = NULL;
	pw_catalog_stats st = { 0 };
	pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_ONLY, &cat);
	free(path);
	if (!e)
		e = pw_catalog_stats_read(cat, &st);
	pw_catalog_close(&cat);
	if (e) {
		enum MHD_Result res = pw_api_send_err(r->conn, e);
		pw_err_free(e);
		return res;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	runtime_metrics(f, srv->box_root, &st);
	catalog_metrics(f, &st);
	server_metrics(f, srv);
	fclose(f);
	pw_catalog_stats_clear(&st);
	enum MHD_Result res = pw_api_send_text(r->conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
	free(text);
	return res;
}
