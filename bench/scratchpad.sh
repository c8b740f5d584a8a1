#!/bin/sh
# The scratchpad, timed against its peers in one run:
#   round trip of N trivial cells (1+1), median and p99:
#     pyward's client protocol (C client -> host -> worker), the same through
#     the CLI (one pyward process per cell), a minimal Python JSON-lines loop
#     over pipes (the floor), and jupyter_client with ipykernel;
#   cold start: the host and first cell, a new session's first cell with the
#     host running, the floor's process, a jupyter kernel.
# Usage: BUILD_DIR=_build bench/scratchpad.sh [N] [CLI_CALLS]
# Needs python3-jupyter-client and python3-ipykernel (installed with apt-get
# when missing and we are root).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
n=${1:-10000}
cli_calls=${2:-300}
py="$build/src/pyward"
base=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
if ! "$base" -c 'import jupyter_client, ipykernel' 2>/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-jupyter-client python3-ipykernel >/dev/null
fi
w=$(mktemp -d)
export XDG_RUNTIME_DIR="$w/rt" PYWARD_WORKER="$here/data/pyward_worker.py"
mkdir -m 700 "$XDG_RUNTIME_DIR"
stop_host() {
	p=$(cat "$XDG_RUNTIME_DIR/pyward/host.pid" 2>/dev/null) || return 0
	kill "$p" 2>/dev/null || true
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}
trap 'stop_host; rm -rf "$w"' EXIT

cc -O2 -std=c11 -I"$here/src/core" -I"$build" "$here/bench/scratch_rtt.c" -o "$w/scratch_rtt" \
	"$build/src/core/libpyward.a" $(pkg-config --cflags --libs jansson libcrypto) -lpthread

now_us() { date +%s%6N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN{printf \"%.2f\", $1/$2}"; }
ms() { awk "BEGIN{printf \"%.1f ms\", $1/1000}"; }

mkdir "$w/ws"
cd "$w/ws"
# host cold start: no host yet; the CLI starts it, then its worker runs 1+1
s=$(now_us)
out=$("$py" python --python "$base" -c '1+1' 2>/dev/null)
host_cold=$(( $(now_us) - s ))
[ "$out" = 2 ] || { echo "pyward python failed" >&2; exit 1; }
# one pyward process per cell
cli=""
i=0
while [ $i -lt "$cli_calls" ]; do
	s=$(now_us)
	"$py" python --python "$base" -c '1+1' >/dev/null 2>&1
	cli="$cli $(( $(now_us) - s ))"
	i=$((i + 1))
done
cli_med=$(echo $cli | tr ' ' '\n' | median)

# pyward and the floor take turns, in 5 rounds of n/5 cells (each round a
# new session and a new floor process), so that the machine's load falls on
# both alike; the figures are the medians over the rounds.
rounds=5
pc="" pm="" pp="" dc="" dm="" dp="" fc="" fm="" fp=""
r=0
while [ $r -lt $rounds ]; do
	set -- $("$w/scratch_rtt" pyward "$py" "$base" $((n / rounds)))
	pc="$pc $1" pm="$pm $2" pp="$pp $3"
	set -- $("$w/scratch_rtt" direct "$py" "$base" $((n / rounds)))
	dc="$dc $1" dm="$dm $2" dp="$dp $3"
	set -- $("$w/scratch_rtt" floor "$base" $((n / rounds)))
	fc="$fc $1" fm="$fm $2" fp="$fp $3"
	r=$((r + 1))
done
m() { echo $1 | tr ' ' '\n' | median; }
pw_cold=$(m "$pc") pw_med=$(m "$pm") pw_p99=$(m "$pp")
di_med=$(m "$dm") di_p99=$(m "$dp")
fl_cold=$(m "$fc") fl_med=$(m "$fm") fl_p99=$(m "$fp")
if "$base" -c 'import jupyter_client, ipykernel' 2>/dev/null; then
	set -- $("$base" "$here/bench/scratch_jupyter.py" "$n" 2>/dev/null)
	ju_cold=$1 ju_med=$2 ju_p99=$3
else
	ju_cold="" ju_med="" ju_p99=""
fi

echo "$n cells of 1+1 each (pyward and the floor: medians of $rounds alternating rounds); interpreter $base"
printf '%-34s %10s %10s %12s\n' "" "median" "p99" "cold start"
printf '%-34s %7s us %7s us %12s\n' "pyward, direct mode (lent pipes)" "$di_med" "$di_p99" "-"
printf '%-34s %7s us %7s us %12s\n' "pyward (C client, host, worker)" "$pw_med" "$pw_p99" "$(ms "$pw_cold")"
printf '%-34s %7s us %10s %12s\n' "pyward CLI (a process per cell)" "$cli_med" "-" "$(ms "$host_cold")"
printf '%-34s %7s us %7s us %12s\n' "floor (python JSON lines on pipes)" "$fl_med" "$fl_p99" "$(ms "$fl_cold")"
[ -n "$ju_med" ] && printf '%-34s %7s us %7s us %12s\n' "jupyter_client + ipykernel" "$ju_med" "$ju_p99" "$(ms "$ju_cold")"
echo "pyward direct median / floor median: $(ratio "$di_med" "$fl_med")  (goal: at most 1.5)"
echo "pyward through the host / floor median: $(ratio "$pw_med" "$fl_med")"
[ -n "$ju_med" ] && echo "jupyter median / pyward direct median: $(ratio "$ju_med" "$di_med"), through the host: $(ratio "$ju_med" "$pw_med")  (goal: at least 20)"
echo "cold start of a session (host running): $(ms "$pw_cold")  (goal: under 50 ms); with the host's own start, through the CLI: $(ms "$host_cold")"
[ -z "$ju_med" ] && echo "jupyter_client/ipykernel: not installed (apt-get install python3-jupyter-client python3-ipykernel)"
exit 0
