#!/bin/sh
# history prune and export with the HTTP API's jobs (api_jobs): a job goes
# with the operation it ran and stays while that operation stays; a job
# that ran none goes by its own date unless its server still runs it;
# export writes each job, with its operation or on a line of its own.
# The catalog is a real one pyward made; the jobs and operations of other
# dates are rows written into it with the sqlite3 shell (a server cannot
# be made to have run a job in January).
. "$TOP_SRCDIR/tests/lib.sh"
command -v sqlite3 >/dev/null || skip_all "the sqlite3 shell is needed"
make_world
trap 'kill "$LIVE" 2>/dev/null; wait "$LIVE" 2>/dev/null; rm -rf "$WORLD"' EXIT
SYS_PY=${PYTHON3:-python3}
P() { run --box-root "$WORLD/box" "$@"; }
J() { printf '%s' "$OUT" | "$SYS_PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
DB="$WORLD/box/catalog.sqlite3"
Q() { sqlite3 "$DB" "$1"; }
plan 18

# A catalog of pyward's own making (the prune of nothing records itself).
P history prune --before 2000-01-01 --yes
is "$RC" 0 "a first prune makes the catalog"
op() { # kind started_at: a finished operation; prints its id
	Q "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)
	   VALUES ('$1', 't', 'a', '$2', '$2', 'ok', 'x', 0, 'h', 1, '0'); SELECT last_insert_rowid();"
}
job() { # id created_at state result host pid proc_start
	Q "INSERT INTO api_jobs (id, kind, target, user, args, host, pid, proc_start, created_at, finished_at, state, result, error, events)
	   VALUES ($1, 'venv.install', 'env', 'ops-team', 'POST /api/venvs/install', '$5', $6, $7, '$2',
	           CASE WHEN '$3' = 'running' THEN NULL ELSE '$2' END, '$3', $4, NULL, 3)"
}
HOST=$(hostname)
OLD=$(op venv.install 2026-01-01T00:00:00.000Z)
NEW=$(op venv.install 2026-07-01T00:00:00.000Z)
job 101 2026-01-01T00:00:00.000Z ok "'{\"schema\":1,\"operation\":$OLD}'" h 1 0           # goes with OLD
job 102 2026-05-31T23:59:00.000Z ok "'{\"schema\":1,\"operation\":$NEW}'" h 1 0           # older than the date, but NEW stays
job 103 2026-01-02T00:00:00.000Z failed NULL h 1 0                                        # ran none, old: goes
job 104 2026-07-02T00:00:00.000Z failed NULL h 1 0                                        # ran none, new: stays
job 105 2026-01-03T00:00:00.000Z running NULL "$HOST" 999999999 1                         # its server is gone: interrupted, goes
sleep 300 & LIVE=$!
job 106 2026-01-04T00:00:00.000Z running NULL "$HOST" "$LIVE" "$(awk '{print $22}' "/proc/$LIVE/stat")" # a live server runs it: stays
job 107 2026-07-03T00:00:00.000Z ok "'{\"schema\":1,\"operation\":999999}'" h 1 0         # its operation was pruned before: goes
job 108 2026-01-05T00:00:00.000Z ok "'not json'" h 1 0                                    # a result that is not JSON: by its date

# ---- export, before the prune: every job, with its operation or alone
P history export
is "$RC" 0 "export exits 0"
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c '
import json, sys
ls = [json.loads(l) for l in sys.stdin]
print(" ".join("%s:%s" % (o.get("id", "-"), o["api_job"]["id"] if "api_job" in o else "-") for o in ls if "api_job" in o or o["kind"] == "venv.install"))')" \
	"$OLD:101 $NEW:102 -:103 -:105 -:106 -:108 -:104 -:107" \
	"jsonl: each operation with the job that ran it, then each job that ran none (or whose operation is gone), oldest first"
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c '
import json, sys
j = [json.loads(l) for l in sys.stdin if "\"api_job\"" in l][0]["api_job"]
print(j["state"], j["user"], j["command"], j["created_at"])')" \
	"ok ops-team POST /api/venvs/install 2026-01-01T00:00:00.000Z" "a job says its state, who asked, the request and when"
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c '
import json, sys
print(sorted(json.loads(l)["api_job"]["state"] for l in sys.stdin if l.startswith("{\"api_job\"")))')" \
	"['failed', 'failed', 'interrupted', 'ok', 'ok', 'running']" "a job alone is a line of its own, with its state (a gone server's job reads interrupted)"
