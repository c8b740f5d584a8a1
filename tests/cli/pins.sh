#!/bin/sh
# pyward pins import (issue 14): a pins table from a SHA256SUMS the suite
# writes in upstream's format ("<sha256>  <file name>" lines), with decoys
# (stripped and debug builds, an unsupported platform, another release),
# sizes from a listing or from local archives (each hashed first), the
# malformed-line and no-match errors, the mode and roots for -o, the
# catalog record, and an imported table that the real installer then uses
# to install the fixture runtime from a loopback HTTPS server. The server
# is stopped by its PID.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
trap 'stop_httpsd; rm -rf "$WORLD"' EXIT
FIX="$TOP_SRCDIR/tests/fixtures"
runtime_fixture "$WORLD/fixture"
REL=20260414
TRIPLE=$(uname -m)-unknown-linux-gnu
case $TRIPLE in x86_64-* | aarch64-*) ;; *) skip_all "no managed runtime for $(uname -m)" ;; esac
NAME="cpython-$VER+$REL-$TRIPLE-install_only.tar.gz"
# a copy of the release's downloads: the real archive under upstream's name
mkdir -p "$WORLD/dl" "$WORLD/srv/$REL"
cp "$WORLD/fixture/cpython-fixture-install_only.tar.gz" "$WORLD/dl/$NAME"
# the server does not decode %2B: the file carries the encoded name there
cp "$WORLD/dl/$NAME" "$WORLD/srv/$REL/cpython-$VER%2B$REL-$TRIPLE-install_only.tar.gz"
start_httpsd "$WORLD/srv" || skip_all "could not start the HTTPS fixture server"
printf 'ca_bundle = %s\n' "$CA_PEM" >"$PYWARD_SYSTEM_CONFIG"
H() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
HA=$(H a) HB=$(H b) HC=$(H c) HD=$(H d)
WS="$WORLD/ws"
SUMS="$WS/SHA256SUMS"
cat >"$SUMS" <<EOF
$SHA  $NAME
$HA  cpython-$VER+$REL-$TRIPLE-install_only_stripped.tar.gz
$HA  cpython-$VER+$REL-$TRIPLE-debug-full.tar.zst
$HB  cpython-$VER+$REL-aarch64-apple-darwin-install_only.tar.gz
$HC  cpython-$VER+$REL-i686-unknown-linux-gnu-install_only.tar.gz
$HC  cpython-$VER+20250101-x86_64-pc-windows-msvc-install_only.tar.gz
$HD  cpython-3.99.1+$REL-x86_64-pc-windows-msvc-install_only.tar.gz
EOF
# paths on the command line are taken from the current folder
cd "$WS" || exit 1
P() { run --box-root "$WORLD/box" -C "$WS" "$@"; }
UP="https://github.com/astral-sh/python-build-standalone/releases/download"
plan 43

# ---- the table on standard output
P pins import SHA256SUMS --release $REL
is "$RC" 0 "pins import exits 0"
is "$(printf '%s\n' "$OUT" | grep -vc '^#')" 4 "a header line and the three install_only .tar.gz rows of the release for supported platforms"
like "$OUT" "^# python-build-standalone install_only archives of release $REL, from SHA256SUMS$" \
	"the header names the release and the SHA256SUMS"
like "$OUT" "^# that SHA256SUMS has sha256 $(sha256sum "$SUMS" | cut -d' ' -f1) \\(upstream publishes it as $UP/$REL/SHA256SUMS\\)$" \
	"and that file's own sha256 and where upstream publishes it"
like "$OUT" "^version	release	platform	url	sha256	size$" "the column header line"
like "$OUT" "^$VER	$REL	$TRIPLE	$UP/$REL/cpython-$VER%2B$REL-$TRIPLE-install_only.tar.gz	$SHA	-$" \
	"this machine's row: upstream's URL with + as %2B, the listed sha256, no size"
like "$OUT" "	$HD	-$" "another version of the release is there too"
ok "no stripped, debug, i686 or other-release row" sh -c '! printf "%s\n" "$1" | grep -Eq "stripped|debug|i686|20250101|'"$HA"'|'"$HC"'"' - "$OUT"
printf '%s\n' "$OUT" >"$WORLD/stdout.tsv"
P --json runtime status --pins "$WORLD/stdout.tsv"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pinned_version"])')" "$VER" \
	"runtime status reads the printed table as a pins table (this machine's pin)"
P history --json
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["operations"]))')" 0 \
	"printing the table changes nothing and records nothing"

# ---- options
P pins import SHA256SUMS --release $REL --version 3.99.1
is "$(printf '%s\n' "$OUT" | grep -vc '^#')" 2 "--version keeps one version's rows"
P pins import SHA256SUMS --release $REL --base-url https://mirror.example/pbs/
like "$OUT" "	https://mirror.example/pbs/$REL/cpython-3.99.1%2B$REL-x86_64-pc-windows-msvc-install_only.tar.gz	" \
	"--base-url replaces the upstream prefix (a trailing / dropped)"
