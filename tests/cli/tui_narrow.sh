#!/bin/sh
# What a person sees at 60x20 (a split pane) and in German at 80x24: no
# text cut off without a mark, no column out of line, nothing drawn over
# the frame. History shows a long target's end (the part that tells two
# environments apart) and gives the user column's room to it when narrow;
# the Runtime pane names every library the install brings; the Python pane
# says what is missing before its usage text; a tall dialog stays inside the
# frame; the help overlay keeps a blank beside its border and shows every
# description whole; the Environments pane's PIP column fits German words.
. "$TOP_SRCDIR/tests/lib.sh"
tui_world
BOX="$WORLD/box"
WS="$WORLD/ws"
SYS_PY=${PYTHON3:-python3}
"$SYS_PY" -c 'import venv' 2>/dev/null || skip_all "python3 has no venv module"
P() { run --box-root "$BOX" -C "$WS" "$@"; }
P venv create --seed none --python "$SYS_PY" sub/project-with-a-long-name-environment
[ "$RC" = 0 ] || skip_all "could not create a test environment: $ERR"
P venv create --seed none --python "$SYS_PY" broken
rm -f "$WS/broken/bin/python"*
# an environment whose base lives under a deep prefix, as pyenv's and
# uv's do: at 60 columns its version folder must stay in sight
DEEP="$WORLD/interpreters/a-prefix-deep-enough-to-be-cut/versions/3.99.1/bin"
mkdir -p "$DEEP" && ln -s "$(command -v "$SYS_PY")" "$DEEP/python3"
P venv create --seed none --python "$SYS_PY" zz-deep-base
sed -i "s|^home = .*|home = $DEEP|" "$WS/zz-deep-base/pyvenv.cfg"
plan 26

WAIT_SECONDS=20
keys() { T send-keys -t "$S" "$@"; }
row() { printf '%s\n' "$SCREEN" | sed -n "$1p"; }
start() { # NAME WIDTH HEIGHT READY-TEXT [ENV...]
	_n=$1 _w=$2 _h=$3 _ready=$4
	shift 4
	tui_start "$_n" "$_w" "$_h" \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 PYWARD_DATADIR='$TOP_SRCDIR/data' PYWARD_BASELINE='$TOP_SRCDIR/data/requirements-baseline.txt' $* '$PYWARD' --box-root '$BOX' -C '$WS'; echo EXITED rc=\$?; sleep 60"
	wait_for "$_ready" 10
}

# ---- 60x20
start narrow 60 20 "q quit"
ok "Runtime pane at 60 columns: the install hint names the last library too" wait_for "reportlab" 10
keys 3
ok "Environments at 60 columns: the list draws" wait_re "broken +venv" 20
like "$SCREEN" "python: [^║]*…" "the selected one's interpreter line, too long for the pane, ends in a mark"
keys End
ok "End selects the environment with the deep base" wait_re ">zz-deep-base" 10
like "$(printf '%s\n' "$SCREEN" | grep -m1 'base: ')" "python: [^ ]*/bin/python +base: …[^║]*/3\.99\.1/bin/python3 *║" \
	"its base keeps its last parts (the version folder) behind a mark, not its leading folders"
keys 5
ok "History at 60 columns: the list draws" wait_re "venv\.create +ok" 10
unlike "$(row 3)" "USER" "the user column gives its room to the target when narrow"
like "$SCREEN" "venv\.create +ok +…[^ ]*-environment" "a long target shows its end after a mark"
keys 6
ok "Python pane at 60x20: what to do without an interpreter is not pushed off" \
	wait_for "with Ctrl-T." 10
like "$SCREEN" "No interpreter yet" "and says what is missing"
keys Tab 2 i
ok "a consent taller than the frame scrolls" wait_re "lines 1-[0-9]+ of [0-9]+, Up/Down scroll" 10
like "$(row 2)" "^╔═ pyward" "and leaves the frame's top border alone"
like "$(row 19)" "^╚" "and its bottom border"
unlike "$(row 2)$(row 19)" "═╔|═╚" "no dialog corner drawn over the frame"
like "$(row 20)" "Enter choose  Esc decline" "the hint line shows the dialog's keys while it is open"
unlike "$(row 20)" "\\? help|q quit" "and not the pane's, which the dialog does not take"
keys Escape
wait_for "i install" 10
keys 1
wait_for "b rollback" 10
like "$(row 20)" "b rollback  … +\\? help  q quit" "keys that do not fit end in a mark (the help lists them)"
keys '?'
wait_for "Keys (pyward" 10
help=$SCREEN
for i in 1 2 3 4 5 6 7; do
	keys NPage
	sleep 0.3
	help="$help
$(T capture-pane -p -t "$S")"
done
unlike "$(printf '%s\n' "$help" | grep -v '═')" "[^ ]║\$" "the help overlay keeps a blank beside its right border"
like "$(printf '%s\n' "$help" | tr -d '║' | tr -s ' \n' '  ')" "as the Python prompt does \(a blank line ends the block\)" \
	"the help shows its longest description whole"
like "$help" "Ctrl-N" "and every key whole: a key wider than its column wraps (Up, Down, Ctrl-P, Ctrl-N)"
like "$help" "^║  PgUp, PgDn, +move by pages" "the wrapped key starts beside its description"
T kill-session -t narrow

# ---- a value longer than its two rows (a deep box root) ends in a mark
LONGBOX="$WORLD/a-box-root-folder-whose-name-is-long-enough/to-need-more-than-two-rows/at-sixty-columns/box"
tui_start deep 60 20 \
	"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$LONGBOX' -C '$WS'; echo EXITED rc=\$?; sleep 60"
ok "Runtime pane with a deep box root at 60 columns" wait_for "Box root:" 10
like "$(row 4)" "…" "its second row ends in a mark: the path goes on"
T kill-session -t deep

# ---- German at 80x24: the Environments pane's columns
if [ -s "${PYWARD_LOCALEDIR:-/nonexistent}/de/LC_MESSAGES/pyward.mo" ]; then
	start german 80 24 "q Ende" LANGUAGE=de PYWARD_LOCALEDIR="'$PYWARD_LOCALEDIR'"
	keys 3
	ok "German: the Environments pane lists the environments" wait_re "broken +venv" 20
	head=$(printf '%s\n' "$SCREEN" | grep -m1 "PFAD")
	line=$(printf '%s\n' "$SCREEN" | grep -m1 "broken  *venv")
	col() { printf '%s\n' "$1" | "$SYS_PY" -c 'import sys; l = sys.stdin.read(); print(l.find(sys.argv[1]))' "$2"; }
	state=$(printf '%s\n' "$line" | "$SYS_PY" -c 'import sys, re; l = sys.stdin.read(); m = re.search(r"kein pip +(\S)", l); print(m.start(1) if m else -1)')
	is "$state" "$(col "$head" ZUSTAND)" "German: the STATE column's words start under its heading (the PIP column fits 'kein pip')"
	like "$line" "kein pip" "German: the PIP column says 'kein pip' whole"
	T kill-session -t german
else
	skip 3 "no German catalog in the build tree (built without NLS)"
fi
done_testing
