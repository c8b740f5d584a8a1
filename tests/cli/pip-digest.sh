#!/bin/sh
# A download that fails its digest is a reason to try the next source
# (issue 13 item 25): the default index announces each wheel's whole
# Content-Length with #sha256= on its links and cuts the body at half
# (indexd.py --mode cutfiles, as a network that breaks off does); pip ends
# in THESE PACKAGES DO NOT MATCH THE HASHES, and the chain goes on to the
# mirror, which serves the same wheel whole.
. "$TOP_SRCDIR/tests/lib.sh"
pip_world
start_index cut cutfiles || skip_all "could not start the index server"
plan 7

P venv create --python "$SYS_PY"
is "$RC" 0 "an environment to install into"
PIP_INDEX_URL="$INDEX_cut_URL" PYWARD_MIRRORS="$INDEX_ok_URL" P venv install pwtest-alpha --json
is "$RC" 0 "a wheel cut short by the default index is installed from the mirror"
is "$(J '" ".join(a["class"] for a in d["attempts"])')" "network ok" "attempts: the digest mismatch, then ok from the mirror"
like "$(J 'd["attempts"][0]["reason"]')" "sha256 differed from the one the index listed" \
	"the first attempt's reason says the digest differed"
is "$(J 'd["attempts"][1]["index"]')" "$INDEX_ok_URL" "the second attempt used the mirror"
ok "the cut server really cut a wheel" grep -q "GET /files/.* 200 CUT" "$WORLD/index-cut.log"
is "$("$WS/.venv/bin/python" -c 'import pwtest_alpha; print(pwtest_alpha.VERSION)' 2>&1)" "1.1" \
	"what was installed is the whole wheel, and it imports"

done_testing
