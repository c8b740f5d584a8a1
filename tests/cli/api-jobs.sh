#!/bin/sh
# pyward serve: two consented installs through the API from the loopback
# HTTPS mirror (two releases), then a successful rollback through the API,
# checked against the status, the links on disk and the catalog.
. "$TOP_SRCDIR/tests/lib.sh"
command -v curl >/dev/null 2>&1 || skip_all "curl not installed"
make_world
SERVE_PIDS=""
stop_serves() { for _p in $SERVE_PIDS; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; SERVE_PIDS=""; }
trap 'stop_serves; stop_servers; stop_httpsd; rm -rf "$WORLD"' EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
CLIENT="${PYTHON3:-python3} $TOP_SRCDIR/tests/cli/api_client.py"
set -- $(sh "$FIX/make_runtime_archive.sh" "$WORLD/srv/rel/1") || skip_all "no system CPython to build the fixture from"
VER=$1 SHA=$2 SIZE=$3
ARCH="$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz"
# Release 2: the same tree with a marker file, so the two installs differ.
mkdir -p "$WORLD/srv/rel/2" "$WORLD/re"
tar -xzf "$ARCH" -C "$WORLD/re" && echo '# release 2' > "$WORLD/re/python/RELEASE2" &&
	tar -czf "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" -C "$WORLD/re" python || skip_all "cannot make release 2"
SHA2=$(sha256sum "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" | cut -d' ' -f1)
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
write_pins "$WORLD/pins1.tsv" "$VER" 1 "https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz" "$SHA" "$SIZE"
write_pins "$WORLD/pins2.tsv" "$VER" 2 "https://localhost:$HTTPSD_PORT/rel/2/cpython-fixture-install_only.tar.gz" "$SHA2"
write_pins "$WORLD/slow.tsv" "$VER" 3 "https://localhost:$HTTPSD_PORT/slow/100000/rel/1/cpython-fixture-install_only.tar.gz" "$SHA" "$SIZE"
BOX="$WORLD/box"
mkdir -p "$BOX"
SOCK="$WORLD/api.sock"
printf 'audit_log = none\n' > "$PYWARD_SYSTEM_CONFIG"

# serve NAME ARGS...: start pyward serve on $SOCK, wait for its listening line.
serve() {
	_n=$1; shift
	"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" serve --listen "unix:$SOCK" --cacert "$CA_PEM" "$@" 2>"$WORLD/$_n.err" &
	SERVE_PID=$!
	SERVE_PIDS="$SERVE_PIDS $SERVE_PID"
	_i=0
	while ! grep -q '^listening on' "$WORLD/$_n.err" 2>/dev/null && [ $_i -lt 200 ]; do
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.05; _i=$((_i + 1))
	done
	grep -q '^listening on' "$WORLD/$_n.err"
}
stop_serve() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
U() { _m=$1 _p=$2; shift 2; CODE=$(curl -s -o "$WORLD/body" -w '%{http_code}' --unix-socket "$SOCK" -X "$_m" "$@" "http://localhost$_p"); BODY=$(cat "$WORLD/body"); }
J() { printf '%s' "$BODY" | "${PYTHON3:-python3}" -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>&1; }
# install NAME: a consented install through the API, followed to its end;
# JOB is its id, END the stream's last line.
install() {
	U POST /api/runtime/python/install --data '{"consent": true}'
	JOB=$(J 'd["id"]')
	$CLIENT --unix "$SOCK" follow "$JOB" > "$WORLD/$1.sse" 2>&1
	END=$(tail -n 1 "$WORLD/$1.sse")
}
ME=$(id -un)

plan 14

# ---- release 1, then release 2, each through the API
serve one --pins "$WORLD/pins1.tsv"
ONE=$SERVE_PID
install first
is "$END" "final ok" "the first install through the API ends ok"
FIRST=$JOB
stop_serve "$ONE"
serve two --pins "$WORLD/pins2.tsv"
TWO=$SERVE_PID
install second
is "$END" "final ok" "the second install (release 2) ends ok"
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

done_testing