P history export --since 2026-06-01
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c '
import json, sys
print([json.loads(l)["api_job"]["id"] for l in sys.stdin if "\"api_job\"" in l])')" \
	"[102, 104, 107]" "--since applies to jobs alone by their own date, and a job comes with its operation"
P history export --format csv
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c '
import csv, sys
r = list(csv.DictReader(sys.stdin))
print(" ".join("%s:%s:%s" % (x["id"] or "-", x["api_job"] or "-", x["outcome"]) for x in r if x["api_job"]))')" \
	"$OLD:101:ok $NEW:102:ok -:103:failed -:105:interrupted -:106:running -:108:ok -:104:failed -:107:ok" \
	"csv: an api_job column, and a row without an id for each job alone"

# ---- prune: the jobs go with their operations, or by their own date
P history prune --before 2026-06-01 --yes --json
is "$RC" 0 "prune exits 0"
is "$(J 'd["operations"], d["api_jobs"]')" "1 5" "--json counts the API jobs it deleted"
is "$(Q 'SELECT group_concat(id, " ") FROM (SELECT id FROM api_jobs ORDER BY id)')" "102 104 106" \
	"left: the job of a kept operation, a new one, one a live server runs"
is "$(Q "SELECT count(*) FROM api_jobs WHERE CASE WHEN json_valid(result) AND json_type(result, '\$.operation') = 'integer' THEN json_extract(result, '\$.operation') NOT IN (SELECT id FROM operations) ELSE 0 END")" 0 \
	"no job is left pointing at a pruned operation"
like "$(Q "SELECT note FROM operations WHERE kind = 'history.prune' ORDER BY id DESC LIMIT 1")" "1 operations .* 5 API jobs" \
	"the prune's record counts the jobs"
P history prune --before 2026-06-02 --yes
like "$OUT" "and 0 API jobs; recorded as operation" "the text says how many jobs went"
# The job's operation goes, the job goes with it.
Q "UPDATE operations SET started_at = '2026-01-01T00:00:00.000Z' WHERE id = $NEW"
P history prune --before 2026-06-01 --yes --json
is "$(J 'd["operations"], d["api_jobs"]')" "1 1" "a job goes when its operation does, whatever its own date"
kill "$LIVE"; wait "$LIVE" 2>/dev/null
P history prune --before 2026-06-01 --yes --json
is "$(J 'd["api_jobs"]') $(Q 'SELECT group_concat(id) FROM api_jobs')" "1 104" "once its server is gone, the running job reads interrupted and goes"

# ---- a date in the future: what is still running stays (on 20c4826 the
# running operation was deleted, and its job later named a gone operation)
sleep 300 & LIVE=$!
sleep 1
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
Q "INSERT INTO operations (kind, target, args, started_at, user, uid, host, pid, pyward_version)
	VALUES ('venv.install', 'still-running', 'a', '$NOW', 'x', 0, '$HOST', $LIVE, '0')"
Q "INSERT INTO operations (kind, target, args, started_at, user, uid, host, pid, pyward_version)
	VALUES ('venv.install', 'interrupted', 'a', '2026-01-06T00:00:00.000Z', 'x', 0, '$HOST', 999999999, '0')"
job 109 2026-01-07T00:00:00.000Z running NULL "$HOST" "$LIVE" "$(awk '{print $22}' "/proc/$LIVE/stat")"
P history prune --before 2999-01-01 --yes --json
is "$RC" 0 "a prune dated in the future exits 0"
is "$(Q "SELECT group_concat(target) FROM operations WHERE kind = 'venv.install'")" "still-running" \
	"it keeps the operation whose process still runs and deletes the interrupted one"
is "$(Q 'SELECT group_concat(id) FROM api_jobs')" "109" "and keeps the job a live server runs"
