#!/bin/sh
# pyward runtime install (cold cache) against the classic three-pass
# sequence (curl -o; sha256sum; tar -xzf) and Python's tarfile extraction
# with filter="data", all fetching the same archive from the same loopback
# HTTPS server in one run. Prints medians and ratios.
# Usage: BUILD_DIR=_build bench/runtime-install.sh [RUNS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
runs=${1:-5}
py="$build/src/pyward"
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl needed (apt-get install curl)" >&2; exit 2; }

WORLD=$(mktemp -d)
PYWARD=$py TOP_SRCDIR=$here
export PYWARD TOP_SRCDIR
. "$here/tests/lib.sh" >/dev/null
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
set -- $(sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/srv")
ver=$1 sha=$2 size=$3
start_httpsd "$WORLD/srv" >/dev/null
url="https://localhost:$HTTPSD_PORT/cpython-fixture-install_only.tar.gz"
write_pins "$WORLD/pins.tsv" "$ver" 1 "$url" "$sha" "$size"

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

pyward_once() {
	rm -rf "$WORLD/box"
	s=$(now_ms)
	"$py" --box-root "$WORLD/box" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes -q --no-progress
	echo $(( $(now_ms) - s ))
}

classic_once() {
	rm -rf "$WORLD/c" && mkdir -p "$WORLD/c"
	s=$(now_ms)
	curl -sS --cacert "$CA_PEM" -o "$WORLD/c/a.tar.gz" "$url"
	echo "$sha  $WORLD/c/a.tar.gz" | sha256sum -c --quiet -
	tar -xzf "$WORLD/c/a.tar.gz" -C "$WORLD/c"
	echo $(( $(now_ms) - s ))
}

tarfile_py=""
for cand in python3 /usr/bin/python3; do
	if "$cand" -c 'import tarfile; tarfile.data_filter' 2>/dev/null; then tarfile_py=$cand; break; fi
done

tarfile_once() {
	rm -rf "$WORLD/t" && mkdir -p "$WORLD/t"
	s=$(now_ms)
	curl -sS --cacert "$CA_PEM" -o "$WORLD/t/a.tar.gz" "$url"
	"$tarfile_py" - "$WORLD/t/a.tar.gz" "$WORLD/t" "$sha" <<'PY'
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

p=""; c=""; t=""
i=0
while [ $i -lt "$runs" ]; do
	p="$p $(pyward_once)"
	c="$c $(classic_once)"
	[ -n "$tarfile_py" ] && t="$t $(tarfile_once)"
	i=$((i + 1))
done
pm=$(echo $p | tr ' ' '\n' | median)
cm=$(echo $c | tr ' ' '\n' | median)
echo "archive: $size bytes, CPython $ver, $runs runs each, medians"
echo "curl + sha256sum + tar:      ${cm} ms"
echo "pyward runtime install:      ${pm} ms  (includes probe, manifest, catalog, swap)"
echo "ratio pyward / classic:      $(awk "BEGIN{printf \"%.2f\", $pm/$cm}")  (goal <= 0.80)"
if [ -n "$t" ]; then
	tm=$(echo $t | tr ' ' '\n' | median)
	echo "curl + python tarfile(data): ${tm} ms  ratio pyward / tarfile: $(awk "BEGIN{printf \"%.2f\", $pm/$tm}")"
else
	echo "python tarfile filter='data': not available in this Python"
fi
