/*
 * Test helper: fill a catalog through the core API with a known history,
 * so the CLI's history command can be checked against it.
 * Usage: catalog_fill CATALOG_PATH [EXTRA_OPERATIONS]
 *        catalog_fill CATALOG_PATH --bulk N
 *        catalog_fill CATALOG_PATH --open   (migrates an older file, adds nothing)
 * (extra operations, one attempt each, are for the benchmarks; --bulk
 * writes N operations with two attempts each in one transaction, with
 * package changes, for the million-row history bench)
 */
#include "config.h"

#include "catalog.h"
#include "err.h"

#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(pw_err *e)
{
	fprintf(stderr, "catalog_fill: %s\n", pw_err_message(e));
	pw_err_free(e);
	return 1;
}

static pw_err *add_attempt(pw_catalog *c, int64_t op, const char *index, const char *proxy,
			   int code, const char *klass, const char *tail)
{
	pw_attempt_rec a = {
		.operation_id = op, .index_url = (char *)(uintptr_t)index,
		.proxy = (char *)(uintptr_t)proxy,
		.argv = (char *)(uintptr_t)"/ws/.venv/bin/python -m pip install requests",
		.exit_code = code, .klass = (char *)(uintptr_t)klass,
		.started_at = (char *)(uintptr_t)"2026-12-02T10:00:01.000Z",
		.duration_ms = 1500, .output_tail = (char *)(uintptr_t)tail,
	};
	return pw_catalog_attempt_add(c, &a);
}

/* A pid that surely does not exist any more: a child we already reaped. */
static pid_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

static pw_err *fill(pw_catalog *c)
{
	int64_t id;
	pw_op_start s1 = { .kind = "runtime.install", .target = "3.12.13", .args = "pyward runtime install" };
	pw_err *e = pw_catalog_op_begin(c, &s1, &id);
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	pw_op_start s2 = { .kind = "venv.install", .target = "/ws/.venv", .args = "pyward venv install requests" };
	if (!e)
		e = pw_catalog_op_begin(c, &s2, &id);
	if (!e)
		e = add_attempt(c, id, NULL, NULL, 1, "network", "ConnectionError: refused");
	if (!e)
		e = add_attempt(c, id, "https://mirror.example/simple", NULL, 1, "network", "timed out");
	if (!e)
		e = add_attempt(c, id, "https://mirror.example/simple", "http://127.0.0.1:3128", 0, "ok",
				"Successfully installed requests");
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	pw_op_start s3 = { .kind = "venv.create", .target = "/ws/100%_café", .args = "pyward venv create" };
	if (!e)
		e = pw_catalog_op_begin(c, &s3, &id);
	if (!e)
		e = pw_catalog_op_finish(c, id, PW_OUTCOME_TIMED_OUT, "the 30 s budget ran out during pip");
	pw_actor gone;
	pw_catalog_actor_current(&gone);
	gone.pid = dead_pid();
	pw_op_start s4 = { .kind = "runtime.verify", .target = "current", .args = "pyward runtime verify",
			   .actor = &gone };
	if (!e)
		e = pw_catalog_op_begin(c, &s4, &id);
	return e;
}

static pw_err *fill_many(pw_catalog *c, long n)
{
	pw_err *e = NULL;
	for (long i = 0; !e && i < n; i++) {
		char target[32];
		snprintf(target, sizeof target, "/ws/env%ld", i);
		pw_op_start s = { .kind = "venv.install", .target = target, .args = "pyward venv install x" };
		int64_t id;
		e = pw_catalog_op_begin(c, &s, &id);
		if (!e)
			e = add_attempt(c, id, NULL, NULL, 0, "ok", "Successfully installed x");
		if (!e)
			e = pw_catalog_op_finish(c, id, PW_OUTCOME_OK, NULL);
	}
	return e;
}

/* Kinds in the proportions a busy box might show; no operation failed, so
 * `history --outcome failed` is a filter that matches nothing. */
static const char *const bulk_kinds[] = {
	"venv.install", "venv.install", "venv.install", "venv.uninstall", "venv.create",
	"runtime.verify", "jobs.cancel", "venv.install", "venv.remove", "runtime.baseline",
};

