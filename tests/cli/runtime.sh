#!/bin/sh
# The managed runtime end to end: a relocatable CPython archive built from this
# machine's interpreter, served over HTTPS on loopback with a CA made here.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/srv/rel/1"
ARCH="$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
URL="https://localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz"
BOX="$WORLD/box"
PY="$BOX/runtime/python/current/bin/python3"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
PY3=${PYTHON3:-python3}
write_pins "$WORLD/pins.tsv" "$VER" 1 "$URL" "$SHA" "$SIZE"
plan 103

# ---- before anything is installed
P runtime status
is "$RC" 0 "status of a fresh box exits 0"
like "$OUT" "not provisioned .* install it with 'pyward runtime install'" "status says exactly what to do"
P exec -c 'print(1)'
is "$RC" 3 "exec without a runtime is refused (exit 3)"
like "$ERR" "not provisioned" "the refusal says why"
like "$ERR" "hint: install it with 'pyward runtime install'" "the refusal says how"

PYWARD_TEST_MACHINE=riscv64 P runtime install --yes
is "$RC" 3 "an unsupported platform is refused"
like "$ERR" "supported: x86_64-unknown-linux-gnu" "the refusal names the supported platforms"

P runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" </dev/null
is "$RC" 3 "no terminal and no --yes: refused"
like "$ERR" "needs consent" "the refusal mentions consent"
ok "nothing was installed without consent" test ! -e "$BOX/runtime/python/current"

P runtime install --pins "$WORLD/pins.tsv" --dry-run
is "$RC" 0 "--dry-run exits 0"
like "$OUT" "sha256: $SHA" "--dry-run shows the pinned hash"
like "$OUT" "from: +$URL" "--dry-run shows where from"
ok "--dry-run downloads nothing" test ! -e "$BOX/cache/downloads/$SHA.tar.gz"
unlike "$OUT" "now:" "with nothing installed the plan says nothing of what is there now"

P --mode read-only runtime install --pins "$WORLD/pins.tsv" --yes
is "$RC" 3 "read-only mode refuses an install"

# ---- TLS trust and HTTP errors
P runtime install --pins "$WORLD/pins.tsv" --yes --no-progress
is "$RC" 1 "a server signed by an unknown CA fails"
like "$ERR" "--cacert" "the untrusted-certificate error suggests --cacert"
write_pins "$WORLD/pins404.tsv" "$VER" 1 "https://localhost:$HTTPSD_PORT/status/404/rel/1/x.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pins404.tsv" --cacert "$CA_PEM" --yes
is "$RC" 1 "a 404 fails"
like "$ERR" "404" "the error names the HTTP status"

# ---- wrong hash: nothing installed, the bad file removed
BAD=0000000000000000000000000000000000000000000000000000000000000000
write_pins "$WORLD/pinsbad.tsv" "$VER" 1 "$URL" "$BAD"
P runtime install --pins "$WORLD/pinsbad.tsv" --cacert "$CA_PEM" --yes
is "$RC" 1 "a hash mismatch fails"
like "$ERR" "$BAD" "the mismatch shows the expected hash"
like "$ERR" "$SHA" "the mismatch shows the actual hash"
ok "the mismatching download was removed" test ! -e "$BOX/cache/downloads/$BAD.tar.gz" -a ! -e "$BOX/cache/downloads/$BAD.tar.gz.part"
ok "nothing was installed after a mismatch" test ! -e "$BOX/runtime/python/current"

