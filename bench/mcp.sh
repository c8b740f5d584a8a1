#!/bin/sh
# pyward mcp, timed against the scratchpad's own paths in one run:
#   round trip of N `python` tool calls of 1+1 through `pyward mcp` (a C
#   client on its stdio pipes, bench/mcp_rtt.c, no SDK in the loop), the
#   scratchpad's direct mode (C client with the worker's pipes lent,
#   bench/scratch_rtt.c) and the bare JSON-lines floor (a minimal Python
#   loop on pipes), median and p99; the same floor behind the cheapest
#   relay there is (bench/relay.c: blocking reads, no parsing), which
#   shows what one hop between processes costs on this machine whatever
#   the server does; tools/list latency; cold start (the
#   server's first answer, and its first python result); the server's own
#   CPU time per python call (all its threads, from /proc schedstat), the
#   measure that load disturbs least.
# The three take turns in rounds (each round a new server, session and
# floor process), so the machine's load falls on all alike. Every round is
# printed (with its own ratio), then the medians over the rounds and the
# load average at start and end. Goals: mcp within 1.5x of direct mode,
# cold start under 50 ms.
# Usage: BUILD_DIR=_build bench/mcp.sh [N] [ROUNDS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
n=${1:-2000}
rounds=${2:-5}
py="$build/src/pyward"
base=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
w=$(mktemp -d)
export XDG_RUNTIME_DIR="$w/rt" PYWARD_WORKER="$here/data/pyward_worker.py" PYWARD_DATADIR="$here/data"
export PYWARD_HOME="$w/box" XDG_CONFIG_HOME="$w/config" PYWARD_SYSTEM_CONFIG="$w/none.conf"
mkdir -m 700 "$XDG_RUNTIME_DIR"
stop_host() {
	p=$(cat "$XDG_RUNTIME_DIR/pyward/host.pid" 2>/dev/null) || return 0
	kill "$p" 2>/dev/null || true
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}
trap 'stop_host; rm -rf "$w"' EXIT

cc -O2 -std=c11 -I"$here/bench" -I"$here/src/core" -I"$build" "$here/bench/scratch_rtt.c" -o "$w/scratch_rtt" \
	"$build/src/core/libpyward.a" $(pkg-config --cflags --libs jansson libcrypto) -lpthread
cc -O2 -std=c11 -I"$here/bench" "$here/bench/mcp_rtt.c" -o "$w/mcp_rtt"
cc -O2 -std=c11 -I"$here/bench" "$here/bench/relay.c" -o "$w/relay"

mkdir "$w/ws"
"$base" -m venv --without-pip "$w/ws/.venv"
vpy="$w/ws/.venv/bin/python"
cd "$w/ws"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
m() { echo $1 | tr ' ' '\n' | median; }
ratio() { awk "BEGIN{printf \"%.2f\", $1/$2}"; }
ms() { awk "BEGIN{printf \"%.1f ms\", $1/1000}"; }

# warm the host once (its own start is the scratchpad bench's business)
"$w/scratch_rtt" direct "$py" "$vpy" 10 >/dev/null
per=$((n / rounds))
echo "$n python calls of 1+1 in $rounds rounds of $per; interpreter $vpy"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %21s %21s %21s %21s %9s %9s %9s %8s %8s %8s\n' "round" "mcp median/p99 us" "direct median/p99 us" \
	"floor median/p99 us" "relay median/p99 us" "list us" "mcp/dir" "rel/flr" "init ms" "first ms" "srv cpu"
mi="" mf="" ml="" mm="" mp="" mc="" dm="" dp="" fm="" fp="" rm="" rp="" rr=""
r=0
while [ $r -lt "$rounds" ]; do
	out=$("$w/mcp_rtt" "$py" "$w/ws" "$w/ws/.venv" "$per" 50 2>>"$w/server.log") || { cat "$w/server.log" >&2; exit 1; }
	set -- $out
	mi="$mi $1" mf="$mf $2" ml="$ml $3" mm="$mm $4" mp="$mp $5" mc="$mc $6"
	r_init=$1 r_first=$2 r_list=$3 r_mm=$4 r_mp=$5 r_cpu=$6
	set -- $("$w/scratch_rtt" direct "$py" "$vpy" "$per")
	dm="$dm $2" dp="$dp $3"
	r_dm=$2 r_dp=$3
	set -- $("$w/scratch_rtt" floor "$vpy" "$per")
	fm="$fm $2" fp="$fp $3"
	r_fm=$2 r_fp=$3
	set -- $("$w/scratch_rtt" relay "$w/relay" "$vpy" "$per")
	rm="$rm $2" rp="$rp $3"
	r=$((r + 1))
	rr="$rr $(ratio "$r_mm" "$r_dm")"
	printf '%-6s %21s %21s %21s %21s %9s %9s %9s %8s %8s %8s\n' "$r" "$r_mm / $r_mp" "$r_dm / $r_dp" "$r_fm / $r_fp" \
		"$2 / $3" "$r_list" "$(ratio "$r_mm" "$r_dm")" "$(ratio "$2" "$r_fm")" "$(ms "$r_init" | cut -d' ' -f1)" \
		"$(ms "$r_first" | cut -d' ' -f1)" "$r_cpu"
done
mcp_init=$(m "$mi") mcp_first=$(m "$mf") mcp_list=$(m "$ml") mcp_med=$(m "$mm") mcp_p99=$(m "$mp")
di_med=$(m "$dm") di_p99=$(m "$dp") fl_med=$(m "$fm") fl_p99=$(m "$fp") re_med=$(m "$rm") re_p99=$(m "$rp")
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "medians over the $rounds rounds:"
printf '%-40s %10s %10s\n' "" "median" "p99"
printf '%-40s %7s us %7s us\n' "pyward mcp, python tool (C client)" "$mcp_med" "$mcp_p99"
printf '%-40s %7s us %7s us\n' "scratchpad direct mode (C client)" "$di_med" "$di_p99"
printf '%-40s %7s us %7s us\n' "floor (python JSON lines on pipes)" "$fl_med" "$fl_p99"
printf '%-40s %7s us %7s us\n' "the floor behind a do-nothing relay" "$re_med" "$re_p99"
echo "tools/list round trip: $mcp_list us (median of 50 per round)"
echo "server CPU per python call (all threads): $(echo $mc | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') us (median over the rounds;$mc)"
met=$(awk "BEGIN{print ($mcp_med / $di_med <= 1.5) ? \"met\" : \"MISSED\"}")
echo "mcp median / direct mode median: $(ratio "$mcp_med" "$di_med")  (goal: at most 1.5: $met; per round:$rr)"
echo "mcp p99 / direct mode p99: $(ratio "$mcp_p99" "$di_p99")"
echo "mcp median / floor median: $(ratio "$mcp_med" "$fl_med"); direct mode / floor: $(ratio "$di_med" "$fl_med")"
echo "one hop between processes, with no work (relay - floor): $((re_med - fl_med)) us, a ratio of $(ratio "$re_med" "$fl_med");" \
	"pyward mcp's hop (mcp - direct mode): $((mcp_med - di_med)) us"
met=$(awk "BEGIN{print ($mcp_init < 50000) ? \"met\" : \"MISSED\"}")
echo "cold start, spawn to the initialize result: $(ms "$mcp_init")  (goal: under 50 ms: $met)"
echo "spawn to the first python result (a new session's worker starts): $(ms "$(( mcp_init + mcp_first ))")"