static int bulk(const char *path, long n)
{
	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(path, PW_CATALOG_READ_WRITE, &c);
	if (e)
		return fail(e);
	sqlite3 *db = pw_catalog_db(c);
	sqlite3_stmt *op = NULL, *at = NULL, *pc = NULL;
	int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	rc |= sqlite3_prepare_v2(db, "INSERT INTO operations (id, kind, target, args, started_at, finished_at, outcome,"
				 " user, uid, host, pid, pyward_version, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6,"
				 " 'alice', 1000, 'bench', 4242, '0.1.0', 1200)", -1, &op, NULL);
	rc |= sqlite3_prepare_v2(db, "INSERT INTO attempts (operation_id, seq, index_url, argv, exit_code, class,"
				 " started_at, duration_ms, output_tail) VALUES (?1, ?2, ?3, 'python -m pip install x',"
				 " ?4, ?5, ?6, 600, 'Successfully installed x')", -1, &at, NULL);
	rc |= sqlite3_prepare_v2(db, "INSERT INTO package_changes (operation_id, env, name, display_name, action,"
				 " old_version, new_version, installer) VALUES (?1, ?2, ?3, ?3, 'installed', NULL, '1.0', 'pip')",
				 -1, &pc, NULL);
	/* Two years of history, oldest first, one operation about every minute. */
	const long long t0 = 1735689600LL; /* 2025-01-01T00:00:00Z */
	for (long i = 1; rc == SQLITE_OK && i <= n; i++) {
		char when[40], env[64], pkg[32], args[96];
		time_t t = (time_t)(t0 + (long long)i * 63072000LL / n);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
		const char *kind = bulk_kinds[i % 10];
		snprintf(env, sizeof env, "/srv/ws%ld/.venv", i % 500);
		snprintf(pkg, sizeof pkg, "pkg%ld", i % 5000);
		snprintf(args, sizeof args, "pyward venv install %s", pkg);
		sqlite3_reset(op);
		sqlite3_bind_int64(op, 1, i);
		sqlite3_bind_text(op, 2, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(op, 3, env, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(op, 4, args, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(op, 5, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(op, 6, i % 97 == 0 ? PW_OUTCOME_TIMED_OUT : PW_OUTCOME_OK, -1, SQLITE_STATIC);
		if (sqlite3_step(op) != SQLITE_DONE)
			rc = SQLITE_ERROR;
		for (int seq = 1; rc == SQLITE_OK && seq <= 2; seq++) {
			sqlite3_reset(at);
			sqlite3_bind_int64(at, 1, i);
			sqlite3_bind_int(at, 2, seq);
			sqlite3_bind_text(at, 3, seq == 1 ? "http://127.0.0.1:9/simple/" : "https://mirror.example/simple/",
					  -1, SQLITE_STATIC);
			sqlite3_bind_int(at, 4, seq == 1 ? 1 : 0);
			sqlite3_bind_text(at, 5, seq == 1 ? "network" : "ok", -1, SQLITE_STATIC);
			sqlite3_bind_text(at, 6, when, -1, SQLITE_TRANSIENT);
			if (sqlite3_step(at) != SQLITE_DONE)
				rc = SQLITE_ERROR;
		}
		if (rc == SQLITE_OK && strcmp(kind, "venv.install") == 0) {
			sqlite3_reset(pc);
			sqlite3_bind_int64(pc, 1, i);
			sqlite3_bind_text(pc, 2, env, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(pc, 3, pkg, -1, SQLITE_TRANSIENT);
			if (sqlite3_step(pc) != SQLITE_DONE)
				rc = SQLITE_ERROR;
		}
	}
	sqlite3_finalize(op);
	sqlite3_finalize(at);
	sqlite3_finalize(pc);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "catalog_fill: %s\n", sqlite3_errmsg(db));
	pw_catalog_close(&c);
	return rc == SQLITE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[2], "--bulk") == 0)
		return bulk(argv[1], strtol(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[2], "--open") == 0) { /* only open it for writing: an older file is migrated */
		pw_catalog *c = NULL;
		pw_err *e = pw_catalog_open(argv[1], PW_CATALOG_READ_WRITE, &c);
		pw_catalog_close(&c);
		return e ? fail(e) : 0;
	}
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: catalog_fill CATALOG_PATH [EXTRA_OPERATIONS | --bulk N | --open]\n");
		return 2;
	}
	pw_catalog *c = NULL;
	pw_err *e = pw_catalog_open(argv[1], PW_CATALOG_READ_WRITE, &c);
	if (e)
		return fail(e);
	e = fill(c);
	if (!e && argc == 3)
		e = fill_many(c, strtol(argv[2], NULL, 10));
	pw_catalog_close(&c);
	return e ? fail(e) : 0;
}
