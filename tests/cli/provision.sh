#!/bin/sh
# runtime install = the runtime and its baseline, one operation under one
# consent; the partial outcome (baseline failed: runtime kept, exit 1,
# status says what is missing and how to finish); --no-baseline and an
# empty `baseline` setting; every runtime subcommand refuses, with exit 2,
# an option it does not take.
. "$TOP_SRCDIR/tests/lib.sh"
runtime_world
J() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
printf '# the suite'"'"'s baseline\npwtest-beta>=1.0\n' > "$WORLD/reqs.txt"
write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:1/x.tar.gz" "$SHA"
DEAD=$(closed_port)
export PYWARD_PROXY_PORTS=$DEAD PYWARD_MIRRORS="http://127.0.0.1:$DEAD/simple/"
unset PYWARD_BASELINE PIP_INDEX_URL
plan 39

# ---- the option table: each subcommand refuses what it does not take
bad=""
for combo in \
	"status --mirror=u" "status --archive=f" "status --cacert=f" "status --dry-run" "status --progress=bar" \
	"status --no-progress" "status --requirements=f" "status --index=u" "status --no-baseline" \
	"verify --version=3" "verify --pins=f" "verify --mirror=u" "verify --archive=f" "verify --cacert=f" \
	"verify --dry-run" "verify --progress=bar" "verify --no-progress" "verify --requirements=f" "verify --index=u" \
	"verify --no-baseline" \
	"rollback --version=3" "rollback --pins=f" "rollback --mirror=u" "rollback --archive=f" "rollback --cacert=f" \
	"rollback --dry-run" "rollback --progress=bar" "rollback --no-progress" "rollback --requirements=f" \
	"rollback --index=u" "rollback --no-baseline" \
	"remove --version=3" "remove --pins=f" "remove --mirror=u" "remove --archive=f" "remove --cacert=f" \
	"remove --dry-run" "remove --progress=bar" "remove --no-progress" "remove --requirements=f" \
	"remove --index=u" "remove --no-baseline" \
	"baseline --version=3" "baseline --pins=f" "baseline --mirror=u" "baseline --archive=f" "baseline --cacert=f" \
	"baseline --dry-run" "baseline --progress=bar" "baseline --no-progress" "baseline --no-baseline" \
	"status --format=rpm" "install --format=rpm" "rollback --format=rpm" "remove --format=rpm" "baseline --format=rpm"; do
	# shellcheck disable=SC2086
	P runtime $combo --yes
	opt=${combo#* }
	opt=${opt%%=*}
	if [ "$RC" != 2 ] || ! printf '%s' "$ERR" | grep -q -- "does not take $opt"; then bad="$bad [$combo: $RC]"; fi
done
is "$bad" "" "each runtime subcommand refuses, with exit 2 and its name, each option it does not take (56 pairs)"
# the same for venv's verbs
bad=""
for combo in \
	"discover --venv=v" "discover --python=p" "discover --index=u" "discover --proxy=u" "discover --upgrade" \
	"discover --background" "discover --seed=pip" "discover --format=rpm" "discover -r f" "discover -e d" \
	"create --venv=v" "create --index=u" "create --proxy=u" "create --upgrade" "create --background" \
	"create --depth=2" "create --format=rpm" "create -r f" "create -e d" \
	"install --python=p" "install --depth=2" "install --seed=pip" "install --format=rpm" \
	"uninstall --python=p" "uninstall --index=u" "uninstall --proxy=u" "uninstall --upgrade" \
	"uninstall --depth=2" "uninstall --seed=pip" "uninstall --format=rpm" \
	"remove --venv=v" "remove --python=p" "remove --index=u" "remove --proxy=u" "remove --upgrade" \
	"remove --background" "remove --depth=2" "remove --seed=pip" "remove --format=rpm" "remove -r f" "remove -e d" \
	"verify --python=p" "verify --index=u" "verify --proxy=u" "verify --upgrade" "verify --background" \
	"verify --depth=2" "verify --seed=pip" "verify -r f" "verify -e d"; do
	# shellcheck disable=SC2086
	P venv $combo x
	opt=${combo#* }
	opt=${opt%%=*}
	opt=${opt% *}
	if [ "$RC" != 2 ] || ! printf '%s' "$ERR" | grep -q -- "does not take $opt"; then bad="$bad [$combo: $RC]"; fi
done
is "$bad" "" "each venv verb refuses, with exit 2 and its name, each option it does not take (50 pairs)"
P venv discover --depth=1
is "$RC" 0 "an option the verb takes is still fine"
P runtime --no-baseline verify
is "$RC" 2 "an option before the subcommand word is checked too"
ok "nothing was installed by the refused commands" test ! -e "$BOX/runtime/python/current"

# ---- the plan (dry run) names both parts
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --requirements "$WORLD/reqs.txt" --dry-run
is "$RC" 0 "a dry run with --requirements exits 0"
like "$OUT" "runtime and its baseline" "the plan says it installs the runtime and its baseline"
like "$OUT" "then: +the baseline pwtest-beta$" "it names what the baseline lists (comments and versions left out)"
like "$OUT" "binary wheels from the package index, through the attempt chain \\($WORLD/reqs.txt\\)" \
	"and where the wheels come from"
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --requirements "$WORLD/missing.txt" --dry-run
is "$RC" 2 "a baseline file that cannot be read is a usage error before anything is asked"

# ---- one consent: without one nothing happens, for either part
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL" </dev/null
is "$RC" 3 "without consent (no terminal, no --yes) the install is refused"
ok "no runtime without consent" test ! -e "$BOX/runtime/python/current"

# ---- runtime + baseline, one operation
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL" --yes --json
is "$RC" 0 "runtime install with its baseline exits 0"
is "$(J 'd["result"], d["baseline"]["outcome"], d["baseline"]["names"], d["baseline"]["attempts"][-1]["class"]')" \
	"installed ok pwtest-beta ok" "the result has both parts: installed, baseline ok from the index"
is "$(J 'd["baseline"]["manifest"]["added"] > 0')" "True" "the baseline's files went into the runtime's manifest"
is "$("$PY" -I -c 'import pwtest_beta, pwtest_alpha; print("ok")' 2>&1)" "ok" "the baseline imports in the runtime"
n_inst=$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM operations WHERE kind = 'runtime.install' AND outcome = 'ok'")
n_base=$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM operations WHERE kind = 'runtime.baseline'")
is "$n_inst $n_base" "1 0" "one catalog operation (runtime.install), no separate baseline operation"
op=$(J 'd["operation"]')
is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM attempts WHERE operation_id = $op AND argv LIKE '%only-binary%'")" "1" \
	"the baseline's pip attempt is recorded under the install's operation"
P runtime verify
is "$RC" 0 "verify is clean after the install with its baseline (the baseline is in the manifest)"
P runtime status --json --requirements "$WORLD/reqs.txt"
is "$RC" 2 "status does not take --requirements"
PYWARD_BASELINE="$WORLD/reqs.txt" P runtime status --json
is "$(J 'd["state"], d["baseline"]["state"], d["baseline"]["missing"]')" "installed installed []" \
	"status: installed, and the baseline installed"

# ---- partial outcome: the baseline fails (its index is down)
P runtime remove --yes
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --requirements "$WORLD/reqs.txt" --index "http://127.0.0.1:$DEAD/simple/" --yes
is "$RC" 1 "a failed baseline makes the install exit 1"
like "$ERR" "runtime installed, baseline failed" "the error says the runtime is installed and the baseline failed"
like "$ERR" "pyward runtime baseline" "and names the command that finishes it"
like "$ERR" "attempt 1: http://127.0.0.1:$DEAD/simple/ -> network" "the baseline's attempts are shown"
like "$OUT" "installed CPython $VER" "the runtime part is reported as installed"
ok "the runtime is kept and runs" "$PY" -c 'pass'
ok "the baseline is not in it" sh -c "! '$PY' -I -c 'import pwtest_beta' 2>/dev/null"
is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT outcome, stop_reason LIKE 'runtime installed, baseline failed%' FROM operations WHERE kind = 'runtime.install' ORDER BY id DESC LIMIT 1")" \
	"failed|1" "the operation is recorded as failed with the partial outcome as its reason"
PYWARD_BASELINE="$WORLD/reqs.txt" P runtime status
is "$RC" 0 "status exits 0 (the runtime works)"
like "$OUT" "managed Python runtime: installed, baseline missing" "status says: installed, baseline missing"
like "$OUT" "baseline: +missing pwtest-beta: 'pyward runtime baseline' finishes it" "with what is missing and the command"
PYWARD_BASELINE="$WORLD/reqs.txt" P runtime status --json
is "$(J 'd["state"], d["baseline"]["state"], d["baseline"]["missing"], d["baseline"]["finish_command"]')" \
	"installed missing ['pwtest-beta'] pyward runtime baseline" "status --json: the baseline's state, what is missing, the command"
P runtime verify
is "$RC" 0 "verify is clean after the partial outcome (pip's failed run left nothing)"
P runtime baseline --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL"
is "$RC" 0 "the named command finishes it"
PYWARD_BASELINE="$WORLD/reqs.txt" P runtime status
like "$OUT" "baseline: +installed \\(pwtest-beta\\)" "status then says the baseline is installed"

# ---- --no-baseline, and `baseline =` empty in the settings
P runtime remove --yes
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --no-baseline --yes --json
is "$(J 'd["result"], d["baseline"]')" "installed None" "--no-baseline installs the runtime alone"
P runtime remove --yes
printf 'baseline =\n' > "$WORLD/etc-pyward.conf"
P runtime install --pins "$WORLD/pins.tsv" --archive "$ARCH" --yes --json
is "$(J 'd["result"], d["baseline"]')" "installed None" "'baseline =' (empty) in the settings skips the baseline"
P runtime status
unlike "$OUT" "baseline" "and status does not ask for one"
rm -f "$WORLD/etc-pyward.conf"
done_testing
