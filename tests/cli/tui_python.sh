#!/bin/sh
# The Python pane (pane 6) in a real terminal (tmux, 80x24) with real
# CPython from a managed runtime: cells and results, multi-line input with
# the continuation key, keys that are text here (q, digits, ?, /), Esc and
# Ctrl-C interrupting a running cell while the screen keeps answering, the
# interpreter in the header, state kept across a restart of the TUI and
# shared with `pyward python`, the loss notice after the host is killed,
# the message when there is no interpreter, and read-only mode refusing a
# cell (the pane runs cells through the scratchpad operation, as the CLI). The scratchpad host the TUI
# starts is stopped by its PID (host.pid in the private runtime dir).
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
FIX="$TOP_SRCDIR/tests/fixtures"
BOX="$WORLD/box"
WS="$WORLD/ws"
export PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
export XDG_RUNTIME_DIR="$WORLD/rt"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
SOCKDIR="$XDG_RUNTIME_DIR/pyward"
unset PYWARD_SCRATCH_TEST_OWNER_UID

trap 'T kill-server 2>/dev/null; stop_host; rm -rf "$WORLD"' EXIT

runtime_fixture "$WORLD/arch"
write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:9/unused.tar.gz" "$SHA" "$SIZE"
"$PYWARD" --box-root "$BOX" -C "$WS" runtime install --pins "$WORLD/pins.tsv" \
	--archive "$WORLD/arch/cpython-fixture-install_only.tar.gz" --yes -q >/dev/null 2>&1 ||
	skip_all "could not install the fixture runtime"
plan 55

WAIT_SECONDS=60
# start NAME BOX WORKSPACE [OPTION]: a tmux session running the TUI on the Python pane.
start() {
	S=$1
	tui_start "$S" 80 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' PYWARD_WORKER='$PYWARD_WORKER' '$PYWARD' --box-root '$2' -C '$3' ${4:-}; echo EXITED rc=\$?; sleep 60"
	wait_for "q quit" >/dev/null
	T send-keys -t "$S" 6
}
# type TEXT: literal keys into the input, then Enter.
type_line() { T send-keys -t "$S" -l "$1"; T send-keys -t "$S" Enter; }
row() { printf '%s\n' "$SCREEN" | sed -n "$1p"; }
# Enter while a cell runs is refused (the input is kept), so a line typed
# before the previous cell finished would never run: wait for the pane to
# say so, never for a time. idle_state: the header's state in SCREEN when
# no cell runs ("N executions, generation G", "fresh, generation G"), else
# nothing. wait_idle [STATE]: until the header shows an idle state other
# than STATE (every finished cell counts an execution); what the pane showed
# is reported after WAIT_SECONDS. cell TEXT: type TEXT and Enter once the
# pane is idle, then wait until that cell finished.
idle_state() { row 3 | grep -Eo '(fresh|[0-9]+ executions?), generation [0-9]+'; }
idle_other_than() { _now=$(idle_state); [ -n "$_now" ] && [ "$_now" != "$1" ]; }
wait_idle() {
	wait_screen "an idle header other than \"${1:-}\" (the cell to finish)" "$WAIT_SECONDS" idle_other_than "${1:-}"
}
cell() {
	wait_idle
	_before=$(idle_state)
	type_line "$1"
	wait_idle "$_before"
}


# ---- before the first cell
start first "$BOX" "$WS"
ok "the pane says the session has not started" wait_for "not started (the first cell starts Python)"
wait_re "^║ Python +(C?Python )?$VER +.*python3? +║$"
like "$SCREEN" "║ Python +(C?Python )?$VER +.*python3? +║" "the header names the managed runtime's version and executable"
like "$SCREEN" "F1 help +F10 quit" "the hint line names F1 and F10 (letters are text here)"

