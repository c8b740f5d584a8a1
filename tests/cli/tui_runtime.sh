#!/bin/sh
# The full-screen interface's Runtime, Download and History panes, driven in
# tmux against the loopback HTTPS fixture: consent declined (nothing
# downloaded), Esc during a throttled download (the .part kept), a later
# install that resumes and finishes, the History pane listing all of it,
# read-only mode refusing, resize, NO_COLOR and an ASCII locale.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
# About sixteen seconds for the whole archive: slow enough to watch and to cancel.
RATE=$((SIZE / 16 + 1))
SLOW="https://localhost:$HTTPSD_PORT/slow/$RATE/rel/1/cpython-fixture-install_only.tar.gz"
BOX="$WORLD/box"
PART="$BOX/cache/downloads/$SHA.tar.gz.part"
mkdir -p "$WORLD/data" "$XDG_CONFIG_HOME/pyward"
write_pins "$WORLD/data/runtime-pins.tsv" "$VER" 1 "$SLOW" "$SHA" "$SIZE"
printf 'ca_bundle = %s\n' "$CA_PEM" >"$XDG_CONFIG_HOME/pyward/config"
plan 69

WAIT_SECONDS=20
# wait_gone TEXT [SECONDS]: poll until TEXT is no longer on the screen.
screen_lacks() { ! screen_has -F "$1"; }
wait_gone() { wait_screen "the end of $1" "${2:-60}" screen_lacks "$1"; }
# start NAME [ENV...] -- [PYWARD ARGS...]: a session running the TUI.
start() {
	S=$1; shift
	_env=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do _env="$_env '$1'"; shift; done
	[ $# -gt 0 ] && shift
	_args=""
	for _a in "$@"; do _args="$_args '$_a'"; done
	tui_start "$S" 80 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 PYWARD_DATADIR='$WORLD/data' $_env '$PYWARD' --box-root '$BOX' -C '$WORLD/ws' $_args; echo EXITED rc=\$?; sleep 60"
}
keys() { T send-keys -t "$S" "$@"; }
requests() { cat "$HTTPSD_LOG" 2>/dev/null | awk '/^(GET|HEAD) \/slow\//{n++} END{print n+0}'; }


# ---- the Runtime pane before anything is installed
start first
ok "the Runtime pane shows the state" wait_for "Runtime:    not provisioned"
like "$SCREEN" "press i to install it \(~9\.[0-9] MB, one time\)" "it says what to do and how big it is"
like "$SCREEN" "i install +v verify +b rollback +x remove" "the hint line lists the pane's keys"
keys x
ok "x with nothing installed says so" wait_for "There is no managed runtime to remove."
unlike "$SCREEN" "Remove the managed Python runtime" "and asks nothing"
keys v
ok "v with nothing installed says there is nothing to verify" wait_for "Nothing to verify: the runtime is not provisioned"

# ---- declining consent downloads nothing
keys i
# The buttons are the dialog's last row: wait for them, not for its title.
ok "i opens the consent dialog" wait_for "[ Cancel ]"
like "$SCREEN" "Install the managed Python runtime\?" "it asks whether to install"
like "$SCREEN" "what: +CPython $VER \(release 1\) for [a-z0-9_]+-unknown-linux-gnu" "it states what"
like "$SCREEN" "from: +https://localhost:$HTTPSD_PORT/slow/" "it states from where"
like "$SCREEN" "size: +9\.[0-9] MB to download" "it states how big"
like "$SCREEN" "sha256: ${SHA%????????????????????????????????}" "it states the pinned SHA256"
like "$SCREEN" "into: +$BOX/runtime/python/current" "it states where it goes"
like "$SCREEN" "\[ Cancel \]" "the focus starts on Cancel (No is the default)"
keys Enter
ok "Enter on the default declines" wait_for "consent was not given. Nothing was downloaded."
is "$(requests)" 0 "nothing was requested from the server"
ok "no download was started" test ! -e "$PART"

# ---- consent, progress, Esc cancels; the .part is kept
keys i
wait_for "[ Cancel ]" >/dev/null
keys Left
ok "Left moves the focus to Install" wait_for "[ Install ]" 5
keys Enter
ok "the progress bar is shown" wait_for "ETA" 30
like "$SCREEN" "\[download\]" "the stage is named"
like "$SCREEN" "[0-9.]+ [kM]B of 9\.[0-9] MB +[0-9.]+ [kM]B/s" "bytes done of total and the rate are shown"
like "$SCREEN" "working: installing the runtime" "the frame shows work is running"
ok "the bar fills with block characters" wait_for "█" 30
keys 1
ok "the interface answers keys during the download" wait_for "Box root:" 5
keys 2
wait_for "Esc cancels" 10 >/dev/null
keys Escape
ok "Esc cancels the download" wait_for "Cancelled. The partial download is kept" 30
ok "the partial download is kept" test -s "$PART"
ok "nothing was installed" test ! -e "$BOX/runtime/python/current"

# ---- q asks while work runs (No is the default), then quits and cancels
keys i
wait_for "[ Cancel ]" >/dev/null
keys Left Enter
wait_for "Esc cancels" 30 >/dev/null
keys q
ok "q asks while a download runs" wait_for "Quit and cancel it?" 10
keys Enter
ok "Enter on the default keeps it running" wait_for "Esc cancels" 10
unlike "$SCREEN" "EXITED" "the interface is still there"
keys q
wait_for "Quit and cancel it?" 10 >/dev/null
keys y
ok "y quits, cancelling the download" wait_for "EXITED rc=0" 30
ok "the partial download is still kept" test -s "$PART"

# ---- a later install resumes
start second
wait_for "not provisioned" >/dev/null
keys i
wait_for "[ Cancel ]" >/dev/null
keys Left Enter
ok "the second install finishes" wait_for "Installed CPython $VER" 90
like "$SCREEN" "resumed from byte [1-9]" "it resumed the kept download"
like "$(grep '^GET /slow/' "$HTTPSD_LOG" | tail -n 1)" "Range: bytes=[1-9]" "the server was asked for the rest only"
keys 1
ok "the Runtime pane shows the install" wait_for "Runtime:    installed"
like "$SCREEN" "Version: +$VER \(release 1\)" "with its version"
like "$SCREEN" "Pin SHA256: +$SHA" "its pinned hash"
like "$SCREEN" "Verify: +never run" "and no verify yet"
keys v
ok "v verifies" wait_for "files checked" 60
like "$SCREEN" "Verify: [0-9]+ files checked: 0 modified" "the verify is clean"
ok "the last verify is shown from the catalog" wait_for "last run ok" 10

# ---- History pane
keys 5
ok "the History pane lists the operations" wait_for "runtime.verify"
vid=$(PYWARD_DATADIR="$WORLD/data" "$PYWARD" --box-root "$BOX" -C "$WORLD/ws" history --kind runtime.verify --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["operations"][0]["id"])')
like "$SCREEN" "ID +STARTED +USER +KIND" "the list starts with the operation's id"
like "$SCREEN" "║ +$vid [0-9]{2}-[0-9]{2} [0-9:]{5} +[a-z]+ +runtime\.verify" \
	"the verify's row shows the id that 'pyward history show' takes"
like "$SCREEN" "runtime.install +ok" "the finished install"
like "$SCREEN" "runtime.install +cancelled" "the cancelled install"
like "$SCREEN" "runtime.install +refused" "the declined install"
keys Down Enter
ok "Enter shows an operation's details" wait_for "Operation "
like "$SCREEN" "URL: +https://localhost:$HTTPSD_PORT/slow/" "with the download's URL"
like "$(printf '%s\n' "$SCREEN" | sed -n '/^║   command: /{n;p;q}')" "^║ {14}[^ ]" "a long command goes on under its value, not four columns in"
keys Escape
keys /
wait_for "Filter" 5 >/dev/null
keys "refused" Enter
ok "/ filters the list" wait_for "1 shown"
unlike "$SCREEN" "runtime.verify" "the filter hides other operations"
keys /
wait_for "Show only lines containing" 5 >/dev/null
like "$(printf '%s\n' "$SCREEN" | grep -A2 "Show only lines containing" | tail -n 1)" "║ refused +║" "/ offers the filter in use"
keys C-u Enter
ok "an empty filter shows all again" wait_for "5 shown"

# ---- resize and back
T resize-window -t "$S" -x 50 -y 12
ok "a small terminal gets the notice" wait_for "terminal 50x12 is too small (need 60x15)" 10
T resize-window -t "$S" -x 80 -y 24
ok "the screen comes back" wait_for "5 History" 10

# ---- remove asks, No is the default
keys 1
wait_for "Runtime:    installed" >/dev/null
keys x
ok "x asks before removing" wait_for "Remove the managed Python runtime for every user"
keys Enter
ok "Enter on the default closes the question" wait_gone "Remove the managed Python runtime for every user"
ok "and keeps the runtime" test -e "$BOX/runtime/python/current"
run --box-root "$BOX" history --kind runtime.remove
like "$OUT" "No operations recorded" "no removal was attempted"
keys q
ok "q quits" wait_for "EXITED rc=0" 10

# ---- read-only mode refuses the install, and History still works
start ro -- --mode read-only
wait_for "Runtime:    installed" >/dev/null
keys i
ok "read-only mode refuses the install" wait_for "Refused: installing the runtime is a change, and the mode is read-only"
keys 5
ok "History works in read-only mode" wait_for "runtime.install"
keys q

# ---- with the runtime installed, the consent says so
start again
wait_for "Runtime:    installed" >/dev/null
keys 2 i
ok "i with the runtime installed asks again" wait_for "[ Cancel ]" 10
like "$(printf '%s\n' "$SCREEN" | tr -d '║' | tr -s ' \n' '  ')" "now: this release is installed and current: nothing is downloaded" \
	"and says the release is already installed and current"
keys Escape
wait_for "consent was not given" 10 >/dev/null
keys q

# ---- NO_COLOR and an ASCII locale
start nocolor NO_COLOR=1
wait_for "Runtime:" >/dev/null
T capture-pane -e -p -t "$S" >"$WORLD/nocolor.txt"
unlike "$(cat "$WORLD/nocolor.txt")" "$(printf '\033')\[[0-9;]*3[0-7]m" "NO_COLOR: no colour escapes"
keys q
start ascii LC_ALL= LANG=C
ok "LANG=C draws the screen" wait_for "Runtime:"
unlike "$SCREEN" "[═║╔]" "with ASCII line drawing"
keys q

done_testing
