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
# the end; the contestants alternate which goes first. ext4 without a
# journal skips an inode freed in the last 30 s or so (recently_deleted(),
# a lookup in the inode table per candidate), so after thousands of files
# were deleted (the previous run of this script, the test suite) creating
# files can be several times slower and both contestants measure mostly
# that. So the whole comparison runs twice: on tmpfs (/dev/shm) when there
# is one, which shows what the tools themselves cost, then on the disk that
# holds TMPDIR. Every run's time is printed with the medians.
# Usage: BUILD_DIR=_build bench/runtime-install.sh [RUNS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
runs=${1:-7}
py="$build/src/pyward"
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl needed (apt-get install curl)" >&2; exit 2; }

WORLD=$(mktemp -d)
PYWARD=$py TOP_SRCDIR=$here
# The peers unpack the runtime only: no document baseline (it needs an index).
PYWARD_BASELINE=
export PYWARD TOP_SRCDIR PYWARD_BASELINE
. "$here/tests/lib.sh" >/dev/null
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
mkdir -p "$WORLD/srv"
# The fixtures' build trees are staged and deleted on tmpfs when there is
# one: thousands of inodes deleted on the disk just before the timing would
# slow file creation for both contestants (see above).
stage_tmp=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && stage_tmp=/dev/shm
FIXTURE_BYTECODE=1 TMPDIR=$stage_tmp sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/bc" > "$WORLD/bc.args"
mv "$WORLD/bc/cpython-fixture-install_only.tar.gz" "$WORLD/srv/upstream-like.tar.gz"
TMPDIR=$stage_tmp sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/st" > "$WORLD/st.args"
mv "$WORLD/st/cpython-fixture-install_only.tar.gz" "$WORLD/srv/stripped.tar.gz"
start_httpsd "$WORLD/srv" >/dev/null

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

# Each run starts with the page cache written back (sync), so no
# contestant pays for what the one before left dirty.
pyward_once() {
	d="$WORLD/runs/p$1"
	sync
	s=$(now_ms)
	"$py" --box-root "$d" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes -q --no-progress
	echo $(( $(now_ms) - s ))
}

classic_once() {
	d="$WORLD/runs/c$1" && mkdir -p "$d"
	sync
	s=$(now_ms)
	curl -sS --cacert "$CA_PEM" -o "$d/a.tar.gz" "$url"
	echo "$sha  $d/a.tar.gz" | sha256sum -c --quiet -
	tar -xzf "$d/a.tar.gz" -C "$d"
	echo $(( $(now_ms) - s ))
}

# The best shell pipeline: one pass, the hash computed beside the
# extraction and checked when both are done (so unlike pyward it extracts
# bytes it has not verified yet).
pipe_once() {
	d="$WORLD/runs/s$1" && mkdir -p "$d"
	sync
	s=$(now_ms)
	bash -c 'set -eo pipefail
		curl -sS --cacert "$1" "$2" | tee >(openssl dgst -sha256 -r > "$3/sum") | bsdtar -xzf - -C "$3"
		wait $!
		[ "$(cut -c1-64 "$3/sum")" = "$4" ]' _ "$CA_PEM" "$url" "$d" "$sha" || echo "pipeline failed" >&2
	echo $(( $(now_ms) - s ))
}
have_pipe=""
command -v bsdtar >/dev/null && command -v bash >/dev/null && have_pipe=1

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

# bench NAME ARGS GOAL PLACE: time the three contestants on
# srv/NAME.tar.gz, interleaved, extracting below PLACE; ARGS names the
# fixture's "VERSION SHA256 SIZE" file.
bench() {
	name=$1 goal=$3 place=$4
	set -- $(cat "$WORLD/$2.args")
	ver=$1 sha=$2 size=$3
	url="https://localhost:$HTTPSD_PORT/$name.tar.gz"
	write_pins "$WORLD/pins.tsv" "$ver" 1 "$url" "$sha" "$size"
	rm -f "$WORLD/runs" && mkdir -p "$place/runs-$name" && ln -s "$place/runs-$name" "$WORLD/runs"
	p=""; c=""; t=""; q=""
	i=0
	# The order alternates, so that neither contestant always runs first
	# (and pays for what the previous one left the disk to do).
	while [ $i -lt "$runs" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			p="$p $(pyward_once $i)"
			c="$c $(classic_once $i)"
		else
			c="$c $(classic_once $i)"
			p="$p $(pyward_once $i)"
		fi
		[ -n "$have_pipe" ] && q="$q $(pipe_once $i)"
		[ -n "$tarfile_py" ] && t="$t $(tarfile_once $i)"
		i=$((i + 1))
	done
	pm=$(echo $p | tr ' ' '\n' | median)
	cm=$(echo $c | tr ' ' '\n' | median)
	echo "$name archive: $size bytes, $(tar -tzf "$WORLD/srv/$name.tar.gz" | wc -l) entries, CPython $ver, $runs runs each, medians"
	echo "  extracted on $(stat -f -c %T "$place") ($place)"
	echo "  runs (ms): pyward$p; classic$c${q:+; pipeline$q}"
	echo "  curl + sha256sum + tar:      ${cm} ms"
	echo "  pyward runtime install:      ${pm} ms  (includes probe, manifest, catalog, swap)"
	echo "  ratio pyward / classic:      $(awk "BEGIN{printf \"%.2f\", $pm/$cm}")$goal"
	if [ -n "$q" ]; then
		qm=$(echo $q | tr ' ' '\n' | median)
		echo "  curl | tee >(openssl dgst) | bsdtar -xzf -, checked: ${qm} ms  ratio pyward / pipeline: $(awk "BEGIN{printf \"%.2f\", $pm/$qm}")  (goal < 1)"
	else
		echo "  pipeline: bsdtar not installed (apt-get install libarchive-tools)"
	fi
	if [ -n "$t" ]; then
		tm=$(echo $t | tr ' ' '\n' | median)
		echo "  curl + python tarfile(data): ${tm} ms  ratio pyward / tarfile: $(awk "BEGIN{printf \"%.2f\", $pm/$tm}")"
	else
		echo "  python tarfile filter='data': not available in this Python"
	fi
}

# On tmpfs when there is one, then on the disk that holds TMPDIR. tmpfs
# takes the disk (and the state earlier deletions left it in) out of the
# comparison, so it shows what the tools themselves cost; it goes first
# because the disk runs leave hundreds of MB for the kernel to write back
# in the background, which takes CPU from whatever runs next.
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(awk '/^(Dirty|Writeback):/ {printf "%s %s kB ", $1, $2}' /proc/meminfo)waiting to be written back"
echo "disk: $(df -h "$WORLD" | awk 'NR==2 {print $1", "$5" used"}'); recent history: what ran before this bench (other users' builds and tests) is not known to it; the runs below show it"
places=$WORLD
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T "$WORLD")" != tmpfs ]; then
	SHM=$(mktemp -d /dev/shm/pyward-bench.XXXXXX)
	trap 'stop_httpsd; rm -rf "$WORLD" "$SHM"' EXIT
	places="$SHM $places"
fi
for place in $places; do
	bench upstream-like bc "  (goal <= 0.60)" "$place"
	bench stripped st "" "$place"
done
