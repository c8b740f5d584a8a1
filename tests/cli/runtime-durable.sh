#!/bin/sh
# A durable swap (issue 18): the new tree is flushed before anything names it
# (every file and folder made in it fdatasync'd/fsync'd, then versions/ fsynced
# after python/ was moved in), the links' folder after the links were renamed,
# and the catalog commits are synced. The order of the system calls is read
# off strace; a flush that fails (injected by strace: EIO from the fsync of
# versions/) refuses the swap.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/cli/commit_fault.sh"
# LeakSanitizer stops a program it finds under ptrace (exit 1): in a
# sanitizer build the traced runs here go without it; the rest of the suite
# still checks for leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
make_world
command -v strace >/dev/null 2>&1 || skip_all "strace is not installed (setup.sh installs it)"
strace -f -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here (ptrace not permitted)"
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/rel1"
A="$WORLD/rel1/cpython-fixture-install_only.tar.gz"
mkdir -p "$WORLD/re" "$WORLD/rel2" "$WORLD/rel3"
tar -xzf "$A" -C "$WORLD/re"
echo '# release 2' > "$WORLD/re/python/RELEASE2"
tar -czf "$WORLD/rel2/a.tar.gz" -C "$WORLD/re" python
echo '# release 3' > "$WORLD/re/python/RELEASE3"
tar -czf "$WORLD/rel3/a.tar.gz" -C "$WORLD/re" python
B="$WORLD/rel2/a.tar.gz" C="$WORLD/rel3/a.tar.gz"
SHA2=$(sha256sum "$B" | cut -d' ' -f1) SHA3=$(sha256sum "$C" | cut -d' ' -f1)
write_pins "$WORLD/p1.tsv" "$VER" 1 "https://localhost:1/a.tar.gz" "$SHA"
write_pins "$WORLD/p2.tsv" "$VER" 2 "https://localhost:1/b.tar.gz" "$SHA2"
write_pins "$WORLD/p3.tsv" "$VER" 3 "https://localhost:1/c.tar.gz" "$SHA3"
BOX="$WORLD/box"
LINKS="$BOX/runtime/python"
TRACE="-f -y -e trace=syncfs,fsync,fdatasync,rename,renameat,renameat2,open,openat,mkdir,mkdirat"
traced() { # LOG ARGS...: pyward under strace
	_log=$1; shift
	# shellcheck disable=SC2086
	run_strace=$(strace $TRACE -o "$_log" "$PYWARD" --box-root "$BOX" -C "$WORLD/ws" "$@" 2>"$WORLD/.err")
	RC=$?
	OUT=$run_strace
	ERR=$(cat "$WORLD/.err")
}
order() { "${PYTHON3:-python3}" "$FIX/durable_order.py" runtime "$1" "$BOX" "$2"; }
plan 26

# ---- the first install: flush, commit, rename current, fsync the folder, commit
traced "$WORLD/t1.log" runtime install --pins "$WORLD/p1.tsv" --archive "$A" --yes -q
is "$RC" 0 "the first install succeeds under strace"
is "$(order "$WORLD/t1.log" install)" "ok" "first install: every file and folder of the tree flushed, then versions/, before it is recorded and linked; folder and catalog synced after"

# ---- a second install: previous, then current, then the folder
traced "$WORLD/t2.log" runtime install --pins "$WORLD/p2.tsv" --archive "$B" --yes -q
is "$RC" 0 "the second install succeeds under strace"
is "$(order "$WORLD/t2.log" swap)" "ok" "second install: flush, commit, previous then current renamed, folder fsynced, catalog synced"
ok "the second release is current" test -e "$LINKS/current/RELEASE2"

# ---- rollback
traced "$WORLD/t3.log" runtime rollback
is "$RC" 0 "rollback succeeds under strace"
is "$(order "$WORLD/t3.log" rollback)" "ok" "rollback: both links renamed, then the folder fsynced, then the catalog synced"
traced "$WORLD/t4.log" runtime rollback
is "$RC" 0 "rolling forward again succeeds"

