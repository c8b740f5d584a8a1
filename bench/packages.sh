#!/bin/sh
# Reading an environment's installed distributions: pyward's dist-info
# reader (C, what every package-changing operation runs twice) beside
# Python's importlib.metadata and `pip list`, on an environment of N
# distributions (default 300) made by copying the dist-info folders pip
# wrote for one real wheel (METADATA, RECORD, INSTALLER, WHEEL, and
# direct_url.json for every third), so the files are pip's own.
# (Before 2026-12-04 every copy kept the direct_url.json pip wrote for the
# local wheel; BENCH_ALL_DIRECT_URL=1 keeps them, to compare with those runs.)
# Goal: pyward's read under 20 ms at 300 distributions.
#
# Times are per read, inside each process (start-up not counted), RUNS
# reads (default 15) per process, ROUNDS processes each (default 3),
# interleaved; medians, and the first (cold) read of each process.
# Usage: [RUNS=15] [ROUNDS=3] [BASELINE_LIB=OLD/libpyward.a] BUILD_DIR=_build bench/packages.sh [DISTRIBUTIONS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
n=${1:-300}
runs=${RUNS:-15}
pyth=${PYTHON3:-python3}
[ -f "$build/src/core/libpyward.a" ] || { echo "build first (make in $build)" >&2; exit 2; }
w=$(mktemp -d "${TMPDIR:-/tmp}/pyward-bench-packages.XXXXXX")
trap 'rm -rf "$w"' EXIT

cc -O2 -std=c11 -DDISTINFO_REREAD -I"$here/src/core" -I"$build" "$here/bench/distinfo_read.c" -o "$w/distinfo_read" \
	"$build/src/core/libpyward.a" $(pkg-config --cflags --libs jansson libcrypto) -lpthread
# BASELINE_LIB=OTHER/libpyward.a: also time that build's reader, interleaved (an old commit's)
base=${BASELINE_LIB:-}
[ -z "$base" ] || cc -O2 -std=c11 -I"$here/src/core" -I"$build" "$here/bench/distinfo_read.c" -o "$w/distinfo_read_base" \
	"$base" $(pkg-config --cflags --libs jansson libcrypto) -lpthread