# ---- the real install (with the benches' stage marks: bench/README.md)
export PYWARD_STAGE_TIMES="$WORLD/stages"
P runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes
unset PYWARD_STAGE_TIMES
is "$RC" 0 "install exits 0"
# Nothing of the archive runs before its digest matched, and nothing names
# the tree before it is flushed and probed: the marks' order says so.
stage_order=$(python3 - "$WORLD/stages" <<'PY'
import sys
t = {}
for line in open(sys.argv[1]):
    if line.strip():
        ms, _, name = line.strip().split(" ", 2)
        t.setdefault(name, float(ms))
need = ["download: done, digest checked", "stream verified", "probe: start", "probe: done",
        "flush: versions/ fsynced", "record: committed", "swap: links renamed"]
missing = [n for n in need if n not in t]
if missing:
    print("missing", missing)
elif not (t[need[0]] <= t[need[1]] <= t[need[2]] <= t[need[3]] <= t[need[5]] <= t[need[6]]
          and t[need[4]] <= t[need[5]]):
    print("out of order", [(n, t[n]) for n in need])
else:
    print("ok")
PY
)
is "$stage_order" "ok" "stage marks: probe after the digest and the stream matched the pin, links renamed after flush, probe and commit"
unlike "$OUT$ERR" "probe: |download: " "the stage marks go to their file only, not to the terminal"
like "$OUT" "installed CPython $VER" "install says what it installed"
is "$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>&1)" "$VER" "current/bin/python3 runs"
P runtime status --json
st=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d["version"], d["sha256"] == sys.argv[1], d["source_url"] == sys.argv[2])' "$SHA" "$URL")
is "$st" "installed $VER True True" "status --json reports the install, its hash and source"
P runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes
is "$RC" 0 "a second install exits 0"
like "$OUT" "already installed" "a second install is idempotent"
P runtime install --pins "$WORLD/pins.tsv" --dry-run
like "$OUT" "now: +this release is installed and current: nothing is downloaded or changed" \
	"the consent of a second install says the release is already there"

P history --kind runtime.install --json
hist=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(" ".join(o["outcome"] for o in json.load(sys.stdin)["operations"]))')
is "$hist" "ok ok failed failed failed refused" "every install that got past the policy gate is in the history"
id=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"][1]["id"])')
P history show "$id"
like "$OUT" "index: +$URL" "history show names the download URL"

# ---- verify like rpm -V
P runtime verify
is "$RC" 0 "verify of an untouched install exits 0"
like "$OUT" "0 modified, 0 mode changed, 0 missing, 0 unexpected" "verify reports no differences"
P runtime verify --format rpm
is "$RC:$OUT" "0:" "verify --format rpm prints nothing when everything matches"
real=$(readlink -f "$BOX/runtime/python/current")
echo "# changed" >> "$real/lib/python${VER%.*}/os.py"
rm "$real/lib/python${VER%.*}/colorsys.py"
touch "$real/lib/python${VER%.*}/intruder.py"
"$PY" -c 'import colorsys, fractions' 2>/dev/null
P runtime verify
is "$RC" 1 "verify after tampering exits 1"
like "$OUT" "modified +lib/python${VER%.*}/os.py" "verify names the modified file"
like "$OUT" "missing +lib/python${VER%.*}/colorsys.py" "verify names the missing file"
like "$OUT" "unexpected +lib/python${VER%.*}/intruder.py" "verify names the unexpected file"
unlike "$OUT" "__pycache__" "new bytecode caches from normal use are not reported as changes"
P runtime verify --format rpm
is "$RC" 1 "verify --format rpm after tampering exits 1"
is "$(printf '%s\n' "$OUT" | sort)" "$(printf '%s\n' "S.5..????    $real/lib/python${VER%.*}/os.py" \
	"missing     $real/lib/python${VER%.*}/colorsys.py" "unexpected  $real/lib/python${VER%.*}/intruder.py" | sort)" \
	"verify --format rpm prints rpm -V's lines with absolute paths"

# ---- exec
P exec -c 'print(6 * 7)'
is "$OUT" "42" "exec runs code in the managed runtime"
P exec -c 'raise SystemExit(7)'
is "$RC" 7 "exec passes the exit status through"
MY_SECRET_TOKEN=hunter2 P exec -c 'import os; print(os.environ.get("MY_SECRET_TOKEN"), os.getcwd())'
is "$OUT" "None $WORLD/ws" "exec scrubs credentials and runs in the workspace"
start=$(date +%s)
P --timeout 1 exec -c 'import subprocess, time; subprocess.Popen(["sleep", "60"]); time.sleep(60)'
end=$(date +%s)
is "$RC" 4 "exec past its budget exits 4"
ok "the budget stopped it within a few seconds" test $((end - start)) -lt 8

# ---- a second release, rollback, local archive
mkdir -p "$WORLD/srv/rel/2"
(cd "$WORLD" && mkdir -p re && tar -xzf "$ARCH" -C re && echo '# release 2' > re/python/RELEASE2 &&
	tar -czf "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" -C re python)
