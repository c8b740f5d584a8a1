#!/bin/sh
# One consent in the full-screen interface provisions the runtime and its
# baseline, end to end: the runtime from the loopback HTTPS mirror, the
# baseline (a tiny real wheel the suite builds) from the loopback PEP 503
# index, one keystroke and one consent; then `pyward exec` imports the
# baseline's library and writes a file with it. Also: a failed step's
# message leaves the frame's status line when the next operation succeeds.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
BOX="$WORLD/box"
URL="https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz"
mkdir -p "$WORLD/data" "$XDG_CONFIG_HOME/pyward"
write_pins "$WORLD/data/runtime-pins.tsv" "$VER" 1 "$URL" "$SHA" "$SIZE"
cp "$TOP_SRCDIR/data/mirrors.conf" "$WORLD/data/" 2>/dev/null
printf 'pwtest-beta\npwtest-nosuch\n' >"$WORLD/reqs.txt"
DEAD=$(closed_port)
printf 'ca_bundle = %s\nindex_url = %s\nbaseline = %s\nmirrors = http://127.0.0.1:%s/simple/\nproxy_ports = %s\n' \
	"$CA_PEM" "$INDEX_ok_URL" "$WORLD/reqs.txt" "$DEAD" "$DEAD" >"$XDG_CONFIG_HOME/pyward/config"
unset PYWARD_BASELINE PYWARD_MIRRORS PYWARD_PROXY_PORTS PIP_INDEX_URL
plan 28

WAIT_SECONDS=30
keys() { T send-keys -t "$S" "$@"; }
# The screen as one line of words (the pane wraps long lines at its border).
flat() { printf '%s\n' "$SCREEN" | sed 's/[║│|]/ /g' | tr -s ' \n' '  '; }
# wait_flat TEXT [SECONDS]: poll until the flattened screen holds TEXT.
flat_has() { flat | grep -Fq -- "$1"; }
wait_flat() { wait_screen "$1" "${2:-30}" flat_has "$1"; }
tui_start one 100 30 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 PYWARD_DATADIR='$WORLD/data' '$PYWARD' --box-root '$BOX' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 60"

# ---- what the keystroke brings, said before it is pressed
ok "the Runtime pane shows the state" wait_for "not provisioned"
like "$(flat)" "press i to install it \(~[0-9.]+ MB, one time\): CPython $VER and the document libraries pwtest-beta, pwtest-nosuch" \
	"the hint says what i brings: the version, the download size and the baseline's libraries"

# ---- one keystroke, one consent with both parts
keys i
ok "i opens the consent dialog" wait_for "[ Cancel ]"
like "$SCREEN" "runtime and its baseline" "the dialog says it installs the runtime and its baseline"
like "$SCREEN" "what: +CPython $VER" "the archive part: what"
like "$SCREEN" "from: +https://localhost:$HTTPSD_PORT/rel/1/" "the archive part: from where"
like "$SCREEN" "size: +[0-9.]+ [kM]B to download" "the archive part: its size"
like "$SCREEN" "sha256: +$SHA" "the archive part: the pinned SHA256"
like "$SCREEN" "into: +$BOX/runtime/python/current" "the archive part: where it goes"
like "$SCREEN" "then: +the baseline pwtest-beta, pwtest-nosuch" "the baseline part: the requirement names"
like "$SCREEN" "binary wheels from the package index" "and that they are binary wheels from the package index"
# the requirements file (a deep path: it wraps) goes on under the value, not two columns in
req_row=$(printf '%s\n' "$SCREEN" | grep -n "binary wheels from the package index" | head -n 1 | cut -d: -f1)
path_rows=$(printf '%s\n' "$SCREEN" | sed -n "$((req_row + 1)),$((req_row + 2))p")
like "$path_rows" "║ ║         [(/]" "the requirements file's path is indented under the value (8 columns)"
unlike "$path_rows" "║ ║   [(/a-z]" "not two columns in"
like "$(printf '%s\n' "$SCREEN" | grep "declines\.")" "^║ ║ [^ ]" "a sentence of the dialog wraps to its own left edge, not two columns in"
keys Left Enter
ok "a baseline that cannot be resolved: the partial outcome" wait_flat "Partly done: runtime installed, baseline failed" 120
bottom=$(printf '%s\n' "$SCREEN" | tail -n 2 | head -n 1)
like "$bottom" "Partly done" "the failure is in the frame's status line"
ok "the runtime is kept" "$BOX/runtime/python/current/bin/python3" -c pass

# ---- the next step succeeds: the failure's message leaves the frame
printf 'pwtest-beta\n' >"$WORLD/reqs.txt"
keys i
ok "i again plans and asks" wait_for "[ Cancel ]"
bottom=$(printf '%s\n' "$SCREEN" | tail -n 2 | head -n 1)
unlike "$bottom" "Partly done" "the earlier failure is gone from the status line once the plan succeeded"
like "$SCREEN" "then: +the baseline pwtest-beta" "the consent names the baseline"
unlike "$SCREEN" "pwtest-nosuch" "as it is now"
keys Left Enter
ok "both parts are done after the consent" wait_flat "its baseline (pwtest-beta) is installed." 120
keys 1
ok "the Runtime pane shows the install" wait_for "Runtime:    installed" 20
unlike "$SCREEN" "Baseline:" "and no missing baseline"

n=$(sqlite3 "$BOX/catalog.sqlite3" "SELECT group_concat(outcome, ' ') FROM (SELECT outcome FROM operations WHERE kind = 'runtime.install' AND outcome <> 'refused' ORDER BY id)")
m=$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM operations WHERE kind LIKE 'runtime.%' AND kind <> 'runtime.install'")
is "$n $m" "failed ok 0" "each install is one runtime.install operation (the partial one failed), no separate baseline operation"
like "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT index_url FROM attempts ORDER BY id DESC LIMIT 1")" "^http://127.0.0.1:[0-9]+/simple/$" \
	"the baseline's wheel came from the loopback index (attempt recorded)"

# ---- the runtime makes a document with the installed library
mkdir -p "$WORLD/ws"
printf '%s\n' 'import pwtest_beta, pwtest_alpha' \
	'open("report.txt", "w").write("made by pwtest-alpha " + pwtest_alpha.VERSION + "\n")' >"$WORLD/ws/make_doc.py"
cd "$WORLD/ws" || exit 1
run --box-root "$BOX" -C "$WORLD/ws" exec "$WORLD/ws/make_doc.py"
is "$RC" 0 "pyward exec runs a script that imports the baseline"
is "$(cat "$WORLD/ws/report.txt" 2>/dev/null)" "made by pwtest-alpha 1.1" "and it wrote the document"
done_testing
