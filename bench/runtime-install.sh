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
# Usage: BUILD_DIR=_build [PYWARD_OLD=OLD/src/pyward] bench/runtime-install.sh [RUNS]
# PYWARD_OLD: an older build's pyward, run right after this one's in every
# round (its own box), with its median and the ratio new/old printed.
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
# The median of the numbers on stdin, one a line; "x" (a failed run) is left out.
median() { grep -v '^x$' | sort -n | awk '{a[NR]=$1} END {print NR ? ((NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)) : "none"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b + 0 > 0 && a != "none") printf "%.2f", a/b; else printf "n/a" }'; }

# Each run starts with the page cache written back (sync), so no
# contestant pays for what the one before left dirty.
pyward_once() { # RUN [BINARY]
	d="$WORLD/runs/p$1${2:+o}"
	sync
	s=$(now_ms)
	PYWARD_STAGE_TIMES=$WORLD/stages${2:+-old} "${2:-$py}" --box-root "$d" runtime install --pins "$WORLD/pins.tsv" \
		--cacert "$CA_PEM" --yes -q --no-progress
	echo $(( $(now_ms) - s ))
}

# pyward's stage marks (PYWARD_STAGE_TIMES, see bench/README.md) over
# the runs: for each mark, the median of its time since pyward started.
stage_medians() {
	[ -s "$1" ] || return 0
	tab=$(printf '\t')
	awk 'NF { t = $1; $1 = ""; $2 = ""; sub(/^  /, ""); print $0 "\t" t }' "$1" |
		sort -t"$tab" -k1,1 -k2,2n |
		awk -F'\t' '{ v[$1] = v[$1] " " $2; c[$1]++ }
			END { for (n in v) { split(substr(v[n], 2), a, " "); printf "    %7.1f  %s\n", a[int((c[n] + 1) / 2)], n } }' |
		sort -n
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
# bytes it has not verified yet). The hashing process substitution is
# opened by the timed shell itself (exec 3>), so $! is its PID and `wait`
# gets its exit status; written inside the pipeline (tee >(...)) it would
# be a child of tee's subshell, which nothing waits for, and the check
# could read the sum file before openssl wrote it.
pipe_once() {
	d="$WORLD/runs/s$1" && mkdir -p "$d"
	sync
	s=$(now_ms)
	bash -c 'set -eo pipefail
		exec 3> >(openssl dgst -sha256 -r > "$3/sum"); hasher=$!
		curl -sS --cacert "$1" "$2" | tee /dev/fd/3 | bsdtar -xzf - -C "$3"
		exec 3>&-
		wait "$hasher"
		[ "$(cut -c1-64 "$3/sum")" = "$4" ]' _ "$CA_PEM" "$url" "$d" "$sha" || {
		echo "pipeline run $1 failed (left out of the median)" >&2
		echo x
		return
	}
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
	rm -f "$WORLD/runs" "$WORLD/stages" && mkdir -p "$place/runs-$name" && ln -s "$place/runs-$name" "$WORLD/runs"
	p=""; c=""; t=""; q=""; o=""
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
		[ -n "${PYWARD_OLD:-}" ] && o="$o $(pyward_once $i "$PYWARD_OLD")"
		[ -n "$have_pipe" ] && q="$q $(pipe_once $i)"
		[ -n "$tarfile_py" ] && t="$t $(tarfile_once $i)"
		i=$((i + 1))
	done
	pm=$(echo $p | tr ' ' '\n' | median)
	cm=$(echo $c | tr ' ' '\n' | median)
	qm=none
	[ -n "$q" ] && qm=$(echo $q | tr ' ' '\n' | median)
	fs=$(stat -f -c %T "$place")
	[ "$fs" = ext2/ext3 ] && fs=ext4
	echo "$name archive: $size bytes, $(tar -tzf "$WORLD/srv/$name.tar.gz" | wc -l) entries, CPython $ver, $runs runs each, medians"
	echo "  extracted on $fs ($place); load average now $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "  runs (ms): pyward$p; classic$c${q:+; pipeline$q}${t:+; tarfile$t}${o:+; pyward-old$o}"
	echo "  curl + sha256sum + tar:      ${cm} ms"
	echo "  pyward runtime install:      ${pm} ms  (includes probe, manifest, catalog, durable swap)"
	if [ -n "$o" ]; then
		om=$(echo $o | tr ' ' '\n' | median)
		echo "  pyward (old build, $PYWARD_OLD): ${om} ms  ratio new / old: $(ratio "$pm" "$om")"
	fi
	echo "  pyward's stages, medians of the ms since it started:"
	stage_medians "$WORLD/stages"
	echo "  ratio pyward / classic:      $(ratio "$pm" "$cm")$goal"
	if [ -n "$q" ]; then
		echo "  curl | tee >(openssl dgst) | bsdtar -xzf -, checked: ${qm} ms  ratio pyward / pipeline: $(ratio "$pm" "$qm")  (goal < 1)"
	else
		echo "  pipeline: bsdtar not installed (./setup.sh bench-deps)"
	fi
	if [ -n "$t" ]; then
		tm=$(echo $t | tr ' ' '\n' | median)
		echo "  curl + python tarfile(data): ${tm} ms  ratio pyward / tarfile: $(ratio "$pm" "$tm")"
	else
		echo "  python tarfile filter='data': not available in this Python"
	fi
	printf '%-14s %-6s %8s %8s %9s %9s %10s\n' "$name" "$fs" "$pm" "$cm" "$qm" "$(ratio "$pm" "$cm")" \
		"$(ratio "$pm" "$qm")" >> "$WORLD/summary"
}

