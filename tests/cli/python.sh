#!/bin/sh
# The scratchpad end to end: a real host started by the first call, real
# CPython workers, state across client processes, honest loss notices,
# capacity, interrupts, and the owner check. Every host this test starts
# is stopped by its PID (from the pid file), in each private runtime dir.
. "$TOP_SRCDIR/tests/lib.sh"
scratch_world
plan 95
# session_is NAME STATE: `pyward python --list` shows session NAME in STATE.
session_is() { "$PYWARD" python --list 2>/dev/null | grep -q "^$1 .*$2"; }

# ---- persistence, _, first result, human form
use_rt main
PY -c 'x = 41'
is "$RC" 0 "the first call starts a host and runs the cell"
like "$ERR" "CPython 3\.[0-9]+\.[0-9]+ .*$SYS_PY in $WS" "the first result names interpreter, build, executable and project dir"
HOST1=$(host_pid)
ok "the host runs detached, its pid in host.pid" kill -0 "$HOST1"
is "$(stat -c %a "$SOCKDIR")" 700 "the socket folder has mode 0700"
PY -c 'x + 1'
is "$OUT" 42 "a variable survives into a call from another client process"
unlike "$ERR" "CPython" "later results do not repeat the interpreter"
PY -c '6 * 7'
PY -c '_ + 1'
is "$OUT" 43 "_ holds the last value"
PY -c 'print("out"); None'
is "$OUT" "out" "a None value is not shown"
PY -c 'print("text"); 2 + 2'
is "$OUT" "4
text" "human form: value, then stdout"
PY -c '1/0'
is "$RC" 1 "an exception exits 1"
like "$ERR" 'File "<cell [0-9]+>", line 1' "the traceback points into the cell"
unlike "$ERR" "pyward_worker" "the worker's own frames are not shown"
PY -c 'def f(:'
like "$ERR" "SyntaxError" "a syntax error is reported, not fatal"
PY -c 'x'
is "$OUT" 41 "the state survives errors"
printf 'y = x * 2\ny\n' > "$WORLD/cell.py"
PY "$WORLD/cell.py"
is "$OUT" 82 "code from a file"
printf 'y + 1\n' > "$WORLD/stdin.py"
PY - < "$WORLD/stdin.py"
is "$OUT" 83 "code from standard input"

printf 'x = "\377"\n' > "$WORLD/latin1.py"
PY "$WORLD/latin1.py"
is "$RC" 2 "code that is not UTF-8 is refused as a usage error"
PY -c 'x'
is "$OUT" 41 "and nothing ran"

# ---- calls of one session run one at a time, in call order: both cells
# stamp a file as they start and end; the second call is made while the
# first cell runs (after its start stamp, before its end stamp; the 2 s
# sleep is the margin for seeing the start stamp on a busy machine).
STAMPS="$WORLD/order-stamps"
PY -s order -c "import time
order = []
def stamp(what): open('$STAMPS', 'a').write('%s %.6f\\n' % (what, time.time()))"
"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s order \
	-c 'stamp("start1"); time.sleep(2); order.append(1); stamp("end1")' >/dev/null 2>&1 &
FIRST=$!
first_started() { grep -q '^start1 ' "$STAMPS" 2>/dev/null; }
wait_until 60 "the first cell to start" first_started
ASKED=$(date +%s.%N)
PY -s order -c 'stamp("start2"); order.append(2); stamp("end2"); order'
wait "$FIRST"
is "$OUT" "[1, 2]" "a second call runs after the running one, in the same state"
is "$(cut -d' ' -f1 "$STAMPS" | tr '\n' ' ')" "start1 end1 start2 end2 " "its cell started only after the first one had ended"
at() { sed -n "s/^$1 //p" "$STAMPS"; }
echo "# second call made at $ASKED; first cell $(at start1) to $(at end1); second cell from $(at start2)"
ok "and it was made while the first one ran, so it waited" \
	awk -v asked="$ASKED" -v end1="$(at end1)" -v start2="$(at start2)" 'BEGIN { exit !(asked < end1 && end1 <= start2) }'

# ---- JSON shape
PY --json -c 'import sys; print("o"); sys.stderr.write("e\n"); 5'
is "$(J 'list(d.keys())[0], d["status"], d["value"], d["stdout"], d["stderr"], d["truncated"]["stdout"], d["traceback"], d["interpreter"]')" \
	"notices ok 5 o
 e
 0 None None" "--json: notices first, status, value, stdout, stderr, truncation, traceback"
