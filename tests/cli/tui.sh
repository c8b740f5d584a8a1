#!/bin/sh
# The full-screen placeholder in a real terminal (tmux): draws, refuses bad
# terminals, shows the too-small notice, recovers on resize, quits with q.
. "$TOP_SRCDIR/tests/lib.sh"
command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
make_world
SOCK="$WORLD/tmux.sock"
T() { tmux -S "$SOCK" "$@"; }
trap 'T kill-server 2>/dev/null; rm -rf "$WORLD"' EXIT
plan 14

# wait_for TEXT: poll the pane (at most 5 s) until TEXT appears.
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		SCREEN=$(T capture-pane -p -t "$S" 2>/dev/null)
		printf '%s\n' "$SCREEN" | grep -Fq -- "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

S=main
T -f /dev/null new-session -d -s main -x 80 -y 24 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 30"
ok "the screen draws at 80x24" wait_for "q quit"
like "$SCREEN" "pyward [0-9.]+" "the title names pyward and its version"
like "$SCREEN" "Workspace: +$WORLD/ws" "the workspace is shown"
like "$SCREEN" "q quit" "the key hint line is shown"
like "$SCREEN" "Runtime: +not provisioned" "the runtime's state is shown honestly"
like "$(printf '%s\n' "$SCREEN" | sed -n 23p)" "^╚═+╝$" "the frame ends above the hint line"

T resize-window -t main -x 60 -y 20
ok "a small terminal gets a clear notice" wait_for "terminal too small (need 80x24)"
T resize-window -t main -x 80 -y 24
ok "the screen recovers after resize" wait_for "Box root:"

T send-keys -t main q
ok "q quits with exit 0" wait_for "EXITED rc=0"

# Sessions stay until the server is killed at exit: killing the last one
# would stop the server while the next one starts.
S=dumb
T new-session -d -s dumb -x 80 -y 24 \
	"env TERM=dumb '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "TERM=dumb is refused with exit 2" wait_for "EXITED rc=2"
like "$SCREEN" "use the command line" "the refusal points at the CLI"

S=ascii
T new-session -d -s ascii -x 80 -y 24 \
	"env TERM=xterm LC_ALL=C '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "a non-UTF-8 locale draws the screen" wait_for "q quit"
like "$(printf '%s\n' "$SCREEN" | head -n 1)" "^\+- pyward" "with ASCII line drawing"

S=unknown
T new-session -d -s unknown -x 80 -y 24 \
	"env TERM=no-such-terminal-xyz '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "an unknown TERM is refused with exit 2" wait_for "EXITED rc=2"

done_testing
