#!/bin/sh
# The History pane's catalog check in a real terminal (tmux, 80x24): c runs
# the same operation as `pyward history check` (every page, every index),
# shows "no damage found" on a sound catalog and SQLite's problems with what
# to do on a damaged one, writes nothing, and Esc goes back to the list.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
BOX="$WORLD/box"
PY=${PYTHON3:-python3}
plan 14

WAIT_SECONDS=20
keys() { T send-keys -t "$S" "$@"; }
start() { # NAME [ENV...]: the interface on the History pane
	_name=$1
	shift
	tui_start "$_name" 80 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 $* '$PYWARD' --box-root '$BOX' -C '$WORLD/ws'; echo EXITED rc=\$?; sleep 30"
	wait_for "q quit" 10
	keys 5
}

"$UNIT_HELPER_DIR/catalog_fill" "$BOX/catalog.sqlite3" 300 >/dev/null

start sound
ok "the History pane's hint names the check" wait_for "c check"
keys '?'
wait_for "Keys (pyward" 10
keys NPage
ok "the help says what c does" wait_for "check the whole catalog for damage"
keys Escape
keys c
ok "c checks a sound catalog: no damage found, with the pages read" \
	wait_re "no damage found: [0-9]+ pages read, every index compared with its table" 60
like "$SCREEN" "Catalog check of .*/box/catalog\.sqlite3" "the report names the catalog"
like "$SCREEN" "catalog check: no damage found \([0-9]+ pages read\)" "the status line says so too"
keys Escape
ok "Esc goes back to the list" wait_re "STARTED +USER +KIND" 10
T kill-session -t sound

# the last cell of a middle leaf of operations points off its page
"$PY" "$TOP_SRCDIR/tests/fixtures/damage_catalog.py" "$BOX/catalog.sqlite3"
before=$(sha256sum <"$BOX/catalog.sqlite3")

start damaged
wait_re "STARTED +USER +KIND" 10
keys c
ok "c on a damaged catalog says it is damaged, with how many problems" \
	wait_re "catalog .*/box/catalog\.sqlite3 is damaged: [0-9]+" 60
like "$SCREEN" "restore a backup" "with what to do"
like "$SCREEN" "problems, as SQLite words them:" "and lists the problems"
like "$SCREEN" "Offset 4094 out of range|corrupt|malformed" "SQLite's own words"
T kill-session -t damaged
is "$(sha256sum <"$BOX/catalog.sqlite3")" "$before" "the check wrote nothing to the damaged file"

# the same in German (the build tree's catalogs: PYWARD_LOCALEDIR from make check)
if [ -s "${PYWARD_LOCALEDIR:-/nonexistent}/de/LC_MESSAGES/pyward.mo" ]; then
	start de LANGUAGE=de PYWARD_LOCALEDIR="'$PYWARD_LOCALEDIR'"
	ok "German: the hint names the check" wait_for "c prüfen"
	keys c
	ok "German: the damage is reported in German" wait_re "ist beschädigt: [0-9]+" 60
	like "$SCREEN" "Katalogprüfung von .*/box/catalog\.sqlite3" "German: the report's title"
	T kill-session -t de
else
	skip 3 "no German catalog in the build tree (built without NLS)"
fi
done_testing
