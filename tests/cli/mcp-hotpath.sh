#!/bin/sh
# The hot path of `pyward mcp`, seen through strace: python calls sent one
# after another (each as soon as the previous answer came) are read by the
# thread that answered the one before, without waiting in epoll and without
# arming stdin again (a read that does not wait: preadv2 RWF_NOWAIT), and
# a call sent after a pause still finds its way through epoll; calls
# arriving while a cell runs are still handed to another thread (a ping is
# answered during a 1.5 s cell).
. "$TOP_SRCDIR/tests/lib.sh"
command -v strace >/dev/null 2>&1 || skip_all "strace is not installed"
scratch_world
use_rt hot
"$SYS_PY" -m venv --without-pip "$WS/.venv" || skip_all "python3 -m venv does not work here"
plan 6
LOG="$WORLD/strace.log"
cat > "$WORLD/client.py" <<'PY'
import json, subprocess, sys, time
log, pyward, ws, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = subprocess.Popen([pyward, "-C", ws, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def answer(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "hot", "version": "1"}}})
answer(0)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
def call(i, code):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
          "params": {"name": "python", "arguments": {"code": code, "venv": ".venv"}}})
call(1, "x = 0")
answer(1)
# traced from here, once the session's worker runs (strace -f from the
# start would follow the scratchpad host, which outlives the server)
st = subprocess.Popen(["strace", "-f", "-o", log, "-e", "trace=epoll_wait,epoll_ctl,preadv2,read",
                       "-p", str(p.pid)], stderr=subprocess.PIPE)
st.stderr.readline()          # "Process N attached" (one line per thread)
time.sleep(0.3)
ok = 0
for i in range(2, n + 2):
    call(i, "x += 1; x")
    ok += answer(i)["result"]["structuredContent"]["value"] == str(i - 1)
time.sleep(0.3)
call(n + 2, "x")          # after a pause: stdin waited for in epoll again
late = answer(n + 2)["result"]["structuredContent"]["value"]
call(n + 3, "import time; time.sleep(1.5); 'slept'")
time.sleep(0.3)
t = time.monotonic()
send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
pong = answer("ping")
ping_s = time.monotonic() - t
slept = answer(n + 3)["result"]["structuredContent"]["value"]
p.stdin.close(); rc = p.wait(timeout=30); st.wait(timeout=30)
print(ok, late, "pong" if pong.get("result") == {} else "no-pong", "%.2f" % ping_s, slept, rc)
PY
N=300
out=$(timeout 120 "$SYS_PY" "$WORLD/client.py" "$LOG" "$PYWARD" "$WS" $N 2>"$WORLD/client.err")
set -- $out
is "${1:-}" "$N" "$N calls sent one after another all answered with the session's state"
is "${2:-}" "$N" "a call sent after a pause is answered (stdin armed again after an empty read)"
is "${3:-}" "pong" "a ping sent while a 1.5 s cell runs is answered"
ok "... during the cell, not after it (${4:-?} s)" awk -v s="${4:-9}" 'BEGIN{exit !(s < 1.0)}'
# what the server did for the N calls: requests read without waiting, and
# how often it waited in epoll or armed stdin
nowait=$(grep -c 'preadv2(0, .*RWF_NOWAIT) = [1-9]' "$LOG")
waits=$(grep -c 'epoll_wait(' "$LOG")
arms=$(grep -c 'epoll_ctl([0-9]*, EPOLL_CTL_MOD, 0,' "$LOG")
echo "# of $N calls: $nowait requests read without waiting, $waits epoll waits, $arms stdin re-arms"
ok "most requests sent back to back are read without epoll ($nowait of $N)" \
	awk -v a="$nowait" -v n="$N" 'BEGIN{exit !(a >= n / 2)}'
ok "and the server waited in epoll ($waits) and armed stdin ($arms) for at most half of them" \
	awk -v w="$waits" -v r="$arms" -v n="$N" 'BEGIN{exit !(w <= n / 2 && r <= n / 2)}'
[ "$_tap_failed" -eq 0 ] || { echo "# client stderr:"; sed 's/^/# /' "$WORLD/client.err" | tail -20; }
done_testing
