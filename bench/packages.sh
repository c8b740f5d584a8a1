#!/bin/sh
# Reading an environment's installed distributions: pyward's dist-info
# reader (C, what every package-changing operation runs twice) beside
# Python's importlib.metadata and `pip list`, on an environment of N
# distributions (default 300) made by copying the dist-info folders pip
# wrote for one real wheel (METADATA, RECORD, INSTALLER, WHEEL, and
# direct_url.json for every third), so the files are pip's own.
# Goal: pyward's read under 20 ms at 300 distributions.
#
# Times are per read, inside each process (start-up not counted), RUNS
# reads each (default 15), interleaved; medians, and the first (cold) read.
# Usage: BUILD_DIR=_build bench/packages.sh [DISTRIBUTIONS]
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

cc -O2 -std=c11 -I"$here/src/core" -I"$build" "$here/bench/distinfo_read.c" -o "$w/distinfo_read" \
	"$build/src/core/libpyward.a" $(pkg-config --cflags --libs jansson libcrypto) -lpthread

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
    if i % 3 == 0:
        open(os.path.join(d, "direct_url.json"), "w").write('{"url": "file:///src/%s", "dir_info": {}}' % name)
PY
count=$(ls -d "$site"/*.dist-info | wc -l)
sync

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

# pyward: N reads in one process
"$w/distinfo_read" "$w/env" "$runs" >"$w/pwboth" 2>/dev/null
cut -d' ' -f1 "$w/pwboth" >"$w/pw"
cut -d' ' -f2 "$w/pwboth" >"$w/pwcpu"
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
"$pyth" "$w/im.py" "$site" "$runs" >"$w/imboth"
cut -d' ' -f1 "$w/imboth" >"$w/im"
cut -d' ' -f2 "$w/imboth" >"$w/imcpu"
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

pw_med=$(median <"$w/pw") im_med=$(median <"$w/im") pip_med=$(median <"$w/pip")
pw_cpu=$(median <"$w/pwcpu") im_cpu=$(median <"$w/imcpu")
echo "distributions: $count (one real pip-installed dist-info, copied)"
printf '%-44s %9s ms  (first read %s ms)\n' "pyward dist-info reader (C), median" "$(ms "$pw_med")" "$(ms "$(head -n 1 "$w/pw")")"
printf '%-44s %9s ms  (first read %s ms)  ratio %s\n' "importlib.metadata, same fields, median" "$(ms "$im_med")" \
	"$(ms "$(head -n 1 "$w/im")")" "$(awk -v a="$pw_med" -v b="$im_med" 'BEGIN { printf "%.3f", a / b }')"
printf '%-44s %9s ms  CPU, importlib %s ms CPU  ratio %s\n' "pyward dist-info reader, CPU time, median" "$(ms "$pw_cpu")" \
	"$(ms "$im_cpu")" "$(awk -v a="$pw_cpu" -v b="$im_cpu" 'BEGIN { printf "%.3f", a / b }')"
printf '%-44s %9s ms  ratio %s\n' "pip list --path (whole process), median" "$(ms "$pip_med")" \
	"$(awk -v a="$pw_med" -v b="$pip_med" 'BEGIN { printf "%.4f", a / b }')"
awk -v v="$pw_med" -v c="$pw_cpu" 'BEGIN { print (v < 20000 ? "goal (< 20 ms at 300, wall): met" : "goal (< 20 ms at 300, wall): MISSED (CPU " c / 1000 " ms: see the load)") }'