ok "and the header does not claim upstream publishes it there" sh -c '! printf "%s\n" "$1" | grep -q "upstream publishes"' - "$OUT"
printf '%s %s\n' 31000 "cpython-3.99.1+$REL-x86_64-pc-windows-msvc-install_only.tar.gz" >"$WS/sizes.txt"
P pins import SHA256SUMS --release $REL --sizes sizes.txt
like "$OUT" "	$HD	31000$" "--sizes: the listed size"
like "$OUT" "sizes from sizes.txt" "and the header says where sizes came from"
P pins import SHA256SUMS --release $REL --archives "$WORLD/dl" --sizes sizes.txt
like "$OUT" "	$SHA	$SIZE$" "--archives: the local archive's size (its sha256 checked)"
like "$OUT" "	$HD	31000$" "archives not found there take the listing's size"
like "$OUT" "sizes from the archives in $WORLD/dl \\(each checked against its sha256\\), else from sizes.txt" \
	"the header names both"

# ---- errors
printf '%s  %s\nnot a checksum line\n' "$SHA" "$NAME" >"$WS/bad-sums"
P pins import bad-sums --release $REL
is "$RC" 2 "a malformed line: exit 2"
like "$ERR" "bad-sums:2: not a '<sha256>  <file name>' line" "the error names the file and line"
P pins import SHA256SUMS --release 20990101
is "$RC" 1 "nothing of the release: exit 1"
like "$ERR" "lists no install_only archive of release 20990101" "saying so"
P pins import SHA256SUMS --release 2026-04-14
is "$RC" 2 "a release that is not 8 digits is a usage error"
P pins import SHA256SUMS --release $REL --base-url ftp://x/y
is "$RC" 2 "so is a base URL pyward cannot fetch"
P pins import SHA256SUMS
is "$RC" 2 "--release is needed"
like "$ERR" "hint: 'pyward pins --help' shows its usage and options" "with the pointer to the help"
P pins
is "$RC" 2 "'pins' without a subcommand is a usage error"

# ---- -o: a change
P --mode read-only pins import SHA256SUMS --release $REL -o pins.tsv
is "$RC" 3 "-o in read-only mode is refused (exit 3)"
ok "and writes nothing" test ! -e "$WS/pins.tsv"
P pins import SHA256SUMS --release $REL -o "$WORLD/outside.tsv"
is "$RC" 3 "-o outside the allowed roots is refused"
P --mode full-access pins import SHA256SUMS --release $REL -o "$WORLD/full-access.tsv"
is "$RC:$(grep -c "	$SHA	" "$WORLD/full-access.tsv")" "0:1" "in full-access mode any path will do"
P --root "$WORLD" pins import SHA256SUMS --release $REL --archives "$WORLD/dl" -o "$WORLD/outside.tsv"
is "$RC" 0 "with --root it is allowed"
like "$OUT" "^3 pins of release $REL \\(1 with a size\\) written to $WORLD/outside.tsv$" "saying how many and where"
P history --json
is "$(newest_op kind outcome target)" \
	"pins.import ok $WORLD/outside.tsv" "the catalog records pins.import with the file as its target"
# a local archive that is not the one listed: an error, the old table kept
cp "$WORLD/outside.tsv" "$WORLD/before.tsv"
mkdir -p "$WORLD/dl-bad" && printf 'not the archive' >"$WORLD/dl-bad/$NAME"
P --root "$WORLD" pins import SHA256SUMS --release $REL --archives "$WORLD/dl-bad" -o "$WORLD/outside.tsv"
is "$RC" 1 "a local archive whose sha256 differs: exit 1"
like "$ERR" "$WORLD/dl-bad/cpython-$VER.$REL-$TRIPLE-install_only.tar.gz has sha256 [0-9a-f]{64}, but SHA256SUMS:1 lists $SHA" \
	"naming the file and the line"
ok "the table written before is unchanged" cmp -s "$WORLD/before.tsv" "$WORLD/outside.tsv"

# ---- the imported table works: install the runtime from a mirror with it
P pins import SHA256SUMS --release $REL --version "$VER" --archives "$WORLD/dl" \
	--base-url "https://localhost:$HTTPSD_PORT" -o mirror-pins.tsv
is "$RC" 0 "a table for the loopback mirror"
P runtime install --pins mirror-pins.tsv --yes --no-baseline
is "$RC" 0 "runtime install with the imported table downloads, verifies and installs"
P --json runtime status --pins mirror-pins.tsv
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d.get("release"))')" \
	"installed $REL" "status: installed, from the imported release"

# ---- --json and --help
P --json pins import SHA256SUMS --release $REL --archives "$WORLD/dl"
is "$(printf '%s' "$OUT" | python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["schema"], d["release"], d["rows"], d["sized"], d["output"], len(d["pins"]),
      sorted(d["pins"][0]), [p["size"] for p in d["pins"]].count(None))')" \
	"1 $REL 3 1 None 3 ['platform', 'release', 'sha256', 'size', 'url', 'version'] 2" \
	"--json: schema, release, counts, output and the pins with their members"
P pins --help
ok "--help names every option" sh -c 'for o in --release --base-url --version --sizes --archives --output; do printf "%s\n" "$1" | grep -q -- "$o" || exit 1; done' - "$OUT"

# The shipped table says in its header which release and which SHA256SUMS
# each of its rows came from.
SHIPPED="$TOP_SRCDIR/data/runtime-pins.tsv"
missing=""
for rel in $(awk -F'\t' '/^[0-9]/ { print $2 }' "$SHIPPED" | sort -u); do
	grep -Eq "^# release $rel: .*SHA256SUMS" "$SHIPPED" && grep -Eq "^#.*/$rel/SHA256SUMS\$" "$SHIPPED" ||
		missing="$missing $rel"
done
is "$missing" "" "the shipped pins table's header names each release and its SHA256SUMS"
done_testing