SHA2=$(sha256sum "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" | cut -d' ' -f1)
write_pins "$WORLD/pins2.tsv" "$VER" 2 "https://localhost:$HTTPSD_PORT/rel/2/cpython-fixture-install_only.tar.gz" "$SHA2"
P runtime install --pins "$WORLD/pins2.tsv" --archive "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" --dry-run
like "$OUT" "now: +CPython $VER is current; it is kept as the previous runtime \\('pyward runtime rollback' returns to it\\)" \
	"the consent of another release names the one it replaces and how to return to it"
P runtime install --pins "$WORLD/pins2.tsv" --archive "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" --yes
is "$RC" 0 "--archive installs from a local file"
ok "the new release is current" test -e "$BOX/runtime/python/current/RELEASE2"
P runtime status
like "$OUT" "previous: +$VER" "status names the previous install"
# --json: the shared envelope ("schema" first), the members in the order
# and form ad9367e printed them (which built them by hand)
shape() { printf '%s' "$OUT" | "$PY3" -c 'import json, sys; t = sys.stdin.read(); d = json.loads(t); print(t == json.dumps(d, indent=2), " ".join(d))'; }
P --json runtime status
is "$(shape)" "True schema state why version release platform path python sha256 source_url installed_at pins_source size_on_disk previous_version pinned_version pinned_size baseline" \
	"--json status: schema first, the members in their order"
P --json runtime rollback
is "$RC" 0 "rollback exits 0"
is "$(shape)" "True schema current_version" "--json rollback: {schema, current_version}"
ok "after rollback the first release is current" test ! -e "$BOX/runtime/python/current/RELEASE2"
ok "after rollback python still runs" "$PY" -c 'pass'

# ---- a hostile archive, pinned by the operator, is still refused
"${PYTHON3:-python3}" "$FIX/make_hostile.py" "$WORLD/hostile"
HSHA=$(sha256sum "$WORLD/hostile/dotdot.tar.gz" | cut -d' ' -f1)
write_pins "$WORLD/pinsh.tsv" "$VER" 9 "https://localhost:$HTTPSD_PORT/x.tar.gz" "$HSHA"
P runtime install --pins "$WORLD/pinsh.tsv" --archive "$WORLD/hostile/dotdot.tar.gz" --yes
is "$RC" 3 "a hostile archive is refused even with a matching hash"
ok "python still runs after the refused archive" "$PY" -c 'pass'
ok "no staging folder is left behind" sh -c "! ls -d '$BOX'/runtime/python/versions/.staging-* 2>/dev/null"

# ---- an interpreter that fails its probe is not swapped in nor recorded
# (the probe runs while the catalog rows are written: they must be rolled back)
(cd "$WORLD" && rm -rf re3 && mkdir re3 && tar -xzf "$ARCH" -C re3 &&
	rm -f re3/python/lib/python3*/lib-dynload/_ssl*.so re3/python/lib/python3*/ssl.py &&
	tar -czf "$WORLD/nossl.tar.gz" -C re3 python)
NSHA=$(sha256sum "$WORLD/nossl.tar.gz" | cut -d' ' -f1)
write_pins "$WORLD/pinsn.tsv" "$VER" 3 "https://localhost:$HTTPSD_PORT/nossl.tar.gz" "$NSHA"
P runtime install --pins "$WORLD/pinsn.tsv" --archive "$WORLD/nossl.tar.gz" --yes
is "$RC" 1 "an interpreter that fails its probe is refused"
like "$ERR" "failed its probe" "the refusal says the probe failed"
like "$ERR" "No module named 'ssl'" "and shows what the probe said"
ok "after the failed probe the same install is current" test ! -e "$BOX/runtime/python/current/RELEASE2"
ok "python still runs after the failed probe" "$PY" -c 'pass'
is "$(sqlite3 "$BOX/catalog.sqlite3" "SELECT count(*) FROM pins p JOIN runtimes r ON r.pin_id = p.id WHERE p.sha256 = '$NSHA'")" 0 \
	"no runtime row was kept for the refused interpreter"
is "$(ls "$BOX/runtime/python/versions" | grep -c -- "-3-")" 0 "its tree was removed"
write_pins "$WORLD/pinsv.tsv" "3.99.0" 2 "$URL" "$SHA2"
P runtime install --pins "$WORLD/pinsv.tsv" --archive "$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz" --yes
is "$RC" 1 "an interpreter of another version than its pin is refused"
like "$ERR" "is Python $VER, the pin says 3.99.0" "the refusal names both versions"

