#!/bin/sh
# The scratchpad through its operations (src/ops/op_scratch.c): every front
# end (`pyward python`, the MCP `python` tool, the TUI's Python pane, the
# last in tests/cli/tui_python.sh) gets the same rules and the same JSON:
# no cells in read-only mode (a reset alone is no change), an environment's
# interpreter must resolve inside it (or its pyvenv.cfg base), a result
# has the same members whichever front end asked. MCP sessions here are
# hand-written JSON-RPC lines on pyward mcp's stdin. Every scratchpad host
# started is stopped by its PID (host.pid in the private runtime dir).
. "$TOP_SRCDIR/tests/lib.sh"
make_world
SYS_PY=/usr/bin/python3
[ -x "$SYS_PY" ] || SYS_PY=$(command -v python3)
[ -n "$SYS_PY" ] || skip_all "no python3"
export PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
export XDG_RUNTIME_DIR="$WORLD/rt"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset PYWARD_SCRATCH_TEST_OWNER_UID
WS="$WORLD/ws"
trap 'stop_host; rm -rf "$WORLD"' EXIT
"$SYS_PY" -m venv --without-pip "$WS/.venv" >/dev/null 2>&1 ||
	skip_all "python3 -m venv does not work here (install python3-venv)"
plan 24

# mcp_python ARGS_JSON [GLOBAL OPTIONS...]: one `python` tool call in a
# fresh MCP session; OUT is its structured result (compact JSON), with
# "isError" added.
mcp_python() {
	_args=$1; shift
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ops-test","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"python\",\"arguments\":$_args}}" |
		"$PYWARD" --box-root "$WORLD/box" -C "$WS" "$@" mcp >"$WORLD/mcp.out" 2>"$WORLD/mcp.err"
	OUT=$("$SYS_PY" -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") == 2:
        r = m.get("result", {})
        s = dict(r.get("structuredContent") or {})
        s["isError"] = r.get("isError", False)
        print(json.dumps(s, sort_keys=True))
' "$WORLD/mcp.out")
}
J() { printf '%s' "$OUT" | "$SYS_PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- read-only mode: a cell is a change, for every front end
run --box-root "$WORLD/box" -C "$WS" --mode read-only python --venv .venv -c 'open("made-by-cli", "w")'
is "$RC" 3 "pyward python: a cell in read-only mode is refused (exit 3)"
mcp_python '{"code": "open(\"made-by-mcp\", \"w\")", "venv": ".venv"}' --mode read-only
is "$(J 'd["isError"], d["error"]["code"]')" "True refused" "the MCP python tool: a cell in read-only mode is a refusal"
like "$(J 'd["error"]["message"]')" "read-only" "with the policy message"
ok "and the cell did not run" test ! -e "$WS/made-by-mcp"
mcp_python '{"code": "", "reset": true, "venv": ".venv"}' --mode read-only
is "$(J 'd["isError"], d["status"]')" "False reset" "a reset alone changes nothing: allowed in read-only mode"

# ---- an environment whose interpreter leads outside it is not run
mkdir -p "$WS/evil/bin"
ln -s "$SYS_PY" "$WS/evil/bin/python"
mcp_python '{"code": "open(\"made-by-evil\", \"w\")", "venv": "evil"}'
is "$(J 'd["isError"], d["error"]["code"]')" "True refused" \
	"the MCP python tool refuses an environment whose interpreter resolves outside it"
like "$(J 'd["error"]["message"]')" "resolves to .*outside the environment" "saying where it leads"
ok "and nothing ran" test ! -e "$WS/made-by-evil"
mcp_python '{"code": "1", "venv": "nothing-here"}'
is "$(J 'd["error"]["code"], d["error"]["hint"]')" "usage create one with the pyenv_create tool" \
	"a folder that is no environment: the agent's hint, not a CLI option"

# ---- the server keeps its connection: its own session is leased (direct
# mode) between calls, as before the calls went through ops; an environment
# whose interpreter is swapped for a file outside it meanwhile is checked
# again (the connection's memo of its last check must not hide that; a
# leased call looks at the memo's stamps at most every 10 ms, every time
# with PYWARD_TEST_SCRATCH_STAMP_MS=0)
"$SYS_PY" -m venv --without-pip "$WS/v2" >/dev/null 2>&1
mkfifo "$WORLD/mcp.in"
PYWARD_TEST_SCRATCH_STAMP_MS=0 "$PYWARD" --box-root "$WORLD/box" -C "$WS" mcp <"$WORLD/mcp.in" >"$WORLD/mcp-live.out" 2>/dev/null &
MCP_PID=$!
exec 3>"$WORLD/mcp.in"
printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ops-test","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"python","arguments":{"code":"y = 5","venv":"v2"}}}' >&3
wait_until 60 "the MCP server to answer call 2" grep -q '"id":2' "$WORLD/mcp-live.out"
run --box-root "$WORLD/box" -C "$WS" --json python --list
is "$(J '[s["state"] for s in d["sessions"] if s["name"].endswith("-mcp-'"$MCP_PID"'")]')" "['leased']" \
	"after a call the MCP server holds its own session's worker (direct mode)"
