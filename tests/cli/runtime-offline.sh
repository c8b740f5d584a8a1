#!/bin/sh
# A first-time user offline: the plan is shown before anything can fail on
# the network, the error names the URL it tried, and every failed install,
# whatever stage it failed at, is in the history with its attempt.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
SOCK="$WORLD/tmux.sock"
T() { tmux -S "$SOCK" "$@"; }
trap 'T kill-server 2>/dev/null; rm -rf "$WORLD"' EXIT
plan 20

SHA=$(printf 'offline' | sha256sum | cut -d' ' -f1)
URL="https://pyward-test.invalid/rel/cpython-offline-install_only.tar.gz"
mkdir -p "$WORLD/ws"
write_pins "$WORLD/pins.tsv" 3.12.1 20240101 "$URL" "$SHA" -
R() { run --box-root "$WORLD/box" -C "$WORLD/ws" "$@"; }

# ---- a host that does not resolve: recorded, with its attempt and URL
R runtime install --pins "$WORLD/pins.tsv" --no-baseline -y
is "$RC" 1 "an unresolvable download host fails (exit 1)"
like "$ERR" "cannot resolve host pyward-test.invalid \\($URL\\)" "the error names the URL it tried"
R history --json
is "$(newest_op kind outcome)" \
	"runtime.install failed" "the failed install is in the history"
R history show 1 --json
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin)["operation"]; a=d["attempts"][0]; print(a["index_url"], a["class"])')" \
	"$URL network" "with its attempt: the URL and the class"

# ---- failures before the download are recorded too
R runtime install --pins "$WORLD/no-such-pins.tsv" --no-baseline -y
ok "a pins table that cannot be read fails" test "$RC" -ne 0
R history --json
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["operations"]), d["operations"][0]["outcome"])')" \
	"2 failed" "and is recorded, though no plan could be made"
R --mode read-only runtime install --pins "$WORLD/pins.tsv" --no-baseline -y
is "$RC" 3 "read-only mode refuses"
ok "and writes nothing, not even the record" test "$(R history --json >/dev/null; printf '%s' "$OUT" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["operations"]))')" = 2

# ---- the plan, said plainly
R runtime install --pins "$WORLD/pins.tsv" --no-baseline --dry-run
like "$OUT" "size: +unknown until the server answers" "an unknown size is said once, plainly"
unlike "$OUT" "unknown size to download|unknown size on disk" "not as 'unknown size to download, at most unknown size on disk'"
head -c 200000 /dev/urandom >"$WORLD/local.tar.gz"
R runtime install --pins "$WORLD/pins.tsv" --no-baseline --dry-run --archive "$WORLD/local.tar.gz"
like "$OUT" "from: +$WORLD/local.tar.gz \\(a local archive: nothing is downloaded\\)" "a local archive is worded as one"
unlike "$OUT" "to download" "and no download size is claimed for it"

# ---- on a terminal: the plan first, then the failure
if ! command -v tmux >/dev/null 2>&1; then
	skip 8 "tmux not installed"
	done_testing
	exit 0
fi
tui_start term 200 40 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws' runtime install --pins '$WORLD/pins.tsv' --no-baseline; echo EXITED rc=\$?; sleep 60"
WAIT_SECONDS=20
ok "offline, the plan is shown and consent asked" wait_for "Download and install it?"
like "$SCREEN" "from: +$URL" "the plan says from where"
like "$SCREEN" "sha256: +$SHA" "and the pinned SHA256"
unlike "$SCREEN" "cannot resolve" "nothing failed before the question"
T send-keys -t term y Enter
ok "after consent it fails on the download" wait_for "EXITED rc=1"
like "$SCREEN" "cannot resolve host pyward-test.invalid \\($URL\\)" "naming the URL"
T kill-session -t term
tui_start local 200 40 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws' runtime install --pins '$WORLD/pins.tsv' --no-baseline --archive '$WORLD/local.tar.gz'; echo EXITED rc=\$?; sleep 60"
ok "a local archive: the question does not speak of a download" wait_for "Install it?"
unlike "$SCREEN" "Download and install" "no 'Download and install it?' for a local file"
T send-keys -t local n Enter
wait_for "EXITED" >/dev/null
