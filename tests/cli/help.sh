#!/bin/sh
# Help that agrees with itself: help --help works, a command without its
# verb points at its own help, every usage error has the same prefixes as
# other errors, and a command with verbs gives each verb a usage line and
# each option a line saying what it does.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
plan 46

run help --help
is "$RC" 0 "help --help exits 0"
like "$OUT" "^Usage: pyward help \[COMMAND\]" "and says how help is used"

run help venv
is "$RC" 0 "help venv exits 0"
run venv --help
like "$OUT" "^  pyward venv install " "venv --help: install has its own usage line"
like "$OUT" "^  pyward venv uninstall " "uninstall too"
like "$OUT" "^  pyward venv verify " "and verify"
like "$OUT" "^  --seed fast\|pip\|none +create: " "each option has a line saying what it does and for which verb"
like "$OUT" "^  PYWARD_MIRRORS +install: mirror indexes" "PYWARD_MIRRORS, named in install's network hint, is documented"
# Every long option of venv is explained on a line of its own.
missing=""
for opt in depth python seed venv requirement editable index proxy upgrade background format; do
	printf '%s\n' "$OUT" | grep -Eq -- "^  (-[a-z], )?--$opt( |$)" || missing="$missing --$opt"
done
is "$missing" "" "every venv option has its own help line"
run runtime --help
like "$OUT" "^  pyward runtime install " "runtime --help: install has its own usage line"
like "$OUT" "^  pyward runtime baseline " "baseline too"
unlike "$OUT" "\\(baseline\\)|\\(verify\\)" "no option hangs on a verb named in brackets"
missing=""
for opt in version pins mirror archive cacert dry-run progress no-progress no-baseline requirements index format; do
	printf '%s\n' "$OUT" | grep -Eq -- "^  --$opt( |$)" || missing="$missing --$opt"
done
is "$missing" "" "every runtime option has its own help line"
run venv install --help
like "$OUT" "PYWARD_MIRRORS" "venv install --help names PYWARD_MIRRORS"

run venv
is "$RC" 2 "venv without a verb: exit 2"
like "$ERR" "^pyward: error: 'venv' needs a subcommand" "with the same prefix as other errors"
like "$ERR" "^pyward: hint: 'pyward venv --help' shows its usage" "pointing at venv's own help"
run runtime
is "$RC" 2 "runtime without a verb: exit 2"
like "$ERR" "^pyward: hint: 'pyward runtime --help' shows its usage" "pointing at runtime's own help"
run venv frobnicate
like "$ERR" "^pyward: error: unknown venv subcommand 'frobnicate'" "an unknown verb: the error prefix"
like "$ERR" "^pyward: hint: 'pyward venv --help'" "and venv's help"
run frobnicate
like "$ERR" "^pyward: hint: 'pyward --help' lists the commands" "an unknown command points at the command list"
run --box-root "$WORLD/box" venv discover --depth 99
like "$ERR" "^pyward: error: --depth needs a number" "an option's usage error has the same prefix"
unlike "$ERR" "Try '" "no second style of pointer"

# ---- jobs and history: each verb refuses, with exit 2 and the option's name, an option it does not take
bad="" n=0
for combo in "--follow" "list --follow" "show 1 --follow" "wait 1 --follow" "cancel 1 --follow" "show 1 -f"; do
	# shellcheck disable=SC2086
	run --box-root "$WORLD/box" -C "$WORLD" jobs $combo
	n=$((n + 1))
	if [ "$RC" != 2 ] || ! printf '%s' "$ERR" | grep -q -- "does not take --follow"; then bad="$bad [jobs $combo: $RC]"; fi
done
is "$bad" "" "each jobs verb but log refuses --follow (-f), exit 2 ($n forms)"
run --box-root "$WORLD/box" -C "$WORLD" jobs log 999 --follow
unlike "$ERR" "does not take" "jobs log takes --follow"
history_takes() {
	case "$1:$2" in
	list:kind | list:target | list:outcome | list:package | list:limit | list:since | export:since) return 0 ;;
	undo:dry-run | undo:force | undo:index | undo:proxy | export:format | prune:before) return 0 ;;
	esac
	return 1
}
bad="" n=0
for verb in list show undo export prune; do
	for opt in kind=k target=t outcome=ok package=p limit=5 since=2026-01-01 dry-run force \
		index=http://127.0.0.1:9/ proxy=http://127.0.0.1:9/ format=csv before=2026-01-01; do
		name=${opt%%=*}
		history_takes "$verb" "$name" && continue
		case $verb in
		list) words="" ;;
		show | undo) words="$verb 1" ;;
		*) words=$verb ;;
		esac
		# shellcheck disable=SC2086
		run --box-root "$WORLD/box" -C "$WORLD" history $words "--$opt"
		n=$((n + 1))
		if [ "$RC" != 2 ] || ! printf '%s' "$ERR" | grep -q -- "does not take --$name"; then bad="$bad [history $words --$opt: $RC]"; fi
	done
