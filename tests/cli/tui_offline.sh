#!/bin/sh
# The full-screen install offline: the failure's advice is something this
# interface can do (s: a mirror or a local archive), the long error stays in
# the pane, not along the frame, and s with a local archive then installs.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv"
ARCHIVE=$(ls "$WORLD/srv"/*.tar.gz | head -n 1)
mkdir -p "$WORLD/data" "$WORLD/ws"
write_pins "$WORLD/data/runtime-pins.tsv" "$VER" 1 "https://pyward-test.invalid/cpython.tar.gz" "$SHA" "$SIZE"
plan 12
WAIT_SECONDS=30
tui_start tui 80 24 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 PYWARD_DATADIR='$WORLD/data' PYWARD_BASELINE= '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 60"
keys() { T send-keys -t tui "$@"; }
wait_for "q quit" >/dev/null
keys 2 i
wait_for "[ Cancel ]" >/dev/null
keys Left Enter
ok "offline, the install fails in the pane" wait_for "cannot resolve host pyward-test.invalid"
like "$SCREEN" "press s to give a mirror URL or a local archive" "the advice is a key of this interface, not a command-line flag"
unlike "$SCREEN" "--mirror URL" "no command-line flag is offered"
row23=$(printf '%s\n' "$SCREEN" | sed -n 23p)
unlike "$row23" "cannot resolve" "the long error is not run along the frame's border"
like "$row23" "pane 2 says why" "the border only says where to read it"
keys s
ok "s asks for a mirror URL or a local archive" wait_for "A mirror URL, or the path of a local archive"
T send-keys -t tui -l "$ARCHIVE"
keys Enter
ok "the pane names the source" wait_for "source: $ARCHIVE"
keys i
wait_for "[ Cancel ]" >/dev/null
like "$SCREEN" "a local archive: nothing is downloaded" "the consent words the local archive as one"
like "$SCREEN" "Nothing is downloaded or installed unless you choose Install" "its closing words fit a local archive too"
like "$SCREEN" "║ ║ {9}[^ ][^║]*nothing is downloaded" "a long 'from:' line goes on under its value, not two columns in"
keys Left Enter
ok "the install from the local archive finishes" wait_for "Installed CPython $VER" 90
like "$(printf '%s\n' "$SCREEN" | sed -n 23p)" "…═╝$" "the result cut at the frame's corner ends in … (a long path: it does not fit)"
