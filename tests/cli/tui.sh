#!/bin/sh
# The full-screen placeholder in a real terminal (tmux): draws, refuses bad
# terminals, shows the too-small notice, recovers on resize, quits with q.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
trap 'T kill-server 2>/dev/null; [ -z "${locker:-}" ] || kill "$locker" 2>/dev/null; rm -rf "$WORLD"' EXIT
plan 47

WAIT_SECONDS=20

tui_start main 80 24 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 30"
ok "the screen draws at 80x24" wait_for "q quit"
ok "the runtime's state arrives" wait_for "not provisioned"
like "$SCREEN" "pyward [0-9.]+" "the title names pyward and its version"
like "$SCREEN" "Workspace: +$WORLD/ws" "the workspace is shown"
like "$SCREEN" "q quit" "the key hint line is shown"
like "$SCREEN" "Runtime: +not provisioned" "the runtime's state is shown honestly"
like "$(printf '%s\n' "$SCREEN" | sed -n 23p)" "^╚═+╝$" "the frame ends above the hint line"

T resize-window -t main -x 50 -y 12
ok "a small terminal gets a clear notice" wait_for "terminal 50x12 is too small (need 60x15)"
T resize-window -t main -x 80 -y 24
ok "the screen recovers after resize" wait_for "Box root:"

# ---- panes and the help overlay
T send-keys -t main Tab
ok "Tab goes to the next pane" wait_for "download and install"
T send-keys -t main BTab
ok "Shift-Tab goes back" wait_for "Box root:"
T send-keys -t main 5
ok "a number goes to its pane" wait_for "No operations recorded"
T send-keys -t main 3
ok "the Environments pane has its tab" wait_for "Environments"
T send-keys -t main 5 '?'
ok "? opens the help" wait_for "Keys (pyward"
wait_for "(asks only while work is running)" >/dev/null # the whole overlay, not half a write
like "$SCREEN" "Tab, Shift-Tab +next / previous pane" "the help lists the global keys"
like "$SCREEN" "q or F10 +quit \(asks only while work is running\)" "with the letter alias of every function key"
like "$SCREEN" "History" "the current pane's keys come first"
T send-keys -t main NPage
ok "the help scrolls to the other panes' keys" wait_for "install the managed runtime"
T send-keys -t main NPage NPage NPage NPage
ok "and to the end of the list" wait_re "lines [0-9]+-([0-9]+) of \1 "
like "$SCREEN" "Up, Down, Ctrl-P, Ctrl-N  earlier / later inputs" \
	"the key column is as wide as the widest key, two blanks before each description"
T send-keys -t main Escape
ok "Esc closes the help" wait_for "No operations recorded"

T send-keys -t main q
ok "q quits with exit 0" wait_for "EXITED rc=0"

# Sessions stay until the server is killed at exit (and tui_start's
# keeper session holds the server up even when they end).
tui_start dumb 80 24 \
	"env TERM=dumb '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "TERM=dumb is refused with exit 2" wait_for "EXITED rc=2"
like "$SCREEN" "use the command line" "the refusal points at the CLI"

tui_start ascii 80 24 \
	"env TERM=xterm LC_ALL=C '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "a non-UTF-8 locale draws the screen" wait_for "q quit"
like "$(printf '%s\n' "$SCREEN" | sed -n 2p)" "^\+- pyward" "with ASCII line drawing"

tui_start asciiopt 80 24 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' tui --ascii; echo EXITED rc=\$?; sleep 30"
ok "tui --ascii draws the screen" wait_for "q quit"
like "$(printf '%s\n' "$SCREEN" | sed -n 2p)" "^\+- pyward" "with ASCII lines in a UTF-8 locale"

# ---- German (the build tree's catalogs: PYWARD_LOCALEDIR from make check)
if [ -s "${PYWARD_LOCALEDIR:-/nonexistent}/de/LC_MESSAGES/pyward.mo" ]; then
	tui_start german 80 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 LANGUAGE=de PYWARD_LOCALEDIR='$PYWARD_LOCALEDIR' '$PYWARD' --box-root '$WORLD/box' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 30"
	ok "LANGUAGE=de: the screen draws in German" wait_for "q Ende"
	like "$(printf '%s\n' "$SCREEN" | head -n 1)" "3 Umgebungen .*5 Verlauf" "the pane tabs are German"
	T send-keys -t german '?'
	ok "the help overlay is German too" wait_for "Überall"
	T send-keys -t german Escape q
	ok "and q quits" wait_for "EXITED rc=0"
