#!/bin/sh
# Processes (issue 13, items 13 and 16): children die with pyward, the
# environment's lock outlives the change, and a detached grandchild does not
# outlive exec's budget. Real pip against a real stalled loopback index.
. "$TOP_SRCDIR/tests/lib.sh"
KILL_SIGNAL=KILL # anything a failed check left running: by its own pid only
pip_world
plan 13

P venv create --python "$SYS_PY"
is "$RC" 0 "a venv to install into"

# pid_of_pip PARENT: the pip that PARENT started (waits up to 60 s for it)
pid_of_pip() {
	wait_until 60 "pyward $1 to start pip" pip_child "$1" && pip_child "$1"
}
# gone PID: it ends within 60 s (a zombie counts as gone)
gone() { wait_until 60 "pip $1 to end with the pyward that started it" pid_gone "$1"; }

# ---- item 13: kill -9 of a foreground install, several times
TRIES=5 survivors=0 started=0 held=0
for try in $(seq $TRIES); do
	"$PYWARD" --box-root "$WORLD/box" -C "$WS" venv install --index "$INDEX_stall_URL" pwtest-alpha \
		>/dev/null 2>&1 &
	PW=$!
	KILL_PIDS="$KILL_PIDS $PW"
	PIP=$(pid_of_pip "$PW") || { kill -9 "$PW"; wait "$PW" 2>/dev/null; continue; }
	started=$((started + 1))
	KILL_PIDS="$KILL_PIDS $PIP"
	ls -l "/proc/$PIP/fd" 2>/dev/null | grep -q "/.pyward/locks/" && held=$((held + 1))
	kill -9 "$PW"
	wait "$PW" 2>/dev/null
	gone "$PIP" || survivors=$((survivors + 1))
done
is "$started" "$TRIES" "pip was running in each of $TRIES installs"
is "$held" "$TRIES" "each pip holds the environment's lock itself (it outlives a killed pyward)"
is "$survivors" 0 "no pip outlives a pyward killed with SIGKILL ($TRIES tries)"
P history --kind venv.install --json
is "$(J '" ".join(sorted(set(o["outcome"] for o in d["operations"])))')" "interrupted" "history calls every killed install interrupted"
ok "and the package is indeed not installed" sh -c "! '$WS/.venv/bin/python' -c 'import pwtest_alpha' 2>/dev/null"
P --timeout 60 venv install --index "$INDEX_ok_URL" pwtest-alpha
is "$RC" 0 "the lock is free again at once: the next install runs"
unlike "$ERR" "waiting for" "without waiting for a lock"

# ---- item 15: pip's bytecode cut short (as a full disk leaves it) is repaired
# Plant a .pyc of pip's own package that matches its source but whose code
# stops short: every start of pip then fails with "marshal data too short".
"$WS/.venv/bin/python" - <<'PY'
import importlib.util, os, py_compile, sys
import pip._internal as m
src = m.__file__
pyc = importlib.util.cache_from_source(src)
py_compile.compile(src, cfile=pyc, doraise=True)
size = os.path.getsize(pyc)
with open(pyc, "r+b") as f:
    f.truncate(20)
print(pyc, size, file=sys.stderr)
PY
ok "the planted bytecode breaks pip" sh -c "'$WS/.venv/bin/python' -m pip --version 2>&1 | grep -q 'marshal data too short'"
"$WS/.venv/bin/python" -m pip uninstall -y -q pwtest-alpha >/dev/null 2>&1
P --timeout 120 venv install --index "$INDEX_ok_URL" pwtest-alpha --json
is "$RC" 0 "the install repairs it and succeeds"
is "$(J '" ".join(a["class"] for a in d["attempts"])')" "not-network ok" "two attempts: the broken one, then ok"
like "$ERR" "cut-short bytecode" "it says what it repaired"
ok "pip works again afterwards" "$WS/.venv/bin/python" -m pip --version

done_testing
