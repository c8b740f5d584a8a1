#!/bin/sh
# pyward serve: two consented installs through the API from the loopback
# HTTPS mirror (two releases), then a successful rollback through the API,
# checked against the status, the links on disk and the catalog. Between the
# installs the server is restarted: a finished job still answers, from the
# catalog, with its state and result, and job ids are not used twice; a job
# whose server was killed (SIGKILL) mid-download reads "interrupted".
. "$TOP_SRCDIR/tests/lib.sh"
serve_world
runtime_fixture "$WORLD/srv/rel/1"
ARCH="$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz"
# Release 2: the same tree with a marker file, so the two installs differ.
mkdir -p "$WORLD/srv/rel/2" "$WORLD/re"
tar -xzf "$ARCH" -C "$WORLD/re" && echo '# release 2' > "$WORLD/re/python/RELEASE2" &&
	tar -czf "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" -C "$WORLD/re" python || skip_all "cannot make release 2"
SHA2=$(sha256sum "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" | cut -d' ' -f1)
# Release 3: never installed, only served slowly, so a download is under way
# whenever a test stops its server. Release 4: its interpreter takes 30 s to
# start (a sitecustomize that sleeps), so a cancel lands in the probe.
mkdir -p "$WORLD/srv/rel/3" "$WORLD/srv/rel/4"
echo '# release 3' > "$WORLD/re/python/RELEASE3" &&
	tar -czf "$WORLD/srv/rel/3/cpython-fixture-install_only.tar.gz" -C "$WORLD/re" python || skip_all "cannot make release 3"
SHA3=$(sha256sum "$WORLD/srv/rel/3/cpython-fixture-install_only.tar.gz" | cut -d' ' -f1)
SIZE3=$(wc -c < "$WORLD/srv/rel/3/cpython-fixture-install_only.tar.gz" | tr -d ' ')
rm -f "$WORLD/re/python/RELEASE3"
for _d in "$WORLD"/re/python/lib/python3*/site-packages; do
	printf 'import time\ntime.sleep(30)\n' > "$_d/sitecustomize.py"
done
tar -czf "$WORLD/srv/rel/4/cpython-fixture-install_only.tar.gz" -C "$WORLD/re" python || skip_all "cannot make release 4"
SHA4=$(sha256sum "$WORLD/srv/rel/4/cpython-fixture-install_only.tar.gz" | cut -d' ' -f1)
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
write_pins "$WORLD/pins1.tsv" "$VER" 1 "https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz" "$SHA" "$SIZE"
write_pins "$WORLD/pins2.tsv" "$VER" 2 "https://localhost:$HTTPSD_PORT/rel/2/cpython-fixture-install_only.tar.gz" "$SHA2"
write_pins "$WORLD/slow.tsv" "$VER" 3 "https://localhost:$HTTPSD_PORT/slow/100000/rel/3/cpython-fixture-install_only.tar.gz" "$SHA3" "$SIZE3"
# The job a test kills: at 20 kB/s the archive takes minutes, so the kill
# lands mid-download however slow the machine is (100 kB/s left a loaded
# one's job finishing first, resuming what the SIGTERM job had left).
write_pins "$WORLD/slower.tsv" "$VER" 3 "https://localhost:$HTTPSD_PORT/slow/20000/rel/3/cpython-fixture-install_only.tar.gz" "$SHA3" "$SIZE3"
write_pins "$WORLD/pins4.tsv" "$VER" 4 "https://localhost:$HTTPSD_PORT/rel/4/cpython-fixture-install_only.tar.gz" "$SHA4"
mkdir -p "$BOX"
SOCK="$WORLD/api.sock"
printf 'audit_log = none\n' > "$PYWARD_SYSTEM_CONFIG"

# jserve NAME ARGS...: serve (tests/lib.sh) on $SOCK, trusting the test CA.
jserve() { _jn=$1; shift; serve "$_jn" --listen "unix:$SOCK" --cacert "$CA_PEM" "$@"; }
U() { _m=$1 _p=$2; shift 2; CODE=$(curl -s -o "$WORLD/body" -w '%{http_code}' --unix-socket "$SOCK" -X "$_m" "$@" "http://localhost$_p"); BODY=$(cat "$WORLD/body"); }
# install NAME: a consented install through the API, followed to its end;
# JOB is its id, END the stream's last line.
install() {
	U POST /api/runtime/python/install --data '{"consent": true}'
	JOB=$(J 'd["id"]')
	$CLIENT --unix "$SOCK" follow "$JOB" > "$WORLD/$1.sse" 2>&1
	END=$(tail -n 1 "$WORLD/$1.sse")
}
# last_install_is OUTCOME DESCRIPTION: the newest runtime.install in the
# box's catalog ended OUTCOME.
last_install_is() {
	run --box-root "$BOX" history --kind runtime.install --json
	is "$(newest_op outcome)" "$1" "$2"
}
ME=$(id -un)

