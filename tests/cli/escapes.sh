#!/bin/sh
# Terminal output (issue 13 item 24): names from outside (a hostile
# workspace, a tampered runtime) reach the terminal only as visible
# escapes, in every human form; --json keeps them exact.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
trap 'rm -rf "$WORLD"' EXIT
ESC=$(printf '\033') BEL=$(printf '\007')
NAME="env${ESC}]0;TITLE${BEL}${ESC}[2J"
WS="$WORLD/ws"
BOX="$WORLD/box"
mkdir -p "$WS/$NAME/bin"
printf 'home = /usr/bin\nversion = 3.11.2\n' >"$WS/$NAME/pyvenv.cfg"
P() { run --box-root "$BOX" -C "$WS" "$@"; }
# How many raw ESC, BEL, CR or C1 (UTF-8 C2 80-9F) bytes a text holds.
raw() { printf '%s' "$1" | od -An -tx1 -v | tr ' ' '\n' | grep -Ec '^(1b|07|0d|9b)$'; }
JS() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
plan 15

# ---- venv discover: the folder of the issue (a title, a screen clear)
P venv discover
like "$OUT" 'env\\e\]0;TITLE\\x07\\e\[2J' "venv discover shows the name's controls as escapes"
is "$(raw "$OUT$ERR")" 0 "and sends the terminal none of them"
P --json venv discover
printf '%s' "$OUT" | NAME="$NAME" python3 -c '
import json, os, sys
d = json.load(sys.stdin)
paths = [e["path"] for e in d["environments"]]
sys.exit(0 if any(p.endswith("/" + os.environ["NAME"]) for p in paths) else 1)'
is "$?" 0 "--json venv discover keeps the name exact"

# ---- history and history show: the operation's target is that folder
P venv remove "$WS/$NAME"
is "$RC" 0 "the environment with the hostile name is removed"
is "$(raw "$OUT$ERR")" 0 "venv remove prints no raw control"
P history
like "$OUT" "env\\\\e\\]0;TITLE" "history shows the target escaped"
is "$(raw "$OUT")" 0 "history sends no raw control"
ID=$(sqlite3 "$BOX/catalog.sqlite3" "SELECT max(id) FROM operations")
P history show "$ID"
like "$OUT" "target: +.*env\\\\e\\]0;TITLE\\\\x07\\\\e\\[2J" "history show shows the target escaped"
is "$(raw "$OUT")" 0 "history show sends no raw control"
P --json history show "$ID"
is "$(JS 'd["operation"]["target"].endswith(chr(27) + "[2J")')" True "--json history show keeps the target exact"

# ---- an error message that names a hostile path
P venv remove "$WS/gone${ESC}[2J"
is "$(raw "$ERR")" 0 "an error naming a hostile path sends no raw control"
like "$ERR" 'gone\\e\[2J' "and shows the path escaped"

# ---- runtime verify: a file named with cursor-up, erase-line and a newline
if try_runtime_fixture "$WORLD/srv/rel/1"; then
	write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:1/rel/1/cpython-fixture-install_only.tar.gz" "$SHA"
	P runtime install --pins "$WORLD/pins.tsv" --archive "$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz" --yes -q
	[ "$RC" = 0 ] || echo "# runtime install: $ERR"
	EVIL="x${ESC}[1A${ESC}[2K
modified bin"
	mkdir "$BOX/runtime/python/current/$EVIL"
	: >"$BOX/runtime/python/current/$EVIL/python3"
	P runtime verify
	like "$OUT" 'x\\e\[1A\\e\[2K\\nmodified bin/python3' "runtime verify shows the file's name escaped"
	is "$(raw "$OUT")" 0 "runtime verify sends no raw control for a hostile file name"
	is "$(printf '%s\n' "$OUT" | grep -c '^modified')" 0 \
		"and its newline forges no 'modified' line (the name shows as x\\e[1A\\e[2K\\nmodified ...)"
else
	skip 3 "no system CPython for the runtime fixture"
fi

done_testing
