#!/bin/sh
# pyward runtime install (cold cache) against the classic three-pass
# sequence (curl -o; sha256sum; tar -xzf) and Python's tarfile extraction
# with filter="data", all fetching the same archive from the same loopback
# HTTPS server in one run. Prints medians and ratios, for two archives:
#   upstream-like: the stdlib with its compiled bytecode, as upstream
#     install_only archives ship it (the goal is measured on this one);
#   stripped: the test suite's fixture without bytecode, where pyward's
#     probe (import ssl, sqlite3, venv, ensurepip) must compile ~60
#     modules from source and dominates.
# Every run extracts into a fresh directory and nothing is deleted until
# the end. ext4 will not hand out an inode freed in the last minute or so
# (recently_deleted(), a lookup in the inode table per candidate), so for a
# few minutes after thousands of files were deleted (the previous run of
# this script, the test suite) creating files is several times slower and
# both contestants measure mostly that: let the disk rest between runs, or
# set TMPDIR=/dev/shm to take the disk out of the comparison. The file
# system is printed with the figures.
# Usage: BUILD_DIR=_build bench/runtime-install.sh [RUNS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${1:-5}
py="$build/src/pyward"
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl needed (apt-get install curl)" >&2; exit 2; }

WORLD=$(mktemp -d)
PYWARD=$py TOP_SRCDIR=$here
export PYWARD TOP_SRCDIR
. "$here/tests/lib.sh" >/dev/null
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
mkdir -p "$WORLD/srv"
FIXTURE_BYTECODE=1 sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/bc" > "$WORLD/bc.args"
mv "$WORLD/bc/cpython-fixture-install_only.tar.gz" "$WORLD/srv/upstream-like.tar.gz"
sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/st" > "$WORLD/st.args"
mv "$WORLD/st/cpython-fixture-install_only.tar.gz" "$WORLD/srv/stripped.tar.gz"
start_httpsd "$WORLD/srv" >/dev/null

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

pyward_once() {
	d="$WORLD/runs/p$1"
	s=$(now_ms)
	"$py" --box-root "$d" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes -q --no-progress
	echo $(( $(now_ms) - s ))
}

classic_once() {
	d="$WORLD/runs/c$1" && mkdir -p "$d"
	s=$(now_ms)
	curl -sS --cacert "$CA_PEM" -o "$d/a.tar.gz" "$url"
	echo "$sha  $d/a.tar.gz" | sha256sum -c --quiet -
	tar -xzf "$d/a.tar.gz" -C "$d"
	echo $(( $(now_ms) - s ))
}

tarfile_py=""
for cand in python3 /usr/bin/python3; do
	if "$cand" -c 'import tarfile; tarfile.data_filter' 2>/dev/null; then tarfile_py=$cand; break; fi
done

tarfile_once() {
	d="$WORLD/runs/t$1" && mkdir -p "$d"
	s=$(now_ms)
	curl -sS --cacert "$CA_PEM" -o "$d/a.tar.gz" "$url"
	"$tarfile_py" - "$d/a.tar.gz" "$d" "$sha" <<'PY'
import hashlib, sys, tarfile
path, dest, sha = sys.argv[1:]
h = hashlib.sha256()
with open(path, "rb") as f:
    for block in iter(lambda: f.read(1 << 16), b""):
        h.update(block)
assert h.hexdigest() == sha
with tarfile.open(path) as t:
    t.extractall(dest, filter="data")
PY
	echo $(( $(now_ms) - s ))
}

# bench NAME ARGS GOAL: time the three contestants on srv/NAME.tar.gz,
# interleaved; ARGS names the fixture's "VERSION SHA256 SIZE" file.
bench() {
	name=$1 goal=$3
	set -- $(cat "$WORLD/$2.args")
	ver=$1 sha=$2 size=$3
	url="https://localhost:$HTTPSD_PORT/$name.tar.gz"
	write_pins "$WORLD/pins.tsv" "$ver" 1 "$url" "$sha" "$size"
	rm -f "$WORLD/runs" && ln -s "runs-$name" "$WORLD/runs" && mkdir -p "$WORLD/runs-$name"
	p=""; c=""; t=""
	i=0
	while [ $i -lt "$runs" ]; do
		p="$p $(pyward_once $i)"
		c="$c $(classic_once $i)"
		[ -n "$tarfile_py" ] && t="$t $(tarfile_once $i)"
		i=$((i + 1))
	done
	pm=$(echo $p | tr ' ' '\n' | median)
	cm=$(echo $c | tr ' ' '\n' | median)
	echo "$name archive: $size bytes, $(tar -tzf "$WORLD/srv/$name.tar.gz" | wc -l) entries, CPython $ver, $runs runs each, medians"
	echo "  extracted on $(stat -f -c %T "$WORLD") ($WORLD)"
	echo "  curl + sha256sum + tar:      ${cm} ms"
	echo "  pyward runtime install:      ${pm} ms  (includes probe, manifest, catalog, swap)"
	echo "  ratio pyward / classic:      $(awk "BEGIN{printf \"%.2f\", $pm/$cm}")$goal"
	if [ -n "$t" ]; then
		tm=$(echo $t | tr ' ' '\n' | median)
		echo "  curl + python tarfile(data): ${tm} ms  ratio pyward / tarfile: $(awk "BEGIN{printf \"%.2f\", $pm/$tm}")"
	else
		echo "  python tarfile filter='data': not available in this Python"
	fi
}

bench upstream-like bc "  (goal <= 0.80)"
bench stripped st ""