plan 45

# ---- release 1, then release 2, each through the API
jserve one --pins "$WORLD/pins1.tsv"
ONE=$SERVE_PID
install first
is "$END" "final ok" "the first install through the API ends ok"
FIRST=$JOB
stop_serve "$ONE"
jserve two --pins "$WORLD/pins2.tsv"
TWO=$SERVE_PID

# ---- after a restart: the first server's job, from the catalog
U GET "/api/jobs/$FIRST"
is "$CODE" 200 "after a restart GET /api/jobs/ID of the earlier server's job: 200"
is "$(J 'd["id"], d["state"], d["result"]["result"], d["user"]')" "$FIRST ok installed $ME" \
	"with its final state, result and caller"
is "$(J 'd["live"], d["kind"], d["finished_at"] is not None')" "False runtime.install True" \
	"marked as not live (read from the catalog), with its kind and end time"
curl -s -N --max-time 10 --unix-socket "$SOCK" "http://localhost/api/jobs/$FIRST/events" > "$WORLD/first-events.txt"
is "$(grep -c '^event: result' "$WORLD/first-events.txt") $(grep -c '^event: ' "$WORLD/first-events.txt")" "1 1" \
	"its event stream gives the result once and ends"
is "$(sed -n 's/^data: //p' "$WORLD/first-events.txt" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(d.get("schema"), d["id"])')" \
	"1 $FIRST" "the stored result event's job carries \"schema\": 1, as GET /api/jobs/ID does"
is "$(sed -n 's/^[0-9]* result //p' "$WORLD/first.sse" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(d.get("schema"), d["state"])')" \
	"1 ok" "the live result event's job carries \"schema\": 1 too"
LAST=$(sed -n 's/^id: //p' "$WORLD/first-events.txt")
is "$LAST" "$(grep -c '^[0-9]' "$WORLD/first.sse")" "numbered as the last event the first server sent"
curl -s -N --max-time 10 -H "Last-Event-ID: $LAST" --unix-socket "$SOCK" "http://localhost/api/jobs/$FIRST/events" > "$WORLD/first-events2.txt"
is "$(wc -c < "$WORLD/first-events2.txt" | tr -d ' ')" 0 "resumed after that event: nothing more"
U DELETE "/api/jobs/$FIRST"
is "$CODE $(J 'd["error"]["code"]')" "409 not-running-here" "cancelling an earlier server's finished job: 409"

install second
is "$END" "final ok" "the second install (release 2) ends ok"
ok "job ids are not used twice across restarts ($FIRST, then $JOB)" test "$JOB" -gt "$FIRST"
U GET /api/jobs
is "$(J '" ".join("%s:%s" % (o["id"], o["live"]) for o in d["jobs"])')" "$JOB:True $FIRST:False" \
	"GET /api/jobs lists this server's job and the earlier one, newest first"
U GET /api/runtime/python
is "$(J 'd["release"], d["previous_version"]')" "2 $VER" "status: release 2 is current, $VER the previous one"
ok "release 2's tree is current on disk" test -e "$BOX/runtime/python/current/RELEASE2"

# ---- rollback through the API
U POST /api/runtime/python/rollback
is "$CODE" 200 "POST /api/runtime/python/rollback: 200"
is "$(J 'd["current_version"]')" "$VER" "the answer names the version now current"
U GET /api/runtime/python
is "$(J 'd["state"], d["release"], d["sha256"]')" "installed 1 $SHA" "status switched back to release 1"
is "$(J 'd["previous_version"]')" "$VER" "with release 2 kept as the previous install"
ok "release 1's tree is current on disk" test ! -e "$BOX/runtime/python/current/RELEASE2"
ok "and its interpreter runs" "$BOX/runtime/python/current/bin/python3" -c 'pass'
run --box-root "$BOX" history --kind runtime.rollback --json
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; o=json.load(sys.stdin)["operations"]; print(len(o), o[0]["outcome"], o[0]["user"], o[0]["command"])')" \
	"1 ok $ME POST /api/runtime/python/rollback (api)" "the catalog has the rollback: ok, by the peer's user, with the request"
U POST /api/runtime/python/rollback
is "$CODE" 200 "rolling forward again through the API: 200"
ok "release 2 is current again" test -e "$BOX/runtime/python/current/RELEASE2"
run --box-root "$BOX" history --kind runtime.rollback --json
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; print(" ".join(o["outcome"] for o in json.load(sys.stdin)["operations"]))')" \
	"ok ok" "both rollbacks are in the catalog"
stop_serve "$TWO"

