#!/bin/sh
# The Environments and Attempts panes in a real terminal (tmux, 80x24),
# driving real venvs and real pip against the loopback index: create and
# see it listed, install and see success, the fallback from a dead default
# index to a mirror shown attempt by attempt, keys answered while pip runs,
# remove with its No default, and read-only mode refusing create.
. "$TOP_SRCDIR/tests/lib.sh"
SYS_PY=${PYTHON3:-python3}
"$SYS_PY" -c 'import venv, ensurepip' 2>/dev/null || skip_all "python3 has no venv/ensurepip (install python3-venv)"
tui_world
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
WS="$WORLD/ws"
DEAD=$(closed_port)
unset PYWARD_MIRRORS PIP_INDEX_URL http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
plan 46

WAIT_SECONDS=30
keys() { T send-keys -t "$S" "$@"; }
# type TEXT: literal text into the focused input.
type_text() { T send-keys -t "$S" -l -- "$1"; }

PYDIR=$(dirname "$(command -v "$SYS_PY")")
ENVS="env TERM=xterm-256color LC_ALL=C.UTF-8 PATH='$PYDIR:/usr/bin:/bin' PYWARD_PROXY_PORTS=$(closed_port)"
ENVS="$ENVS PIP_INDEX_URL=http://127.0.0.1:$DEAD/simple/ PYWARD_MIRRORS='$INDEX_ok_URL'"

tui_start main 80 24 \
	"$ENVS '$PYWARD' --box-root '$WORLD/box' -C '$WS'; echo EXITED rc=\$?; sleep 60"
wait_for "q quit" 10
keys 3
ok "the Environments pane says when there is no environment" wait_for "No environments found"

# ---- create: name, then the base interpreter chooser
keys c
ok "c asks for the name" wait_for "Name (a folder of the workspace)"
keys Enter
ok "the chooser opens at once" wait_for "choose the base interpreter" 10
ok "it lists the interpreters once probed" wait_for "> automatic" 60
like "$SCREEN" "python3 on PATH +[0-9]+\.[0-9]+" "each candidate shows its version"
like "$SCREEN" "python3 on PATH: .*\((CPython|PyPy) [0-9.]+\)" "and says which interpreter it is and why"
keys Enter
ok "create finishes" wait_for "Created .venv with Python" 120
like "$SCREEN" "base: python3 on PATH" "the result says which base interpreter"
ok "the new environment is listed with kind, version and pip" \
	wait_re "[> ]\.venv +venv +[0-9]+\.[0-9]+[0-9.]* +pip" 60
ok "it is a real environment" "$WS/.venv/bin/python" -m pip --version
unlike "$(printf '%s\n' "$SCREEN" | grep -m1 ' PATH ')" "STATE" \
	"with no environment busy or broken, no empty STATE column takes the path's room"

# ---- install from the loopback index
keys i
ok "i asks for packages" wait_for "Packages to install"
like "$SCREEN" "Packages to install into \.venv " "and names the environment they go into"
type_text 'pwtest-alpha==1.0'
keys Enter
wait_for "Index URL" 10
type_text "$INDEX_ok_URL"
keys Enter
wait_for "Proxy URL" 10
keys Enter
ok "the install succeeds" wait_for "Install done in $WS/.venv after 1 attempt" 180
is "$("$WS/.venv/bin/python" -c 'import pwtest_alpha; print(pwtest_alpha.VERSION)' 2>&1)" "1.0" "the package is importable in the venv"
keys u
ok "u asks which packages to uninstall, naming the environment" wait_for "Packages to uninstall from .venv " 10
keys Escape
wait_for "Install done" 10 >/dev/null

# ---- an option smuggled in as a spec is refused before anything runs
keys i
wait_for "Packages to install" 10
type_text '--index-url=http://evil.invalid/ pwtest-beta'
keys Enter
ok "an option typed as a spec is refused" wait_for "looks like an option" 10

# ---- a dead default index, a working mirror; the pane switches while pip runs
keys i
wait_for "Packages to install" 10
type_text 'pwtest-beta'
keys Enter
wait_for "Index URL" 10
keys Enter
wait_for "Proxy URL" 10
keys Enter
keys 4
ok "the Attempts pane answers while pip runs" wait_for "venv.install $WS/.venv  running" 20
ok "pip's progress shows while it runs" wait_for "-- attempt 1: pip install" 20
keys '?'
ok "the help overlay opens during the install" wait_for "scroll pip's output" 10
keys Escape
ok "the install finishes ok through the mirror" wait_for "venv.install $WS/.venv  ok in" 240
like "$SCREEN" "1 +http://127.0.0.1:$DEAD/simple/ +- +[0-9]+ +network" "attempt 1: the index pip asked (the caller's PIP_INDEX_URL), a network failure"
like "$SCREEN" "2 +$INDEX_ok_URL +- +0 +ok" "attempt 2: the mirror, ok"
like "$SCREEN" "(Successfully installed|already satisfied)" "pip's own output is shown"
ok "pwtest-beta is installed" "$WS/.venv/bin/python" -c 'import pwtest_beta'
printf '%s\n' "$SCREEN" > "$WORLD/attempts.screen"

