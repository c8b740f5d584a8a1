#!/bin/sh
# The documents tell the truth: the man page lints clean and names every
# command and global option that --help lists; the README carries its two commands.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
MAN="$TOP_SRCDIR/man/pyward.1"
plan 12

if command -v mandoc >/dev/null 2>&1; then
	lint=$(mandoc -Tlint -W warning "$MAN" 2>&1)
	is "$lint" "" "mandoc -Tlint finds nothing in pyward.1"
	# an 80-column terminal shows every line whole (examples included)
	wide=$(mandoc -Tutf8 -Owidth=80 "$MAN" | col -bx | "${PYTHON3:-python3}" -c '
import sys
print(" ".join(str(i) for i, l in enumerate(sys.stdin, 1) if len(l.rstrip("\n")) > 80))')
	is "$wide" "" "man pyward at 80 columns: no line wider than the terminal"
else
	skip 2 "mandoc not installed"
fi

run --help
missing=""
for cmd in $(printf '%s\n' "$OUT" | awk '/^Commands:/{f=1;next} /^$/{f=0} f{print $1}'); do
	grep -q "^\.It Cm $cmd" "$MAN" || grep -q "^\.Ss $cmd" "$MAN" || grep -q "Cm $cmd" "$MAN" || missing="$missing $cmd"
done
is "$missing" "" "every command in --help is in the man page"

missing=""
for opt in $(printf '%s\n' "$OUT" | grep -Eo -- '--[a-z][a-z-]+' | sort -u); do
	name=${opt#--}
	grep -q "Fl \\\\-$name\|Fl -$name" "$MAN" || missing="$missing $opt"
done
is "$missing" "" "every global option in --help is in the man page"

like "$(grep -c '^\.It' "$MAN")" '^[0-9]+$' "the man page has option lists"

# The files pyward names to a person are named plainly: run from a build
# tree, the shipped data is not "_build/../data/runtime-pins.tsv".
env -u PYWARD_DATADIR "$PYWARD" --box-root "$WORLD/box" -C "$WORLD/ws" runtime install --dry-run >"$WORLD/plan.txt" 2>&1
pinned=$(sed -n 's/^ *pinned: in //p' "$WORLD/plan.txt")
like "$pinned" '^/.*/runtime-pins\.tsv$' "the plan names the pins table it read ($pinned)"
unlike "$(grep -E 'pinned:|attempt chain' "$WORLD/plan.txt")" '/\.\.?/' "as a normalised path (no /../ or /./ in it)"
like "$(cat "$TOP_SRCDIR/README.md")" '\./setup\.sh run' "README has the run command"
like "$(cat "$TOP_SRCDIR/README.md")" '\./setup\.sh test' "README has the test command"

# Where things go, as the README says, for root and for another user.
# `paths` only reads: it creates nothing, so asking as root is safe here.
README=$(tr "\n" " " <"$TOP_SRCDIR/README.md")
if [ "$(id -u)" -eq 0 ]; then
	HOME="$WORLD/elsewhere" env -u PYWARD_HOME "$PYWARD" --json paths >"$WORLD/paths.json" 2>/dev/null
	root_box=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["box_root"])' "$WORLD/paths.json" 2>/dev/null)
	is "$root_box" "/var/lib/pyward" "as root the box is /var/lib/pyward whatever HOME says"
else
	skip 1 "not root"
fi
like "$README" 'As root.*the box is[[:space:]]+`/var/lib/pyward`, whatever `HOME` says' "the README says where the box is for root"
like "$README" 'As any other user.*the box is `~/\.local/share/pyward`' "and for any other user"

done_testing
