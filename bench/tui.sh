#!/bin/sh
# The full-screen interface on a pseudo-terminal of 80x24 (TERM=xterm-256color),
# driven by bench/tui_pty.py, with its peers timed the same way in one run:
#   start to the first full frame, with a catalog of N operations (goal < 50 ms)
#     peers: htop, tig (in this checkout), the sqlite3 shell printing the
#     newest screenful of the same catalog
#   peak RSS (goal < 10 MB), CPU and wake-ups while idle for IDLE s (goal 0)
#   bytes written to the terminal per second during a runtime download from
#     a throttled loopback HTTPS server (goal < 4 KB/s)
#     peers: `pyward runtime install` and `curl --progress-bar`, same URL
#
# "Full frame": the bottom row shows pyward's key hints, neither "working:" (a
# start-up job still running) nor a pane's "Reading..." placeholder is on the
# screen, and then nothing is written for QUIET ms; the time is that of the
# last byte before the silence (read from the pty, fed to a screen model).
# "First paint" is the first read after which the hint row is on the screen.
#
# Usage: BUILD_DIR=_build bench/tui.sh [OPERATIONS]
#   RUNS=5 IDLE=10 QUIET=300 DL_SECONDS=8 PEERS_INSTALL=1
# htop and tig are installed with apt-get when missing (as root, unless
# PEERS_INSTALL=0); without them those peers are skipped.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
ops=${1:-100000}
runs=${RUNS:-5}
idle=${IDLE:-10}
quiet=${QUIET:-300}
dl_seconds=${DL_SECONDS:-8}
py="$build/src/pyward"
fill="$build/tests/unit/catalog_fill"
harness="$here/bench/tui_pty.py"
pyth=${PYTHON3:-python3}
[ -x "$py" ] && [ -x "$fill" ] || {
	echo "build first: make && make tests/unit/catalog_fill (in $build)" >&2
	exit 2
}
command -v sqlite3 >/dev/null || { echo "the sqlite3 shell is needed (apt-get install sqlite3)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is needed (apt-get install curl)" >&2; exit 2; }

if [ "${PEERS_INSTALL:-1}" != 0 ] && { ! command -v htop >/dev/null || ! command -v tig >/dev/null; }; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "bench/tui.sh: installing the peers htop and tig with apt-get (PEERS_INSTALL=0 skips this)" >&2
		apt-get install -y -q htop tig >/dev/null 2>&1 ||
			echo "bench/tui.sh: apt-get could not install htop/tig; those peers are skipped" >&2
	else
		echo "bench/tui.sh: htop or tig missing (not root: not installing); those peers are skipped" >&2
	fi
fi

WORLD=$(mktemp -d "${TMPDIR:-/tmp}/pyward-bench-tui.XXXXXX")
PYWARD=$py TOP_SRCDIR=$here
export PYWARD TOP_SRCDIR
. "$here/tests/lib.sh" >/dev/null
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
mkdir -p "$WORLD/home" "$WORLD/xdg" "$WORLD/ws" "$WORLD/box" "$WORLD/empty"
# A private home: no settings, htop and tig configuration of the machine's user.
export HOME="$WORLD/home" XDG_CONFIG_HOME="$WORLD/xdg" XDG_DATA_HOME="$WORLD/home/.local/share"
export PYWARD_SYSTEM_CONFIG="$WORLD/etc-pyward.conf" LC_ALL=C.UTF-8 LANGUAGE=
unset PYWARD_HOME NO_COLOR https_proxy HTTPS_PROXY all_proxy ALL_PROXY 2>/dev/null || true

# ---- the catalog: catalog_fill's four operations through the core API (one a
# runtime.verify, the oldest), then OPS-4 more shaped like its extras (a
# venv.install with one attempt), each newer than the last, in one transaction.
cat="$WORLD/box/catalog.sqlite3"
"$fill" "$cat"
extra=$((ops > 5 ? ops - 4 : 1))
sqlite3 "$cat" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $extra)
INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, uid, host, pid,
                        pyward_version, duration_ms)
SELECT 'venv.install', '/ws/env' || i, 'pyward venv install x',
       strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (i / 1000.0) || ' seconds'),
       strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (i / 1000.0 + 1.5) || ' seconds'),
       'ok', o.user, o.uid, o.host, o.pid, o.pyward_version, 1500