done
is "$bad" "" "each history verb (and the list) refuses each option it does not take, exit 2 ($n pairs)"
is "$n" "47" "47 history pairs tried"
run --box-root "$WORLD/box" -C "$WORLD" history --kind venv. --since 2026-01-01 --limit 5
is "$RC" 0 "the list still takes its filters"
run --box-root "$WORLD/box" -C "$WORLD" history export --since 2026-01-01 --format csv
is "$RC" 0 "export still takes --since and --format"

# ---- python: --list, --interrupt and --discard run no code and refuse what only a cell uses
bad="" n=0
for mode in --list --interrupt --discard; do
	for opt in "-c 1" "--reset" "--venv v" "--python p" "--max-output 100" "cell.py" "-s x"; do
		[ "$mode:$opt" = "--interrupt:-s x" ] || [ "$mode:$opt" = "--discard:-s x" ] && continue
		# shellcheck disable=SC2086
		run --box-root "$WORLD/box" -C "$WORLD" python $mode $opt
		n=$((n + 1))
		name=${opt%% *}
		[ "$name" = "-s" ] && name=--session
		if [ "$RC" != 2 ] || ! printf '%s' "$ERR" | grep -q -- "^pyward: error: 'python $mode' does not take $name"; then
			bad="$bad [python $mode $opt: $RC]"
		fi
	done
done
is "$bad" "" "python --list, --interrupt, --discard each refuse, exit 2, what only a cell takes ($n pairs)"
run --box-root "$WORLD/box" python --max-output 5 -c 1
like "$RC:$ERR" "^2:pyward: error: --max-output needs a byte count" "a bad --max-output: exit 2 with the same prefix as other errors"

run jobs --help
like "$OUT" "^  pyward jobs log ID \\[--follow\\]" "jobs --help: a usage line per verb"
like "$OUT" "^  -f, --follow +log: " "and --follow's line says which verb takes it"
run history --help
missing=""
for opt in kind target outcome package since limit dry-run force index proxy format before; do
	printf '%s\n' "$OUT" | grep -Eq -- "^  --$opt( |$)" || missing="$missing --$opt"
done
is "$missing" "" "history --help: every option has its own line"
like "$OUT" "^  pyward history undo ID " "and every verb its usage line"

# Every command's help has the same layout: summary, a Usage: block, each
# option on a line of its own, then the pointer to the global options.
for cmd in exec python mcp serve tui paths; do
	run $cmd --help
	missing=""
	case $cmd in
	exec) opts="-c timeout" ;;
	python) opts="session code venv python reset max-output interrupt discard list" ;;
	mcp) opts="allow-runtime-install max-message" ;;
	serve) opts="listen token-file tls-cert tls-key allow-host max-body max-header max-connections request-timeout pins" ;;
	tui) opts="ascii mouse" ;;
	paths) opts="" ;;
	esac
	for opt in $opts; do
		case $opt in -*) pat="^  $opt " ;; *) pat="^  (-[a-z], )?--$opt( |,|$)" ;; esac
		printf '%s\n' "$OUT" | grep -Eq -- "$pat" || missing="$missing $opt"
	done
	is "$(printf '%s\n' "$OUT" | sed -n 3p)|$missing" "Usage:|" "$cmd --help: a Usage: block after the summary, a line per option"
done
# Every --help line fits 80 columns, in English and in German, the command
# list included; columns are counted as a terminal does (wide characters 2,
# combining marks 0), not bytes.
export PYWARD_LOCALEDIR="$TOP_BUILDDIR/tests/locale"
cols() {
	python3 -c '
import sys, unicodedata
def width(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
for line in sys.stdin.read().splitlines():
    if width(line) > 80:
        print("%s: %d: %s" % (sys.argv[1], width(line), line))
' "$1"
}
long="" n=0
for lang in "" de; do
	for cmd in "" runtime "runtime install" venv "venv install" python exec jobs history pins paths \
		mcp serve tui help "help runtime"; do
		# shellcheck disable=SC2086
		LANGUAGE=$lang run $cmd --help
		n=$((n + 1))
		long="$long$(printf '%s\n' "$OUT" | cols "${lang:-en} pyward $cmd --help")"
	done
done
is "$long" "" "every --help line fits 80 columns, English and German ($n pages)"
if grep -q '^#define ENABLE_NLS 1' "$TOP_BUILDDIR/config.h" 2>/dev/null; then
	LANGUAGE=de run runtime --help
	like "$OUT" "^Aufruf:" "the German pages measured were German"
else
	skip 1 "built without NLS"
fi
run venv uninstall -e proj x
is "$RC" 2 "venv uninstall refuses -e: an editable project names nothing to uninstall"
run venv --help
like "$OUT" "^  pyward venv uninstall \[--venv V\] \[--background\] \[-r FILE\] NAME" "venv --help: uninstall takes -r FILE"
