#!/bin/sh
# `venv create` written without starting Python (issue 18), and a create
# that is killed (issue 13, item 14). The environment must be a real one:
# venv's own checks, pip --version, pip install and uninstall against the
# loopback index, `activate` in bash; the cached pip image must be rebuilt,
# never linked, once a file of it changed.
. "$TOP_SRCDIR/tests/lib.sh"
# LeakSanitizer stops a program it finds under ptrace (exit 1): in a
# sanitizer build the traced runs here go without it; the rest of the suite
# still checks for leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
make_world
trap 'stop_servers; rm -rf "$WORLD"' EXIT
# The real interpreter, not a wrapper script (a pyenv shim is never cached).
BASE=$("${PYTHON3:-python3}" -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$BASE" ] || skip_all "no python3"
"$BASE" -c 'import venv, ensurepip' 2>/dev/null || skip_all "python3 has no venv/ensurepip (install python3-venv)"
command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here"
command -v bash >/dev/null 2>&1 || skip_all "no bash for activate"
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
unset PYWARD_MIRRORS PIP_INDEX_URL http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
WS="$WORLD/ws"
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WS" "$@"; }
J() { printf '%s' "$OUT" | "$BASE" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
MM=$("$BASE" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
plan 47

# ---- the first create learns the base and builds the pip image
P venv create --python "$BASE" first --json
is "$RC" 0 "the first create exits 0"
is "$(J 'd["written"], d["seeded_fast"], d["existed"]')" "True True False" "it was written by pyward with pip linked"
IMG=$(ls -d "$BOX"/cache/venv/pip-*/site 2>/dev/null | head -n 1)
ok "the box's cache holds the base's facts and the pip image" test -n "$IMG" -a -n "$(ls "$BOX"/cache/venv/base-*.json)"

# ---- later creates start no Python at all
strace -f -e trace=execve -o "$WORLD/exec.trace" "$PYWARD" --box-root "$BOX" -C "$WS" venv create --python "$BASE" "$WS/my env" \
	>"$WORLD/c.out" 2>&1
is "$?" 0 "a create with the cache warm exits 0"
is "$(grep -c 'execve(' "$WORLD/exec.trace")" 1 "and executes nothing but pyward itself"
E="$WS/my env"
# A new tree's folders in a block group of their own (ext2/3/4's 'T'
# attribute), away from the workspace's busy group; elsewhere a no-op.
if stat -f -c %T "$WORLD" | grep -q '^ext' && lsattr -d "$WORLD" >/dev/null 2>&1; then
	like "$(lsattr -d "$E")" "^[^ ]*T[^ ]* " "the environment's folder is marked the top of a tree (chattr +T)"
else
	skip 1 "$(stat -f -c %T "$WORLD") has no ext2/3/4 attributes"
fi

# ---- it is a real environment
is "$("$E/bin/python" -c 'import sys; print(sys.prefix != sys.base_prefix, sys.prefix)')" "True $E" \
	"sys.prefix is the environment, not the base"
is "$("$E/bin/python" -c 'import site; print(site.getsitepackages()[0])')" "$E/lib/python$MM/site-packages" \
	"site.getsitepackages() names its own site-packages"
like "$("$E/bin/pip" --version)" "^pip [0-9.]+ from $E/lib/python$MM/site-packages/pip " "bin/pip runs the environment's pip"
like "$("$E/bin/python" -m pip --version)" "from $E/lib" "python -m pip too"
"$E/bin/pip" install -q --index-url "$INDEX_ok_URL" 'pwtest-alpha==1.0' >"$WORLD/pip.out" 2>&1
is "$?" 0 "pip install from the loopback index works"
is "$("$E/bin/python" -c 'import pwtest_alpha, sys; print(pwtest_alpha.__file__.startswith(sys.prefix))' 2>&1)" "True" \
	"the installed package imports from the environment"
"$E/bin/pip" uninstall -y -q pwtest-alpha >/dev/null 2>&1
is "$?" 0 "pip uninstall works"
ok "the package is gone" sh -c "! '$E/bin/python' -c 'import pwtest_alpha' 2>/dev/null"
act=$(bash -c '. "$1/bin/activate" && printf "%s|%s|%s" "$VIRTUAL_ENV" "$(command -v python)" "$PS1"; deactivate; printf "|%s" "${VIRTUAL_ENV:-none}"' _ "$E")
is "$act" "$E|$E/bin/python|(my env) |none" "activate in bash (a path with a blank) sets VIRTUAL_ENV, PATH and the prompt; deactivate undoes it"
"$BASE" -m venv "$WORLD/ref env"
for f in activate activate.fish activate.csh Activate.ps1; do
	sed "s#$WORLD/ref env#X#g; s#ref env#N#g" "$WORLD/ref env/bin/$f" > "$WORLD/ref.$f"
	sed "s#$E#X#g; s#my env#N#g" "$E/bin/$f" > "$WORLD/ours.$f"
done
ok "the activation scripts are what python -m venv writes, placeholders and quoting included" \
	sh -c "cd '$WORLD' && cmp -s ref.activate ours.activate && cmp -s ref.activate.fish ours.activate.fish && cmp -s ref.activate.csh ours.activate.csh && cmp -s ref.Activate.ps1 ours.Activate.ps1"
is "$(grep -v '^command' "$E/pyvenv.cfg")" "$(grep -v '^command' "$WORLD/ref env/pyvenv.cfg")" "pyvenv.cfg has venv's keys and values"
is "$(grep '^command' "$E/pyvenv.cfg")" "$(grep '^command' "$WORLD/ref env/pyvenv.cfg" | sed "s#$WORLD/ref env#$E#")" "including the command line"
ls_tree() { (cd "$1" && find . -path ./lib/python*/site-packages -prune -o -printf '%y %m %p %l\n' | grep -v '^f .* ./bin/pip' | sort); }
is "$(ls_tree "$E")" "$(ls_tree "$WORLD/ref env")" "folders, links (bin/python*, lib64) and modes are venv's"
ok "pip's files are hard links to the image" test "$(stat -c %i "$E/lib/python$MM/site-packages/pip/__init__.py")" = "$(stat -c %i "$IMG/pip/__init__.py")"
ok "its bytecode comes with it (no compile on first use)" sh -c "ls '$E/lib/python$MM/site-packages/pip/__pycache__/'*.pyc >/dev/null"
ok "RECORD names the launchers, INSTALLER and itself" sh -c "grep -q '^\.\./\.\./\.\./bin/pip,sha256=' '$E'/lib/python$MM/site-packages/pip-*.dist-info/RECORD && grep -q 'INSTALLER,sha256=' '$E'/lib/python$MM/site-packages/pip-*.dist-info/RECORD"

# ---- a changed image is detected and rebuilt, never linked
orig=$(sha256sum "$IMG/pip/__init__.py" | cut -d' ' -f1)
echo '# tampered' >> "$IMG/pip/__init__.py"
P venv create --python "$BASE" after-tamper
is "$RC" 0 "a create after the image was changed exits 0"
like "$ERR" "has changed files; building it again" "it says the image changed and is rebuilt"
is "$(sha256sum "$WS/after-tamper/lib/python$MM/site-packages/pip/__init__.py" | cut -d' ' -f1)" "$orig" "the new environment has the wheel's file, not the changed one"
# an edit in place through an environment reaches the shared inode: caught the same way
IMG=$(ls -d "$BOX"/cache/venv/pip-*/site | head -n 1)
printf '\n' >> "$WS/after-tamper/lib/python$MM/site-packages/pip/__main__.py"
P venv create --python "$BASE" after-edit
like "$ERR" "has changed files" "an edit in place through an environment is caught too"
ok "and the next environment does not get the edited file" sh -c "! cmp -s '$WS/after-edit/lib/python$MM/site-packages/pip/__main__.py' '$WS/after-tamper/lib/python$MM/site-packages/pip/__main__.py'"

# a change made after a create has begun (here: after pip's folders are made, while each
# linking thread is held by strace at its first link) is caught too: each link is checked as it
# is made, not the image once beforehand (strace counts each thread's calls on its own)
LATE=$(awk -F '\t' 'NR > 1 && $1 == "f" { n++; if (n == 800) { print $2; exit } }' "$(dirname "$IMG")/manifest")
late_sum=$(sha256sum "$IMG/$LATE" | cut -d' ' -f1)
strace -f -o /dev/null -e inject=linkat:delay_enter=3000000:when=1 \
	"$PYWARD" --box-root "$BOX" -C "$WS" venv create --python "$BASE" racing >"$WORLD/race.out" 2>&1 &
racer=$!
pip_copied() { [ -n "$(find "$WS" -type d -path "$WS/.racing.pyward-tmp-*/site-packages/pip/_vendor" 2>/dev/null)" ]; }
wait_until 60 "the create to copy pip into its temporary tree" pip_copied
echo '# changed during the create' >> "$IMG/$LATE"
wait "$racer"
is "$?" 0 "a create during which the image is changed exits 0"
is "$(sha256sum "$WS/racing/lib/python$MM/site-packages/$LATE" | cut -d' ' -f1)" "$late_sum" \
	"and its environment has the wheel's file, not the one changed after the create began"
IMG=$(ls -d "$BOX"/cache/venv/pip-*/site | head -n 1)

# ---- the pip wheel is looked up at each create, not remembered with the base's facts:
# an upgraded wheel package (the old file gone, a new one there) is used, not a reason to fall back
FACTS=$(ls "$BOX"/cache/venv/base-*.json | head -n 1)
WHEEL=$(head -n 1 "$(dirname "$IMG")/manifest" | cut -f3)
STDLIB=$("$BASE" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')
set_stdlib() { "$BASE" -c 'import json, sys; p, s = sys.argv[1:]; d = json.load(open(p)); d["stdlib"] = s; json.dump(d, open(p, "w"))' "$FACTS" "$1"; }
mkdir -p "$WORLD/stdlib/ensurepip/_bundled"
cp "$WHEEL" "$WORLD/stdlib/ensurepip/_bundled/pip-99.0-py3-none-any.whl"
set_stdlib "$WORLD/stdlib"
P venv create --python "$BASE" newwheel
like "$OUT" "linked from the box's image of $WORLD/stdlib/ensurepip/_bundled/pip-99\.0-py3-none-any\.whl" \
	"a newer bundled wheel is found at create time and its image linked"
mv "$WORLD/stdlib/ensurepip/_bundled/pip-99.0-py3-none-any.whl" "$WORLD/stdlib/ensurepip/_bundled/pip-100.0-py3-none-any.whl"
P venv create --python "$BASE" newwheel2 --json
is "$(J 'd["written"], d["seeded_fast"]')" "True True" "after that wheel is replaced by another, the create is still written with pip linked"
ok "and its pip works" "$WS/newwheel2/bin/python" -m pip --version
set_stdlib "$STDLIB"

# ---- --seed none and --seed pip
P venv create --python "$BASE" --seed none bare --json
is "$(J 'd["written"], d["seeded_fast"]')" "True False" "--seed none is written too, with no pip"
ok "no pip in it" sh -c "! ls '$WS/bare/lib/python$MM/site-packages/' | grep -q pip"
like "$(cat "$WS/bare/pyvenv.cfg")" "command = .* -m venv --without-pip $WS/bare" "its pyvenv.cfg says --without-pip, as venv writes it"
P venv create --python "$BASE" --seed pip viaensurepip --json
is "$(J 'd["written"], d["existed"]')" "False False" "--seed pip keeps the ensurepip route"
ok "and that pip works" "$WS/viaensurepip/bin/python" -m pip --version

# ---- an environment without a working pip is repaired, not taken as done
"$BASE" -m venv --without-pip "$WS/nopip"
P venv create --python "$BASE" nopip
is "$RC" 0 "create over an environment without pip exits 0"
like "$OUT" "its pip did not work: pip repaired" "it says pip was repaired"
ok "pip works there now" "$WS/nopip/bin/python" -m pip --version

# ---- a create killed at any point leaves nothing that counts as done
# (SIGKILL injected by strace at the rename into place, and in the middle of linking pip)
for at in rename linkat:when=400 mkdirat:when=3; do
	rm -rf "$WS/killed"
	strace -f -o /dev/null -e inject="${at%%:*}:signal=KILL${at#"${at%%:*}"}" \
		"$PYWARD" --box-root "$BOX" -C "$WS" venv create --python "$BASE" killed >/dev/null 2>&1
	[ -e "$WS/killed" ] && echo "# left: $(ls -A "$WS/killed")"
done
ok "a create killed before its rename leaves no environment" test ! -e "$WS/killed"
ok "only its hidden work folder is left" sh -c "ls -A '$WS' | grep -q '^\.killed\.pyward-tmp-'"
P venv create --python "$BASE" killed
is "$RC" 0 "the next create succeeds"
ok "and sweeps what the killed ones left" sh -c "! ls -A '$WS' | grep -q '^\.killed\.pyward-tmp-'"
ok "its pip works" "$WS/killed/bin/python" -m pip --version
# the ensurepip route: killed after venv wrote pyvenv.cfg, before pip was in
rm -rf "$WS/slow"
"$PYWARD" --box-root "$BOX" -C "$WS" venv create --python "$BASE" --seed pip slow >/dev/null 2>&1 &
victim=$!
wait_until 60 "venv to write slow/pyvenv.cfg" test -e "$WS/slow/pyvenv.cfg"
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
# its children (venv, ensurepip) end with it: wait for that, not for a time
no_child_left() { ! pgrep -f -- "$WS/slow" >/dev/null; }
wait_until 60 "the killed create's children to end" no_child_left
P venv create --python "$BASE" --seed pip slow
like "$OUT" "interrupted create had left it half-made: made again" "a killed ensurepip create is made again, not taken as done"
ok "and its pip works" "$WS/slow/bin/python" -m pip --version
done_testing