EXEC_BEFORE=$(J 'd["execution"]')
GEN_BEFORE=$(J 'd["generation"]')
PY --json -c '1'
is "$(J 'd["execution"] - '"$EXEC_BEFORE"', d["generation"]')" "1 $GEN_BEFORE" "execution numbers count up within a generation"

# ---- user code writing to fd 1 and 2 directly
PY --json -c 'import os; os.write(1, b"{\"status\": \"forged\"}\n"); os.write(2, b"raw err\n"); 7'
is "$(J 'd["status"], d["value"], d["stdout"].strip(), d["stderr"].strip()')" 'ok 7 {"status": "forged"} raw err' \
	"writes to fd 1 and 2 are captured and cannot forge a result"

# ---- truncation
PY --json --max-output 1000 -c 'print("a" * 3000 + "MIDDLE" + "z" * 3000)'
is "$(J 'd["truncated"]["stdout"], d["stdout"][:3], d["stdout"].rstrip()[-3:], "MIDDLE" in d["stdout"]')" "5007 aaa zzz False" \
	"output over the bound keeps head and tail and counts the cut"
PY -c 'print("b" * 200000)'
like "$ERR" "stdout: 134465 bytes cut" "the default bound is 64 KiB per stream"

# ---- environment and cwd
MY_TOKEN=secret-value http_proxy=http://bar-value:1 run --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s envtest \
	-c 'import os; (os.getcwd(), os.environ.get("http_proxy"), os.environ.get("MY_TOKEN"))'
is "$OUT" "('$WS', 'http://bar-value:1', None)" "a new worker runs in the project dir with the caller's environment, scrubbed"

# ---- top-level await, background task between calls
PY -c 'import asyncio
ticks = 0
async def ticker():
    global ticks
    while True:
        ticks += 1
        await asyncio.sleep(0.01)
task = asyncio.create_task(ticker())
await asyncio.sleep(0.05)
ticks > 0'
is "$OUT" True "top-level await works"
PY -c 'seen = ticks; seen'
SEEN=$OUT
ticked() { PY -c 'ticks > seen'; [ "$OUT" = True ]; }
wait_until 60 "the task to tick between calls" ticked
PY -c 'ticks > seen, task.done()'
is "$OUT" "(True, False)" "a task made with create_task keeps running between calls"
PY -c 'await asyncio.sleep(0); 3'
is "$OUT" 3 "await and a value in one cell"
# Every cell runs inside the session's one running loop, awaiting or not
# (issue 13 item 21: statements before a last awaited expression ran
# outside it, and create_task said "no running event loop").
PY -s aio -c 'import asyncio
n = 0
async def tick():
    global n
    n += 1
t = asyncio.create_task(tick())
await asyncio.sleep(0.05)'
is "$RC" 0 "create_task before a last awaited expression runs in the loop"
unlike "$ERR" "Traceback|no running event loop" "without an error"
PY -s aio -c 'n'
is "$OUT" 1 "and its task ran"
PY -s aio -c 'loop = asyncio.get_running_loop(); t2 = asyncio.create_task(tick()); type(loop).__name__'
is "$RC:$OUT" "0:'_UnixSelectorEventLoop'" "a cell without await has the running loop too"
PY -s aio -c 'n'
is "$OUT" 2 "and a task it made runs after it, between calls"
PY -s aio2 -c 'import asyncio
asyncio.get_running_loop() is asyncio.get_event_loop()'
is "$RC:$OUT" "0:True" "the first cell that imports asyncio runs in the loop"
"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s aio -c 'x = 0
while True: x += 1' >"$WORLD/aio.out" 2>"$WORLD/aio.err" &
CLIENT=$!
wait_until 60 "session aio to show as running" session_is aio "running"
run python -s aio --interrupt
wait "$CLIENT"
is "$?" 130 "a busy cell on the loop is interrupted"
like "$(cat "$WORLD/aio.err")" "KeyboardInterrupt" "with KeyboardInterrupt"
PY -s aio -c 'await asyncio.sleep(0); n, t2.done(), x > 0'
is "$OUT" "(2, True, True)" "and the session and its loop go on"
"$PYWARD" python -s aio --discard >/dev/null 2>&1
"$PYWARD" python -s aio2 --discard >/dev/null 2>&1
# A cell whose text never names asyncio, calling a library that imports it
# and needs the running loop (item 21's gap: "no running event loop").
cat >"$WS/loopy.py" <<'EOF'
import asyncio
ticks = 0
async def _tick():
    global ticks
    ticks += 1