# ---- kill -9 at many points: current always runs the old or the new install
A="$WORLD/srv/rel/1/cpython-fixture-install_only.tar.gz" B="$WORLD/srv/rel/2/cpython-fixture-install_only.tar.gz"
write_pins "$WORLD/pinsA.tsv" "$VER" 1 "$URL" "$SHA"
broken=0 changed=0
# The last delays outlast a whole install even in a sanitizer build.
for delay in 0.05 0.2 0.4 0.6 0.8 1.0 1.3 1.7 2.5 8; do
	if [ -e "$BOX/runtime/python/current/RELEASE2" ]; then pins="$WORLD/pinsA.tsv" arch=$A; else pins="$WORLD/pins2.tsv" arch=$B; fi
	before=$(readlink "$BOX/runtime/python/current")
	"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" runtime install --pins "$pins" --archive "$arch" --yes -q >/dev/null 2>&1 &
	victim=$!
	sleep "$delay"
	kill -9 "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
	"$PY" -c 'pass' 2>/dev/null || broken=$((broken + 1))
	[ "$(readlink "$BOX/runtime/python/current")" = "$before" ] || changed=$((changed + 1))
done
# Two more kills at a state, not a time (where the delays above land depends
# on the machine's speed and load): one while the archive is still arriving
# through a throttled URL (about 16 s for all of it), so before any swap can
# happen, and one as soon as current names the new install, so after it.
RATE=$((SIZE / 16 + 1))
kill_when() { # CONDITION PINS ARGS...: an install, killed -9 once CONDITION holds
	_cond=$1; shift
	before=$(readlink "$BOX/runtime/python/current")
	"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" runtime install --pins "$@" --yes -q >/dev/null 2>&1 &
	victim=$!
	_i=0
	while [ $_i -lt 1200 ] && ! eval "$_cond"; do sleep 0.05; _i=$((_i + 1)); done
	[ $_i -lt 1200 ] || echo "# never true within 60 s: $_cond"
	kill -9 "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
	"$PY" -c 'pass' 2>/dev/null || broken=$((broken + 1))
	[ "$(readlink "$BOX/runtime/python/current")" = "$before" ] || changed=$((changed + 1))
}
if [ -e "$BOX/runtime/python/current/RELEASE2" ]; then rel=1 sha=$SHA; else rel=2 sha=$SHA2; fi
write_pins "$WORLD/pins-slow.tsv" "$VER" "$rel" \
	"https://localhost:$HTTPSD_PORT/slow/$RATE/rel/$rel/cpython-fixture-install_only.tar.gz" "$sha"
c0=$changed
# An archive already in the cache is not downloaded again (and this release
# may be there from the installs above, depending on where the kills landed).
rm -f "$BOX/cache/downloads/$sha.tar.gz"
kill_when '[ -s "$BOX/cache/downloads/$sha.tar.gz.part" ]' "$WORLD/pins-slow.tsv" --cacert "$CA_PEM"
is "$((changed - c0))" 0 "a kill while the download is still arriving leaves current as it was"
rm -f "$BOX/cache/downloads/$sha.tar.gz.part"
if [ "$rel" = 1 ]; then pins="$WORLD/pinsA.tsv" arch=$A; else pins="$WORLD/pins2.tsv" arch=$B; fi
kill_when '[ "$(readlink "$BOX/runtime/python/current")" != "$before" ]' "$pins" --archive "$arch"
is "$broken" 0 "after kill -9 at 12 points current/bin/python3 always runs"
ok "some kills landed after the swap, some before" test "$changed" -gt 0 -a "$changed" -lt 12
P history --outcome interrupted --kind runtime.install
like "$OUT" 'interrupted' "killed installs show as interrupted in the history"
P runtime install --pins "$WORLD/pins2.tsv" --archive "$B" --yes
is "$RC" 0 "an install after the kills completes"
P runtime verify
is "$RC" 0 "and verifies clean"

# ---- two installs at once: one installs, the other waits and finds it done
rm -rf "$BOX/runtime/python" "$BOX/cache"
"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress >"$WORLD/c1.out" 2>&1 &
c1=$!
"$PYWARD" --box-root "$BOX" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes --no-progress >"$WORLD/c2.out" 2>&1 &
c2=$!
wait $c1; r1=$?
wait $c2; r2=$?
is "$r1 $r2" "0 0" "two concurrent installs both succeed"
both=$(cat "$WORLD/c1.out" "$WORLD/c2.out")
like "$both" "installed CPython $VER: " "one of them installed"
like "$both" "already installed and current \(another install finished it meanwhile\)" "the other waited and says so"

