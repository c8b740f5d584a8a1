# TAP helpers for pyward's shell tests. Each test script sources this file,
# calls plan N, then ok/is/like, and ends with done_testing.
# Environment from the harness: PYWARD (the binary), TOP_SRCDIR, TOP_BUILDDIR.

set -u
: "${PYWARD:?run through make check (PYWARD unset)}"
_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }

_tap_result() { # status description
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
}

ok() { # description command...
	_d=$1; shift
	if "$@" >/dev/null 2>&1; then _tap_result 0 "$_d"; else _tap_result 1 "$_d"; fi
}

is() { # actual expected description
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" | head -n 40
	fi
}

like() { # text extended-regex description
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   text did not match /%s/:\n' "$2"
		printf '%s\n' "$1" | head -n 20 | sed 's/^/#   /'
	fi
}

unlike() { # text extended-regex description
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 1 "$3"
		printf '#   text matched /%s/\n' "$2"
	else
		_tap_result 0 "$3"
	fi
}

skip_all() { echo "1..0 # SKIP $1"; exit 0; }

# A private world for one test: box root, workspace, config dirs.
make_world() {
	WORLD=$(mktemp -d "${TMPDIR:-/tmp}/pyward-test.XXXXXX")
	mkdir -p "$WORLD/box" "$WORLD/ws" "$WORLD/home" "$WORLD/xdg-config"
	export HOME="$WORLD/home" XDG_CONFIG_HOME="$WORLD/xdg-config" XDG_DATA_HOME="$WORLD/home/.local/share"
	export PYWARD_SYSTEM_CONFIG="$WORLD/etc-pyward.conf"
	unset PYWARD_HOME
	export LC_ALL=C.UTF-8 LANGUAGE=
	trap 'rm -rf "$WORLD"' EXIT
}

# Run pyward, keeping stdout in OUT, stderr in ERR and the exit status in RC.
run() {
	_o="$WORLD/.out" _e="$WORLD/.err"
	"$PYWARD" "$@" >"$_o" 2>"$_e"
	RC=$?
	OUT=$(cat "$_o")
	ERR=$(cat "$_e")
}

done_testing() {
	[ "$_tap_failed" -eq 0 ]
}
