#!/bin/sh
# Background jobs end to end: `venv install --background` against the real
# loopback index (and a stalled one), real pip in a real venv, and the
# `jobs` command reading the catalog and the job logs.
. "$TOP_SRCDIR/tests/lib.sh"
pip_world # a job still running when a check failed is stopped by its pid (KILL_PIDS)
clean() { "$WS/.venv/bin/python" -m pip uninstall -y -q pwtest-alpha pwtest-beta >/dev/null 2>&1; }
# state ID: the job's state from `jobs --json`
state() {
	P jobs --json
	J "[j['state'] for j in d['jobs'] if j['id'] == $1][0]"
}
# wait_state ID STATE: poll (at most 60 s) until the job is in STATE
wait_state() {
	_i=0
	while [ "$(state "$1")" != "$2" ] && [ $_i -lt 300 ]; do sleep 0.2; _i=$((_i + 1)); done
	state "$1"
}
# wait_log ID TEXT: poll (at most 60 s) until the job's log holds TEXT
wait_log() {
	_i=0
	while ! grep -q -- "$2" "$WS/.pyward/jobs/$1.log" 2>/dev/null && [ $_i -lt 300 ]; do sleep 0.2; _i=$((_i + 1)); done
	grep -q -- "$2" "$WS/.pyward/jobs/$1.log" 2>/dev/null
}
# start_job ARGS...: a background install with --json; sets JOB and JPID
start_job() {
	P --json venv install --background "$@"
	JOB=$(J 'd["job_id"]' 2>/dev/null)
	JPID=$(J 'd["job"]["pid"]' 2>/dev/null)
	KILL_PIDS="$KILL_PIDS $JPID"
}
plan 65

P venv create --python "$SYS_PY"
is "$RC" 0 "a venv to install into"

# ---- refused before anything starts
P --mode read-only venv install --background --index "$INDEX_ok_URL" pwtest-alpha
is "$RC" 3 "read-only mode refuses a background install (exit 3)"
like "$ERR" "mode is read-only" "and says why"
P venv install --background --venv ../escape pwtest-alpha
is "$RC" 3 "a target outside the workspace is refused at once, not in the job"
P venv install --background --index "$INDEX_ok_URL" --not-an-option
is "$RC" 2 "a bad option is a usage error at once"
P venv create --background
is "$RC" 2 "--background is only for install and uninstall"
P jobs --json
is "$(J 'len(d["jobs"])')" "0" "no job was recorded for refused commands"

# ---- a job holding the environment's lock, a second one waiting for it
start_job --index "$INDEX_stall_URL" pwtest-alpha
is "$RC" 0 "a background install against a stalled index starts"
is "$(J 'd["job"]["state"], d["job"]["kind"], d["job"]["target"]')" "running venv.install $WS/.venv" "--json: the job, running, its kind and target"
A=$JOB
ok "its log says pip started" wait_log "$A" "pip install from $INDEX_stall_URL"
P venv install --background --index "$INDEX_ok_URL" pwtest-alpha
is "$RC" 0 "a second background install returns at once"
like "$OUT" "^job [0-9]+ started in the background" "it prints the job id"
like "$OUT" "pyward jobs log [0-9]+ --follow" "and how to follow it"
like "$OUT" "pyward jobs wait [0-9]+" "and how to wait for it"
B=$(printf '%s\n' "$OUT" | sed -n 's/^job \([0-9]*\) started.*(pid \([0-9]*\)).*/\1/p')
KILL_PIDS="$KILL_PIDS $(printf '%s\n' "$OUT" | sed -n 's/^job [0-9]* started.*(pid \([0-9]*\)).*/\1/p')"
P jobs
like "$OUT" "^ID +STATE +KIND +STARTED +DURATION +TARGET" "jobs lists a header"
like "$OUT" "^$B +running +venv.install .*$WS/.venv" "the second job is listed running (waiting for the lock)"
like "$OUT" "^$A +running +venv.install" "the first job is listed running"

# ---- cancel the stalled one; the waiting one then runs
P jobs cancel "$A"
is "$RC" 0 "jobs cancel exits 0"
like "$OUT" "job $A: cancelled" "the job is cancelled"
like "$OUT" "cancelled by .* \\('pyward jobs cancel'\\)" "the stop reason says who cancelled it"
P jobs show "$A" --json
is "$(J 'd["job"]["state"], d["job"]["exit_status"], d["job"]["cancelled_by"] is not None')" "cancelled 130 True" "show --json: cancelled, exit 130, who"
is "$(J 'd["job"]["operations"][0]["outcome"], len(d["job"]["operations"][0]["attempts"])')" "cancelled 1" "its operation was cancelled after one attempt"
is "$(J 'd["job"]["operations"][0]["attempts"][0]["index_url"]')" "$INDEX_stall_URL" "the attempt names the stalled index"
is "$(J '(a := d["job"]["operations"][0]["attempts"][0])["index"] == a["index_url"] and a["argv"] == a["command"] and "pip" in a["command"]')" \
	"True" "and has the older names index and argv too, with the same values"
