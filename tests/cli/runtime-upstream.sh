#!/bin/sh
# What an upstream archive needs after unpacking (issue 14): the fixture
# imitates python-build-standalone (its sysconfig data and
# config-X.Y-*/Makefile name the build prefix /install); pyward rewrites
# them to the install's real path and records them in the manifest as they
# end up, writes EXTERNALLY-MANAGED (PEP 668) into the stdlib folder, and
# its own baseline passes --break-system-packages while a stray
# `current/bin/python3 -m pip install` is refused with pyward's message.
# Children (exec, scratchpad workers) get the bundled terminfo for a $TERM
# the system does not know. The scratchpad host started here is stopped by
# its PID (host.pid in a private runtime dir).
. "$TOP_SRCDIR/tests/lib.sh"
make_world
export XDG_RUNTIME_DIR="$WORLD/xdg-rt" PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
trap 'stop_host; stop_servers; rm -rf "$WORLD"' EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/rt"
MM=${VER%.*}
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
BOX="$WORLD/box"
PY="$BOX/runtime/python/current/bin/python3"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
unset PYWARD_MIRRORS PIP_INDEX_URL
export PYWARD_PROXY_PORTS=$(closed_port)
plan 20

mkdir -p "$WORLD/peek" && tar -xzf "$WORLD/rt/cpython-fixture-install_only.tar.gz" -C "$WORLD/peek"
ok "the fixture carries upstream's /install prefix in its sysconfig data" \
	grep -q "'/install'" "$WORLD/peek/python/lib/python$MM/"_sysconfigdata_*.py
ok "and in its config Makefile" grep -q "^prefix=.*/install$" "$WORLD/peek/python/lib/python$MM/"config-*/Makefile

write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:1/x.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pins.tsv" --archive "$WORLD/rt/cpython-fixture-install_only.tar.gz" --yes --no-baseline
[ "$RC" = 2 ] && P runtime install --pins "$WORLD/pins.tsv" --archive "$WORLD/rt/cpython-fixture-install_only.tar.gz" --yes
is "$RC" 0 "the runtime installs"
real=$(readlink -f "$BOX/runtime/python/current")
is "$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("prefix"))')" "$real" \
	"sysconfig's prefix is the install's real path"
is "$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR").split("/lib")[0])')" "$real" \
	"and so are the paths below it"
is "$("$PY" - <<'PY'
import glob, re, sys, sysconfig
names = glob.glob(sys.prefix + "/lib/python%d.%d/_sysconfigdata_*.py" % sys.version_info[:2])
names += glob.glob(sys.prefix + "/lib/python%d.%d/config-*/Makefile" % sys.version_info[:2])
print(sum(len(re.findall(r"(?<![\w./+-])/install(?![\w.+-])", open(n).read())) for n in names))
PY
)" 0 "no /install is left in the sysconfig data or the Makefile"
like "$(grep '^prefix=' "$real/lib/python$MM/"config-*/Makefile)" "prefix=[[:space:]]+$real$" "the Makefile's prefix is the real path"
P runtime verify
is "$RC" 0 "verify is clean: the rewritten files are in the manifest as they ended up"
ok "EXTERNALLY-MANAGED is in the stdlib folder" grep -q "pyward runtime baseline --requirements FILE" \
	"$real/lib/python$MM/EXTERNALLY-MANAGED"

# ---- pyward's baseline passes --break-system-packages; a stray pip is refused
printf 'pwtest-beta\n' > "$WORLD/reqs.txt"
P runtime baseline --requirements "$WORLD/reqs.txt" --index "$INDEX_ok_URL" --json
is "$RC" 0 "pyward's own baseline installs despite EXTERNALLY-MANAGED"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("--break-system-packages" in d["attempts"][-1]["argv"])')" \
	"True" "because it passes --break-system-packages"
out=$("$PY" -m pip install --index-url "$INDEX_ok_URL" pwtest-alpha==1.0 2>&1)
ok "a stray pip install into the runtime fails" test $? -ne 0
like "$out" "externally-managed-environment" "pip says the environment is externally managed"
like "$out" "pyward runtime baseline --requirements FILE" "and gives pyward's message with the command to use"

# ---- a $TERM the system does not know: exec points at the bundled terminfo
TERM=pyward-fixture P exec -c 'import os; print(os.environ.get("TERMINFO_DIRS"))'
is "$OUT" "$BOX/runtime/python/current/share/terminfo" "exec gets TERMINFO_DIRS for a TERM only the runtime knows"
TERM=xterm P exec -c 'import os; print(os.environ.get("TERMINFO_DIRS"))'
is "$OUT" "None" "and none for a TERM the system knows"
# the scratchpad's workers the same way (a session keeps the environment
# its worker started with: one session each)
TERM=pyward-fixture P python -s terminfo-unknown -c 'import os; print(os.environ.get("TERMINFO_DIRS"))'
is "$OUT" "$BOX/runtime/python/current/share/terminfo" \
	"a scratchpad worker gets TERMINFO_DIRS for a TERM only the runtime knows"
TERM=pyward-fixture TERMINFO_DIRS=/nowhere P python -s terminfo-own -c 'import os; print(os.environ.get("TERMINFO_DIRS"))'
is "$OUT" "$BOX/runtime/python/current/share/terminfo:/nowhere" "the caller's own TERMINFO_DIRS comes after it"
TERM=xterm P python -s terminfo-known -c 'import os; print(os.environ.get("TERMINFO_DIRS"))'
is "$OUT" "None" "and none for a TERM the system knows"
TERM=pyward-fixture P python -s terminfo-unknown -c 'import curses; curses.setupterm(); curses.tigetnum("cols") > 0'
is "$OUT" "True" "curses in that worker finds the TERM's entry"

done_testing
