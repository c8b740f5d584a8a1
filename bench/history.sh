#!/bin/sh
# The history at scale: pyward's history queries timed beside the sqlite3
# shell running the same SQL on the same catalog, in one run.
#
#   catalog: OPERATIONS operations (default 1,000,000), two attempts each,
#   package changes on every venv.install, two years of timestamps, no
#   failed operation (catalog_fill --bulk).
#   queries: the first page; --kind K --since D; show ID; filters that match
#   nothing (--outcome failed, --package NAME, --kind PREFIX., --target
#   TEXT); --target with one matching environment and with many; --package
#   with matches; the History pane's first full frame (bench/tui_pty.py).
#   Goal: every one under 50 ms at a million operations.
#
# Each pair runs RUNS times (default 7), pyward and the shell alternating
# which goes first, the page cache written back before each run; medians
# are printed with the ratio pyward / sqlite3.
# The whole pyward process is timed (start-up included), as is the shell's.
# BENCH_CATALOG=FILE keeps the filled catalog there and reuses it (filling a
# million rows takes a minute or two).
#
# Usage: BUILD_DIR=_build bench/history.sh [OPERATIONS]
set -eu
. "$(dirname "$0")/catalog-bench.sh"
n=${1:-1000000}
pyth=${PYTHON3:-python3}

catalog_work history
cat=${BENCH_CATALOG:-$work/catalog.sqlite3}
filled "$cat" "$n"
# pyward refuses a catalog reached through a symlink: a hard link, or a copy
ln -f "$cat" "$work/box/catalog.sqlite3" 2>/dev/null || cp "$cat" "$work/box/catalog.sqlite3"
# a catalog filled by an older pyward gets this one's schema (the indexes) once, before timing
"$fill" "$work/box/catalog.sqlite3" --open
sync

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) b = 1; printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" 'BEGIN { print (v + 0 < 50 ? "under 50 ms" : "OVER 50 ms") }'; }

P() { "$py" --box-root "$work/box" -C "$work/ws" "$@"; }
S() { sqlite3 -readonly "$cat" "$1"; }
query() { S "$sql"; }

# pair LABEL SQL -- PYWARD-ARGS...: alternate the two, RUNS times each.
pair() {
	label=$1 sql=$2
	shift 3
	interleaved query P "$@"
	a=$(median <"$work/a") b=$(median <"$work/b")
	printf '%-46s %6s ms  %6s ms  %5s  %s\n' "$label" "$a" "$b" "$(ratio "$a" "$b")" "$(verdict "$a")"
}

COLS="o.id, o.kind, o.target, o.args, o.started_at, o.finished_at, o.outcome, o.stop_reason, o.user, o.uid,
 o.host, o.pid, o.pyward_version, o.duration_ms, (SELECT count(*) FROM attempts a WHERE a.operation_id = o.id)"
ORDER="ORDER BY o.started_at DESC, o.id DESC LIMIT 50"
mid=$((n / 2))

echo "operations: $(S 'SELECT count(*) FROM operations'), attempts: $(S 'SELECT count(*) FROM attempts'), package changes: $(S 'SELECT count(*) FROM package_changes')"
echo "file: $(du -h "$cat" | cut -f1); $runs runs each, alternating; medians; whole processes"
printf '%-46s %9s  %9s  %5s\n' "query" "pyward" "sqlite3" "ratio"
floor_a=$(for i in 1 2 3 4 5; do time_ms "$py" --version; done | median)
floor_b=$(for i in 1 2 3 4 5; do time_ms sqlite3 -readonly "$cat" "SELECT 1"; done | median)
printf '%-46s %6s ms  %6s ms  %5s\n' "(start-up floor: --version / SELECT 1)" "$floor_a" "$floor_b" "$(ratio "$floor_a" "$floor_b")"
pair "history (first page)" "SELECT $COLS FROM operations o $ORDER" -- history
pair "history --kind venv.install --since 2026-06-01" \
	"SELECT $COLS FROM operations o WHERE o.kind = 'venv.install' AND o.started_at >= '2026-06-01' $ORDER" \
	-- history --kind venv.install --since 2026-06-01
