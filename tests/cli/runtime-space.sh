#!/bin/sh
# A really full disk: small tmpfs mounts (root only) as a box root, its
# download cache or its runtime folder. A download
# that runs out of space keeps its .part and resumes once there is room; an
# unpack that runs out of space says so in plain words, names the place and
# the next step, leaves no staging folder and does not touch `current`.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
MOUNTS=""
cleanup() {
	stop_httpsd
	for m in $MOUNTS; do umount "$m" 2>/dev/null; done
	rm -rf "$WORLD"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || skip_all "mounting a small tmpfs needs root"
mkdir -p "$WORLD/probe"
mount -t tmpfs -o size=1m tmpfs "$WORLD/probe" 2>/dev/null ||
	skip_all "mount -t tmpfs is not permitted here (a container without CAP_SYS_ADMIN?)"
MOUNTS="$WORLD/probe"

# tmpfs_box DIR SIZE: a fresh tmpfs of SIZE mounted at DIR.
tmpfs_box() {
	mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" && MOUNTS="$1 $MOUNTS"
}

FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
URL="https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz"
plan 22

# ---- the preflight: a known size that cannot fit is refused before any byte moves
tmpfs_box "$WORLD/small" 8m
write_pins "$WORLD/pins.tsv" "$VER" 1 "$URL" "$SHA" "$SIZE"
run --box-root "$WORLD/small" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 1 "the preflight refuses a box root without room"
like "$ERR" "not enough free space in $WORLD/small: [0-9]+ MB needed, [0-9]+ MB free" "and says how much is needed and free"
ok "nothing was downloaded" test -z "$(ls -A "$WORLD/small/cache/downloads" 2>/dev/null)"

# ---- a download that hits ENOSPC keeps its bytes and resumes after more room
# (the cache on its own small disk: the box root's preflight cannot see it fill)
tmpfs_box "$WORLD/dl/cache/downloads" 4m
run --box-root "$WORLD/dl" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 1 "a download into a full disk fails"
like "$ERR" "disk full: no space left to download $URL into $WORLD/dl/cache/downloads/$SHA.tar.gz" \
	"the error says disk full and names the place"
like "$ERR" "hint: free some space on that file system and run the same command again: the download resumes" \
	"the hint gives the next step"
part="$WORLD/dl/cache/downloads/$SHA.tar.gz.part"
kept=$(stat -c %s "$part" 2>/dev/null || echo 0)
ok "the bytes that arrived are kept for resuming" test "$kept" -gt 1000000
like "$ERR" "the $kept bytes that arrived are kept in $part" "the error says how much was kept, and where"
ok "no staging folder is left" test -z "$(ls -d "$WORLD/dl/runtime/python/versions/.staging-"* 2>/dev/null)"
ok "nothing became current" test ! -e "$WORLD/dl/runtime/python/current"
mount -o remount,size=64m "$WORLD/dl/cache/downloads"
run --box-root "$WORLD/dl" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 0 "with room again the install succeeds"
like "$OUT" "resumed from byte $kept" "and resumed where the disk filled up"
ok "the resumed install runs" "$WORLD/dl/runtime/python/current/bin/python3" -c 'import ssl'

# ---- an unpack that runs out of space: current is untouched
# A second release that unpacks 40 MB larger (zeros, which compress to almost
# nothing) than the first, with the runtime folder on a disk with room for
# the first one only.
mkdir -p "$WORLD/big/python/share" "$WORLD/srv/rel/2"
tar -xzf "$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz" -C "$WORLD/big"
head -c 40000000 /dev/zero > "$WORLD/big/python/share/zeros"
(cd "$WORLD/big" && tar --owner=0 --group=0 --numeric-owner -czf "$WORLD/srv/rel/2/big.tar.gz" python)
SHA2=$(sha256sum "$WORLD/srv/rel/2/big.tar.gz" | cut -d' ' -f1)
write_pins "$WORLD/pins2.tsv" "$VER" 2 "https://localhost:$HTTPSD_PORT/rel/2/big.tar.gz" "$SHA2"
tmpfs_box "$WORLD/full/runtime" 40m
run --box-root "$WORLD/full" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 0 "the first release fits"
before=$(readlink "$WORLD/full/runtime/python/current")
run --box-root "$WORLD/full" -C "$WORLD/ws" runtime install --pins "$WORLD/pins2.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 1 "the second release does not fit"
like "$ERR" "disk full: no space left in $WORLD/full/runtime/python/versions to unpack the runtime; nothing was installed and the current runtime was not changed" \
	"the error says disk full in plain words and names the place"
like "$ERR" "hint: free about [0-9]+ MB|hint: free some" "the hint says to free space"
like "$ERR" "run .pyward runtime install. again; the verified archive stays in $WORLD/full/cache/downloads" \
	"the hint says what to run next, and that the download is kept"
is "$(readlink "$WORLD/full/runtime/python/current")" "$before" "current still points at the first release"
ok "and it still runs" "$WORLD/full/runtime/python/current/bin/python3" -c 'import sqlite3'
ok "no staging folder or half install is left" \
	test "$(ls -A "$WORLD/full/runtime/python/versions")" = "$(basename "$before")"
ok "the verified archive of the second release stays cached" test -s "$WORLD/full/cache/downloads/$SHA2.tar.gz"

done_testing
