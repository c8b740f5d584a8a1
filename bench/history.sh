#!/bin/sh
# Time `pyward history` against the sqlite3 shell on the same catalog.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
n=${1:-10000}
runs=${RUNS:-5}
py="$build/src/pyward"
fill="$build/tests/unit/catalog_fill"
[ -x "$py" ] && [ -x "$fill" ] || { echo "build first: ./setup.sh test (or make check in $build)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite3 shell needed (apt-get install sqlite3)" >&2; exit 2; }

box=$(mktemp -d)
trap 'rm -rf "$box"' EXIT
"$fill" "$box/catalog.sqlite3" "$n"

# best-of-N wall time in milliseconds of a command
best_ms() {
	best=""
	i=0
	while [ $i -lt "$runs" ]; do
		s=$(date +%s%N)
		"$@" >/dev/null
		e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
		i=$((i + 1))
	done
	echo "$best"
}

q="SELECT o.id, o.started_at, o.user, o.kind, o.target, o.outcome,
   (SELECT count(*) FROM attempts a WHERE a.operation_id = o.id), o.duration_ms
   FROM operations o ORDER BY o.started_at DESC, o.id DESC"
peer=$(best_ms sqlite3 -readonly "$box/catalog.sqlite3" "$q")
text=$(best_ms "$py" --box-root "$box" history --limit all)
json=$(best_ms "$py" --box-root "$box" history --limit all --json)
rss=$( { /usr/bin/time -f '%M' "$py" --box-root "$box" history --limit all --json >/dev/null; } 2>&1 | tail -n 1 || echo '?')

[ "$peer" -gt 0 ] || peer=1
echo "operations: $n (best of $runs runs)"
echo "sqlite3 shell:          ${peer} ms"
echo "pyward history:         ${text} ms  ratio $(awk "BEGIN{printf \"%.2f\", $text/$peer}")"
echo "pyward history --json:  ${json} ms  ratio $(awk "BEGIN{printf \"%.2f\", $json/$peer}")"
echo "pyward peak RSS (json): ${rss} KiB"