# ---- cells and results
type_line 'x = 41'
ok "a cell runs" wait_for "In [1]: x = 41"
ok "the first result names the interpreter" wait_for "python: CPython $VER"
like "$(row 4)" "CPython $VER" "the header shows the worker's interpreter and version"
like "$(row 3)" "1 execution, generation [0-9]+" "and the state: executions and generation"
type_line 'x + 1'
ok "a value is shown as Out[n]" wait_for "Out[2]: 42"
type_line "print('hi')"
ok "stdout is shown" wait_re "^║ hi +║$"
type_line '1/0'
ok "an exception shows its traceback" wait_for "ZeroDivisionError: division by zero"

# ---- multi-line input: the continuation key, and Enter after ':'
_before=$(idle_state)
T send-keys -t "$S" -l 'def double(a):'
T send-keys -t "$S" C-j
ok "Ctrl-J adds an indented line" wait_re "^║ \.\.\.     +║$"
unlike "$SCREEN" "In \[[0-9*]+\]: def double" "and does not run the cell"
T send-keys -t "$S" -l 'return a * 2'
T send-keys -t "$S" Enter
ok "Enter inside an indented block adds a line" wait_re "^║ \.\.\.     return a \* 2 +║$"
T send-keys -t "$S" Enter
ok "a blank line ends the block and runs it" wait_for "...:     return a * 2"
wait_idle "$_before" # the line above shows as soon as the cell starts
type_line 'double(21)'
ok "the function defined over several lines works" wait_for "Out[6]: 42"
_before=$(idle_state)
T send-keys -t "$S" -l 'y = (1,'
T send-keys -t "$S" Enter
T send-keys -t "$S" -l '2)'
T send-keys -t "$S" Enter
ok "Enter inside an open bracket continues, then runs" wait_re "^║ +\.\.\.: 2\) +║$"
wait_idle "$_before" # the line above shows as soon as the cell starts

# ---- keys that are text here
cell "q = '1?/jkhl'"
type_line 'q'
ok "q, digits, ?, / and hjkl are typed into the input" wait_for "Out[9]: '1?/jkhl'"
unlike "$SCREEN" "EXITED" "typing q did not quit"
T send-keys -t "$S" Up Up
ok "Up recalls earlier inputs" wait_re "^║ >>> q = '1\?/jkhl' +║$"
T send-keys -t "$S" C-u

# ---- interrupting: Esc and Ctrl-C, the screen answering meanwhile. The
# header says "running" from the moment the cell is sent; an interrupt
# before the worker began it is "came before the cell started" (In [-]), so
# each long cell writes a file in the workspace (the worker's folder) on
# every turn, and the interrupt waits for that file.
started() { wait_until "$WAIT_SECONDS" "cell $1 to run (the file it writes)" test -e "$WS/s$1"; }
type_line "while open('s10', 'w').close() is None: pass"
ok "a long cell shows as running" wait_for "running a cell (Esc interrupts)"
like "$SCREEN" "In \[\*\]: while open\('s10', 'w'\)\.close\(\) is None: pass" "its prompt waits for its number"
started 10
T send-keys -t "$S" -l 'abc'
ok "the input takes keys while the cell runs" wait_re "^║ >>> abc +║$"
T send-keys -t "$S" Escape
ok "Esc interrupts it: KeyboardInterrupt" wait_for "KeyboardInterrupt"
ok "the cell gets its number" wait_for "In [10]: while open('s10', 'w').close() is None: pass"
like "$SCREEN" ">>> abc" "the typed input is kept"
T send-keys -t "$S" C-u
cell 'import time'
type_line "while open('s12', 'w').close() is None: time.sleep(0.01)"
started 12
T send-keys -t "$S" C-c
ok "Ctrl-C interrupts a running cell" wait_for "In [12]: while open('s12', 'w').close() is None: time.sleep(0.01)"
like "$SCREEN" "KeyboardInterrupt" "with KeyboardInterrupt"
unlike "$SCREEN" "EXITED" "and does not quit the interface"
type_line 'x'
ok "the state survives interrupts" wait_for "Out[13]: 41"