pair "history show $mid" \
	"SELECT $COLS FROM operations o WHERE o.id = $mid; SELECT * FROM attempts WHERE operation_id = $mid ORDER BY seq; SELECT * FROM package_changes WHERE operation_id = $mid" \
	-- history show "$mid"
pair "history --outcome failed (matches nothing)" "SELECT $COLS FROM operations o WHERE o.outcome = 'failed' $ORDER" \
	-- history --outcome failed
pair "history --package nosuch (matches nothing)" \
	"SELECT $COLS FROM operations o WHERE o.id IN (SELECT operation_id FROM package_changes WHERE name = 'nosuch') $ORDER" \
	-- history --package nosuch
pair "history --kind nosuch. (matches nothing)" \
	"SELECT 1 FROM operations WHERE kind >= 'nosuch.' AND kind < 'nosuch/' LIMIT 1" \
	-- history --kind nosuch.
# --target: the shell runs the walk over the distinct targets, then (with a
# match) one target's newest rows, as pyward does
TARGETS="WITH RECURSIVE t(v) AS (SELECT min(target) FROM operations UNION ALL SELECT (SELECT min(target)
 FROM operations WHERE target > t.v) FROM t WHERE t.v IS NOT NULL) SELECT v FROM t WHERE v IS NOT NULL"
pair "history --target nosuch (matches nothing)" "$TARGETS AND instr(v, 'nosuch') > 0 LIMIT 33" \
	-- history --target nosuch
pair "history --target /srv/ws7/ (one environment)" \
	"$TARGETS AND instr(v, '/srv/ws7/') > 0 LIMIT 33; SELECT $COLS FROM operations o WHERE o.target = '/srv/ws7/.venv' $ORDER" \
	-- history --target /srv/ws7/
pair "history --target ws1 (111 environments)" \
	"SELECT $COLS FROM operations o WHERE instr(o.target, 'ws1') > 0 $ORDER" \
	-- history --target ws1
pair "history --package pkg7" \
	"SELECT $COLS FROM operations o WHERE o.id IN (SELECT operation_id FROM package_changes WHERE name = 'pkg7') $ORDER" \
	-- history --package pkg7
pair "history --since 2026-12-31 --json" "SELECT $COLS FROM operations o WHERE o.started_at >= '2026-12-31' $ORDER" \
	-- history --since 2026-12-31 --json

# The History pane's first full frame (key 5), on an 80x24 pty, beside the
# shell printing the newest screenful.
harness="$here/bench/tui_pty.py"
if "$pyth" "$harness" frame --quiet 300 --marker "q quit" --last-row --absent working: --absent Reading \
	--runs "$runs" --key 5 --key-screen "$work/history.screen" \
	-- "$py" --box-root "$work/box" -C "$work/ws" >"$work/tui.out" 2>"$work/tui.err"; then
	"$pyth" "$harness" once --runs "$runs" --screen "$work/sqlite.screen" \
		-- sqlite3 -readonly "$cat" "SELECT $COLS FROM operations o ORDER BY o.started_at DESC, o.id DESC LIMIT 20" \
		>"$work/sq.out" 2>/dev/null || true
	k=$(awk '$1 == "key_frame_ms" { print $2 }' "$work/tui.out")
	f=$(awk '$1 == "frame_ms_median" { print $2 }' "$work/tui.out")
	s=$(awk '$1 == "frame_ms_median" { print $2; exit }' "$work/sq.out")
	printf '%-46s %6s ms  %6s ms  %5s  %s\n' "TUI: first full frame (start)" "${f:--}" "${s:--}" "$(ratio "${f:-0}" "${s:-1}")" "$(verdict "${f:-999}")"
	printf '%-46s %6s ms  %9s  %5s  %s\n' "TUI: History pane full frame after key 5" "${k:--}" "" "" "$(verdict "${k:-999}")"
else
	echo "TUI frame not measured: $(head -n 5 "$work/tui.err" "$work/tui.out")"
fi
