# TAP helpers for pyward's shell tests. Each test script sources this file,
# calls plan N, then ok/is/like, and ends with done_testing.
# Environment from the harness: PYWARD (the binary), TOP_SRCDIR, TOP_BUILDDIR.

set -u
: "${PYWARD:?run through make check (PYWARD unset)}"
_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }

_tap_result() { # status description
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
	_diag_flush
}

# Diagnostics a helper wrote for later ($WORLD/.diag: what a failed wait
# saw), printed under the next result: `ok` sends its command's own output
# to /dev/null, which would swallow them.
_diag_flush() {
	[ -n "${WORLD:-}" ] && [ -s "$WORLD/.diag" ] || return 0
	cat "$WORLD/.diag"
	: >"$WORLD/.diag"
}

ok() { # description command...
	_d=$1; shift
	if "$@" >/dev/null 2>&1; then _tap_result 0 "$_d"; else _tap_result 1 "$_d"; fi
}

is() { # actual expected description
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" | head -n 40
	fi
}

like() { # text extended-regex description
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   text did not match /%s/:\n' "$2"
		printf '%s\n' "$1" | head -n 20 | sed 's/^/#   /'
	fi
}

unlike() { # text extended-regex description
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 1 "$3"
		printf '#   text matched /%s/\n' "$2"
	else
		_tap_result 0 "$3"
	fi
}

skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# skip N REASON: the next N checks cannot run here; each is a TAP SKIP
# saying why.
skip() {
	_sk=$1
	while [ "$_sk" -gt 0 ]; do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $2"
		_sk=$((_sk - 1))
	done
}

# bail_out REASON [FILE]: the suite itself is broken here (a fixture that
# failed, a tmux that would not start): stop the whole test with an error,
# not a cascade of failed checks, showing FILE (what the failing step said).
bail_out() {
	[ -z "${2:-}" ] || sed 's/^/# /' "$2" 2>/dev/null | tail -n 30
	echo "Bail out! $1"
	exit 99
}

# A private world for one test: box root, workspace, config dirs.
make_world() {
	WORLD=$(mktemp -d "${TMPDIR:-/tmp}/pyward-test.XXXXXX")
	mkdir -p "$WORLD/box" "$WORLD/ws" "$WORLD/home" "$WORLD/xdg-config"
	export HOME="$WORLD/home" XDG_CONFIG_HOME="$WORLD/xdg-config" XDG_DATA_HOME="$WORLD/home/.local/share"
	export PYWARD_SYSTEM_CONFIG="$WORLD/etc-pyward.conf"
	unset PYWARD_HOME
	# The world has no package index unless a test starts one: a runtime
	# install leaves out its baseline step unless the test asks for it.
	export PYWARD_BASELINE=
	export LC_ALL=C.UTF-8 LANGUAGE=
	trap 'rm -rf "$WORLD"' EXIT
}

# Run pyward, keeping stdout in OUT, stderr in ERR and the exit status in RC.
run() {
	_o="$WORLD/.out" _e="$WORLD/.err"
	"$PYWARD" "$@" >"$_o" 2>"$_e"
	RC=$?
	OUT=$(cat "$_o")
	ERR=$(cat "$_e")
}

done_testing() {
	_diag_flush
	[ "$_tap_failed" -eq 0 ]
}