T send-keys -t "$S" F1
ok "F1 opens the help with the pane's keys" wait_for "add a line to the input"
T send-keys -t "$S" Escape

# ---- the state outlives the interface, and is the CLI's session too
T send-keys -t "$S" F10
ok "F10 quits" wait_for "EXITED rc=0"
run --box-root "$BOX" -C "$WS" python -c 'x, double(5)'
is "$OUT" "(41, 10)" "pyward python sees what the pane defined (same session)"
start second "$BOX" "$WS"
ok "a restarted interface finds the session" wait_re "[0-9]+ executions, generation [0-9]+"
like "$(row 4)" "Python +$VER +" "with its interpreter's version (after the label, once)"
type_line 'x * 2'
ok "and its state" wait_re "Out\[[0-9]+\]: 82"

# ---- state loss is announced
HOST=$(host_pid)
stop_host
host_gone() { [ -n "$HOST" ] && pid_gone "$HOST"; }
ok "the host the interface started was stopped by its pid" host_gone
type_line 'x'
ok "after the host is killed the next cell says the scratchpad is fresh" wait_for "notice: fresh scratchpad"
like "$SCREEN" "NameError" "and the old state is gone"

# ---- reset asks first, No by default
type_line 'z = 5'
# Ctrl-R waits for no running cell: let this one finish first.
wait_re "In \[[0-9]+\]: z = 5" >/dev/null
T send-keys -t "$S" C-r
ok "Ctrl-R asks before resetting" wait_for "Reset the scratchpad?"
T send-keys -t "$S" Enter
type_line 'z'
ok "Enter on the default (No) keeps the state" wait_re "Out\[[0-9]+\]: 5"
T send-keys -t "$S" C-r
wait_for "Reset the scratchpad?" >/dev/null
T send-keys -t "$S" y
ok "y resets: the header says fresh" wait_re "fresh, generation [0-9]+"
type_line 'z'
ok "the next cell's notice says why" wait_for "fresh scratchpad: --reset asked for it"
like "$SCREEN" "NameError" "and z is gone"

# ---- another interpreter: an environment of the workspace (Ctrl-T)
ok "an environment is created in the workspace" "$PYWARD" --box-root "$BOX" -C "$WS" venv create -q
T send-keys -t "$S" C-t
ok "Ctrl-T lists the interpreters" wait_for "$WS/.venv"
like "$SCREEN" "\* $VER +managed runtime" "the managed runtime first, marked as the current one"
T send-keys -t "$S" Down Enter
ok "picking another one for a running session asks first" wait_for "Start it again with"
T send-keys -t "$S" y
ok "yes starts the session again on it: the header names the environment's interpreter" \
	wait_re "Python +CPython $VER +$WS/.venv/bin/python"
ok "once it is ready" wait_re "fresh, generation [0-9]+"
type_line "import sys; sys.prefix == '$WS/.venv'"
ok "cells run in the environment" wait_re "Out\[[0-9]+\]: True"
run --box-root "$BOX" -C "$WS" python -c 'import sys; sys.prefix'
is "$OUT" "'$WS/.venv'" "pyward python keeps using it (same session)"

# ---- no interpreter: a message saying how to get one
mkdir -p "$WORLD/ws2"
S=second
T send-keys -t "$S" F10
start bare "$WORLD/emptybox" "$WORLD/ws2"
ok "without a runtime the pane says how to get one" wait_for "Install the managed runtime in pane 1"
type_line '1 + 1'
ok "a cell is refused with the reason" wait_for "error: no interpreter for the scratchpad"
T send-keys -t "$S" F10

# ---- read-only mode: a cell is a change
start readonly "$BOX" "$WS" "--mode read-only"
type_line 'open("made-in-read-only-mode", "w")'
ok "read-only mode: a cell is refused with the policy message" \
	wait_for "error: running code in the scratchpad is a change"
ok "and it did not run" test ! -e "$WS/made-in-read-only-mode"
T send-keys -t "$S" F10

done_testing