mkdir -p "$WORLD/elsewhere" && cp "$(readlink -f "$SYS_PY")" "$WORLD/elsewhere/python3"
printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"python","arguments":{"code":"y * 2","venv":"v2"}}}' >&3
wait_until 60 "the MCP server to answer call 3" grep -q '"id":3' "$WORLD/mcp-live.out"
OUT=$(grep '"id":3' "$WORLD/mcp-live.out")
is "$(J 'd["result"]["structuredContent"]["value"]')" "10" "and the next call on the leased worker keeps the state"
# at once after that call, while the server's memo of its check is fresh
ln -sf "$WORLD/elsewhere/python3" "$WS/v2/bin/python"
printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"python","arguments":{"code":"y * 3","venv":"v2"}}}' >&3
exec 3>&-
wait "$MCP_PID"
OUT=$(grep '"id":4' "$WORLD/mcp-live.out")
is "$(J 'd["result"]["isError"], d["result"]["structuredContent"]["error"]["code"]')" "True refused" \
	"the interpreter swapped for a file outside the environment: the next call is refused"

# ---- while the server holds the lease, a call goes to the worker it
# holds, already running in the environment's checked interpreter, and the
# environment's stamps are looked at no more than every 10 ms (stretched
# here to 10 minutes by PYWARD_TEST_SCRATCH_STAMP_MS): a swap of the
# interpreter is not seen by such a call, which starts no interpreter. A
# call that must go through the host, which may start one, looks at the
# stamps first: after the worker was discarded, the swapped interpreter is
# refused.
"$SYS_PY" -m venv --without-pip "$WS/v3" >/dev/null 2>&1
mkfifo "$WORLD/mcp3.in"
PYWARD_TEST_SCRATCH_STAMP_MS=600000 "$PYWARD" --box-root "$WORLD/box" -C "$WS" mcp <"$WORLD/mcp3.in" >"$WORLD/mcp3.out" 2>/dev/null &
MCP_PID=$!
exec 3>"$WORLD/mcp3.in"
call3() { # ID CODE: a python call in v3; OUT its response line
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"python","arguments":{"code":"%s","venv":"v3"}}}\n' "$1" "$2" >&3
	_i=0
	while ! grep -q "\"id\":$1," "$WORLD/mcp3.out" 2>/dev/null && [ $_i -lt 3000 ]; do sleep 0.01; _i=$((_i + 1)); done
	OUT=$(grep "\"id\":$1," "$WORLD/mcp3.out")
}
printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ops-test","version":"1"}}}' >&3
call3 2 "w = 4"
call3 3 "w + 1"
is "$(J 'd["result"]["structuredContent"]["value"]')" "5" "a server holding its session's lease: the leased worker keeps the state"
session3=$(J 'd["result"]["structuredContent"]["session"]')
ln -sf "$WORLD/elsewhere/python3" "$WS/v3/bin/python"
call3 4 "w * 3"
is "$(J 'd["result"].get("isError", False), d["result"]["structuredContent"]["value"]')" "False 12" \
	"the interpreter swapped within the stamp interval: the call still runs in the leased worker (no interpreter started)"
"$PYWARD" --box-root "$WORLD/box" -C "$WS" python --discard -s "$session3" >/dev/null 2>&1
call3 5 "w * 5"
exec 3>&-
wait "$MCP_PID"
is "$(J 'd["result"]["isError"], d["result"]["structuredContent"]["error"]["code"]')" "True refused" \
	"the leased worker discarded, the interpreter swapped: the call through the host looks at the stamps and is refused"

# ---- one JSON shape, built once
mcp_python '{"code": "6 * 7", "venv": ".venv", "session": "shared"}'
MCP_OUT=$OUT
is "$(J 'd["value"], d["status"]')" "42 ok" "the MCP python tool runs a cell in the environment"
run --box-root "$WORLD/box" -C "$WS" --json python -s shared --venv .venv -c '_ + 1'
is "$(J 'd["value"], d["execution"]')" "43 2" "pyward python continues the same session (state kept)"
CLI_OUT=$OUT
OUT=$MCP_OUT
mcp_keys=$(J '" ".join(sorted(k for k in d if k != "isError"))')
OUT=$CLI_OUT
is "$(J '" ".join(sorted(d))')" "$mcp_keys" "the CLI's --json and the MCP result have the same members"
is "$(J 'list(d)[0], d["schema"]')" "notices 1" "python --json: notices first, and the schema member every --json document has"
OUT=$MCP_OUT
is "$(J 'd["schema"]')" "1" "and the MCP result is the same object (schema 1)"
run --box-root "$WORLD/box" -C "$WS" --json python --list
is "$(J '[s["name"] for s in d["sessions"] if s["name"] == "shared"][0]')" "shared" "--list names the session"
is "$(J 'd["schema"]')" "1" "--list --json has the schema member"
run --box-root "$WORLD/box" -C "$WS" --json python -s shared --discard
is "$(J 'd["session"], d["done"]')" "shared discarded" "--discard answers with the session and what was done"
is "$(J 'd["schema"]')" "1" "and has the schema member"

done_testing
