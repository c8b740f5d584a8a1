#!/bin/sh
# The full-screen interface on a small terminal (60x15, a phone over SSH or
# a split pane): every pane stays usable, the tabs shorten instead of
# vanishing, key hints are whole, a consent taller than the screen scrolls,
# and only below 60x15 the "too small" notice is shown.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
URL="https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz"
BOX="$WORLD/box"
mkdir -p "$WORLD/data" "$XDG_CONFIG_HOME/pyward" "$WORLD/ws"
write_pins "$WORLD/data/runtime-pins.tsv" "$VER" 1 "$URL" "$SHA" "$SIZE"
printf 'ca_bundle = %s\n' "$CA_PEM" >"$XDG_CONFIG_HOME/pyward/config"
export PYWARD_DATADIR="$WORLD/data"
plan 42

WAIT_SECONDS=20
start() {
	S=$1
	tui_start "$S" "${2:-60}" "${3:-15}" \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 PYWARD_DATADIR='$WORLD/data' '$PYWARD' --box-root '$BOX' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 60"
}
keys() { T send-keys -t "$S" "$@"; }
row() { printf '%s\n' "$SCREEN" | sed -n "$1p"; }


# ---- nothing installed, 60x15
start small
ok "the screen draws at 60x15" wait_for "q quit"
ok "the runtime's state arrives" wait_for "not provisioned"
like "$(row 1)" "^ 1 Runtime +2 +3 +4 +5 +6 *$" "the tabs shorten to numbers; the current pane keeps its name"
like "$SCREEN" "press i to install it" "the install hint is there"
like "$SCREEN" "one time\)" "and whole, wrapped below the state instead of cut"
like "$(row 14)" "^╚═+╝$" "the frame ends above the hint line"
unlike "$(row 15)" "x re|x remo|r ref" "no key hint is cut in the middle"
like "$(row 15)" "\? help +q quit" "the global keys stay"

keys i
ok "i opens the consent dialog" wait_for "Install the managed Python runtime?"
ok "a consent taller than the screen says it scrolls" wait_re "lines 1-[0-9]+ of [0-9]+, Up/Down scroll"
ok "the buttons stay on screen" wait_for "[ Cancel ]"
keys Down Down Down Down Down Down Down Down Down Down
ok "Down scrolls the consent to its end" wait_re "lines [0-9]+-([0-9]+) of \1,"
like "$SCREEN" "into: +$BOX/runtime/python" "the destination is readable after scrolling"
keys Enter
ok "declining still works" wait_for "consent was not given"
ok "nothing was installed" test ! -e "$BOX/runtime/python/current"

# ---- the other panes at 60x15
keys 3
ok "Environments: the table's headers" wait_for "PATH"
like "$(row 1)" "^ 1 +2 +3 Environments +4 +5 +6 *$" "the current tab is named"
unlike "$(row 15)" " d  | d$|u unin |r re" "its hints are whole items"
keys 5
ok "History lists the declined install" wait_for "runtime.install"
keys 6
ok "Python: the header fits" wait_for "not started"
unlike "$SCREEN" "Python \\?" "no 'Python ?' for an interpreter not yet asked"
T send-keys -t "$S" F1
ok "the help opens at 60x15" wait_for "Keys (pyward"
T send-keys -t "$S" Escape
wait_for ">>>" >/dev/null

# ---- installed, the Runtime pane keeps verify on a short screen
T send-keys -t "$S" F10
wait_for "EXITED" >/dev/null
run --box-root "$BOX" -C "$WORLD/ws" runtime install -y
[ -e "$BOX/runtime/python/current" ] || diag "$ERR"
ok "a runtime is installed from the CLI" test -e "$BOX/runtime/python/current"
start second
ok "installed, at 60x15" wait_for "installed"
like "$SCREEN" "Verify: +never run" "the Verify line is shown on a short screen"
# every detail in one row, cut so that what tells it apart stays
like "$SCREEN" "Path: +…[^║]*/runtime/python/versions/$VER-[0-9a-z-]+ *║" "the path keeps its end (the version folder) behind a mark"
like "$SCREEN" "Installed: +20[0-9-]+ [0-9:]+ UTC, [0-9.]+ [kMG]?B" "when and how big, in one row"
first=$(printf %.12s "$SHA") last=${SHA#"${SHA%????????}"}
like "$SCREEN" "Pin SHA256: +$first…$last *║" "the pinned SHA256 as its first 12 and last 8 digits"
like "$SCREEN" "Source: +https://localhost:$HTTPSD_PORT/…/cpython-fixture" "the source keeps its host and the start of its file name"
like "$(printf '%s\n' "$SCREEN" | grep -A1 'Pin SHA256:' | tail -n 1)" "^║ Source:" "each detail takes one row"
like "$SCREEN" "Pins: +…[^║]*runtime-pins\.tsv *║" "and the last one, the pins file, is on screen too"
like "$(row 14)" "^╚═+╝$" "and the frame is not overdrawn"
keys 6
ok "Python pane with the runtime" wait_for "Session "
like "$(row 4)" "Python +[0-9]+\\.[0-9.]+ +[^ ]*/python" "its header names the interpreter's version and path before the first cell"
unlike "$(row 4)" "Python +Python" "saying Python once, not 'Python  Python 3.x'"
keys F10
wait_for "EXITED" >/dev/null
start third

# ---- below 60x15 the notice
T resize-window -t "$S" -x 50 -y 12
ok "below 60x15 a clear notice" wait_for "terminal 50x12 is too small (need 60x15)"

# ---- a dialog kept through a shrink does not take keys it cannot show
T resize-window -t "$S" -x 60 -y 15
wait_for "? help" >/dev/null # the full screen: the notice's "q quits" would match "q quit"
keys 3
wait_for "PATH" >/dev/null
keys c
ok "c opens the create dialog" wait_for "Name (a folder"
T resize-window -t "$S" -x 50 -y 12
ok "shrunk with the dialog open, the notice says the dialog waits" wait_for "A dialog is open"
keys x y
T resize-window -t "$S" -x 60 -y 15
ok "grown again, the dialog is back" wait_for "Name (a folder"
unlike "$SCREEN" "\.venv[xy]" "the keys typed while it could not be seen did not reach it"
T resize-window -t "$S" -x 50 -y 12
wait_for "A dialog is open" >/dev/null
keys q
ok "q on the notice quits, the dialog cancelled" wait_for "EXITED rc=0"
ok "nothing was created" test ! -e "$WORLD/ws/.venv"
