#!/bin/sh
# Secrets end to end (issue 13, items 7 and 8): the userinfo of an index,
# mirror or proxy, in any form (with or without a scheme, passwords with
# '/' or '#'), never reaches pip's command line (which every user can read
# in /proc), the catalog, an output, a job log or an error message. Real
# pip, a real loopback index and proxy.
. "$TOP_SRCDIR/tests/lib.sh"
pip_world
start_proxy || skip_all "could not start the proxy fixture"
DEAD=$(closed_port)
# no_secret WORD DESCRIPTION: WORD is in no output so far, nor in the catalog
CAT="$WORLD/box/catalog.sqlite3"
in_catalog() { grep -aq -- "$1" "$CAT" "$CAT-wal" 2>/dev/null; }
plan 20

P venv create --python "$SYS_PY"
is "$RC" 0 "a venv to install into"
STALL_HP=${INDEX_stall_URL#http://}
STALL_HP=${STALL_HP%%/*}

# ---- item 8: index and proxy reach the running pip through its environment
"$PYWARD" --box-root "$WORLD/box" -C "$WS" --timeout 8 venv install \
	--index "http://alice:idx%2Fpw1@$STALL_HP/simple/" --proxy "http://bob:prxpw2@127.0.0.1:$PROXY_PORT" \
	pwtest-alpha >"$WORLD/bg.out" 2>"$WORLD/bg.err" &
BG=$!
KILL_PIDS="$KILL_PIDS $BG"
# pyward's child that runs pip (polled, at most 60 s)
wait_until 60 "pyward to start pip" pip_child "$BG"
PIP_PID=$(pip_child "$BG")
ok "pip is running against the stalled index" test -n "$PIP_PID"
CMDLINE=$(tr '\0' ' ' <"/proc/$PIP_PID/cmdline" 2>/dev/null)
ENVIRON=$(tr '\0' '\n' <"/proc/$PIP_PID/environ" 2>/dev/null)
unlike "$CMDLINE" "idx%2Fpw1|prxpw2|--index-url|--proxy" "pip's command line (readable by every user) holds neither index nor proxy"
like "$ENVIRON" "^PIP_INDEX_URL=http://alice:idx%2Fpw1@$STALL_HP/simple/\$" "the index reaches pip as PIP_INDEX_URL"
like "$ENVIRON" "^PIP_PROXY=http://bob:prxpw2@127.0.0.1:$PROXY_PORT\$" "the proxy reaches pip as PIP_PROXY"
like "$ENVIRON" "^PYTHONDONTWRITEBYTECODE=1\$" "pip writes no bytecode (item 15)"
wait "$BG"
is "$?" 4 "the stalled install stops at its budget"
P venv install --index "$INDEX_ok_URL" --proxy "http://bob:prxpw2@127.0.0.1:$PROXY_PORT" pwtest-alpha
like "$(cat "$WORLD/proxy.log")" "GET ${INDEX_ok_URL}pwtest-alpha/ 200" "pip goes through the proxy it gets in PIP_PROXY"
BGOUT=$(cat "$WORLD/bg.out" "$WORLD/bg.err")
unlike "$BGOUT" "idx%2Fpw1|prxpw2|alice|bob:" "the stop reason and output name no credentials"
ok "nor does the catalog (operations.args, attempts, stop_reason)" sh -c "! grep -aqE 'idx%2Fpw1|prxpw2' '$CAT' '$CAT-wal'"
P history --json
like "$OUT" "http://\\*\\*\\*@$STALL_HP/simple/" "history keeps where it went, the userinfo hidden"

# ---- item 7: the forms the redaction must understand, end to end
P venv install --index "http://u7:sl/ash#7@127.0.0.1:$DEAD/simple/" pwtest-alpha --json
is "$(J 'd["attempts"][0]["index"]')" "http://***@127.0.0.1:$DEAD/simple/" "a password with '/' and '#' is hidden in the attempt"
printf "%s\n" "$OUT$ERR" | grep "sl/ash" | sed "s/^/# /"
unlike "$OUT$ERR" "sl/ash" "and in every output"
P venv install --index "$INDEX_ok_URL" --proxy "carol:px#9/q@127.0.0.1:$DEAD" pwtest-beta --json
is "$(J 'd["attempts"][0]["proxy"]')" "***@127.0.0.1:$DEAD" "a proxy without a scheme is hidden in the attempt"
unlike "$OUT$ERR" "px#9|carol" "and in every output"
https_proxy="dave:amb#3@127.0.0.1:$DEAD" HTTPS_PROXY="dave:amb#3@127.0.0.1:$DEAD" P venv install --index "https://127.0.0.1:$DEAD/simple/" pwtest-beta
unlike "$OUT$ERR" "amb#3" "an ambient https_proxy without a scheme is not shown"
P venv install --index "erin:ix/8@127.0.0.1:$DEAD/simple/" pwtest-beta
unlike "$OUT$ERR" "ix/8" "an index without a scheme is not shown"
P --json venv install --background --index "http://frank:jb/5@127.0.0.1:$DEAD/simple/" pwtest-beta
JOB=$(J 'd["job_id"]' 2>/dev/null)
JPID=$(J 'd["job"]["pid"]' 2>/dev/null)
KILL_PIDS="$KILL_PIDS $JPID"
job_ended() { [ -n "$JPID" ] && pid_gone "$JPID"; }
wait_until 60 "the background job $JPID to end" job_ended
ok "the background job wrote its log" test -s "$WS/.pyward/jobs/$JOB.log"
ok "the job log names no credential" sh -c "! grep -q 'jb/5' '$WS/.pyward/jobs/$JOB.log'"
P history show "$(P history --json; J 'd["operations"][0]["id"]')"
ok "no form of any password above is in the catalog" sh -c "! grep -aqE 'sl/ash|px#9|amb#3|ix/8|jb/5' '$CAT' '$CAT-wal'"

done_testing
