#!/bin/sh
# pyward runtime baseline: binary wheels into the managed runtime's own
# site-packages, through the attempt chain, recorded in the catalog.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
trap 'stop_servers; rm -rf "$WORLD"' EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
set -- $(sh "$FIX/make_runtime_archive.sh" "$WORLD/rt") || skip_all "no system CPython to build the fixture from"
VER=$1 SHA=$2
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
BOX="$WORLD/box"
PY="$BOX/runtime/python/current/bin/python3"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
printf 'pwtest-beta\n' > "$WORLD/reqs.txt"
unset PYWARD_MIRRORS PIP_INDEX_URL
export PYWARD_PROXY_PORTS=$(closed_port)
plan 9

P runtime baseline --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL"
is "$RC" 3 "baseline without a runtime is refused"
like "$ERR" "not provisioned" "and says why"

write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:1/x.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pins.tsv" --archive "$WORLD/rt/cpython-fixture-install_only.tar.gz" --yes
is "$RC" 0 "a runtime (without pip) is installed"

P --mode read-only runtime baseline --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL"
is "$RC" 3 "read-only mode refuses the baseline"

P runtime baseline --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL" --json
is "$RC" 0 "baseline exits 0"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["outcome"], d["attempts"][0]["class"], "--only-binary=:all:" in d["attempts"][0]["argv"])')" "ok ok True" "one ok attempt, binary wheels only"
is "$("$PY" -I -c 'import pwtest_beta, pwtest_alpha; print("ok")' 2>&1)" "ok" "the baseline and its dependency import in the managed runtime"
ok "it went into the runtime's own site-packages" sh -c "ls '$BOX'/runtime/python/current/lib/python*/site-packages/pwtest_beta* >/dev/null"
P history --kind runtime.baseline
like "$OUT" "runtime\\.baseline +ok +1" "the baseline is in the history with its attempt"

done_testing
