#!/bin/sh
# pyward runtime baseline: binary wheels into the managed runtime's own
# site-packages, through the attempt chain, recorded in the catalog.
. "$TOP_SRCDIR/tests/lib.sh"
runtime_world
printf 'pwtest-beta\n' > "$WORLD/reqs.txt"
unset PYWARD_MIRRORS PIP_INDEX_URL
export PYWARD_PROXY_PORTS=$(closed_port)
plan 18

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
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifest"]; print(m["added"] > 0, m["removed"])')" "True 0" \
	"the files the baseline added are recorded in the runtime's manifest"
is "$("$PY" -I -c 'import pwtest_beta, pwtest_alpha; print("ok")' 2>&1)" "ok" "the baseline and its dependency import in the managed runtime"
ok "it went into the runtime's own site-packages" sh -c "ls '$BOX'/runtime/python/current/lib/python*/site-packages/pwtest_beta* >/dev/null"
P history --kind runtime.baseline
like "$OUT" "runtime\\.baseline +ok +1" "the baseline is in the history with its attempt"

# ---- verify after the baseline, like rpm -V after a second package: what the
# baseline installed is checked, not called unexpected
P runtime verify
is "$RC" 0 "verify is clean right after the baseline"
like "$OUT" "0 modified, 0 mode changed, 0 missing, 0 unexpected" "the baseline's files are not unexpected"
real=$(readlink -f "$BOX/runtime/python/current")
beta=$(ls "$real"/lib/python*/site-packages/pwtest_beta/__init__.py)
rel=${beta#"$real"/}
cp "$beta" "$WORLD/beta.keep"
echo "# changed" >> "$beta"
P runtime verify
is "$RC" 1 "a baseline file changed afterwards is caught"
like "$OUT" "modified +$rel" "verify names it"
cp "$WORLD/beta.keep" "$beta"

# A change someone made before a baseline run is not absorbed by it.
os_py=$(ls "$real"/lib/python*/os.py)
echo "# changed" >> "$os_py"
printf 'pwtest-alpha\n' > "$WORLD/reqs2.txt"
P runtime baseline --requirements "$WORLD/reqs2.txt" --index "$INDEX_ok_URL"
is "$RC" 0 "a second baseline run exits 0"
like "$OUT" "recorded in the runtime's manifest .*: 0 files added, 0 changed, 0 removed" \
	"nothing new to record when everything is already there"
P runtime verify
is "$RC" 1 "the earlier change is still reported after the second baseline"
like "$OUT" "modified +${os_py#"$real"/}" "verify names it"

done_testing