def start():
    return type(asyncio.get_running_loop()).__name__, asyncio.create_task(_tick())
EOF
PY -s aio3 -c 'import sys; ("a" + "syncio") in sys.modules'
is "$RC:$OUT" "0:False" "a plain cell does not import asyncio"
PY -s aio3 -c 'import loopy
name, t = loopy.start()
name'
is "$RC:$OUT" "0:'_UnixSelectorEventLoop'" "a cell that calls a library needing the running loop has it, without naming asyncio"
PY -s aio3 -c 'loopy.ticks, t.done()'
is "$OUT" "(1, True)" "and the task the library made ran after the cell, between calls"
"$PYWARD" python -s aio3 --discard >/dev/null 2>&1

# ---- interrupts
PY -s spin -c 'None'
"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s spin -c 'while True: pass' >"$WORLD/spin.out" 2>"$WORLD/spin.err" &
CLIENT=$!
wait_until 60 "session spin to show as running" session_is spin "running"
run python -s spin --interrupt
is "$RC" 0 "--interrupt names a running session"
wait "$CLIENT"
is "$?" 130 "the interrupted call exits 130"
like "$(cat "$WORLD/spin.err")" "KeyboardInterrupt" "the cell got KeyboardInterrupt"
PY -s spin -c '"still here"'
is "$OUT" "'still here'" "the worker survives an interrupt"
"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s spin -c 'while True: pass' >"$WORLD/spin.out" 2>"$WORLD/spin.err" &
CLIENT=$!
wait_until 60 "session spin to show as running" session_is spin "running"
kill -INT "$CLIENT"
wait "$CLIENT"
is "$?" 130 "Ctrl-C (SIGINT) on the client interrupts the cell"
PY -s spin -c 'import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); stubborn = 1
while True: pass' &
CLIENT=$!
wait_until 60 "session spin to show as running" session_is spin "running"
run python -s spin --interrupt
wait "$CLIENT"
PY -s spin -c '"after"'
like "$ERR" "did not stop within 700 ms of the interrupt, so the worker was killed" "a cell ignoring the interrupt is killed and the loss announced"
PY -s spin --timeout 1 -c 'import time; time.sleep(30)'
is "$RC" 4 "a cell over its time budget exits 4"

# ---- worker crash
PY -s crash -c 'v = 1'
PY -s crash --json -c 'import os; os._exit(3)'
is "$(J 'd["status"], d["notices"][0]["kind"]')" "lost worker_crashed" "a worker dying in a cell gives a lost result"
PY -s crash --json -c "'v' in globals()"
is "$(J 'd["value"], d["notices"][0]["kind"]')" "False worker_crashed" "the next result starts with the crash notice"
like "$(J 'd["notices"][0]["message"]')" "exit status 3" "the notice says how it ended"
PY -s crash -c 'w = 1'
run python --list --json
WPID=$(J '[s["pid"] for s in d["sessions"] if s["name"] == "crash"][0]')
kill -9 "$WPID"
wait_gone "$WPID"
PY -s crash -c "'w' in globals()"
like "$ERR" "worker process ended \(killed by signal 9\)" "killing the worker's pid is announced on the next result"
is "$OUT" False "and the state is fresh"

# ---- reset
PY -s crash -c 'z = 5'
PY -s crash --json --reset -c "'z' in globals()"
is "$(J 'd["value"], d["notices"][0]["kind"]')" "False reset" "--reset gives a fresh scratchpad and says so"
PY -s crash --reset --json
is "$(J 'd["status"], d["execution"], d["notices"]')" "reset 0 []" "--reset alone runs nothing"
run python --list
like "$OUT" "^crash +no worker " "--reset alone starts no worker"
PY -s crash --json -c '6 * 7'
is "$(J 'd["value"], d["notices"][0]["kind"], d["generation"] > 1')" "42 reset True" \
	"the next call starts one, and its result says the state was reset"