# ---- a cut download resumes from the cached .part
rm -rf "$BOX/runtime/python" "$BOX/cache"
write_pins "$WORLD/pinscut.tsv" "$VER" 1 "https://localhost:$HTTPSD_PORT/cut/1000000/rel/1/cpython-fixture-install_only.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pinscut.tsv" --cacert "$CA_PEM" --yes
is "$RC" 1 "a download cut mid-body fails"
like "$ERR" "resume|cut" "the error says it can be resumed"
P runtime install --pins "$WORLD/pins.tsv" --cacert "$CA_PEM" --yes
is "$RC" 0 "the next install succeeds"
like "$OUT" "resumed from byte 1000000" "and resumed from the cut"

# ---- a .part that the download empties and starts again (the server
# ignored Range): the extractor, which follows the .part as it grows, read
# a whole other python/ tree from it first; the tree installed must come
# from the verified bytes only (the download's one hash covers what the
# extractor read only when the .part was never started again)
rm -rf "$BOX/runtime/python" "$BOX/cache"
mkdir -p "$WORLD/foreign/python" "$BOX/cache/downloads"
echo planted > "$WORLD/foreign/python/FOREIGN"
tar -czf "$BOX/cache/downloads/$SHA.tar.gz.part" -C "$WORLD/foreign" python
write_pins "$WORLD/pinsnorange.tsv" "$VER" 1 "https://localhost:$HTTPSD_PORT/norange/rel/1/cpython-fixture-install_only.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pinsnorange.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 0 "an install whose .part was started again from zero succeeds"
ok "nothing of the bytes the .part held before is in the tree" test ! -e "$BOX/runtime/python/current/FOREIGN"
ok "the tree is the verified archive's (its interpreter runs)" "$PY" -c 'import ssl'
P runtime verify
is "$RC" 0 "and verifies against its manifest"

# ---- credentials in a URL are never shown or recorded (only "***@" is)
CRED="https://pwuser:s3cret-pass@localhost:$HTTPSD_PORT"
rm -rf "$BOX/runtime/python" "$BOX/cache"
write_pins "$WORLD/pinscred404.tsv" "$VER" 1 "$CRED/status/404/rel/1/x.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pinscred404.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 1 "a 404 from a URL with credentials fails"
like "$ERR" "HTTP 404 from https://\*\*\*@localhost:$HTTPSD_PORT/status/404/rel/1/x.tar.gz" \
	"the error names scheme, host and path, with the credentials hidden"
unlike "$ERR" "s3cret|pwuser" "the error shows no credentials"
write_pins "$WORLD/pinscred.tsv" "$VER" 1 "$CRED/rel/1/cpython-fixture-install_only.tar.gz" "$SHA"
P runtime install --pins "$WORLD/pinscred.tsv" --cacert "$CA_PEM" --dry-run --json
unlike "$OUT" "s3cret|pwuser" "the --json plan shows no credentials"
P runtime install --pins "$WORLD/pinscred.tsv" --cacert "$CA_PEM" --yes --no-progress
is "$RC" 0 "an install from a URL with credentials succeeds"
P runtime status --json
like "$OUT" "\"source_url\": \"https://\*\*\*@localhost:$HTTPSD_PORT/rel/1/cpython-fixture-install_only.tar.gz\"" \
	"status shows the source URL with the credentials hidden"
P history --json --limit all
unlike "$OUT" "s3cret|pwuser" "the history (command lines, attempts) shows no credentials"
last=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"][0]["id"])' 2>/dev/null)
P history show "$last"
like "$OUT" "\*\*\*@localhost" "history show names the download URL with the credentials hidden"
unlike "$OUT" "s3cret|pwuser" "and without them"
ok "no file in the box or the config holds the password (catalog, markers, logs)" \
	sh -c "! grep -r -a -l s3cret '$BOX' '$WORLD/home' '$WORLD/xdg-config'"

# ---- remove
P runtime remove
is "$RC" 3 "remove without a terminal and without --yes is refused"
P --json runtime remove --yes
is "$RC" 0 "remove --yes exits 0"
is "$OUT" "$(printf '{\n  "schema": 1,\n  "removed": true\n}')" "--json remove: {schema, removed}, as before"
ok "nothing is left after remove" test ! -e "$BOX/runtime/python/current"

done_testing