# ---- remove: No is the default
keys 3
keys c
wait_for "Name (a folder" 10
keys C-u
type_text other
keys Enter
wait_for "> automatic" 60
keys Enter
wait_for "Created other with Python" 120
wait_re "[> ]other +venv" 60

# ---- the filter matches the path as shown (from the workspace), not the
# absolute path: a part of the workspace's own path matches no row
keys /
wait_for "Show only lines containing" 10
type_text "$(basename "$WORLD")/ws"
keys Enter
ok "a filter naming the workspace's own folders matches no environment (they are shown from it)" \
	wait_for "No environment matches the filter" 10
unlike "$SCREEN" "[> ](\.venv|other) +venv" "and lists no row"
keys /
wait_for "Show only lines containing" 10
keys C-u
type_text "oth"
keys Enter
ok "a filter on the shown path keeps the row that shows it" wait_re ">other +venv" 10
unlike "$SCREEN" "[> ]\.venv +venv" "and hides the others"
keys /
wait_for "Show only lines containing" 10
keys C-u Enter
ok "an empty filter shows every environment again" wait_re "[> ]\.venv +venv" 10

keys Down
keys d
ok "d asks before removing" wait_for "Remove the environment $WS/other" 10
keys Enter
ok "Enter keeps it (No is the default)" wait_for "kept $WS/other" 10
ok "the environment is still there" test -e "$WS/other/pyvenv.cfg"
keys d
wait_for "Remove the environment $WS/other" 10
keys y
ok "y removes it" wait_for "Removed $WS/other" 60
ok "the folder is gone" test ! -e "$WS/other"

# ---- Enter on an environment: its latest pip operation, read from the catalog
wait_re "[> ]\.venv +venv" 60
keys Home Enter
ok "Enter shows the environment's latest install from the catalog" wait_for "attempt 2, the end of its output" 20
like "$SCREEN" "venv.install $WS/.venv  ok in" "with its outcome"
like "$SCREEN" "2 +$INDEX_ok_URL +- +0 +ok" "and its attempts"

# ---- a stalled index and a small budget: the stop reason
start_index stall stall
tui_start budget 80 24 \
	"$ENVS '$PYWARD' --box-root '$WORLD/box' -C '$WS' --timeout 5; echo EXITED rc=\$?; sleep 60"
wait_for "q quit" 10
keys 3
wait_re "[> ]\.venv +venv" 30
keys i
wait_for "Packages to install" 10
type_text 'pwtest-alpha==1.1'
keys Enter
wait_for "Index URL" 10
type_text "$INDEX_stall_URL"
keys Enter
wait_for "Proxy URL" 10
keys Enter
keys 4
ok "a budget that runs out shows the stop reason" wait_for "stop reason: the time budget ran out during attempt 1" 60
like "$SCREEN" "1 +$INDEX_stall_URL +- +-1 +stopped" "the stopped attempt is listed"
like "$SCREEN" "timed-out in" "the operation timed out"
unlike "$SCREEN" "-- stop reason --|attempts so far:" "the stop reason is shown once, above the output, not again inside it"
keys Right
ok "Right scrolls long output lines sideways (a mark says the start is hidden)" wait_re "║ <[^ ]" 10
keys Left
no_mark() { SCREEN=$(T capture-pane -p -t "$S"); ! printf '%s\n' "$SCREEN" | grep -q "║ <[^ ]"; }
wait_until 60 "the mark of hidden starts to go" no_mark
unlike "$SCREEN" "║ <[^ ]" "Left scrolls back"

# ---- read-only refuses create
tui_start ro 80 24 \
	"$ENVS '$PYWARD' --box-root '$WORLD/box' -C '$WS' --mode read-only; echo EXITED rc=\$?; sleep 60"
wait_for "q quit" 10
keys 3
wait_for "$WS/.venv" 30
keys c
ok "read-only mode refuses create" wait_for "the mode is read-only" 10
unlike "$SCREEN" "Name \(a folder" "and asks nothing"

done_testing