# ---- a flush that fails refuses the swap: the third install under strace
# with an EIO injected (injected NAME STRACE-OPTIONS...: RC, ERR; strace's
# log in NAME.log); afterwards the links are as before (links_kept) and the
# history says failed (last_install_failed DESCRIPTION).
before=$(readlink "$LINKS/current")
prev_before=$(readlink "$LINKS/previous")
injected() {
	_n=$1; shift
	strace -f -y -o "$WORLD/$_n.log" "$@" \
		"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" runtime install --pins "$WORLD/p3.tsv" --archive "$C" --yes -q \
		>"$WORLD/$_n.out" 2>"$WORLD/$_n.err"
	RC=$?
	ERR=$(cat "$WORLD/$_n.err")
}
links_kept() { is "$(readlink "$LINKS/current") $(readlink "$LINKS/previous")" "$before $prev_before" "current and previous are unchanged"; }
last_install_failed() {
	is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT outcome FROM operations WHERE kind = 'runtime.install' ORDER BY id DESC LIMIT 1")" \
		"failed" "$1"
}
injected f -P "$LINKS/versions" -e trace=fsync -e inject=fsync:error=EIO
is "$RC" 1 "an install whose flush fails (EIO) fails"
like "$ERR" "could not be flushed to disk.*not swapped in" "the error says the tree was not flushed and not swapped in"
like "$ERR" "Input/output error" "the error names the system's reason"
links_kept
is "$(ls "$LINKS/versions" | grep -c -- "-3-")" 0 "the unflushed tree was removed"
is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM pins p JOIN runtimes r ON r.pin_id = p.id WHERE p.sha256 = '$SHA3'")" 0 \
	"no runtime row names the unflushed tree"
last_install_failed "the history records the refused install as failed"

# ---- a file's flush that fails fails the extraction: the tree is removed,
# nothing swapped. strace counts calls per thread: the 20th fdatasync of each
# thread fails, which only the flusher threads reach (~700 files among 16)
injected f2 -e trace=fdatasync -e inject=fdatasync:error=EIO:when=20
is "$RC" 1 "an install where one file's fdatasync fails (EIO) fails"
like "$ERR" "cannot write archive entry 'python/.*Input/output error" "the error names the file and the system's reason"
links_kept
is "$(ls -a "$LINKS/versions" | grep -c -- "-3-\|\.staging")" 0 "neither the tree nor its staging folder is left"
ok "fdatasyncs were failed by strace (only fdatasync is traced)" grep -q 'EIO (Input/output error) (INJECTED)' "$WORLD/f2.log"
last_install_failed "the history records it as failed"

# ---- an install whose outcome's commit cannot be flushed is not reported
# done (ad9367e said installed, exit 0). Its flushes of the catalog's log on
# the main thread, counted in the second install's log (no log was left
# then): the new log's header, the commits, the outcome's, the checkpoint;
# with the log left (commit_unflushable) the outcome's is the count less 2.
n=$(awk -v w="<$BOX/catalog.sqlite3-wal>" 'NR == 1 { p = $1 } $1 == p && /fdatasync\(/ && index($0, w)' \
	"$WORLD/t2.log" | wc -l)
commit_unflushable "$BOX/catalog.sqlite3" $((n - 2)) -C "$WORLD/ws" --json runtime install --pins "$WORLD/p3.tsv" \
	--archive "$C" --yes
is "$RC" 1 "an install whose outcome cannot be recorded exits 1"
like "$ERR" "the runtime was installed in .*, but the catalog could not record it.*I/O error" \
	"the error says it is installed and the catalog did not record it"
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(list(d), d["error"]["exit_status"])')" \
	"['schema', 'error'] 1" "--json: venv create's error shape (the schema, then the error object alone)"
ok "the third release is current: only the outcome's commit failed" test -e "$LINKS/current/RELEASE3"
is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT outcome IS NULL FROM operations WHERE kind = 'runtime.install' ORDER BY id DESC LIMIT 1")" \
	1 "the catalog has no outcome for it"
done_testing
