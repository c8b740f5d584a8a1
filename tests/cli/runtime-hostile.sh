#!/bin/sh
# Hostile runtime archives aimed at the installs beside them (issue 13,
# items 1-3): whatever such an archive holds and however its install
# fails, no byte outside its own staging/versions folder changes, and
# `current` and `previous` stay byte-identical (their trees are hashed
# before and after). The archives are pinned by the operator (--pins and
# --archive), so only the extractor and the install stand in their way.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/rel1"
A1="$WORLD/rel1/cpython-fixture-install_only.tar.gz"
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
# pin_for FILE RELEASE: a one-pin table for a local archive
pin_for() { write_pins "$WORLD/pins-$2.tsv" "$VER" "$2" "https://localhost/rel/$2.tar.gz" "$(sha256sum "$1" | cut -d' ' -f1)"; }
# tree_hash DIR...: every path below, with its type, mode, size and content
# (a link's target), never following links
tree_hash() {
	"${PYTHON3:-python3}" - "$@" <<'PY'
import hashlib, os, stat, sys
h = hashlib.sha256()
for top in sys.argv[1:]:
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            st = os.lstat(p)
            h.update(("%s %o %d\n" % (os.path.relpath(p, top), st.st_mode, st.st_size)).encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
print(h.hexdigest())
PY
}
plan 26

# ---- two real installs: previous (release 1) and current (release 2)
mkdir -p "$WORLD/re" "$WORLD/rel2"
tar -xzf "$A1" -C "$WORLD/re" && echo '# release 2' > "$WORLD/re/python/RELEASE2"
A2="$WORLD/rel2/cpython-fixture-install_only.tar.gz"
(cd "$WORLD/re" && tar --owner=0 --group=0 -czf "$A2" python)
pin_for "$A1" 1
pin_for "$A2" 2
P runtime install --pins "$WORLD/pins-1.tsv" --archive "$A1" --yes
is "$RC" 0 "release 1 installs"
P runtime install --pins "$WORLD/pins-2.tsv" --archive "$A2" --yes
is "$RC" 0 "release 2 installs over it"
CUR=$(basename "$(readlink "$BOX/runtime/python/current")")
PREV=$(basename "$(readlink "$BOX/runtime/python/previous")")
mkdir -p "$WORLD/outside" && echo keep > "$WORLD/outside/keep"
before=$(tree_hash "$BOX/runtime" "$WORLD/outside")
cur_before=$(tree_hash "$BOX/runtime/python/versions/$CUR")
prev_before=$(tree_hash "$BOX/runtime/python/versions/$PREV")
P runtime status --json
status_before=$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(d["release"], d["sha256"])')

# ---- each hostile archive is refused and changes nothing
mkdir -p "$WORLD/hostile"
"${PYTHON3:-python3}" "$FIX/make_hostile_runtime.py" "$A1" "$WORLD/hostile" "$CUR" "$PREV" > "$WORLD/hostile/names"
n=10
for name in $(cat "$WORLD/hostile/names"); do
	n=$((n + 1))
	pin_for "$WORLD/hostile/$name.tar.gz" "$n"
	P runtime install --pins "$WORLD/pins-$n.tsv" --archive "$WORLD/hostile/$name.tar.gz" --yes --no-progress
	ok "$name: the install fails" test "$RC" -ne 0
	is "$(tree_hash "$BOX/runtime" "$WORLD/outside")" "$before" "$name: no byte of the box's runtimes (or outside) changed"
	printf '%s\n' "$ERR" | head -n 2 | sed "s/^/# $name: /"
done
is "$(tree_hash "$BOX/runtime/python/versions/$CUR")" "$cur_before" "current is byte-identical after every attempt"
is "$(tree_hash "$BOX/runtime/python/versions/$PREV")" "$prev_before" "previous is byte-identical after every attempt"
P runtime status --json
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(d["release"], d["sha256"])')" \
	"$status_before" "status still shows the current release and its hash"
P runtime verify
is "$RC" 0 "and the current install still verifies clean"

# ---- what the refusals say
P runtime install --pins "$WORLD/pins-11.tsv" --archive "$WORLD/hostile/marker_to_ssl.tar.gz" --yes
like "$ERR" "'python/.pyward-runtime.json' is a symlink pointing outside the archive" \
	"a link out of the new install is named, judged from its python/ folder"
P runtime install --pins "$WORLD/pins-16.tsv" --archive "$WORLD/hostile/own_marker.tar.gz" --yes
like "$ERR" "\.pyward-runtime\.json is already there" "an archive that brings its own marker is refused"
P runtime install --pins "$WORLD/pins-17.tsv" --archive "$WORLD/hostile/hardlink_data.tar.gz" --yes
like "$ERR" "is a hardlink that carries 12 bytes of data" "a hardlink carrying data is refused"

# ---- modes: nothing in an install is writable by group or other
(cd "$WORLD/re" && mkdir -p python/share && chmod 0777 python/bin python/lib && chmod 01777 python/share &&
	chmod 0666 python/RELEASE2 && tar --owner=0 --group=0 -czf "$WORLD/ww.tar.gz" python)
pin_for "$WORLD/ww.tar.gz" 3
P runtime install --pins "$WORLD/pins-3.tsv" --archive "$WORLD/ww.tar.gz" --yes
is "$RC" 0 "an archive with world-writable modes installs"
is "$(find -P "$BOX/runtime/python/current/" ! -type l -perm /022 | wc -l)" 0 \
	"but nothing in it is writable by group or other"
is "$(stat -c %a "$BOX/runtime/python/current/share")" 755 "a 01777 folder becomes 0755"

done_testing
