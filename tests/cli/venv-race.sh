#!/bin/sh
# venv remove against a hostile workspace (issue 13, item 11): while
# pyward removes ws/p/env, another process keeps swapping the parent p for
# a symlink to a folder outside holding an environment of the same name.
# Whatever the timing, nothing outside the workspace may be removed. Bounded:
# at most TRIES removals and about 40 s.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
SWAP_PID=""
cleanup() {
	[ -n "$SWAP_PID" ] && kill "$SWAP_PID" 2>/dev/null && wait "$SWAP_PID" 2>/dev/null
	rm -rf "$WORLD"
}
trap cleanup EXIT
SYS_PY=${PYTHON3:-python3}
command -v "$SYS_PY" >/dev/null || skip_all "no python3 for the swapping process"
WS="$WORLD/ws"
OUT_ENV="$WORLD/outside/env"
mkdir -p "$WS/p/env" "$OUT_ENV"
touch "$WS/p/env/pyvenv.cfg" "$OUT_ENV/pyvenv.cfg" "$OUT_ENV/keep"
TRIES=300
plan 3

# The swapper: p <-> link to outside, as fast as it can, for at most 40 s;
# while it holds the real folder aside it puts the environment back.
"$SYS_PY" - "$WS" "$WORLD/outside" <<'PY' &
import os, sys, time
ws, outside = sys.argv[1], sys.argv[2]
p, real = os.path.join(ws, "p"), os.path.join(ws, "p.real")
end = time.monotonic() + 40
while time.monotonic() < end:
    try:
        os.rename(p, real)
        os.makedirs(os.path.join(real, "env"), exist_ok=True)
        open(os.path.join(real, "env", "pyvenv.cfg"), "a").close()
        os.symlink(outside, p)
        time.sleep(0.0005)
        os.unlink(p)
        os.rename(real, p)
        time.sleep(0.0005)
    except OSError:
        time.sleep(0.001)
PY
SWAP_PID=$!

removed=0 tries=0 start=$(date +%s)
while [ $tries -lt $TRIES ] && [ $(( $(date +%s) - start )) -lt 35 ] && [ -e "$OUT_ENV/keep" ]; do
	"$PYWARD" --box-root "$WORLD/box" -C "$WS" venv remove p/env >/dev/null 2>&1 && removed=$((removed + 1))
	tries=$((tries + 1))
done
kill "$SWAP_PID" 2>/dev/null
wait "$SWAP_PID" 2>/dev/null
SWAP_PID=""
echo "# $tries removals tried, $removed succeeded"
ok "the environment outside the workspace is intact after $tries tries" test -e "$OUT_ENV/keep"
ok "and so is its pyvenv.cfg" test -e "$OUT_ENV/pyvenv.cfg"
ok "some removals did succeed (the race was run, not just refused)" test "$removed" -gt 0

done_testing
