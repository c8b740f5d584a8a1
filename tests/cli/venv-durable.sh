#!/bin/sh
# Durable environments: `venv create` (both routes), `venv install`,
# `venv uninstall` and `venv remove` flush what they made or removed before
# the catalog records them done. The order of the system calls is read off
# strace (tests/fixtures/durable_order.py says what each kind needs);
# a flush that fails (EIO injected by strace) fails the operation, with a
# message saying so, and the history records it as failed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/cli/commit_fault.sh"
# LeakSanitizer stops a program it finds under ptrace (exit 1): in a
# sanitizer build the traced runs here go without it; the rest of the suite
# still checks for leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
pip_world
command -v strace >/dev/null 2>&1 || skip_all "strace is not installed (setup.sh installs it)"
strace -f -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here (ptrace not permitted)"
command -v sqlite3 >/dev/null 2>&1 || skip_all "no sqlite3"
# The real interpreter (the written route caches facts of ELF files only),
# and a wrapper script around it, which takes the `-m venv` route.
BASE=$("$SYS_PY" -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$BASE" ] || skip_all "no python3"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$BASE" > "$WORLD/wrapped-python"
chmod +x "$WORLD/wrapped-python"
BOX="$WORLD/box"
CAT="$BOX/catalog.sqlite3"
FIX="$TOP_SRCDIR/tests/fixtures"
TRACE="-f -y -e trace=syncfs,fsync,fdatasync,open,openat,mkdir,mkdirat,link,linkat,symlink,symlinkat,rename,renameat,renameat2,unlink,unlinkat,rmdir"
traced() { # LOG ARGS...: pyward under strace
	_log=$1; shift
	# shellcheck disable=SC2086
	strace $TRACE -o "$_log" "$PYWARD" --box-root "$BOX" -C "$WS" "$@" >"$WORLD/.out" 2>"$WORLD/.err"
	RC=$?
	OUT=$(cat "$WORLD/.out")
	ERR=$(cat "$WORLD/.err")
}
injected() { # STRACE-OPTIONS... -- ARGS...: pyward with a failure injected
	_o=""
	while [ "$1" != "--" ]; do _o="$_o $1"; shift; done
	shift
	# shellcheck disable=SC2086
	strace -f -o /dev/null $_o "$PYWARD" --box-root "$BOX" -C "$WS" "$@" >"$WORLD/.out" 2>"$WORLD/.err"
	RC=$?
	ERR=$(cat "$WORLD/.err")
}
order() { "$SYS_PY" "$FIX/durable_order.py" venv "$1" "$2" "$3" "$CAT"; }
outcome() { sqlite3 "$CAT" "SELECT outcome FROM operations WHERE kind = '$1' ORDER BY id DESC LIMIT 1"; }
plan 59

# ---- create, written by pyward: the tree flushed, renamed, its folder flushed, then recorded
P venv create --python "$BASE" warm
is "$RC" 0 "an untraced create learns the base and builds the pip image"
mkdir -p "$WS/sub"
traced "$WORLD/fast.log" venv create --python "$BASE" sub/fast
is "$RC" 0 "a written create succeeds under strace"
is "$(order "$WORLD/fast.log" create-fast "$WS/sub/fast")" "ok" \
	"written create: every file and folder pyward made flushed, then renamed into place, the folder fsynced, then the catalog"
is "$(outcome venv.create)" "ok" "the history records it ok"
# The catalog's log (-wal) flushed three times per create: its new header,
# the one commit of the outcome with the package changes (after the tree is
# on disk), the checkpoint at close. The start row's commit is not flushed
# (a process killed later still leaves it; below); 539e54f flushed five.
is "$(grep -c "fdatasync([0-9]*<$CAT-wal>" "$WORLD/fast.log")" 3 \
	"the catalog's log is flushed 3 times in a create, not once per commit"
is "$(sqlite3 "$CAT" "SELECT count(*) FROM package_changes WHERE operation_id = (SELECT max(id) FROM operations) AND env = '$WS/sub/fast'")" 1 \
	"the package change (pip) is recorded with the outcome"

# ---- killed after the rename, before the outcome's commit: the environment
# is on disk, the start row (committed unflushed) says interrupted, and no
# package change is recorded without its outcome
mkdir -p "$WS/kd"
(strace -f -o /dev/null -P "$WS/kd" -e trace=fsync -e inject=fsync:signal=KILL \
	"$PYWARD" --box-root "$BOX" -C "$WS" venv create --python "$BASE" kd/e) >/dev/null 2>&1
ok "a create killed at the fsync after its rename leaves the environment" test -f "$WS/kd/e/pyvenv.cfg"
is "$(sqlite3 "$CAT" "SELECT outcome IS NULL FROM operations WHERE target = '$WS/kd/e'")" "1" \
	"its unflushed start row survived the killed process, with no outcome"
P history --kind venv.create
like "$OUT" "interrupted .*kd/e" "history shows it interrupted"
is "$(sqlite3 "$CAT" "SELECT count(*) FROM package_changes WHERE env = '$WS/kd/e'")" 0 \
	"no package change is recorded without the outcome"

# ---- the outcome's commit cannot be flushed: the create is not reported
# done (commit_unflushable: the log is left, so the start row, on its own
# thread, is appended without a flush and the main thread's first flush of
# the log is the outcome's commit)
commit_unflushable "$CAT" 1 -C "$WS" venv create --python "$BASE" kd/f
is "$RC" 1 "a create whose catalog commit cannot be flushed exits 1"
like "$ERR" "kd/f was made and flushed to disk, but the catalog could not record it.*I/O error" \
	"the error says the environment is on disk and the catalog did not record it"
unlike "$(outcome venv.create)" "^ok$" "the catalog does not say ok"

# ---- the start row cannot be written (EIO on the new log header's flush,
# the first on each thread): it is committed on another thread while the
# tree is made, and the create waits for it before its rename, so nothing
# is left at the target
mkdir -p "$WS/kb"
P venv create --python "$BASE" --seed none kb/warm
ok "a clean create before it leaves no catalog log behind" test ! -e "$CAT-wal"
injected -P "$CAT-wal" -e trace=fdatasync -e inject=fdatasync:error=EIO:when=1 -- venv create --python "$BASE" kb/e
is "$RC" 1 "a create whose start row cannot be recorded fails"
like "$ERR" "catalog .*I/O error" "the error names the catalog"
ok "nothing is left at the target or beside it" test "$(ls -A "$WS/kb")" = warm

# ---- the pip image: flushed when built (its marker says so); one without
# the marker (built by a pyward that did not flush) is flushed before use
IMG=$(ls -d "$BOX"/cache/venv/pip-*/ | head -n 1)
ok "the pip image built above carries its flushed marker" test -f "$IMG/flushed"
rm -f "$IMG/flushed"
traced "$WORLD/unmarked.log" venv create --python "$BASE" sub/fast2
is "$RC" 0 "a create from an image without the marker succeeds"
is "$("$SYS_PY" - "$WORLD/unmarked.log" "$IMG" "$WS/sub" <<'PY'
import os, re, sys
log, img, sub = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
files = set()
for root, dirs, names in os.walk(img + "/site"):
    files.update(os.path.join(root, n) for n in names)
synced, first_link = set(), None
for i, line in enumerate(open(log, errors="replace")):
    # started before the first link: pyward waits for every flush to end
    # (a failed one fails the create), so "unfinished" lines count too
    m = re.search(r"fdatasync\(\d+<([^>]*)>", line)
    if m:
        synced.add(m.group(1))
    if first_link is None and "linkat(" in line and sub in line:
        first_link = len(synced)
        break
print("ok" if files and first_link is not None and files <= synced else
      "%d of %d image files flushed before the first link" % (len(files & synced), len(files)))
PY
)" "ok" "every file of the unmarked image is flushed before anything links to it"
ok "the image carries the marker again" test -f "$IMG/flushed"

# ---- create through `-m venv`: syncfs before the marker goes
traced "$WORLD/slow.log" venv create --python "$WORLD/wrapped-python" --seed none slow --json
is "$RC" 0 "a -m venv create succeeds under strace"
is "$(J 'd["written"]')" "False" "it took the -m venv route"
is "$(order "$WORLD/slow.log" create-venv "$WS/slow")" "ok" \
	"-m venv create: syncfs after the last file, then the marker removed, the folder fsynced, then the catalog"

# ---- install and uninstall: syncfs after pip, before the outcome and the package changes
traced "$WORLD/inst.log" venv install --venv sub/fast --index "$INDEX_ok_URL" 'pwtest-alpha==1.0'
is "$RC" 0 "install succeeds under strace"
is "$(order "$WORLD/inst.log" install "$WS/sub/fast")" "ok" "install: syncfs after pip's last file, then the catalog"
traced "$WORLD/uninst.log" venv uninstall --venv sub/fast pwtest-alpha
is "$RC" 0 "uninstall succeeds under strace"
is "$(order "$WORLD/uninst.log" uninstall "$WS/sub/fast")" "ok" "uninstall: syncfs after pip's last removal, then the catalog"

# ---- remove: the folder that held it fsynced before the record
traced "$WORLD/rm.log" venv remove slow
is "$RC" 0 "remove succeeds under strace"
is "$(order "$WORLD/rm.log" remove "$WS/slow")" "ok" "remove: the folder that held it fsynced after the removal, then the catalog"

# ---- a failing flush fails each operation
mkdir -p "$WS/inj"
injected -P "$WS/inj" -e trace=fsync -e inject=fsync:error=EIO -- venv create --python "$BASE" inj/e
is "$RC" 1 "a written create whose flush fails (EIO) fails"
like "$ERR" "could not be flushed to disk, so .*/inj/e was not created.*Input/output error" \
	"the error says the environment was not flushed, not created, and why"
ok "nothing is left at the target or beside it" test -z "$(ls -A "$WS/inj")"
is "$(outcome venv.create)" "failed" "the history records the create as failed"

# the tree's own flushes (the folders and files the create holds open; the
# catalog uses fdatasync): the first folder's fsync failing
mkdir -p "$WS/inj2"
injected -e trace=fsync -e inject=fsync:error=EIO:when=1 -- venv create --python "$BASE" inj2/e
is "$RC" 1 "a written create whose first fsync in the tree fails (EIO) fails"
like "$ERR" "could not be flushed to disk, so .*/inj2/e was not created.*Input/output error" "the error says so"
ok "nothing is left at the target or beside it" test -z "$(ls -A "$WS/inj2")"

injected -e trace=syncfs -e inject=syncfs:error=EIO -- venv create --python "$WORLD/wrapped-python" --seed none slow2
is "$RC" 1 "a -m venv create whose flush fails (EIO) fails"
like "$ERR" "could not be flushed to disk, so .*/slow2 was not created.*Input/output error" "the error says so"
ok "the half-made environment was removed" test ! -e "$WS/slow2"

injected -e trace=syncfs -e inject=syncfs:error=EIO -- venv install --venv sub/fast --index "$INDEX_ok_URL" 'pwtest-alpha==1.0'
is "$RC" 1 "an install whose flush fails (EIO) fails"
like "$ERR" "could not be flushed to disk, so the install is recorded as failed.*Input/output error" "the error says so"
is "$(outcome venv.install)" "failed" "the history records the install as failed"

injected -e trace=syncfs -e inject=syncfs:error=EIO -- venv uninstall --venv sub/fast pwtest-alpha
is "$RC" 1 "an uninstall whose flush fails (EIO) fails"
like "$ERR" "removal could not be flushed to disk, so it is recorded as failed.*Input/output error" "the error says so"
is "$(outcome venv.uninstall)" "failed" "the history records the uninstall as failed"

# ---- install and uninstall whose outcome's commit cannot be flushed: not
# reported done either (539e54f..ad9367e said ok, exit 0). The main thread's
# flushes of the log: the attempt, the package changes, then the outcome
# (the 3rd); the package changes committed before it show which one failed.
unrecorded() { # KIND WHAT: the checks after commit_unflushable
	is "$RC" 1 "$2 whose outcome cannot be recorded exits 1"
	like "$ERR" "but the catalog could not record it.*I/O error" "the error says the catalog did not record it"
	is "$(outcome "$1")" "" "the catalog has no outcome for it"
	is "$(sqlite3 "$CAT" "SELECT count(*) FROM package_changes WHERE operation_id = (SELECT max(id) FROM operations WHERE kind = '$1')")" 1 \
		"the package change before it was committed: the outcome's commit is the one that failed"
}
commit_unflushable "$CAT" 3 -C "$WS" venv install --venv sub/fast --index "$INDEX_ok_URL" 'pwtest-alpha==1.0'
unrecorded venv.install "an install"
commit_unflushable "$CAT" 3 -C "$WS" --json venv uninstall --venv sub/fast pwtest-alpha
unrecorded venv.uninstall "an uninstall"
is "$(printf '%s' "$OUT" | "$SYS_PY" -c 'import json,sys; d=json.load(sys.stdin); print(list(d), d["error"]["exit_status"], "could not record" in d["error"]["message"])')" \
	"['schema', 'error'] 1 True" "--json: the error shape of a failed create, not a result with an outcome"
P venv install --venv sub/fast --index "$INDEX_ok_URL" 'pwtest-alpha==1.0'
is "$RC" 0 "with the log flushed again, the install goes on as before"

injected -P "$WS" -e trace=fsync -e inject=fsync:error=EIO -- venv remove warm
is "$RC" 1 "a remove whose flush fails (EIO) fails"
like "$ERR" "was removed, but the removal could not be flushed to disk.*Input/output error" "the error says so"
is "$(outcome venv.remove)" "failed" "the history records the remove as failed"
done_testing