# ---- a cancel that lands while the new interpreter is probed: cancelled,
# not "failed" (the probe did not fail: it was stopped)
jserve probe --pins "$WORLD/pins4.tsv"
PROBE=$SERVE_PID
U POST /api/runtime/python/install --data '{"consent": true}'
PJOB=$(J 'd["id"]')
$CLIENT --unix "$SOCK" wait-stage "$PJOB" --stage probe >/dev/null 2>&1
is "$?" 0 "an install reaches its probe (an interpreter that takes 30 s to start)"
U DELETE "/api/jobs/$PJOB"
$CLIENT --unix "$SOCK" follow "$PJOB" > "$WORLD/probe.sse" 2>&1
is "$(tail -n 1 "$WORLD/probe.sse")" "final cancelled" "a cancel during the probe ends the job cancelled"
last_install_is cancelled "and its operation is recorded cancelled"
ok "release 2 is still current" test -e "$BOX/runtime/python/current/RELEASE2"
stop_serve "$PROBE"

# ---- a job whose server is stopped (SIGTERM) mid-download: cancelled, on record
jserve stopped --pins "$WORLD/slow.tsv"
STOPPED=$SERVE_PID
U POST /api/runtime/python/install --data '{"consent": true}'
TERMED=$(J 'd["id"]')
$CLIENT --unix "$SOCK" wait-progress "$TERMED" >/dev/null 2>&1
is "$?" 0 "a slow install is under way when the server gets SIGTERM"
stop_serve "$STOPPED"
last_install_is cancelled "the server cancelled its job before it stopped"

# ---- a job whose server is killed mid-download: interrupted, not gone
rm -f "$BOX/cache/downloads/$SHA3.tar.gz.part" # from the start, not resumed
jserve three --pins "$WORLD/slower.tsv"
THREE=$SERVE_PID
U POST /api/runtime/python/install --data '{"consent": true}'
SLOW=$(J 'd["id"]')
$CLIENT --unix "$SOCK" wait-progress "$SLOW" >/dev/null 2>&1
is "$?" 0 "a slow install is under way"
kill -9 "$THREE"; wait "$THREE" 2>/dev/null
rm -f "$SOCK"
printf 'pwtest-fake\n' > "$WORLD/reqs.txt"
jserve four --pins "$WORLD/pins2.tsv" --requirements "$WORLD/reqs.txt"
FOUR=$SERVE_PID
U GET "/api/jobs/$SLOW"
is "$CODE" 200 "after the server was killed, its job still answers"
is "$(J 'd["state"], d["error"]["code"], d["live"]')" "interrupted interrupted False" "as interrupted"
like "$(J 'd["error"]["message"]')" "stopped before the job ended" "and says why"
is "$(J 'd["finished_at"]')" "None" "with no end time (it never ended)"
U GET "/api/jobs/$TERMED"
is "$(J 'd["state"], d["error"]["code"], d["finished_at"] is not None')" "cancelled cancelled True" \
	"the job of the server stopped with SIGTERM reads cancelled, with its end time"
$CLIENT --unix "$SOCK" follow "$SLOW" > "$WORLD/slow.sse" 2>&1
is "$(tail -n 1 "$WORLD/slow.sse")" "final interrupted" "the SSE client following it gets the interrupted result"
last_install_is interrupted "the catalog's operation of that job reads interrupted too"
ok "release 2 is still current (the killed install changed nothing)" test -e "$BOX/runtime/python/current/RELEASE2"

# ---- the status answered from a copy (status_cache.c) still shows, at
# once, a change made outside the server: a rollback by the CLI, a
# distribution added to site-packages
U GET /api/runtime/python
U GET /api/runtime/python
is "$(J 'd["release"], d["baseline"]["missing"]')" "2 ['pwtest-fake']" "status: release 2, the baseline's one name missing"
run --box-root "$BOX" -C "$WORLD/ws" runtime rollback
U GET /api/runtime/python
is "$(J 'd["release"], d["previous_version"]')" "1 $VER" "right after a CLI rollback the API's status says release 1"
SITE=$(ls -d "$BOX"/runtime/python/current/lib/python3*/site-packages | head -n 1)
mkdir "$SITE/pwtest_fake-1.0.dist-info" &&
	printf 'Metadata-Version: 2.1\nName: pwtest-fake\nVersion: 1.0\n' > "$SITE/pwtest_fake-1.0.dist-info/METADATA"
U GET /api/runtime/python
is "$(J 'd["baseline"]["missing"], d["baseline"]["state"]')" "[] installed" "a distribution added to site-packages shows at once"
rm -rf "$SITE/pwtest_fake-1.0.dist-info"
U GET /api/runtime/python
is "$(J 'd["baseline"]["missing"]')" "['pwtest-fake']" "and so does its removal"
run --box-root "$BOX" -C "$WORLD/ws" runtime rollback
U GET /api/runtime/python
is "$(J 'd["release"]')" "2" "and a second CLI rollback"
stop_serve "$FOUR"

done_testing
