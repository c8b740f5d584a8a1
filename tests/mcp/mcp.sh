#!/bin/sh
# pyward mcp against real MCP clients (tests/mcp/client.mjs): the official
# TypeScript SDK, the Inspector's CLI and a hand-written JSON-RPC session.
# Node and the pinned npm packages are test dependencies: ./setup.sh test
# installs them (Debian's nodejs and npm, then npm ci in tests/mcp).
. "$TOP_SRCDIR/tests/lib.sh"
command -v node >/dev/null 2>&1 || skip_all "node is not installed (./setup.sh test installs Debian's nodejs and npm)"
[ -d "$TOP_SRCDIR/tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
	skip_all "the MCP SDK is not installed: run 'npm ci' in tests/mcp (./setup.sh test does)"
SYS_PY=/usr/bin/python3
[ -x "$SYS_PY" ] || SYS_PY=$(command -v python3)
[ -n "$SYS_PY" ] || skip_all "no python3"
make_world
export XDG_RUNTIME_DIR="$WORLD/rt"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
export PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
export WS="$WORLD/ws" BOX="$WORLD/box" VENV="$WORLD/ws/.venv"
"$SYS_PY" -m venv --without-pip "$VENV" || skip_all "python3 -m venv does not work here (install python3-venv)"
# the managed runtime: a fixture archive over HTTPS on loopback, pinned in a
# private data folder, the test CA in the system settings file
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
RT_VER=$VER RT_SHA=$SHA RT_SIZE=$SIZE
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
mkdir -p "$WORLD/data"
cp -R "$TOP_SRCDIR/data/." "$WORLD/data/"
write_pins "$WORLD/data/runtime-pins.tsv" "$RT_VER" 1 \
	"https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz" "$RT_SHA" "$RT_SIZE"
printf 'ca_bundle = %s\n' "$CA_PEM" > "$PYWARD_SYSTEM_CONFIG"
export PYWARD_DATADIR="$WORLD/data" RT_VER RT_SHA
# the runtime's document baseline is the CLI tests' business: skipped here
export PYWARD_BASELINE=
printf 'pwtest-alpha\n' > "$WORLD/baseline.txt"
export BASELINE_FILE="$WORLD/baseline.txt"
# environments: a loopback PEP 503 index of tiny real wheels, and one that stalls
make_wheels || skip_all "could not build the test wheels"
start_index ok ok || skip_all "could not start the index server"
start_index stall stall || skip_all "could not start the stalling index server"
export INDEX_OK="$INDEX_ok_URL" INDEX_STALL="$INDEX_stall_URL" DEAD_PORT=$(closed_port)
unset PYWARD_MIRRORS PIP_INDEX_URL http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
trap 'stop_host; stop_httpsd; stop_servers; rm -rf "$WORLD"' EXIT
node "$TOP_SRCDIR/tests/mcp/client.mjs"
