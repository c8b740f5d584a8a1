#!/bin/sh
# Issue 13 item 16 for the scratchpad: each session's worker runs in a
# cgroup of its own, so what a cell starts (a grandchild that forked,
# called setsid and forked again) ends with the worker, whatever ends it:
# reset, discard, eviction, the kill after a budget, a crash, the host's
# exit, or (swept by the next host) the host's own death. Where no cgroup
# v2 folder can be made here, the checks that need one print SKIP with the
# reason. Every host and grandchild this test starts is stopped by its PID.
. "$TOP_SRCDIR/tests/lib.sh"
scratch_world
trap 'exit 1' HUP INT TERM

# A cell helper: fork, setsid, fork; the grandchild writes its pid to FILE
# and sleeps. keep=True: it also keeps the worker's pipes open.
DETACH='import os, time
def detach(path, keep=False):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            if not keep:
                os.closerange(0, 5)
            with open(path + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(path + ".tmp", path)
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
    for _ in range(100):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False'
# grandchild NAME: GC = its pid, or empty (remembered for the clean-up).
grandchild() {
	GC=$(cat "$WORLD/gc-$1" 2>/dev/null)
	KILL_PIDS="$KILL_PIDS $GC"
}
gone() { [ -n "$1" ] && wait_gone "$1"; }
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
worker_pid() { # SESSION
	"$PYWARD" --json python --list 2>/dev/null |
		"$SYS_PY" -c "import json,sys; print(*[s['pid'] for s in json.load(sys.stdin)['sessions'] if s['name'] == '$1'])"
}

# Can this machine give a worker its own cgroup (v2, writable here)?
CG_MOUNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
CG_OWN=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ "$CG_OWN" = / ] && CG_OWN=
CG_WHY=""
if [ -z "$CG_MOUNT" ]; then
	CG_WHY="no cgroup2 file system is mounted"
elif ! mkdir "$CG_MOUNT$CG_OWN/pyward-test-$$" 2>/dev/null; then
	CG_WHY="the cgroup v2 folder $CG_MOUNT$CG_OWN is not writable (no delegated subtree)"
else
	rmdir "$CG_MOUNT$CG_OWN/pyward-test-$$"
fi
# cg_check DESCRIPTION COMMAND...: a check that needs a cgroup, else SKIP.
cg_check() {
	if [ -n "$CG_WHY" ]; then
		skip 1 "$CG_WHY"
		return
	fi
	ok "$@"
}

plan 21

# ---- the worker's cgroup, and --reset
use_rt main
PY -s a -c "$DETACH
detach('$WORLD/gc-a')"
is "$RC:$OUT" "0:True" "a cell starts a grandchild that forks, calls setsid and forks again"
HOST=$(host_pid)
WPID=$(worker_pid a)
grandchild a
CG=$(cgroup_of "$WPID")
cg_check "the worker runs in a cgroup of its own below the host's (pyward-HOST-N): $CG" \
	sh -c "printf '%s\n' '$CG' | grep -Eq '/pyward-$HOST-[0-9]+\$'"
cg_check "the detached grandchild is in the worker's cgroup" test "$(cgroup_of "$GC")" = "$CG"
PY -s a --reset
is "$RC" 0 "--reset alone ends the worker"
cg_check "and the grandchild with it" gone "$GC"
cg_check "and the cgroup folder is removed" test ! -d "$CG_MOUNT$CG"

# ---- --discard
PY -s a -c "$DETACH
detach('$WORLD/gc-b')"
grandchild b
run python -s a --discard
cg_check "--discard ends the grandchild too" gone "$GC"

# ---- LRU eviction (a host of one worker at most)
use_rt lru
mkdir -p "$XDG_CONFIG_HOME/pyward"
echo 'python_max_workers = 1' >"$XDG_CONFIG_HOME/pyward/config"
PY -s c -c "$DETACH
detach('$WORLD/gc-c')"
grandchild c
PY -s d --json -c '6 * 7'
is "$(J 'd["value"]'):$(worker_pid c)" "42:0" "another session's call evicts the worker (python_max_workers = 1)"
cg_check "the evicted worker's grandchild is gone" gone "$GC"
rm -f "$XDG_CONFIG_HOME/pyward/config"
kill "$(host_pid)"
use_rt main

# ---- the kill after a time budget (the cell ignores the interrupt)
PY -s e --timeout 1 -c "$DETACH
detach('$WORLD/gc-e')
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(60)"
is "$RC" 4 "a cell that ignores the interrupt is stopped at its budget (exit 4)"
grandchild e
cg_check "its worker was killed after the grace period, and the grandchild too" gone "$GC"

# ---- an interrupted cell keeps its worker, and so what the session started
PY -s f -c "$DETACH
detach('$WORLD/gc-f')"
grandchild f
PY -s f --timeout 1 -c 'while True: pass'
is "$RC" 4 "a cell that obeys the interrupt at its budget keeps the session"
ok "what the session started earlier runs on with it" kill -0 "$GC"
run python -s f --discard
cg_check "until the session's worker ends" gone "$GC"

# ---- a worker that dies while its grandchild holds the worker's pipes
PY -s g --json --timeout 30 -c "$DETACH
detach('$WORLD/gc-g', keep=True)
os._exit(3)"
is "$(J 'd["status"], d["notices"][0]["kind"]' 2>/dev/null)" "lost worker_crashed" \
	"the host sees the worker end although a grandchild holds its pipes"
grandchild g
cg_check "and the grandchild is gone" gone "$GC"

# ---- the host stops (SIGTERM)
PY -s h -c "$DETACH
detach('$WORLD/gc-h')"
grandchild h
kill "$HOST"
wait_gone "$HOST"
cg_check "a stopped host ends every worker's grandchild" gone "$GC"

# ---- the host is killed (SIGKILL): the next host sweeps its cgroups
PY -s i -c "$DETACH
detach('$WORLD/gc-i')"
HOST=$(host_pid)
grandchild i
kill -9 "$HOST"
wait_gone "$HOST"
PY -s j -c '1'
is "$RC" 0 "after the host was killed a new one starts"
cg_check "and sweeps the dead host's cgroups: the grandchild is gone" gone "$GC"

# ---- the killed host stays a zombie (its parent reaps late, as a
# container's first process may): the next host still counts it as gone.
# The host is started under a subreaper that reaps nothing until told.
stop_host
"$SYS_PY" -c '
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL)
open(sys.argv[1], "w").close()
time.sleep(600)
' "$WORLD/reaper-up" "$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s k -c "$DETACH
detach('$WORLD/gc-k')" &
REAPER=$!
KILL_PIDS="$KILL_PIDS $REAPER"
wait_until 60 "the subreaper's call to end" test -e "$WORLD/reaper-up"
HOST=$(host_pid)
grandchild k
kill -9 "$HOST"
wait_until 60 "the killed host to be a zombie" sh -c "sed 's/^.*) //' /proc/$HOST/stat | grep -q '^Z'"
is "$(sed 's/^.*) //' "/proc/$HOST/stat" 2>/dev/null | cut -d' ' -f1)" Z "a killed host whose parent has not reaped it stays a zombie"
PY -s l -c '1'
cg_check "the next host sweeps a zombie host's cgroups: the grandchild is gone" gone "$GC"
kill "$REAPER" 2>/dev/null
wait "$REAPER" 2>/dev/null

done_testing