FROM n, (SELECT * FROM operations WHERE id = 1) o;
INSERT INTO attempts (operation_id, seq, argv, exit_code, class, started_at, duration_ms, output_tail)
SELECT id, 1, '/ws/.venv/bin/python -m pip install x', 0, 'ok', started_at, 1500, 'Successfully installed x'
FROM operations WHERE id > 4;
COMMIT;
SQL
got=$(sqlite3 "$cat" "SELECT count(*) FROM operations")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v g="$2" 'BEGIN { if (v == "-") print "not measured"; else if (v + 0 < g + 0) print "meets the goal"; else print "MISSES the goal" }'; }
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "-" }' "$2"; }
kb_mb() { awk -v k="$1" 'BEGIN { if (k == "-" || k < 0) print "-"; else printf "%.1f", k / 1024 }'; }

# frame NAME [harness options] -- ARGV: the harness's figures in $WORLD/NAME.out
frame() {
	name=$1
	shift
	if ! "$pyth" "$harness" frame --quiet "$quiet" --screen "$WORLD/$name.screen" "$@" >"$WORLD/$name.out" 2>"$WORLD/$name.err"; then
		echo "bench/tui.sh: $name: $(cat "$WORLD/$name.out" "$WORLD/$name.err" | head -n 30)" >&2
		return 1
	fi
}

# Not full while a start-up job shows "working:" or the Runtime pane still reads its state.
full='--absent working: --absent Reading'
frame pyward --marker "q quit" --last-row $full --runs "$runs" --idle "$idle" \
	--key 5 --key-screen "$WORLD/history.screen" -- "$py" --box-root "$WORLD/box" -C "$WORLD/ws"
# History pane, '/' filter for a text only the oldest operation has: every row is read.
frame filter --marker "q quit" --last-row $full --runs 1 --key 5 --key / --key verify --key '\r' \
	--key-screen "$WORLD/filter.screen" -- "$py" --box-root "$WORLD/box" -C "$WORLD/ws" || true
frame empty --marker "q quit" --last-row $full --runs "$runs" \
	-- "$py" --box-root "$WORLD/empty" -C "$WORLD/ws"
have_htop=0 have_tig=0
if command -v htop >/dev/null && frame htop --marker "Quit" --last-row --runs "$runs" --idle "$idle" --quit q -- htop; then
	have_htop=1
fi
if command -v tig >/dev/null && [ -d "$here/.git" ] &&
	(cd "$here" && frame tig --marker "[main]" --runs "$runs" --idle "$idle" --quit q -- tig); then
	have_tig=1
fi
q="SELECT o.id, o.started_at, o.user, o.kind, o.outcome,
   (SELECT count(*) FROM attempts a WHERE a.operation_id = o.id), o.target
   FROM operations o ORDER BY o.started_at DESC, o.id DESC LIMIT 20"
"$pyth" "$harness" once --runs "$runs" --screen "$WORLD/sqlite.screen" -- sqlite3 -readonly "$cat" "$q" >"$WORLD/sqlite.out"
# The floor every pyward process starts from: its libraries loaded, start-up done, no screen.
"$pyth" "$harness" once --runs 1 -- "$py" --version >"$WORLD/version.out"

