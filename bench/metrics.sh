#!/bin/sh
# GET /metrics at scale: one scrape of `pyward serve` on a catalog of
# OPERATIONS operations (default 1,000,000, two attempts each, as
# bench/history.sh fills it), this build's server beside a BASE_BUILD's
# server (an older commit) on copies of the same catalog, scrapes
# interleaved, RUNS each (default 5), medians and the ratio. The base reads
# a copy at schema 6 (this build's counters dropped, the rows kept), as a
# catalog it made would be; this build's copy is migrated first, and that
# migration (the counters filled from every row, once) is timed too.
# Without BASE_BUILD only this build is timed.
# Goal: a scrape well under Prometheus's default scrape timeout (10 s) at
# any size; cheap enough to scrape every 15 s.
# BENCH_CATALOG=FILE keeps the fill (a minute or two for a million).
#
# Usage: BUILD_DIR=_build [BASE_BUILD=dir] [RUNS=5] bench/metrics.sh [OPERATIONS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
n=${1:-1000000}
runs=${RUNS:-5}
py="$build/src/pyward"
fill="$build/tests/unit/catalog_fill"
[ -x "$py" ] && [ -x "$fill" ] || { echo "build first: make && make tests/unit/catalog_fill (in $build)" >&2; exit 2; }
base=""
if [ -n "${BASE_BUILD:-}" ]; then
	base="$BASE_BUILD/src/pyward"
	case $base in /*) ;; *) base=$here/$base ;; esac
	[ -x "$base" ] || { echo "no $base" >&2; exit 2; }
fi
for t in sqlite3 curl; do command -v $t >/dev/null || { echo "$t needed" >&2; exit 2; }; done

work=$(mktemp -d "${TMPDIR:-/tmp}/pyward-bench-metrics.XXXXXX")
NEW_PID="" BASE_PID=""
cleanup() {
	[ -n "$NEW_PID" ] && kill "$NEW_PID" 2>/dev/null && wait "$NEW_PID" 2>/dev/null
	[ -n "$BASE_PID" ] && kill "$BASE_PID" 2>/dev/null && wait "$BASE_PID" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" PYWARD_SYSTEM_CONFIG="$work/none.conf"
printf 'audit_log = none\n' > "$PYWARD_SYSTEM_CONFIG"
mkdir -p "$HOME" "$work/new/box" "$work/base/box" "$work/ws"

cat=${BENCH_CATALOG:-$work/catalog.sqlite3}
if [ ! -s "$cat" ] || [ "$(sqlite3 -readonly "$cat" 'SELECT count(*) FROM operations' 2>/dev/null)" != "$n" ]; then
	rm -f "$cat" "$cat-wal" "$cat-shm"
	echo "filling $cat with $n operations (two attempts each)..." >&2
	"$fill" "$cat" --bulk "$n"
fi
# The rows at schema 6, without the counters: what an older pyward made.
cp "$cat" "$work/base/box/catalog.sqlite3"
sqlite3 "$work/base/box/catalog.sqlite3" "DROP TRIGGER IF EXISTS operations_count_insert;
	DROP TRIGGER IF EXISTS operations_count_finish; DROP TRIGGER IF EXISTS attempts_count_insert;
	DROP TRIGGER IF EXISTS operations_count_delete; DROP TRIGGER IF EXISTS last_finished_delete;
	DROP TRIGGER IF EXISTS attempts_count_delete; DROP INDEX IF EXISTS operations_kind_finished;
	DROP TABLE IF EXISTS operation_counts; DROP TABLE IF EXISTS attempt_counts; DROP TABLE IF EXISTS last_finished;
	PRAGMA user_version = 6;"
cp "$work/base/box/catalog.sqlite3" "$work/new/box/catalog.sqlite3"
sync
ms() { date +%s%N; }
s=$(ms)
"$fill" "$work/new/box/catalog.sqlite3" --open
e=$(ms)
migrate_ms=$(((e - s) / 1000000))

# start NAME BINARY: serve on a UNIX socket in NAME's box
start() {
	"$2" --box-root "$work/$1/box" -C "$work/ws" serve --listen "unix:$work/$1.sock" 2> "$work/$1.err" &
	pid=$!
	i=0
	while [ ! -S "$work/$1.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -S "$work/$1.sock" ] || { cat "$work/$1.err" >&2; exit 1; }
}
scrape() { curl -sf -o "$work/$1.txt" -w '%{time_total}\n' --unix-socket "$work/$1.sock" http://localhost/metrics; }
start new "$py"
NEW_PID=$pid
if [ -n "$base" ]; then
	start base "$base"
	BASE_PID=$pid
fi

echo "# GET /metrics, $n operations x 2 attempts; $(nproc) cores; nice $(nice); $(uptime | sed 's/.*load/load/')"
echo "# migration of this build's copy (schema 6 -> 7, counters filled from every row, one transaction): $migrate_ms ms"
: > "$work/new.times"
: > "$work/base.times"
i=0
while [ $i -lt "$runs" ]; do
	if [ $((i % 2)) = 0 ] || [ -z "$base" ]; then
		scrape new >> "$work/new.times"
		[ -z "$base" ] || scrape base >> "$work/base.times"
	else
		scrape base >> "$work/base.times"
		scrape new >> "$work/new.times"
	fi
	echo "# run $((i + 1)): new $(tail -n 1 "$work/new.times") s${base:+, base $(tail -n 1 "$work/base.times") s}; $(cut -d' ' -f1 /proc/loadavg)"
	i=$((i + 1))
done
if [ -n "$base" ]; then
	strip() { grep -v '^pyward_http_\|^pyward_audit_\|^pyward_build_info\|^pyward_jobs_running' "$1"; }
	strip "$work/new.txt" > "$work/new.strip"
	strip "$work/base.txt" > "$work/base.strip"
	if cmp -s "$work/new.strip" "$work/base.strip"; then
		echo "# the two servers' catalog metrics are the same"
	else
		echo "# the two servers' catalog metrics DIFFER:" >&2
		diff "$work/base.strip" "$work/new.strip" | head -n 20 >&2
	fi
fi
command -v promtool >/dev/null && promtool check metrics < "$work/new.txt" && echo "# promtool check metrics: ok"
python3 - "$work/new.times" "$work/base.times" <<'EOF'
import statistics, sys
new = [float(x) * 1000 for x in open(sys.argv[1])]
base = [float(x) * 1000 for x in open(sys.argv[2])]
print("new: median %.1f ms (min %.1f, max %.1f)" % (statistics.median(new), min(new), max(new)))
if base:
    print("base: median %.1f ms (min %.1f, max %.1f)" % (statistics.median(base), min(base), max(base)))
    print("ratio new/base: %.4f" % (statistics.median(new) / statistics.median(base)))
print("goal (under 10 s, Prometheus's default scrape timeout): %s" % ("met" if statistics.median(new) < 10000 else "missed"))
EOF