# ---- list and discard
run python --list
like "$OUT" "^crash +idle +1 " "--list shows state and executions"
like "$OUT" "$SYS_PY" "--list shows the interpreter"
run python --list --json
is "$(J 'sorted(s["name"] for s in d["sessions"] if s["state"] != "no worker")[:2], d["host"]["max_workers"]')" "['crash', 'envtest'] 4" "--list --json"
run python -s crash --discard
is "$RC" 0 "--discard ends a session"
PY -s crash --json -c '1'
is "$(J 'd["notices"][0]["kind"]')" "discarded" "the discarded session's next result says so"
run python -s nosuch --discard
is "$RC" 1 "--discard of an unknown session fails"

# ---- interpreter rules
run --box-root "$WORLD/box" -C "$WS" python -s noint -c '1'
is "$RC" 3 "no managed runtime and no --python/--venv: refused"
like "$ERR" "pyward runtime install.*--venv" "the refusal says how to get an interpreter"
"$SYS_PY" -m venv --without-pip "$WS/venv1" >/dev/null 2>&1
run --box-root "$WORLD/box" -C "$WS" python -s noint -c '1'
is "$RC" 3 "one environment in the workspace: still refused (the session's interpreter is chosen on purpose)"
like "$ERR" "hint: pass --venv venv1 \\(the workspace's one environment\\), or install the managed runtime" \
	"but the hint names that environment as the option to pass"
run --box-root "$WORLD/box" -C "$WS" python -s withvenv --venv venv1 -c 'import sys; sys.prefix'
is "$OUT" "'$WS/venv1'" "--venv runs the session in that environment"
run --box-root "$WORLD/box" -C "$WS" python -s withvenv --python "$SYS_PY" -c '1'
is "$RC" 3 "another explicit interpreter for a running session is refused"
rm -rf "$WS/venv1"
wait_until 60 "session withvenv to show as no worker" session_is withvenv "no worker"
PY -s withvenv --json -c '1'
is "$(J 'd["notices"][0]["kind"]')" "env_removed" "removing the session's environment discards its worker"

# ---- host restart
PY -c 'kept = 1'
kill -9 "$HOST1"
wait_gone "$HOST1"
PY --json -c "'kept' in globals()"
is "$(J 'd["value"], d["notices"][0]["kind"]')" "False host_restarted" "after the host was killed, the next result says so"
like "$(J 'd["notices"][0]["message"]')" "killed or crashed" "and why"
HOST2=$(host_pid)
ok "a new host runs" test -n "$HOST2" -a "$HOST2" != "$HOST1"
PY --json -c '1'
is "$(J 'len(d["notices"])')" 0 "the notice is given once"
stop_host

# ---- LRU eviction with five sessions, and all busy
use_rt lru
for s in s1 s2 s3 s4; do PY -s $s -c "mark = '$s'"; done
PY -s s2 -c 'mark'   # s1 is now the least recently used
PY -s s5 -c 'mark = "s5"'
is "$RC" 0 "a fifth session gets a worker"
PY -s s1 --json -c "'mark' in globals()"
is "$(J 'd["value"], d["notices"][0]["kind"]')" "False evicted" "the least recently used idle session was evicted and says so"
PY -s s2 -c 'mark'
is "$OUT" "'s2'" "the others kept their state"
PIDS=""
for s in s2 s3 s4 s5; do
	"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -s $s -c 'import time; time.sleep(60)' >/dev/null 2>&1 &
	PIDS="$PIDS $!"
done
four_running() { [ "$("$PYWARD" python --list 2>/dev/null | grep -c ' running ')" -ge 4 ]; }
wait_until 60 "four sessions to run a cell each" four_running
PY -s s6 -c '1'
is "$RC" 1 "with all four workers running cells a new session fails"
like "$ERR" "all 4 scratchpad workers are running cells: .*s[2-5] \(running a cell" "the failure names what is busy"
for s in s2 s3 s4 s5; do "$PYWARD" python -s $s --interrupt >/dev/null 2>&1; done
for p in $PIDS; do wait "$p"; done
PY -s s6 -c '6'
is "$OUT" 6 "once a worker is idle again, it can be evicted"
stop_host

# ---- idle exit
use_rt idle
mkdir -p "$XDG_CONFIG_HOME/pyward"
echo 'python_idle_timeout = 1' > "$XDG_CONFIG_HOME/pyward/config"
PY -c 'idle = 1'
IPID=$(host_pid)
wait_gone "$IPID"
is "$?" 0 "the host exits after its idle time"
ok "it removed its socket" test ! -e "$SOCKDIR/host.sock"
PY --json -c "'idle' in globals()"
like "$(J 'd["notices"][0]["kind"], d["notices"][0]["message"]')" "host_restarted .*exited after 1 s without use" \
	"the next result says the host exited while idle"