# What the disk did just before the bench, so a reader can judge the runs:
# the sectors written and the time the device was busy over 5 s (from
# /proc/diskstats), and what is dirty or being written back now. Creating
# files on this VM's ext4 is much slower for minutes after mass deletions
# (see above), which no counter shows directly; the runs themselves do.
disk_history() {
	dev=$(df --output=source "$WORLD" | awk 'NR==2 {sub("/dev/", ""); print}')
	sample() { awk -v d="$dev" '$3 == d {print $10, $13}' /proc/diskstats; }
	set -- $(sample)
	sleep 5
	s2=$(sample)
	set -- "$@" $s2
	if [ $# -eq 4 ]; then
		echo "disk $dev over the 5 s before the bench: $(( ($3 - $1) / 2048 )) MiB written, busy $(( ($4 - $2) / 50 ))% of the time"
	else
		echo "disk $dev: no /proc/diskstats line (its recent history is not known)"
	fi
}
# On tmpfs when there is one, then on the disk that holds TMPDIR. tmpfs
# takes the disk (and the state earlier deletions left it in) out of the
# comparison, so it shows what the tools themselves cost; it goes first
# because the disk runs leave hundreds of MB for the kernel to write back
# in the background, which takes CPU from whatever runs next.
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(awk '/^(Dirty|Writeback):/ {printf "%s %s kB ", $1, $2}' /proc/meminfo)waiting to be written back"
echo "disk: $(df -h "$WORLD" | awk 'NR==2 {print $1", "$5" used"}'); $(disk_history)"
echo "recent history: the fixtures were built and deleted on tmpfs; no tree is deleted between runs (all at the end)"
places=$WORLD
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T "$WORLD")" != tmpfs ]; then
	SHM=$(mktemp -d /dev/shm/pyward-bench.XXXXXX)
	trap 'stop_httpsd; rm -rf "$WORLD" "$SHM"' EXIT
	places="$SHM $places"
fi
: > "$WORLD/summary"
for place in $places; do
	bench upstream-like bc "  (goal <= 0.60)" "$place"
	bench stripped st "" "$place"
done
echo "summary (medians in ms; goal on upstream-like: pyward/classic <= 0.60 and pyward/pipeline < 1):"
printf '%-14s %-6s %8s %8s %9s %9s %10s\n' archive fs pyward classic pipeline "p/classic" "p/pipeline"
cat "$WORLD/summary"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
