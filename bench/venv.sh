#!/bin/sh
# Environments, timed against their peers in one run:
#   discovery of 50 environments: pyward venv discover  vs  find -name pyvenv.cfg + python -V each
#   creation with a working pip:  pyward venv create  vs  python3 -m venv  vs  virtualenv (pip only,
#     seeded from its app-data cache)
#   creation without pip:         pyward venv create --seed none  vs  python3 -m venv --without-pip
# Every contestant runs once untimed first (pyward learns the base and builds
# its pip image in the box's cache, virtualenv fills its app-data cache), then
# RUNS rounds; the order of the contestants rotates every round, and the page
# cache is written back (sync) before each timed run. Every run's time is
# printed with the medians and the ratios. All environments go to the disk
# that holds TMPDIR, beside the box (so pyward's pip files are hard links).
# On a shared machine the bench raises its own priority to nice -5 when it
# may (as root; BENCH_NICE=N for another value, BENCH_NICE= to leave it) so
# the contestants are timed rather than the other users' work, and prints
# the load average before and after the runs: wall times under load are
# mostly waiting for a processor and the disk.
# PYWARD_OLD=path/to/pyward adds that build's creates (pw_old_pip, pw_old_none,
# its own box) to the rotation, to time a change against the build before
# it (e.g. what flushing the environment costs) in the same run.
# Usage: BUILD_DIR=_build bench/venv.sh [RUNS]
set -eu
want_nice=${BENCH_NICE--5}
if [ -n "$want_nice" ] && [ "$(nice)" != "$want_nice" ]; then
	renice -n "$want_nice" -p $$ >/dev/null 2>&1 || true
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${1:-11}
py="$build/src/pyward"
base=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
venv_=$(command -v virtualenv || true)

now_us() { date +%s%6N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
time_us() { sync; s=$(now_us); "$@" >/dev/null 2>&1; echo $(( $(now_us) - s )); }
ratio() { awk "BEGIN{printf \"%.3f\", $1/$2}"; }
ms() { awk "BEGIN{printf \"%.1f\", $1/1000}"; }

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

mkdir -p "$w/c"
n=0
# contestant NAME: one creation into a fresh folder
run_one() {
	n=$((n + 1))
	d="$w/c/$1-$n"
	case $1 in
	pw_pip) time_us "$py" --box-root "$w/box" -C "$w/c" venv create --python "$base" "$d" ;;
	pw_none) time_us "$py" --box-root "$w/box" -C "$w/c" venv create --python "$base" --seed none "$d" ;;
	pw_old_pip) time_us "$old" --box-root "$w/box-old" -C "$w/c" venv create --python "$base" "$d" ;;
	pw_old_none) time_us "$old" --box-root "$w/box-old" -C "$w/c" venv create --python "$base" --seed none "$d" ;;
	venv) time_us "$base" -m venv "$d" ;;
	venv_np) time_us "$base" -m venv --without-pip "$d" ;;
	virtualenv) time_us "$venv_" -q --no-setuptools --no-wheel -p "$base" "$d" ;;
	esac
}
names="pw_pip pw_none venv venv_np"
[ -n "$venv_" ] && names="$names virtualenv"
old=${PYWARD_OLD:-}
[ -z "$old" ] || names="$names pw_old_pip pw_old_none"
# warm-up, untimed; and proof that pyward's environments are real
for c in $names; do run_one "$c" >/dev/null; done
"$w/c/pw_pip-1/bin/pip" --version >/dev/null || { echo "pyward's venv has no working pip" >&2; exit 1; }
"$w/c/pw_pip-1/bin/python" -c 'import sys; assert sys.prefix != sys.base_prefix'
[ ! -e "$w/c/pw_none-2/bin/pip" ] || { echo "--seed none made a pip" >&2; exit 1; }

pd=""; fd=""
t_pw_pip=""; t_pw_none=""; t_venv=""; t_venv_np=""; t_virtualenv=""; t_pw_old_pip=""; t_pw_old_none=""
i=0
while [ $i -lt "$runs" ]; do
	pd="$pd $(time_us "$py" -C "$w/ws" venv discover --depth 3)"
	fd="$fd $(time_us peer_discover)"
	# rotate the order: each contestant goes first in turn
	set -- $names
	k=$((i % $#))
	while [ $k -gt 0 ]; do first=$1; shift; set -- "$@" "$first"; k=$((k - 1)); done
	for c in "$@"; do
		t=$(run_one "$c")
		eval "t_$c=\"\$t_$c $t\""
	done
	i=$((i + 1))
done
count=$("$py" -C "$w/ws" venv discover --depth 3 --json | "$base" -c 'import json,sys; print(len(json.load(sys.stdin)["environments"]))')
m() { echo $1 | tr ' ' '\n' | median; }
runs_ms() { for x in $1; do printf ' %s' "$(ms "$x")"; done; }
PD=$(m "$pd") FD=$(m "$fd")
echo "runs: $runs, medians; base interpreter $base; nice $(nice); load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) processors)"
echo "environments on $(stat -f -c %T "$w") ($w)"
echo "discover $count environments: pyward $(ms "$PD") ms  find+python -V $(ms "$FD") ms  ratio $(ratio "$PD" "$FD")  (goal: under 20 ms: $(awk "BEGIN{print ($PD < 20000) ? \"met\" : \"missed\"}"))"
for c in $names; do
	eval "v=\$t_$c"
	echo "  $c runs (ms):$(runs_ms "$v")"
done
PP=$(m "$t_pw_pip") PN=$(m "$t_pw_none") V=$(m "$t_venv") VN=$(m "$t_venv_np")
echo "create with pip:    pyward $(ms "$PP") ms  python3 -m venv $(ms "$V") ms  ratio $(ratio "$PP" "$V")  (aim: ~30 ms: $(awk "BEGIN{print ($PP <= 30000) ? \"met\" : \"missed\"}"))"
if [ -n "$venv_" ]; then
	VE=$(m "$t_virtualenv")
	echo "                    virtualenv (pip only, app-data) $(ms "$VE") ms  ratio pyward/virtualenv $(ratio "$PP" "$VE")  (goal: <= 0.15: $(awk "BEGIN{print ($PP <= 0.15 * $VE) ? \"met\" : \"missed\"}"))"
else
	echo "                    virtualenv: not installed (apt-get install python3-virtualenv)"
fi
echo "create without pip: pyward --seed none $(ms "$PN") ms  python3 -m venv --without-pip $(ms "$VN") ms  ratio $(ratio "$PN" "$VN")  (goal: <= 1: $(awk "BEGIN{print ($PN <= $VN) ? \"met\" : \"missed\"}"))"
if [ -n "$old" ]; then
	OP=$(m "$t_pw_old_pip") ON=$(m "$t_pw_old_none")
	echo "this build against $old: with pip $(ms "$PP") / $(ms "$OP") ms  ratio $(ratio "$PP" "$OP");  --seed none $(ms "$PN") / $(ms "$ON") ms  ratio $(ratio "$PN" "$ON")"
fi
