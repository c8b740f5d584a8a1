/*
 * JSON pieces every operation's result shares, built here once so the CLI's
 * --json, the agent tool server's structured results and the HTTP API's
 * bodies are the same objects.
 *
 * An attempt has one shape: seq, index_url, proxy, command, exit_code,
 * class, duration_ms, output_tail; recorded ones (read back from the
 * catalog) add started_at, live ones (from the pip run just made) add
 * reason and probe. `index` and `argv`, the same values under the names of
 * earlier releases, are added only where pyward(1) promised them
 * (older_names: venv install and runtime baseline results, jobs show).
 * Threading: pure functions, callable from any thread.
 */
#ifndef PW_OPS_JSON_H
#define PW_OPS_JSON_H

#include "catalog.h"
#include "err.h"
#include "pip.h"

#include <jansson.h>
#include <stdbool.h>

/* A result with one member: {"schema": 1, key: value}, value taken. Every
 * result names its schema first, so a reader can tell a shape it does not
 * know; lists and single records share this envelope. */
json_t *pw_json_result(const char *key, json_t *value);
/* The same envelope around several members: {"schema": 1, then members'
 * own, in their order}; members taken. */
json_t *pw_json_result_of(json_t *members);
/* An error as every front end gives it: {"schema": 1, "error": {"code",
 * "message", "hint" (null when none), "exit_status"}}. */
json_t *pw_json_error(const pw_err *e);
/* The "error" member alone, for a front end's own errors (the HTTP API's
 * bad requests, its job records): the same four members, message and hint
 * cleaned by pw_json_str (hint NULL: null). */
json_t *pw_json_error_member(const char *code, const char *message, const char *hint, int exit_status);
/* A JSON string, or null for NULL; bytes that are not UTF-8 become U+FFFD. */
json_t *pw_json_str(const char *s);
/* One recorded attempt (history show, jobs show). */
json_t *pw_json_attempt_rec(const pw_attempt_rec *a, bool older_names);
/* The attempts of a pip run just made, as an array (older names included). */
json_t *pw_json_attempts(const pw_pip_result *res);

#endif
