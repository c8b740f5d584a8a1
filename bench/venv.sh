#!/bin/sh
# Environments, timed against their peers in one run:
#   discovery of 50 environments: pyward venv discover  vs  find -name pyvenv.cfg + python -V each
#   creation with a working pip:  pyward venv create    vs  python3 -m venv  vs  virtualenv
# Prints medians and ratios. Usage: BUILD_DIR=_build bench/venv.sh [RUNS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${1:-5}
py="$build/src/pyward"
base=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

now_us() { date +%s%6N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
time_us() { s=$(now_us); "$@" >/dev/null 2>&1; echo $(( $(now_us) - s )); }
ratio() { awk "BEGIN{printf \"%.3f\", $1/$2}"; }

# 50 real environments (without pip, to make them quickly), in two levels.
mkdir -p "$w/ws"
i=0
while [ $i -lt 50 ]; do
	d="$w/ws/proj$((i / 5))/env$i"
	mkdir -p "$(dirname "$d")"
	"$base" -m venv --without-pip "$d"
	i=$((i + 1))
done

peer_discover() {
	for cfg in $(find "$w/ws" -name pyvenv.cfg); do "$(dirname "$cfg")/bin/python" -V; done
}

pd=""; fd=""; pc=""; vc=""; ec=""
i=0
while [ $i -lt "$runs" ]; do
	pd="$pd $(time_us "$py" -C "$w/ws" venv discover --depth 3)"
	fd="$fd $(time_us peer_discover)"
	rm -rf "$w/c1" "$w/c2" "$w/c3"; mkdir -p "$w/c1"
	pc="$pc $(time_us "$py" --box-root "$w/box" -C "$w/c1" venv create --python "$base" e)"
	"$w/c1/e/bin/python" -m pip --version >/dev/null || { echo "pyward's venv has no working pip" >&2; exit 1; }
	vc="$vc $(time_us "$base" -m venv "$w/c2")"
	if command -v virtualenv >/dev/null; then ec="$ec $(time_us virtualenv -q -p "$base" "$w/c3")"; fi
	i=$((i + 1))
done
count=$("$py" -C "$w/ws" venv discover --depth 3 --json | "$base" -c 'import json,sys; print(len(json.load(sys.stdin)["environments"]))')
m() { echo $1 | tr ' ' '\n' | median; }
PD=$(m "$pd") FD=$(m "$fd") PC=$(m "$pc") VC=$(m "$vc")
echo "runs: $runs, medians; base interpreter $base"
echo "discover $count environments: pyward $((PD / 1000)).$((PD % 1000 / 100)) ms  find+python -V $((FD / 1000)) ms  ratio $(ratio "$PD" "$FD")  (goal: under 20 ms)"
echo "create with pip:   pyward $((PC / 1000)) ms  python3 -m venv $((VC / 1000)) ms  ratio $(ratio "$PC" "$VC")"
if [ -n "$ec" ]; then
	EC=$(m "$ec")
	echo "                   virtualenv $((EC / 1000)) ms  ratio pyward/virtualenv $(ratio "$PC" "$EC")  (goal: below 1)"
else
	echo "                   virtualenv: not installed (apt-get install python3-virtualenv)"
fi