else
	skip 4 "no German catalog in the build tree (built without NLS)"
fi

# ---- the History pane pages through a long catalog
mkdir -p "$WORLD/big"
"$UNIT_HELPER_DIR/catalog_fill" "$WORLD/big/catalog.sqlite3" 450 >/dev/null
# the oldest operation started in another year (the list shows its year)
"${PYTHON3:-python3}" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE operations SET started_at = ? WHERE id = (SELECT min(id) FROM operations)", ("2025-03-04T05:06:07.000Z",))
c.commit()' "$WORLD/big/catalog.sqlite3"
total=$("$PYWARD" --box-root "$WORLD/big" history --limit all --json | grep -c '"id"')
tui_start big 80 24 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/big' --mode read-only; echo EXITED rc=\$?; sleep 30"
wait_for "q quit" >/dev/null
T send-keys -t big 5
ok "History reads the first page only" wait_for "200 shown, more below"
T send-keys -t big End End End
ok "older pages load as the list moves down ($total in all)" wait_for "$total shown"
like "$SCREEN" "venv.install" "the oldest pages are listed too"
like "$SCREEN" "║ +[0-9]+ 2025-03-04  [^ ]+ +[a-z]+\\.[a-z]+ +ok " "a start in another year shows its year (2025-03-04), the columns aligned"
T send-keys -t big -l "$(printf '\033[4;9~')"
T send-keys -t big Up
ok "an unknown escape sequence is not taken for keys ('4' is pane 4)" wait_for "$total shown"
unlike "$SCREEN" "Operation [0-9]+:" "the Attempts pane was not opened"

# ---- a slow History read never holds up the keys. Another process locks
# the catalog (the filter's read then waits in SQLite's busy handler) and
# lets go only when told, or 4 s after the filter was sent (below the 5 s
# busy timeout).
"${PYTHON3:-python3}" - "$WORLD/big/catalog.sqlite3" "$WORLD/lock" <<'PY' &
import os, sqlite3, sys, time
db, flag = sys.argv[1:]
c = sqlite3.connect(db, isolation_level=None)
c.execute("PRAGMA locking_mode = EXCLUSIVE")
c.execute("BEGIN EXCLUSIVE")
open(flag + ".held", "w").close()
end = time.time() + 30
while time.time() < end and not os.path.exists(flag + ".start"):
    time.sleep(0.02)
end = time.time() + 4
while time.time() < end and not os.path.exists(flag + ".release"):
    time.sleep(0.02)
c.execute("COMMIT")
c.close()
open(flag + ".released", "w").close()
PY
locker=$!
wait_until 60 "the locker to hold the catalog" test -e "$WORLD/lock.held"
T send-keys -t big /
wait_for "Show only lines containing" >/dev/null
T send-keys -t big verify
: >"$WORLD/lock.start"
T send-keys -t big Enter
ok "a filter reads in the background (loading… in the footer)" wait_for "loading…"
T send-keys -t big 1
ok "a pane key is answered while the filter waits for the catalog" wait_for "Box root:"
ok "before the catalog was let go" test ! -e "$WORLD/lock.released"
: >"$WORLD/lock.release"
wait "$locker"
T send-keys -t big 5
ok "back in History, the filter's result is shown" wait_re "[0-9]+ shown, filter 'verify' \(/ changes it\) +║"
like "$SCREEN" "runtime.verify" "the matching operation is listed"
unlike "$SCREEN" "venv.install|loading…" "and nothing else, the read is over"
T send-keys -t big / C-u
T send-keys -t big -l 'no-such-thing'
T send-keys -t big Enter
ok "a filter that matches nothing says so, not that nothing is recorded" wait_for "No operation matches 'no-such-thing' (/ changes the filter)."

run --box-root "$WORLD/box" tui extra
is "$RC" 2 "tui takes no arguments (exit 2)"

tui_start unknown 80 24 \
	"env TERM=no-such-terminal-xyz '$PYWARD' --box-root '$WORLD/box'; echo EXITED rc=\$?; sleep 30"
ok "an unknown TERM is refused with exit 2" wait_for "EXITED rc=2"

done_testing
