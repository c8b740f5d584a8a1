#!/bin/sh
# The guarded extractor alone (no download, no probe): no writer threads
# against the writer pool, and the two ways of making the tree durable
# (one syncfs of the file system against fdatasync of every file by the
# writers and fsync of every folder), on tmpfs and on the disk holding
# TMPDIR, the modes interleaved (bench/extract_flush.c says how).
# Usage: BUILD_DIR=_build bench/extract.sh [RUNS] [WRITERS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${1:-7}
writers=${2:-0}
[ -f "$build/src/core/libpyward.a" ] || { echo "build first (make in $build)" >&2; exit 2; }
w=$(mktemp -d "${TMPDIR:-/tmp}/pyward-bench-extract.XXXXXX")
shm=""
trap 'rm -rf "$w" ${shm:+"$shm"}' EXIT
cc -O2 -std=c11 -I"$here/src/core" -I"$build" "$here/bench/extract_flush.c" -o "$w/extract_flush" \
	"$build/src/core/libpyward.a" $(pkg-config --cflags --libs libcrypto) -ldl -lpthread
stage=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && stage=/dev/shm
FIXTURE_BYTECODE=1 TMPDIR=$stage sh "$here/tests/fixtures/make_runtime_archive.sh" "$w/bc" >/dev/null
a="$w/bc/cpython-fixture-install_only.tar.gz"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(awk '/^(Dirty|Writeback):/ {printf "%s %s kB ", $1, $2}' /proc/meminfo)waiting to be written back"
echo "archive: upstream-like, $(stat -c %s "$a") bytes, $(tar -tzf "$a" | wc -l) entries; writers: ${writers} (0: the default)"
places="$w"
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T "$w")" != tmpfs ]; then
	shm=$(mktemp -d /dev/shm/pyward-bench-extract.XXXXXX)
	places="$shm $w"
fi
for place in $places; do
	mkdir -p "$place/runs"
	echo "on $(stat -f -c %T "$place") ($place), $runs runs:"
	"$w/extract_flush" "$a" "$place/runs" "$runs" "$writers"
	rm -rf "$place/runs"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
