# Sourced by the durable tests: an operation whose outcome's commit cannot
# be flushed. The catalog's log is left behind first, as a killed process
# leaves it, so no commit flushes a new log header; then strace injects EIO
# at the WHEN-th flush (fdatasync) of the log on pyward's main thread
# (strace counts per thread; the commits before the outcome's are counted
# in WHEN, and the caller checks which one failed).
# commit_unflushable CATALOG WHEN ARGS...: pyward ARGS; sets RC, OUT, ERR,
# and leaves strace's log in $WORLD/commit.log.
commit_unflushable() {
	_cat=$1 _when=$2
	shift 2
	"${SYS_PY:-${PYTHON3:-python3}}" -c '
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
v = c.execute("PRAGMA user_version").fetchone()[0]
c.execute("PRAGMA user_version = %d" % v)  # one frame in the log
os._exit(0)  # no close: the log stays, as a killed process leaves it
' "$_cat" || return 1
	test -s "$_cat-wal" || return 1
	strace -f -y -o "$WORLD/commit.log" -P "$_cat-wal" -e trace=fdatasync \
		-e "inject=fdatasync:error=EIO:when=$_when" \
		"$PYWARD" --box-root "$BOX" "$@" >"$WORLD/.out" 2>"$WORLD/.err"
	RC=$?
	OUT=$(cat "$WORLD/.out")
	ERR=$(cat "$WORLD/.err")
}
