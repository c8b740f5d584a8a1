#!/bin/sh
# Requirement files and specs are confined (issue 13, item 10): pyward reads
# requirement files itself and applies the command line's rules to every
# line, of every nested file. Real pip, a real loopback index.
. "$TOP_SRCDIR/tests/lib.sh"
pip_world
OUTSIDE="$WORLD/outside"
CAT="$WORLD/box/catalog.sqlite3"
mkdir -p "$OUTSIDE/proj" "$WS/sub"
printf 'topsecret-line\n' >"$OUTSIDE/secret.txt"
printf 'from setuptools import setup\nsetup(name="evil", version="1")\n' >"$OUTSIDE/proj/setup.py"
plan 19

P venv create --python "$SYS_PY"
is "$RC" 0 "a venv to install into"

# refused: each line in a requirements file inside the workspace
refused_line() { # LINE DESCRIPTION
	printf 'pwtest-alpha\n%s\n' "$1" >"$WS/req.txt"
	P venv install --index "$INDEX_ok_URL" -r req.txt
	is "$RC" 3 "$2"
}
refused_line "-r $OUTSIDE/secret.txt" "a nested -r of a file outside is refused"
refused_line "-c ../outside/secret.txt" "a nested -c of a file outside is refused"
refused_line "-e file://$OUTSIDE/proj" "-e file:///outside is refused in a file"
refused_line "--editable=../outside/proj" "--editable=../outside is refused in a file"
refused_line "-e git+https://example.invalid/x.git" "a VCS editable in a file is refused"
refused_line "evil @ file://$OUTSIDE/proj" "name @ file:///outside in a file is refused"
ok "nothing from the outside file reached the catalog" sh -c "! grep -aq topsecret-line '$CAT' '$CAT-wal'"

# refused: the same on the command line
P venv install --index "$INDEX_ok_URL" "$OUTSIDE/proj"
is "$RC" 3 "a positional path outside is refused"
P venv install --index "$INDEX_ok_URL" "evil @ file://$OUTSIDE/proj"
is "$RC" 3 "name @ file:///outside is refused"
P venv install --index "$INDEX_ok_URL" "x @ file:///etc/passwd"
is "$RC" 3 "x @ file:///etc/passwd is refused"
ok "the outside project was never built or installed" sh -c "! '$WS/.venv/bin/python' -c 'import evil' 2>/dev/null && [ ! -e '$OUTSIDE/proj/build' ]"

# allowed: nested files inside, and an index named in the file is used and recorded
printf -- '--index-url %s\n-r sub/more.txt\npwtest-alpha==1.0  # pinned\n' "$INDEX_ok_URL" >"$WS/req.txt"
printf 'pwtest-beta\n' >"$WS/sub/more.txt"
P venv install -r req.txt --json
is "$RC" 0 "a requirements file with a nested file inside the workspace installs"
is "$(J 'd["attempts"][0]["index"]')" "$INDEX_ok_URL" "its --index-url line is recorded as the index, not as the default"
ok "both packages are there" "$WS/.venv/bin/python" -c 'import pwtest_alpha, pwtest_beta'
ok "the flat copy pyward handed to pip is gone" sh -c "[ -z \"\$(ls '$WS/.pyward/tmp' | grep requirements-)\" ]"

# uninstall takes -r as pip uninstall does; -e names nothing to uninstall
printf 'pwtest-alpha\n-r sub/more.txt\n' >"$WS/un.txt"
P venv uninstall -r un.txt
is "$RC" 0 "venv uninstall -r FILE exits 0"
ok "the file's packages, nested ones too, are gone" sh -c "! '$WS/.venv/bin/python' -c 'import pwtest_alpha' 2>/dev/null && ! '$WS/.venv/bin/python' -c 'import pwtest_beta' 2>/dev/null"
P venv uninstall -e sub pwtest-alpha
is "$RC" 2 "venv uninstall -e is a usage error"

done_testing