# ---- the relocatable CPython fixture (tests/fixtures/make_runtime_archive.sh)
# runtime_fixture DIR [PYTHON]: builds DIR/cpython-fixture-install_only.tar.gz
# and sets VER, SHA and SIZE (what it printed). No interpreter to build
# it from: the whole test is skipped. Any other failure (a full disk, a
# broken stdlib copy) bails out with the fixture's own stderr.
# try_runtime_fixture DIR [PYTHON]: the same, but returns 1 instead of
# skipping, for a test that only has a few checks that need it.
try_runtime_fixture() {
	_fx_err="$WORLD/.fixture.err"
	_fx_out=$(sh "$TOP_SRCDIR/tests/fixtures/make_runtime_archive.sh" "$@" 2>"$_fx_err")
	_fx_rc=$?
	[ "$_fx_rc" -ne 77 ] || return 1
	[ "$_fx_rc" -eq 0 ] || bail_out "the runtime fixture failed (make_runtime_archive.sh exit $_fx_rc)" "$_fx_err"
	set -- $_fx_out
	[ $# -eq 3 ] || bail_out "the runtime fixture printed \"$_fx_out\", not VERSION SHA256 SIZE" "$_fx_err"
	VER=$1 SHA=$2 SIZE=$3
	return 0
}
runtime_fixture() {
	try_runtime_fixture "$@" ||
		skip_all "no system CPython to build the fixture from: $(cat "$WORLD/.fixture.err" 2>/dev/null)"
}

# alive PID: the process runs (a child that exited but was not waited for
# is a zombie, which `kill -0` still finds). pid_gone PID: it does not.
alive() {
	_st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$_st" ] && [ "$_st" != Z ]
}
pid_gone() { ! alive "$1"; }

# wait_until SECONDS WHAT COMMAND...: run COMMAND (its output thrown away)
# every 0.05 s until it succeeds. Wait for a state, never for a time: the
# wait ends as soon as the state is there, and SECONDS is a bound for a
# loaded machine (60 is the usual one), not a budget. When the bound
# passes, "waited N s for WHAT" is printed under the next check's result
# (also when `ok` ran the wait) and the status is 1.
wait_until() {
	_wu_limit=$1 _wu_what=$2
	shift 2
	_wu_end=$(($(date +%s) + _wu_limit))
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$_wu_end" ]; then
			_wu_msg="# waited $_wu_limit s for $_wu_what; it did not happen"
			if [ -n "${WORLD:-}" ] && [ -d "$WORLD" ]; then echo "$_wu_msg" >>"$WORLD/.diag"; else echo "$_wu_msg"; fi
			return 1
		fi
		sleep 0.05
	done
	return 0
}

# _wait_port FILE PID: wait until the server PID wrote its port to FILE
# (atomically: fixture_server.py renames it into place), or exited. 120 s is
# a cap, not a budget: a Python start-up on a loaded machine takes what it
# takes, and a server that died ends the wait at once. On failure its log
# (LOG, if given as $3) is shown.
_wait_port() {
	_i=0
	while [ ! -s "$1" ] && [ $_i -lt 2400 ]; do
		alive "$2" || break
		sleep 0.05
		_i=$((_i + 1))
	done
	[ -s "$1" ] && return 0
	echo "# fixture server $2 did not start ($(alive "$2" && echo "no port after 120 s" || echo "it exited"))"
	[ -z "${3:-}" ] || tail -n 20 "$3" 2>/dev/null | sed 's/^/#   /'
	return 1
}

# ---- loopback HTTPS server (tests/fixtures/httpsd.py) ----
# start_httpsd ROOT: a CA and server certificate for "localhost" are made in
# $WORLD/tls; sets HTTPSD_PID, HTTPSD_PORT, HTTPSD_LOG, CA_PEM, OTHER_CA_PEM.
start_httpsd() {
	sh "$TOP_SRCDIR/tests/fixtures/make_ca.sh" "$WORLD/tls" || return 1
	CA_PEM="$WORLD/tls/ca.pem" OTHER_CA_PEM="$WORLD/tls/other-ca.pem"
	HTTPSD_LOG="$WORLD/httpsd.log"
	rm -f "$WORLD/httpsd.port"
	"${PYTHON3:-python3}" "$TOP_SRCDIR/tests/fixtures/httpsd.py" --root "$1" \
		--cert "$WORLD/tls/server.pem" --key "$WORLD/tls/server.key" \
		--port-file "$WORLD/httpsd.port" --log "$HTTPSD_LOG" --max-requests 2000 --idle-exit 3600 &
	HTTPSD_PID=$!
	_wait_port "$WORLD/httpsd.port" "$HTTPSD_PID" "$HTTPSD_LOG"
	HTTPSD_PORT=$(cat "$WORLD/httpsd.port" 2>/dev/null)
	[ -n "$HTTPSD_PORT" ]
}

stop_httpsd() {
	[ -n "${HTTPSD_PID:-}" ] || return 0
	kill "$HTTPSD_PID" 2>/dev/null
	wait "$HTTPSD_PID" 2>/dev/null
	HTTPSD_PID=""
}

# write_pins FILE VERSION RELEASE URL SHA256 [SIZE]: a one-pin table for this machine.
write_pins() {
	_triple=$(uname -m)-unknown-linux-gnu
	printf 'version\trelease\tplatform\turl\tsha256\tsize\n%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$2" "$3" "$_triple" "$4" "$5" "${6:--}" > "$1"
}

# ---- loopback package index (tests/fixtures/indexd.py) ----
# start_index NAME MODE: serves $WORLD/wheels (made by make_wheels.py) over
# plain HTTP on 127.0.0.1; sets INDEX_<NAME>_PID and INDEX_<NAME>_URL.
make_wheels() {
	"${PYTHON3:-python3}" "$TOP_SRCDIR/tests/fixtures/make_wheels.py" "$WORLD" >/dev/null
}

start_index() {
	_pf="$WORLD/index-$1.port"
	rm -f "$_pf"
	"${PYTHON3:-python3}" "$TOP_SRCDIR/tests/fixtures/indexd.py" --wheels "$WORLD/wheels" --mode "$2" \
		--port-file "$_pf" --log "$WORLD/index-$1.log" --max-requests 2000 --idle-exit 3600 &
	eval "INDEX_$1_PID=$!"
	_wait_port "$_pf" "$(eval echo \$INDEX_$1_PID)" "$WORLD/index-$1.log" || return 1
	eval "INDEX_$1_URL=http://127.0.0.1:$(cat "$_pf")/simple/"
	SERVER_PIDS="${SERVER_PIDS:-} $(eval echo \$INDEX_$1_PID)"
}

start_proxy() {
	_pf="$WORLD/proxy.port"
	rm -f "$_pf"
	"${PYTHON3:-python3}" "$TOP_SRCDIR/tests/fixtures/proxyd.py" --port-file "$_pf" --log "$WORLD/proxy.log" --max-requests 2000 --idle-exit 3600 "$@" &
	PROXY_PID=$!
	_wait_port "$_pf" "$PROXY_PID" "$WORLD/proxy.log"
	PROXY_PORT=$(cat "$_pf" 2>/dev/null)
	SERVER_PIDS="${SERVER_PIDS:-} $PROXY_PID"
	[ -n "$PROXY_PORT" ]
}

stop_servers() {
	for _p in ${SERVER_PIDS:-}; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done
	SERVER_PIDS=""
}

# newest_op FIELD...: those fields of the first (newest) operation in OUT,
# the output of `pyward history --json`, on one line, space-separated.
newest_op() {
	printf '%s' "$OUT" | "${PYTHON3:-python3}" -c \
		'import json,sys; o=json.load(sys.stdin)["operations"][0]; print(*(o[k] for k in sys.argv[1:]))' "$@"
}

# A TCP port on 127.0.0.1 with nothing listening.
closed_port() {
	"${PYTHON3:-python3}" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# ---- the full-screen interface in tmux
# tui_world: make_world for a test that drives the TUI (tmux required): T
# runs tmux on a socket of the world's own. At exit the tmux server, httpsd
# and the fixture servers stop and the world goes (a test that sets its own
# EXIT trap kills the tmux server there).
tui_world() {
	command -v tmux >/dev/null 2>&1 || skip_all "tmux not installed"
	make_world
	SOCK="$WORLD/tmux.sock"
	T() { tmux -S "$SOCK" "$@"; }
	trap 'T kill-server 2>/dev/null; stop_httpsd; stop_servers; rm -rf "$WORLD"' EXIT
}
# tui_start NAME WIDTH HEIGHT COMMAND: runs the shell command line COMMAND
# in a new detached session NAME of that size, the one the waits read (S).
# What the program writes to the pane is kept for a failed wait to show;
# a session tmux will not start bails out with tmux's own words.
tui_start() {
	S=$1
	_tl="$WORLD/tui-$1"
	rm -f "$_tl.go"
	: >"$_tl.out"
	# The keeper: a session that lives as long as this test's shell. Without
	# it the server exits with its last session (a command that ended, a
	# session the test killed, or a start-server with none), and a
	# new-session racing that exit fails with "server exited unexpectedly":
	# every wait after it then times out on an empty screen.
	if ! T has-session -t '=_keep' 2>/dev/null; then
		T -f /dev/null new-session -d -s _keep "while kill -0 $$ 2>/dev/null; do sleep 1; done" 2>"$_tl.tmux" ||
			bail_out "tmux would not start its server" "$_tl.tmux"
	fi
	# The command waits for the pipe that records its output.
	T new-session -d -s "$1" -x "$2" -y "$3" "while [ ! -e '$_tl.go' ]; do sleep 0.02; done; $4" 2>"$_tl.tmux" ||
		bail_out "tmux would not start session $1" "$_tl.tmux"
	T pipe-pane -t "=$1:" -o "cat >>'$_tl.out'" 2>>"$_tl.tmux"
	: >"$_tl.go"
}

# tui_report WHAT: after a wait for WHAT failed, print (as TAP comments) the
# last screen, whether the session is still there, and the last lines the
# pane's program wrote, control sequences taken out (what a program prints
# before curses starts or after it ends, a sanitizer's report, a crash).
tui_report() {
	printf '# screen while waiting for "%s":\n' "$1"
	printf '%s\n' "$SCREEN" | sed 's/^/#   /'
	_tl="$WORLD/tui-$S"
	T has-session -t "=$S" 2>/dev/null || printf '# tmux has no session "%s"\n' "$S"
	[ ! -s "$_tl.tmux" ] || sed 's/^/# tmux said: /' "$_tl.tmux"
	[ -e "$_tl.out" ] || return 0
	printf '# what the program in the pane wrote last (%s bytes in all):\n' "$(wc -c <"$_tl.out" | tr -d ' ')"
	"${PYTHON3:-python3}" -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
t = re.sub(r"\x1b\[[0-?]*[ -/]*[Hfd]", "\n", t)
t = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[()][0-9A-Za-z]|\x1b.", "", t)
t = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", t.replace("\r", "\n"))
lines = [l.rstrip()[:160] for l in t.split("\n") if l.strip()]
for l in lines[-15:]:
    print("#   " + l)' "$_tl.out"
}

# settle_screen: after a capture matched, let a frame still being drawn
# finish: capture again until two captures agree (at most ~0.5 s), so the
# checks that follow read a whole frame. Uses the script's T and S (tmux).
settle_screen() {
	_k=0
	while [ $_k -lt 10 ]; do
		sleep 0.05
		_next=$(T capture-pane -p -t "$S" 2>/dev/null)
		[ "$_next" = "$SCREEN" ] && return 0
		SCREEN=$_next
		_k=$((_k + 1))
	done
	return 0
}

# wait_screen WHAT SECONDS COMMAND...: poll the tmux pane (every 0.1 s)
# until COMMAND, run with the pane's text in SCREEN, succeeds; the whole
# frame is then in SCREEN. On a timeout tui_report's account of the pane
# (waiting for WHAT) is printed under the next check's result (even when
# `ok` ran the wait). Uses T and S.
# wait_for TEXT [SECONDS], wait_re REGEX [SECONDS]: until the pane shows
# TEXT or matches REGEX (SECONDS defaulting to the script's WAIT_SECONDS).
wait_screen() {
	_ws_what=$1 _limit=$(( $2 * 10 )) _i=0
	shift 2
	while [ $_i -lt $_limit ]; do
		SCREEN=$(T capture-pane -p -t "$S" 2>/dev/null)
		"$@" && { settle_screen; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	tui_report "$_ws_what" >>"$WORLD/.diag"
	return 1
}
screen_has() { printf '%s\n' "$SCREEN" | grep "$1" -q -- "$2"; } # grep-flag pattern
wait_for() { wait_screen "$1" "${2:-${WAIT_SECONDS:-20}}" screen_has -F "$1"; }
wait_re() { wait_screen "$1" "${2:-${WAIT_SECONDS:-20}}" screen_has -E "$1"; }

# ---- worlds several tests share ----
# serve_world: make_world for the tests of `pyward serve` (curl required):
# BOX, CLIENT (tests/cli/api_client.py), J EXPR (EXPR of the JSON in BODY,
# as d); every server that serve started, the fixture servers and httpsd
# stop at exit and the world goes.
serve_world() {
	command -v curl >/dev/null 2>&1 || skip_all "curl not installed"
	make_world
	SERVE_PIDS=""
	trap 'stop_serves; stop_servers; stop_httpsd; rm -rf "$WORLD"' EXIT
	BOX="$WORLD/box"
	CLIENT="${PYTHON3:-python3} $TOP_SRCDIR/tests/cli/api_client.py"
	J() { printf '%s' "$BODY" | "${PYTHON3:-python3}" -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>&1; }
}

# serve NAME ARGS...: start `pyward serve ARGS` on BOX (stderr in
# $WORLD/NAME.err) and wait until it says it listens, once per --listen
# (once when none is given), or exits: 120 s is a cap, not a budget (a
# sanitizer build on a loaded machine). Sets SERVE_PID and PORT (the first
# TCP port it listens on, if any); fails when it does not listen.
serve() {
	_n=$1; shift
	_want=0
	for _a in "$@"; do [ "$_a" != --listen ] || _want=$((_want + 1)); done
	[ $_want -gt 0 ] || _want=1
	"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" serve "$@" 2>"$WORLD/$_n.err" &
	SERVE_PID=$!
	SERVE_PIDS="${SERVE_PIDS:-} $SERVE_PID"
	_i=0
	while [ "$(cat "$WORLD/$_n.err" 2>/dev/null | grep -c '^listening on')" -lt $_want ] && [ $_i -lt 2400 ]; do
		alive "$SERVE_PID" || break
		sleep 0.05
		_i=$((_i + 1))
	done
	PORT=$(sed -n 's/^listening on [0-9.]*:\([0-9]*\).*/\1/p' "$WORLD/$_n.err" | head -n 1)
	grep -q '^listening on' "$WORLD/$_n.err"
}
stop_serve() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
stop_serves() { for _p in ${SERVE_PIDS:-}; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; SERVE_PIDS=""; }

# pip_world: make_world, plus a python3 that can make environments (SYS_PY),
# the test wheels, the loopback indexes "ok" and "stall" (a stalled one), no
# index, mirror or proxy from the caller's environment and nothing on the
# probed proxy port. WS is the workspace; P runs pyward on the world's box
# and workspace, J EXPR prints EXPR of the JSON in OUT (as d). At exit every
# pid in KILL_PIDS gets KILL_SIGNAL (TERM unless set before), the servers
# stop and the world goes.
pip_world() {
	make_world
	KILL_PIDS="" KILL_SIGNAL=${KILL_SIGNAL:-TERM}
	trap 'for _p in $KILL_PIDS; do kill -s "$KILL_SIGNAL" "$_p" 2>/dev/null; done; stop_servers; rm -rf "$WORLD"' EXIT
	SYS_PY=${PYTHON3:-python3}
	"$SYS_PY" -c 'import venv, ensurepip' 2>/dev/null || skip_all "python3 has no venv/ensurepip (install python3-venv)"
	make_wheels || skip_all "could not build the test wheels"
	start_index ok ok || skip_all "could not start the index server"
	start_index stall stall
	WS="$WORLD/ws"
	PYWARD_PROXY_PORTS=$(closed_port)
	export PYWARD_PROXY_PORTS
	unset PYWARD_MIRRORS PIP_INDEX_URL PIP_PROXY http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
	P() { run --box-root "$WORLD/box" -C "$WS" "$@"; }
	J() { printf '%s' "$OUT" | "$SYS_PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
}

# pip_child PID: prints the pid of the `pip install` that PID runs, if any
# (false when there is none).
pip_child() { ps -o pid=,args= --ppid "$1" 2>/dev/null | awk '/-m pip install/ {print $1; f=1; exit} END {exit !f}'; }

# scratch_world: make_world for the scratchpad's tests: SYS_PY (the
# machine's python3) runs the cells, the worker from the source tree, a
# short grace, WS the workspace. use_rt NAME gives each scenario a private
# runtime dir (XDG_RUNTIME_DIR; SOCKDIR its socket folder), host_pid reads
# its host's pid, stop_host stops it; wait_gone PID waits (60 s at most) for
# a pid to go. PY runs `pyward python` on the world, J EXPR prints EXPR of
# the JSON in OUT (as d). At exit every host in every runtime dir is stopped
# by its pid, then every pid in KILL_PIDS gets SIGKILL, and the world goes.
scratch_world() {
	make_world
	SYS_PY=/usr/bin/python3
	[ -x "$SYS_PY" ] || SYS_PY=$(command -v python3)
	[ -n "$SYS_PY" ] || skip_all "no python3"
	export PYWARD_WORKER="$TOP_SRCDIR/data/pyward_worker.py"
	export PYWARD_SCRATCH_GRACE_MS=700
	unset PYWARD_SCRATCH_TEST_OWNER_UID
	WS="$WORLD/ws"
	RT_DIRS="" KILL_PIDS=""
	trap 'stop_all_hosts; for _p in $KILL_PIDS; do kill -9 "$_p" 2>/dev/null; done; rm -rf "$WORLD"' EXIT
	PY() { run --box-root "$WORLD/box" -C "$WS" python --python "$SYS_PY" "$@"; }
	J() { printf '%s' "$OUT" | "$SYS_PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
}
use_rt() {
	export XDG_RUNTIME_DIR="$WORLD/rt-$1"
	mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
	RT_DIRS="$RT_DIRS $XDG_RUNTIME_DIR"
	SOCKDIR="$XDG_RUNTIME_DIR/pyward"
}
stop_all_hosts() {
	for _d in $RT_DIRS; do stop_host "$_d/pyward"; done
}

# ---- scratchpad hosts (any test that runs cells)
# host_pid [SOCKDIR]: the pid in host.pid of the runtime dir's socket folder
# (SOCKDIR, else $XDG_RUNTIME_DIR/pyward). wait_gone PID [SECONDS]: wait
# until PID is gone (a zombie counts as gone), 60 s at most. stop_pid PID:
# SIGTERM, and SIGKILL if it is still there 20 s later. stop_host
# [SOCKDIR]: stops that host by its pid and removes host.pid, so that a
# later stop cannot hit a reused pid.
_sockdir() { printf "%s" "${1:-${SOCKDIR:-${XDG_RUNTIME_DIR:-}/pyward}}"; }
host_pid() { cat "$(_sockdir "${1:-}")/host.pid" 2>/dev/null; }
wait_gone() { wait_until "${2:-60}" "process $1 to end" pid_gone "$1"; }
stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill "$1" 2>/dev/null
	wait_until 20 "process $1 to end after SIGTERM" pid_gone "$1" || kill -9 "$1" 2>/dev/null
	return 0
}
stop_host() {
	_sh_pid=$(host_pid "${1:-}")
	[ -n "$_sh_pid" ] || return 0
	stop_pid "$_sh_pid"
	rm -f "$(_sockdir "${1:-}")/host.pid"
}

# runtime_world: make_world, plus a relocatable CPython archive built from
# this machine's (ARCH; VER and SHA its version and digest; FIX the fixture
# folder), the test wheels and the loopback index "ok". BOX is the box, PY
# the managed runtime's interpreter once installed; P runs pyward on the box
# with the world's workspace. At exit the servers stop and the world goes.
runtime_world() {
	make_world
	trap 'stop_servers; rm -rf "$WORLD"' EXIT
	FIX="$TOP_SRCDIR/tests/fixtures"
	runtime_fixture "$WORLD/rt"
	ARCH="$WORLD/rt/cpython-fixture-install_only.tar.gz"
	make_wheels || skip_all "could not build the test wheels"
	start_index ok ok || skip_all "could not start the index server"
	BOX="$WORLD/box"
	PY="$BOX/runtime/python/current/bin/python3"
	P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
}