# ---- the download: a runtime archive served at about size/DL_SECONDS bytes a second
set -- $(sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/srv")
ver=$1 sha=$2 size=$3
start_httpsd "$WORLD/srv" >/dev/null
rate=$((size / dl_seconds))
url="https://localhost:$HTTPSD_PORT/slow/$rate/cpython-fixture-install_only.tar.gz"
mkdir -p "$WORLD/data"
write_pins "$WORLD/data/runtime-pins.tsv" "$ver" 1 "$url" "$sha" "$size"
dl_env="--env PYWARD_DATADIR=$WORLD/data --env SSL_CERT_FILE=$CA_PEM"
drive() {
	name=$1
	shift
	if ! "$pyth" "$harness" drive --timeout 120 --screen "$WORLD/$name.screen" "$@" >"$WORLD/$name.out" 2>"$WORLD/$name.err"; then
		echo "bench/tui.sh: $name: $(cat "$WORLD/$name.out" "$WORLD/$name.err" | head -n 30)" >&2
		return 1
	fi
}
# Download pane (2), i, the consent dialog (focus starts on Cancel): Tab to
# "[ Install ]", Enter.
drive dl_tui $dl_env --window-file "$WORLD/dbox1/cache/downloads/*.part" --done "Installed CPython" \
	--step "wait=q quit" --step "send=2" --step "wait=download and install" --step "send=i" \
	--step "wait=Install the managed Python runtime?" --step 'send=\t' --step "wait=[ Install ]" --step 'send=\r' \
	-- "$py" --box-root "$WORLD/dbox1" -C "$WORLD/ws" || true
# A key while the download runs: ? opens the help overlay (goal: within a 100 ms frame).
drive dl_key $dl_env --window-file "$WORLD/dbox3/cache/downloads/*.part" --done "Installed CPython" \
	--step "wait=q quit" --step "send=2" --step "wait=download and install" --step "send=i" \
	--step "wait=Install the managed Python runtime?" --step 'send=\t' --step "wait=[ Install ]" --step 'send=\r' \
	--step "wait=/s   ETA" --step "time=?|next / previous pane" --step 'send=\033' \
	-- "$py" --box-root "$WORLD/dbox3" -C "$WORLD/ws" || true
drive dl_cli $dl_env --window-file "$WORLD/dbox2/cache/downloads/*.part" --quit "" \
	-- "$py" --box-root "$WORLD/dbox2" runtime install --yes || true
drive dl_curl --window-file "$WORLD/curl.out.tar.gz" --quit "" \
	-- curl --progress-bar --cacert "$CA_PEM" -o "$WORLD/curl.out.tar.gz" "$url" || true
stop_httpsd

# ---- the figures
P="$WORLD/pyward.out"
echo "pyward TUI on an 80x24 pseudo-terminal, TERM=xterm-256color; catalog of $got operations"
echo "  $(date -u '+%Y-%m-%d %H:%M UTC'); tree: $(git -C "$here" log -1 --format='%h %s' 2>/dev/null | cut -c1-50)..., $(git -C "$here" status --short 2>/dev/null | wc -l) paths changed since"
echo
echo "start to the first full frame (median of $runs; quiet period $quiet ms):"
pf=$(val frame_ms_median "$P")
printf '  pyward, %s operations:    %7s ms  (first paint %s ms; runs: %s)  goal < 50 ms: %s\n' \
	"$got" "$pf" "$(val paint_ms_median "$P")" "$(val frame_ms_all "$P")" "$(verdict "$pf" 50)"
printf '  pyward, no catalog:         %7s ms  (first paint %s ms)\n' \
	"$(val frame_ms_median "$WORLD/empty.out")" "$(val paint_ms_median "$WORLD/empty.out")"
printf '  sqlite3 shell, newest 20:   %7s ms  ratio pyward / sqlite3: %s\n' \
	"$(val frame_ms_median "$WORLD/sqlite.out")" "$(ratio "$pf" "$(val frame_ms_median "$WORLD/sqlite.out")")"
for peer in htop tig; do
	eval "have=\$have_$peer"
	[ "$have" = 1 ] || continue
	printf '  %-26s  %7s ms  (first paint %s ms)  ratio pyward / %s: %s\n' "$peer:" \
		"$(val frame_ms_median "$WORLD/$peer.out")" "$(val paint_ms_median "$WORLD/$peer.out")" \
		"$peer" "$(ratio "$pf" "$(val frame_ms_median "$WORLD/$peer.out")")"
done
printf '  pyward first frame: %s bytes in %s write() calls\n' "$(val frame_bytes "$P")" "$(val frame_writes "$P")"
printf '  key 5 (History pane) to its full frame: %s ms, %s bytes\n' "$(val key_frame_ms "$P")" "$(val key_frame_bytes "$P")"
printf "  History '/' filter \"verify\" (1 match in %s) to its frame: %s ms (peak RSS then %s MB)\n" "$got" \
	"$(val key_frame_ms "$WORLD/filter.out")" "$(kb_mb "$(val hwm_kb_key "$WORLD/filter.out")")"
echo
echo "peak RSS (VmHWM; after the frame, the History key and the idle period):"
pr=$(val hwm_kb "$P")
printf '  pyward:   %5s MB  (at the first frame %s MB: anon %s MB, file-backed %s MB, PSS %s MB)  goal < 10 MB: %s\n' \
	"$(kb_mb "$pr")" "$(kb_mb "$(val hwm_kb_frame "$P")")" "$(kb_mb "$(val rssanon_kb "$P")")" \
	"$(kb_mb "$(val rssfile_kb "$P")")" "$(kb_mb "$(val pss_kb "$P")")" "$(verdict "$(kb_mb "$pr")" 10)"
printf '  pyward --version (libraries and start-up, no screen): %s MB  (by %s)\n' \
	"$(kb_mb "$(val maxrss_kb "$WORLD/version.out")")" "$(val maxrss_by "$WORLD/version.out")"
printf '  sqlite3:  %5s MB  (by %s)\n' "$(kb_mb "$(val maxrss_kb "$WORLD/sqlite.out")")" \
	"$(val maxrss_by "$WORLD/sqlite.out")"
for peer in htop tig; do
	eval "have=\$have_$peer"
	[ "$have" = 1 ] || continue
	printf '  %-8s  %5s MB  (PSS %s MB)\n' "$peer:" "$(kb_mb "$(val hwm_kb "$WORLD/$peer.out")")" \
		"$(kb_mb "$(val pss_kb "$WORLD/$peer.out")")"
done
echo
echo "idle for $idle s after the frame (CPU from schedstat; wake-ups = context switches; bytes to the terminal):"
pi=$(val idle_cpu_ms "$P")
printf '  pyward: %7s ms CPU (%s ticks), %s wake-ups, %s bytes  goal 0: %s\n' "$pi" "$(val idle_ticks "$P")" \
	"$(val idle_wakeups "$P")" "$(val idle_bytes "$P")" \
	"$(awk -v v="$pi" -v t="$(val idle_ticks "$P")" 'BEGIN { print (t == 0 && v < 1) ? "meets the goal" : "MISSES the goal" }')"
for peer in htop tig; do
	eval "have=\$have_$peer"
	[ "$have" = 1 ] || continue
	o="$WORLD/$peer.out"
	printf '  %-6s  %7s ms CPU (%s ticks), %s wake-ups, %s bytes  ratio pyward / %s: %s\n' "$peer:" \
		"$(val idle_cpu_ms "$o")" "$(val idle_ticks "$o")" "$(val idle_wakeups "$o")" "$(val idle_bytes "$o")" \
		"$peer" "$(ratio "$pi" "$(val idle_cpu_ms "$o")")"
done
echo
echo "bytes to the terminal per second while the .part file exists (archive $size bytes at $rate B/s):"
tb=$(val bytes_per_s "$WORLD/dl_tui.out")
printf '  pyward TUI (Download pane):  %7s B/s  (busiest second %s B, %s s window; peak RSS %s MB)  goal < 4096: %s\n' \
	"$tb" "$(val busiest_second_bytes "$WORLD/dl_tui.out")" "$(val window_s "$WORLD/dl_tui.out")" \
	"$(kb_mb "$(val hwm_kb "$WORLD/dl_tui.out")")" "$(verdict "$tb" 4096)"
printf '  pyward TUI, key ? during the download to the help overlay on the screen: %s ms (goal < 100)\n' \
	"$(val key_latency_ms "$WORLD/dl_key.out")"
printf '  pyward runtime install:      %7s B/s  ratio TUI / CLI: %s\n' "$(val bytes_per_s "$WORLD/dl_cli.out")" \
	"$(ratio "$tb" "$(val bytes_per_s "$WORLD/dl_cli.out")")"
printf '  curl --progress-bar:         %7s B/s  ratio TUI / curl: %s\n' "$(val bytes_per_s "$WORLD/dl_curl.out")" \
	"$(ratio "$tb" "$(val bytes_per_s "$WORLD/dl_curl.out")")"
if [ -n "${SHOW_SCREENS:-}" ]; then
	for s in pyward history filter dl_tui; do
		echo
		echo "--- screen: $s"
		cat "$WORLD/$s.screen" 2>/dev/null || true
	done
fi
