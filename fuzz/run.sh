#!/bin/sh
# Build every fuzz target (fuzz/fuzz_*.c) with clang's libFuzzer, ASan and
# UBSan, then run each for a bounded time over its seed corpus
# (fuzz/corpus/NAME). A target names the core sources it needs on a line
#   /* sources: a.c b.c */
# so adding a parser to the harness is one file and one corpus folder.
#   fuzz/run.sh [SECONDS] [TARGET...]   (default 20 s each, every target)
# BUILD_DIR (default ./_build) provides config.h. New inputs found while
# running go to a scratch folder; crashes are kept in $FUZZ_OUT (default
# BUILD_DIR/fuzz) and make the script fail.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
secs=${1:-20}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-$build/fuzz}
cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "fuzz: $cc not found (./setup.sh deps installs clang)" >&2; exit 1; }
[ -f "$build/config.h" ] || { echo "fuzz: no $build/config.h: build first" >&2; exit 1; }
mkdir -p "$out/obj"
flags="-g -O1 -std=c11 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
incs="-I$here/src/core -I$here/src -I$build $(pkg-config --cflags jansson libcurl libarchive 2>/dev/null)"
libs="$(pkg-config --libs jansson libcrypto) -ldl -lpthread"

targets=${*:-$(cd "$here/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
status=0
for t in $targets; do
	src="$here/fuzz/fuzz_$t.c"
	srcs=$(sed -n 's|^/\* sources: \(.*\) \*/$|\1|p' "$src")
	objs=""
	for s in $srcs; do
		# a bare name is a core source; a front end's names its folder (mcp/reader.c)
		case $s in */*) path="$here/src/$s" ;; *) path="$here/src/core/$s" ;; esac
		o="$out/obj/$(echo "${s%.c}" | tr / _).o"
		if [ ! -f "$o" ] || [ "$path" -nt "$o" ] || [ "$build/config.h" -nt "$o" ]; then
			# shellcheck disable=SC2086
			$cc $flags -fsanitize=fuzzer-no-link $incs -c "$path" -o "$o" || { echo "fuzz: $t: FAILED to build $s"; status=1; continue 2; }
		fi
		objs="$objs $o"
	done
	# shellcheck disable=SC2086
	$cc $flags -fsanitize=fuzzer $incs "$src" $objs $libs -o "$out/fuzz_$t" || { echo "fuzz: $t: FAILED to build"; status=1; continue; }
	work=$(mktemp -d)
	mkdir -p "$out/crashes-$t"
	# Quiet output: the counters line and any finding. Exit code != 0 means a crash, leak or timeout.
	if "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$out/crashes-$t/" "$work" "$here/fuzz/corpus/$t" >"$out/$t.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
		echo "fuzz: $t: ok, ${runs:-?} runs in ${secs}s, $(ls "$work" | wc -l) new inputs"
	else
		echo "fuzz: $t: FAILED (crash inputs in $out/crashes-$t/)"
		grep -E 'ERROR|SUMMARY|runtime error' "$out/$t.log" | head -n 5
		status=1
	fi
	rm -rf "$work"
done
exit $status
