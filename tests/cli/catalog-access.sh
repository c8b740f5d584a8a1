#!/bin/sh
# The catalog's file (issue 13 items 5, 6): created 0640 with the box
# root's group, never reached through a symlink, and readable (history,
# runtime verify) by a user who may read but not write it, and on a
# read-only box. The other user is uid/gid 65534 (nobody) through setpriv,
# in the box's group or not; the read-only box is a read-only bind mount.
# Both need root: without it those parts are skipped.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
MOUNTS=""
cleanup() {
	for m in $MOUNTS; do umount "$m" 2>/dev/null; done
	rm -rf "$WORLD"
}
trap cleanup EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/rel1"
A1="$WORLD/rel1/cpython-fixture-install_only.tar.gz"
write_pins "$WORLD/pins.tsv" "$VER" 1 "https://localhost/rel/1.tar.gz" "$SHA"
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
BOXGID=4242
plan 22

# ---- created 0640, group of the box root
chgrp "$BOXGID" "$BOX" 2>/dev/null || BOXGID=$(stat -c %g "$BOX")
(umask 000 && P runtime install --pins "$WORLD/pins.tsv" --archive "$A1" --yes)
P runtime install --pins "$WORLD/pins.tsv" --archive "$A1" --yes
is "$RC" 0 "a runtime installs (and the catalog is created)"
is "$(stat -c %a "$BOX/catalog.sqlite3")" 640 "the catalog is created 0640, even under umask 000"
is "$(stat -c %g "$BOX/catalog.sqlite3")" "$BOXGID" "with the box root's group"
# an older release's 0644 catalog is narrowed by the next writer
chmod 0644 "$BOX/catalog.sqlite3"
P runtime verify
is "$(stat -c %a "$BOX/catalog.sqlite3")" 640 "a catalog others could read is narrowed to 0640"

# ---- a symlinked catalog is refused, dangling or not
mkdir -p "$WORLD/box2" "$WORLD/outside"
ln -s "$WORLD/outside/catalog.sqlite3" "$WORLD/box2/catalog.sqlite3"
run --box-root "$WORLD/box2" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --archive "$A1" --yes
is "$RC" 3 "a dangling catalog symlink is refused (exit 3)"
like "$ERR" "catalog .*/box2/catalog.sqlite3 is a symbolic link" "the refusal says why"
ok "nothing was created where the link points" test ! -e "$WORLD/outside/catalog.sqlite3"
cp "$BOX/catalog.sqlite3" "$WORLD/outside/real.sqlite3"
ln -sf "$WORLD/outside/real.sqlite3" "$WORLD/box2/catalog.sqlite3"
run --box-root "$WORLD/box2" -C "$WORLD/ws" history
is "$RC" 3 "a catalog symlink to a real catalog is refused for reading too"
ln -sf "$WORLD/outside/real.sqlite3" "$WORLD/box2/catalog.sqlite3-wal"
rm "$WORLD/box2/catalog.sqlite3"
run --box-root "$WORLD/box2" -C "$WORLD/ws" venv create --python "${PYTHON3:-python3}"
like "$ERR" "catalog-wal is a symbolic link|catalog.sqlite3-wal is a symbolic link" "so is a symlinked -wal"

# ---- another user, in the box's group: reads history and verifies
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && [ "$BOXGID" = 4242 ] || {
	skip 13 "another user and a read-only box need root and setpriv"
	done_testing; exit $?
}
chmod 0755 "$WORLD" "$WORLD/home"
mkdir -p "$WORLD/nobody" && chmod 0777 "$WORLD/nobody"
# as_nobody GROUPS ARGS...: pyward as uid 65534 with those supplementary groups
as_nobody() {
	if [ -n "$1" ]; then _g="--groups=$1"; else _g=--clear-groups; fi
	shift
	_o="$WORLD/.out" _e="$WORLD/.err"
	HOME="$WORLD/nobody" XDG_CONFIG_HOME="$WORLD/nobody" XDG_DATA_HOME="$WORLD/nobody" \
		setpriv --reuid=65534 --regid=65534 "$_g" \
		"$PYWARD" --box-root "$BOX" -C "$WORLD/nobody" "$@" >"$_o" 2>"$_e"
	RC=$?
	OUT=$(cat "$_o") ERR=$(cat "$_e")
}
before=$(sha256sum "$BOX/catalog.sqlite3" | cut -d' ' -f1)
as_nobody "$BOXGID" history
is "$RC" 0 "another user in the box's group reads the history"
like "$OUT" "runtime.install" "and sees the recorded operations"
as_nobody "$BOXGID" runtime verify
is "$RC" 0 "another user verifies the runtime"
like "$OUT" "0 modified, 0 mode changed, 0 missing, 0 unexpected" "and gets the verdict"
is "$(sha256sum "$BOX/catalog.sqlite3" | cut -d' ' -f1)" "$before" "reading changed nothing in the catalog"
ok "and left no -shm or -wal owned by that user" sh -c "! find '$BOX' -maxdepth 1 -user 65534 | grep -q ."
as_nobody "" history
is "$RC" 1 "a user outside the box's group cannot read the history"
like "$ERR" "catalog|permission|unable to open" "and is told the catalog cannot be read"

# ---- a read-only box (the box bound read-only over itself: the manifest
# names the install by its path)
if mount --bind "$BOX" "$BOX" 2>/dev/null && MOUNTS="$BOX" &&
	mount -o remount,bind,ro "$BOX" 2>/dev/null; then
	run --box-root "$BOX" -C "$WORLD/ws" history
	is "$RC" 0 "history works on a read-only box"
	like "$OUT" "runtime.install" "and lists the operations"
	run --box-root "$BOX" -C "$WORLD/ws" runtime verify
	is "$RC" 0 "runtime verify works on a read-only box"
	like "$OUT" "0 modified, 0 mode changed, 0 missing, 0 unexpected" "and gives the verdict"
	run --box-root "$BOX" -C "$WORLD/ws" runtime status
	is "$RC" 0 "runtime status works on a read-only box"
else
	skip 5 "a read-only bind mount is not permitted here"
fi

done_testing
