#!/bin/sh
# exec and python against the managed runtime (issue 13, items 9, 12, 16):
# only the XDG base directories pass, the script must lie inside the
# allowed roots, read-only mode runs no code, a workspace "environment"
# whose interpreter lies elsewhere is refused, and a detached grandchild
# does not outlive exec's budget where cgroups can be made.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
KILL_PIDS=""
cleanup() {
	[ -n "${HOST:-}" ] && kill "$HOST" 2>/dev/null
	for _p in $KILL_PIDS; do kill -9 "$_p" 2>/dev/null; done
	stop_servers
	rm -rf "$WORLD"
}
trap cleanup EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/rt"
SYS_PY=${PYTHON3:-python3}
WS="$WORLD/ws"
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WS" "$@"; }
write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost:1/x.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pins.tsv" --archive "$WORLD/rt/cpython-fixture-install_only.tar.gz" --yes
[ "$RC" = 0 ] || skip_all "the fixture runtime did not install: $ERR"
plan 20

# ---- item 9: exec passes the XDG base directories only, no credentials
cat >"$WS/env.py" <<'PY'
import os
print(" ".join(sorted(k for k in os.environ)))
PY
XDG_SESSION_COOKIE=cookie1 XDG_SESSION_ID=7 XDG_CACHE_HOME="$WORLD/cache" MY_API_TOKEN=t0k \
	https_proxy=http://127.0.0.1:9 P exec env.py
is "$RC" 0 "exec runs a script in the workspace"
unlike "$OUT" "XDG_SESSION_COOKIE|XDG_SESSION_ID|MY_API_TOKEN" "no session cookie, session id or token reaches the script"
like "$OUT" "XDG_CACHE_HOME" "the XDG base directories do"
like "$OUT" "https_proxy" "and the proxies"

# ---- item 9: the scratchpad host and its workers are scrubbed as well
export PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
export XDG_RUNTIME_DIR="$WORLD/rt-dir"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
MY_API_TOKEN=t0k DB_PASSWORD=pw9 XDG_SESSION_COOKIE=cookie2 https_proxy=http://127.0.0.1:9 \
	P python -c 'import os; print(" ".join(sorted(os.environ)))'
HOST=$(cat "$XDG_RUNTIME_DIR/pyward/host.pid" 2>/dev/null)
KILL_PIDS="$KILL_PIDS $HOST"
like "$OUT" "https_proxy" "a scratchpad cell sees the proxies"
unlike "$OUT" "MY_API_TOKEN|DB_PASSWORD|XDG_SESSION_COOKIE" "but no credential or session cookie"
ok "nor does the scratchpad host itself" sh -c "[ -n '$HOST' ] && ! tr '\\0' '\\n' </proc/$HOST/environ | grep -Eq 't0k|pw9|cookie2'"
P --mode read-only python -c 'open("written", "w").write("x")'
is "$RC" 3 "read-only mode refuses a scratchpad cell"
ok "and nothing was written" test ! -e "$WS/written"

# ---- item 12: exec FILE only inside the allowed roots; read-only runs no code
mkdir -p "$WORLD/outside"
printf 'open("%s/outside/ran", "w").write("x")\n' "$WORLD" >"$WORLD/outside/evil.py"
P exec "$WORLD/outside/evil.py"
is "$RC" 3 "exec of a script outside the allowed roots is refused"
ok "and it did not run" test ! -e "$WORLD/outside/ran"
ln -s "$WORLD/outside/evil.py" "$WS/link.py"
P exec link.py
is "$RC" 3 "exec of a workspace link to a script outside is refused"
printf 'open("written", "w").write("x")\n' >"$WS/write.py"
P --mode read-only exec write.py
is "$RC" 3 "read-only mode refuses exec"
ok "and nothing was written" test ! -e "$WS/written"
P --mode read-only exec -c 'open("written", "w").write("x")'
is "$RC" 3 "read-only mode refuses exec -c"

# A workspace "environment" whose bin/python is a program elsewhere.
mkdir -p "$WS/fake/bin" "$WORLD/outside/bin"
printf '#!/bin/sh\ntouch "%s/outside/fake-ran"\nexit 1\n' "$WORLD" >"$WORLD/outside/bin/python3"
chmod +x "$WORLD/outside/bin/python3"
ln -s "$WORLD/outside/bin/python3" "$WS/fake/bin/python"
printf 'home = /usr/bin\nversion = 3.11.2\n' >"$WS/fake/pyvenv.cfg"
P venv install --venv fake pwtest-alpha
is "$RC" 3 "install into an environment whose interpreter lies outside is refused"
like "$ERR" "resolves to $WORLD/outside/bin/python3" "the refusal names where it points"
ok "the outside program did not run" test ! -e "$WORLD/outside/fake-ran"

# ---- item 16: a detached grandchild does not outlive exec --timeout
cat >"$WS/detach.py" <<'PY'
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
    os._exit(0)
time.sleep(120)
PY
# Can this machine give a child tree its own cgroup (v2, writable here)?
cg_dir() {
	_m=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
	_c=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ -n "$_m" ] && [ -n "$_c" ] || return 1
	[ "$_c" = / ] && _c=
	_t="$_m$_c/pyward-test-$$"
	mkdir "$_t" 2>/dev/null && rmdir "$_t"
}
if cg_dir; then
	P --timeout 2 exec detach.py "$WORLD/grandchild.pid"
	is "$RC" 4 "exec stops the script at its budget"
	GC=$(cat "$WORLD/grandchild.pid" 2>/dev/null)
	KILL_PIDS="$KILL_PIDS $GC"
	gc_gone() { [ -n "$GC" ] && pid_gone "$GC"; }
	ok "the grandchild that called setsid is gone too (cgroup killed)" wait_until 60 "grandchild $GC to end" gc_gone
else
	skip 2 "no writable cgroup v2 here (not mounted, or this user has no delegated subtree)"
fi

done_testing
