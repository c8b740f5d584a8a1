#!/bin/sh
# What one recorded operation costs as the catalog grows: `pyward runtime
# verify` on a box with no runtime (it opens the catalog for writing,
# records one failed operation and closes) on catalogs of 10,000, 100,000
# and 1,000,000 operations (two attempts each, catalog_fill --bulk), timed
# whole process, beside the sqlite3 shell running `PRAGMA quick_check` on
# the same file (what every writing open read until 2026-12-04).
#
# BEFORE=FILE names another pyward binary (an older build) to time beside
# this one: the two alternate, RUNS times each (default 7), on the same
# copy of the catalog, with sync before each run; medians and the ratio
# after / before are printed with the load average at the start of each
# size. BENCH_DIR=DIR keeps the filled catalogs there (a million rows take
# a minute or two to fill and 700 MB).
#
# Usage: BUILD_DIR=_build [BEFORE=old/pyward] bench/catalog-open.sh [SIZES...]
set -eu
. "$(dirname "$0")/catalog-bench.sh"
before=${BEFORE:-}
[ -z "$before" ] || [ -x "$before" ] || { echo "BEFORE=$before is not an executable" >&2; exit 2; }
[ $# -gt 0 ] || set -- 10000 100000 1000000

catalog_work catalog
keep=${BENCH_DIR:-$work}
mkdir -p "$keep"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) b = 1; printf "%.3f", a / b }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
op() { "$1" --box-root "$work/box" -C "$work/ws" runtime verify; }
op_before() { op "$before"; }

echo "pyward runtime verify (one recorded operation), $runs runs each, alternating; medians; whole processes; nice $(nice)"
if [ -n "$before" ]; then
	printf '%-10s %8s %12s %9s %9s %7s  %s\n' operations file "quick_check" before after "a/b" "load (1 5 15)"
else
	printf '%-10s %8s %12s %9s  %s\n' operations file "quick_check" pyward "load (1 5 15)"
fi
for n in "$@"; do
	cat="$keep/c$n.sqlite3"
	filled "$cat" "$n"
	box="$work/box/catalog.sqlite3"
	rm -f "$box" "$box-wal" "$box-shm"
	cp "$cat" "$box"
	"$fill" "$box" --open
	l=$(load)
	qc=$( (sync; s=$(ms_now); sqlite3 "$box" 'PRAGMA quick_check' >/dev/null; e=$(ms_now); echo $(((e - s) / 1000000))) )
	interleaved "${before:+op_before}" op "$py"
	a=$(median <"$work/a")
	size=$(du -h "$box" | cut -f1)
	if [ -n "$before" ]; then
		b=$(median <"$work/b")
		printf '%-10s %8s %9s ms %6s ms %6s ms %7s  %s\n' "$n" "$size" "$qc" "$b" "$a" "$(ratio "$a" "$b")" "$l"
	else
		printf '%-10s %8s %9s ms %6s ms  %s\n' "$n" "$size" "$qc" "$a" "$l"
	fi
	rm -f "$box" "$box-wal" "$box-shm"
done
