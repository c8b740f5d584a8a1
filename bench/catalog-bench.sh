# Sourced by the catalog benchmarks (history.sh, catalog-open.sh): what they
# share. Sets here, build (BUILD_DIR, default _build), runs (RUNS, default
# 7), py (the pyward built there) and fill (its tests/unit/catalog_fill),
# and exits 2 when they or the sqlite3 shell are missing; catalog_work NAME
# makes the work folder (work, removed at exit) with a box, a workspace and
# a home of its own; filled FILE N leaves FILE holding N operations, two
# attempts each (catalog_fill --bulk), filling it only when it is missing or
# holds another number (a million rows take a minute or two); ms_now and
# median (of numbers on stdin, one a line) time the runs, time_ms CMD...
# prints the wall milliseconds of one run (the page cache written back
# first, output discarded), and interleaved B CMD... times CMD and the
# function B RUNS times each, alternating which goes first, into $work/a and
# $work/b (B empty: CMD alone).
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${RUNS:-7}
py="$build/src/pyward"
fill="$build/tests/unit/catalog_fill"
[ -x "$py" ] && [ -x "$fill" ] || { echo "build first: make && make tests/unit/catalog_fill (in $build)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite3 shell needed (apt-get install sqlite3)" >&2; exit 2; }

catalog_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/pyward-bench-$1.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/box" "$work/ws" "$work/home"
	export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" PYWARD_SYSTEM_CONFIG="$work/none.conf"
	export LC_ALL=C.UTF-8 LANGUAGE=
	unset PYWARD_HOME
}

filled() {
	if [ ! -s "$1" ] || [ "$(sqlite3 -readonly "$1" 'SELECT count(*) FROM operations' 2>/dev/null)" != "$2" ]; then
		rm -f "$1" "$1-wal" "$1-shm"
		echo "filling $1 with $2 operations (two attempts each)..." >&2
		"$fill" "$1" --bulk "$2"
	fi
}

ms_now() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

time_ms() {
	sync
	s=$(ms_now)
	"$@" >/dev/null 2>&1 || true
	e=$(ms_now)
	echo $(((e - s) / 1000000))
}

interleaved() {
	_b=$1
	shift
	: >"$work/a" && : >"$work/b"
	i=0
	while [ $i -lt "$runs" ]; do
		if [ -z "$_b" ]; then
			time_ms "$@" >>"$work/a"
		elif [ $((i % 2)) = 0 ]; then
			time_ms "$_b" >>"$work/b"
			time_ms "$@" >>"$work/a"
		else
			time_ms "$@" >>"$work/a"
			time_ms "$_b" >>"$work/b"
		fi
		i=$((i + 1))
	done
}