# One real environment with one real wheel installed by pip, then N-1 more
# copies of its dist-info under other names.
"$pyth" "$here/tests/fixtures/make_wheels.py" "$w" >/dev/null
"$pyth" -m venv --without-pip "$w/env"
site=$("$w/env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$pyth" -m pip --disable-pip-version-check -q install --no-index --no-deps --target "$site" \
	"$w/wheels/pwtest_alpha-1.1-py3-none-any.whl" >/dev/null 2>&1 ||
	{ echo "pip could not install the test wheel" >&2; exit 1; }
src=$(ls -d "$site"/pwtest_alpha-1.1.dist-info)
"$pyth" - "$site" "$src" "$n" <<'PY'
import os, shutil, sys
site, src, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(1, n):
    name = "bench_pkg_%03d" % i
    d = os.path.join(site, "%s-%d.%d.dist-info" % (name, i % 7, i % 13))
    shutil.copytree(src, d)
    meta = open(os.path.join(d, "METADATA")).read().replace("pwtest-alpha", name.replace("_", "-"))
    meta = meta.replace("Version: 1.1", "Version: %d.%d" % (i % 7, i % 13))
    # a long description body, as real METADATA has, after the headers
    meta += ("Lorem ipsum dolor sit amet, " * 40 + "\n") * 30
    open(os.path.join(d, "METADATA"), "w").write(meta)
    # pip wrote one for the local wheel; an index install writes none
    if i % 3 == 0:
        open(os.path.join(d, "direct_url.json"), "w").write('{"url": "file:///src/%s", "dir_info": {}}' % name)
    elif os.path.exists(os.path.join(d, "direct_url.json")) and os.environ.get("BENCH_ALL_DIRECT_URL") != "1":
        os.remove(os.path.join(d, "direct_url.json"))
PY
count=$(ls -d "$site"/*.dist-info | wc -l)
with_url=$(ls "$site"/*.dist-info/direct_url.json | wc -l)
sync

load0=$(cut -d' ' -f1-3 /proc/loadavg)
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

# importlib.metadata, the standard library's reader: name, version, installer, direct_url.json
cat >"$w/im.py" <<'PY'
import sys, time, importlib.metadata as md
path, runs = [sys.argv[1]], int(sys.argv[2])
for _ in range(runs):
    t0, c0 = time.perf_counter(), time.process_time()
    out = []
    for d in md.distributions(path=path):
        out.append((d.metadata["Name"], d.version, d.read_text("INSTALLER"), d.read_text("direct_url.json")))
    print(int((time.perf_counter() - t0) * 1e6), int((time.process_time() - c0) * 1e6))
PY
# ROUNDS rounds (default 3), the contestants alternating which goes first,
# the page cache written back (sync) before each; each round is a new
# process doing RUNS reads, its first read (cold for the process) kept apart.
# contestant NAME CMD...: one round of NAME, appending to $w/NAME.{wall,cpu,first}
contestant() {
	name=$1
	shift
	sync
	"$@" >"$w/out" 2>/dev/null
	head -n 1 "$w/out" | cut -d' ' -f1 >>"$w/$name.first"
	cut -d' ' -f1 "$w/out" >>"$w/$name.wall"
	cut -d' ' -f2 "$w/out" >>"$w/$name.cpu"
	if [ "$name" = pw ]; then
		cut -d' ' -f3 "$w/out" >>"$w/$name.rewall"
		cut -d' ' -f4 "$w/out" >>"$w/$name.recpu"
	fi
}
rounds=${ROUNDS:-3}
r=0
while [ $r -lt "$rounds" ]; do
	if [ $((r % 2)) = 0 ]; then
		contestant pw "$w/distinfo_read" "$w/env" "$runs"
		[ -z "$base" ] || contestant base "$w/distinfo_read_base" "$w/env" "$runs"
		contestant im "$pyth" "$w/im.py" "$site" "$runs"
	else
		contestant im "$pyth" "$w/im.py" "$site" "$runs"
		[ -z "$base" ] || contestant base "$w/distinfo_read_base" "$w/env" "$runs"
		contestant pw "$w/distinfo_read" "$w/env" "$runs"
	fi
	r=$((r + 1))
done
# pip list (whole process, start-up included: what a tool calling pip pays)
: >"$w/pip"
i=0
while [ $i -lt 5 ]; do
	s=$(date +%s%N)
	"$w/env/bin/python" -c 'import sys' >/dev/null 2>&1
	"$pyth" -m pip --disable-pip-version-check list --path "$site" >/dev/null 2>&1 || true
	e=$(date +%s%N)
	echo $(((e - s) / 1000)) >>"$w/pip"
	i=$((i + 1))
done

pw_med=$(median <"$w/pw.wall") im_med=$(median <"$w/im.wall") pip_med=$(median <"$w/pip")
pw_cpu=$(median <"$w/pw.cpu") im_cpu=$(median <"$w/im.cpu")
pw_first=$(median <"$w/pw.first") im_first=$(median <"$w/im.first")
echo "distributions: $count (one real pip-installed dist-info, copied; $with_url with direct_url.json)"
echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg); nice $(nice)"
echo "$rounds rounds of $runs reads, alternating; medians over every read (first reads: median of the rounds' first)"
printf '%-44s %9s ms  (first read %s ms)\n' "pyward dist-info reader (C), median" "$(ms "$pw_med")" "$(ms "$pw_first")"
printf '%-44s %9s ms  (first read %s ms)  ratio %s\n' "importlib.metadata, same fields, median" "$(ms "$im_med")" \
	"$(ms "$im_first")" "$(awk -v a="$pw_med" -v b="$im_med" 'BEGIN { printf "%.3f", a / b }')"
if [ -n "$base" ]; then
	b_med=$(median <"$w/base.wall") b_cpu=$(median <"$w/base.cpu") b_first=$(median <"$w/base.first")
	printf '%-44s %9s ms  (first read %s ms)  CPU %s ms; this / baseline: wall %s, CPU %s\n' "baseline reader ($base)" \
		"$(ms "$b_med")" "$(ms "$b_first")" "$(ms "$b_cpu")" \
		"$(awk -v a="$pw_med" -v b="$b_med" 'BEGIN { printf "%.3f", a / b }')" \
		"$(awk -v a="$pw_cpu" -v b="$b_cpu" 'BEGIN { printf "%.3f", a / b }')"
fi
printf '%-44s %9s ms  CPU, importlib %s ms CPU  ratio %s\n' "pyward dist-info reader, CPU time, median" "$(ms "$pw_cpu")" \
	"$(ms "$im_cpu")" "$(awk -v a="$pw_cpu" -v b="$im_cpu" 'BEGIN { printf "%.3f", a / b }')"
printf '%-44s %9s ms  CPU %s ms  (the read after an operation: unchanged distributions taken from the read before)\n' \
	"pyward second read (pw_distinfo_reread)" "$(ms "$(median <"$w/pw.rewall")")" "$(ms "$(median <"$w/pw.recpu")")"
printf '%-44s %9s ms  ratio %s\n' "pip list --path (whole process), median" "$(ms "$pip_med")" \
	"$(awk -v a="$pw_med" -v b="$pip_med" 'BEGIN { printf "%.4f", a / b }')"
awk -v v="$pw_med" -v c="$pw_cpu" 'BEGIN { print (v < 20000 ? "goal (< 20 ms at 300, wall): met" : "goal (< 20 ms at 300, wall): MISSED (CPU " c / 1000 " ms: see the load)") }'