like "$(J 'd["job"]["stop_reason"]')" "interrupted during attempt 1 \\(pip install against $INDEX_stall_URL\\)" "the stop reason names the running attempt"
like "$(J 'd["job"]["log_tail"]')" "job $A finished: cancelled" "the log tail is in show"
P jobs show "$A"
like "$OUT" "state: +cancelled" "show: the state"
like "$OUT" "attempt 1: $INDEX_stall_URL .*exit -1" "show: the attempts so far"
like "$OUT" "log \\(last [0-9]+ lines\\):" "show: the log tail"
P jobs wait "$B"
is "$RC" 0 "jobs wait returns the job's exit status (0)"
like "$OUT" "job $B: ok \\(exit status 0\\)" "jobs wait says how it ended"
is "$(state "$B")" "ok" "the second job is listed ok"
is "$("$WS/.venv/bin/python" -c 'import pwtest_alpha; print(pwtest_alpha.VERSION)' 2>&1)" "1.1" "the package is importable afterwards"
P jobs show "$B" --json
is "$(J 'list(d)')" "['schema', 'job']" "jobs show --json: the result envelope, schema first"
BOP=$(J 'd["job"]["operations"][0]["id"]')
P jobs --json
is "$(J 'list(d)')" "['schema', 'jobs']" "jobs --json: the result envelope, schema first"
P jobs show "$B" --json
BCMD=$(J 'd["job"]["command"]')
P --json history --kind venv.install
is "$(J "[o['command'] for o in d['operations'] if o['id'] == $BOP][0]")" "$BCMD" \
	"the job's operation records the command as it was given (the job's), not the detached copy's"
like "$BCMD" "venv install --background --index $INDEX_ok_URL pwtest-alpha\$" "which is the command typed"
unlike "$BCMD" "--mode" "without the options the detached copy is started with"
is "$(J "[o['user'] for o in d['operations'] if o['id'] == $BOP][0]")" "$(id -un)" "the operation names the user who started the job"
P jobs log "$B"
like "$OUT" "Successfully installed pwtest-alpha" "the log holds pip's output"
like "$OUT" "job $B finished: ok, exit status 0" "the log ends with the job's end"
P jobs wait "$A"
is "$RC" 130 "jobs wait on the cancelled job exits 130"
P jobs cancel "$B"
is "$RC" 1 "cancelling a finished job is an error"
like "$ERR" "not running \\(ok\\)" "it says the job is over"

# ---- follow a job to its end
clean
start_job --index "$INDEX_ok_URL" pwtest-beta
F=$JOB
timeout 120 "$PYWARD" --box-root "$WORLD/box" -C "$WS" jobs log "$F" --follow >"$WORLD/follow.out" 2>&1
is "$?" 0 "jobs log --follow ends when the job ends"
like "$(cat "$WORLD/follow.out")" "job $F finished: ok" "and has followed it to the last line"

# ---- a job killed with kill -9 reads as interrupted
clean # pip asks no index for what is installed already
start_job --index "$INDEX_stall_URL" pwtest-alpha
K=$JOB
ok "the job started pip" wait_log "$K" "pip install from"
kill -9 "$JPID"
is "$(wait_state "$K" interrupted)" "interrupted" "a killed job shows as interrupted"
ok "its log says it was killed" wait_log "$K" "killed by signal 9"
P jobs wait "$K"
is "$RC" 130 "jobs wait on an interrupted job exits 130"
P history --kind venv.install --outcome interrupted
like "$OUT" "interrupted" "its operation is interrupted in the history too"
no_stalled_pip() { ! ps -eo args | grep -v grep | grep -q -- "--index-url $INDEX_stall_URL"; }
wait_until 60 "the pip the killed job left to be stopped" no_stalled_pip
ok "the pip it left behind was stopped" sh -c "! ps -eo args | grep -v grep | grep -q -- '--index-url $INDEX_stall_URL'"

# ---- the caller's time budget goes with the job
clean
P --timeout 3 --json venv install --background --index "$INDEX_stall_URL" pwtest-alpha
T=$(J 'd["job_id"]')
is "$(J 'd["job"]["budget_s"]')" "3.0" "the job carries the caller's budget"
P jobs wait "$T"
is "$RC" 4 "a job past its budget ends timed-out (exit 4)"
P jobs show "$T" --json
like "$(J 'd["job"]["state"], d["job"]["stop_reason"]')" "timed-out the time budget ran out during attempt 1" "show: timed-out, with the stop reason"

# ---- waiting has a budget too; read-only mode
clean
start_job --index "$INDEX_stall_URL" pwtest-alpha
W=$JOB
P --timeout 1 jobs wait "$W"
is "$RC" 4 "jobs wait --timeout gives up with exit 4"
like "$ERR" "job $W is still running" "and says the job still runs"
P --mode read-only jobs cancel "$W"
is "$RC" 3 "read-only mode refuses jobs cancel"
P --mode read-only jobs
is "$RC" 0 "read-only mode lists jobs"
P jobs cancel "$W" --json
is "$(J 'd["job"]["state"]')" "cancelled" "cancel --json"

# ---- shapes and errors
P jobs --json
is "$(J 'sorted(k for k in d["jobs"][0] if k in ("id","state","kind","target","started_at","duration_ms","exit_status","log","pid"))')" \
	"['duration_ms', 'exit_status', 'id', 'kind', 'log', 'pid', 'started_at', 'state', 'target']" "jobs --json: the fields of a job"
P jobs show 99999
is "$RC" 1 "show of an unknown job fails"
like "$ERR" "no job 99999" "and names it"
P jobs show abc
is "$RC" 2 "a job id that is not a number is a usage error"
ok "job logs stay in the workspace's git-ignored state folder" test -f "$WS/.pyward/jobs/$A.log" -a -f "$WS/.pyward/.gitignore"
done_testing
