#!/bin/sh
# Help that agrees with itself: help --help works, a command without its
# verb points at its own help, every usage error has the same prefixes as
# other errors, and a command with verbs gives each verb a usage line and
# each option a line saying what it does.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
plan 24

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