stop_host
rm -f "$XDG_CONFIG_HOME/pyward/config"

# ---- descriptors (issue 13 item 18): the host keeps none of its starter's,
# a worker holds its five and no other
use_rt fds
timeout 60 sh -c '"$1" --box-root "$2" -C "$3" python --python "$4" -c "6*7" 3>&1 | cat' sh \
	"$PYWARD" "$WORLD/box" "$WS" "$SYS_PY" >"$WORLD/fds.out" 2>/dev/null
is "$?:$(cat "$WORLD/fds.out")" "0:42" "'pyward python -c 6*7 3>&1 | cat' returns at once (the host keeps no fd 3)"
PY -s fds2 -c '1'
HPID=$(host_pid)
run python --list --json
N=0 BAD=""
for w in $(J '" ".join(str(s["pid"]) for s in d["sessions"])'); do
	N=$((N + 1))
	[ "$(ls /proc/"$w"/fd | sort -n | tr '\n' ' ')" = "0 1 2 3 4 " ] || BAD="$BAD $w:$(ls /proc/"$w"/fd | tr '\n' ,)"
	! ls -l /proc/"$w"/fd/ | grep -Eq 'host\.log|socket:' || BAD="$BAD $w:log-or-socket"
done
is "$N:$BAD" "2:" "each worker holds its five descriptors only (no host.log, socket or other session's pipe)"
is "$(ls -l /proc/"$HPID"/fd/ | grep -c 'host\.log')" 1 "the host holds its log once (as stderr)"
stop_host

# ---- the descriptor limit (issue 13 item 19): the host rests, then serves again
use_rt nofile
prlimit --nofile=64 "$PYWARD" --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" -c '1' >/dev/null 2>&1
HPID=$(host_pid)
TICKS=$("$SYS_PY" - "$SOCKDIR/host.sock" "$HPID" <<'PYEOF'
import socket, sys, time
def cpu(pid):
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
socks = []
for _ in range(100):
    s = socket.socket(socket.AF_UNIX)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except (BlockingIOError, ConnectionRefusedError):
        pass
    socks.append(s)
time.sleep(0.5)
before = cpu(sys.argv[2])
time.sleep(2)
print(cpu(sys.argv[2]) - before)
for s in socks:
    s.close()
PYEOF
)
ok "with 100 connections at a limit of 64 descriptors the host rests (CPU ticks in 2 s: $TICKS)" test "${TICKS:-999}" -lt 30
PY -c '6*7'
is "$OUT" 42 "and serves again once they close"
stop_host

# ---- the owner check (SO_PEERCRED)
use_rt owner
PY -c '1'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 711 "$WORLD" "$XDG_RUNTIME_DIR" "$SOCKDIR"
	chmod 666 "$SOCKDIR/host.sock"
	REPLY=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$SYS_PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(b"{\"op\": \"list\"}\n")
except OSError:
    pass
print(s.makefile().readline().strip())' "$SOCKDIR/host.sock" 2>&1)
	chmod 700 "$XDG_RUNTIME_DIR" "$SOCKDIR" "$WORLD"
	like "$REPLY" '"code": ?"refused".*serves only its owner' "a client of another uid (nobody) is refused by the host"
else
	skip 1 "not root: no second user to try"
fi
stop_host
use_rt owner2
PYWARD_SCRATCH_TEST_OWNER_UID=4242 PY -c '1'
is "$RC" 3 "a host that belongs to another uid refuses this client (exit 3)"
like "$ERR" "serves only its owner \(uid 4242\)" "and says why"
stop_host
use_rt noworker
PYWARD_WORKER="$WORLD/nonexistent.py" PY -c '1'
is "$RC" 1 "a host without its worker script does not start"
like "$ERR" "did not start .*worker script $WORLD/nonexistent.py" "and the client says why"
mkdir -p "$WORLD/rt-bad/pyward" && chmod 755 "$WORLD/rt-bad/pyward"
XDG_RUNTIME_DIR="$WORLD/rt-bad" PY -c '1'
is "$RC" 3 "a socket folder that is not private is refused"

done_testing
