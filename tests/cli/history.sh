#!/bin/sh
# pyward history against a catalog filled through the core API.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
plan 32

run --box-root "$WORLD/box" history
is "$RC" 0 "history on a box with no catalog exits 0"
like "$OUT" 'No operations recorded' "an empty history says so"
ok "reading history does not create a catalog" test ! -e "$WORLD/box/catalog.sqlite3"

"$UNIT_HELPER_DIR/catalog_fill" "$WORLD/box/catalog.sqlite3"
is "$?" 0 "the catalog was filled through the core API"

run --box-root "$WORLD/box" history
is "$RC" 0 "history exits 0"
first=$(printf '%s\n' "$OUT" | sed -n 2p)
like "$first" 'runtime\.verify' "newest operation first"
like "$first" 'interrupted' "an operation left open by a dead process shows as interrupted"
like "$OUT" 'venv\.install +ok +3 .*/ws/\.venv' "attempt count is shown"
like "$OUT" 'timed-out' "a timed-out operation stays in the history"
lines=$(printf '%s\n' "$OUT" | wc -l)
is "$lines" 5 "header plus four operations"

run --box-root "$WORLD/box" history --kind venv.install
is "$(printf '%s\n' "$OUT" | wc -l)" 2 "--kind filters exactly"
run --box-root "$WORLD/box" history --kind 'runtime.'
is "$(printf '%s\n' "$OUT" | wc -l)" 3 "--kind with a trailing dot is a prefix"
run --box-root "$WORLD/box" history --target '100%'
like "$OUT" 'venv\.create' "--target matches a literal percent sign"
is "$(printf '%s\n' "$OUT" | wc -l)" 2 "--target matches only that operation"
run --box-root "$WORLD/box" history --outcome interrupted
is "$(printf '%s\n' "$OUT" | wc -l)" 2 "--outcome matches derived outcomes"
run --box-root "$WORLD/box" history --limit 2
is "$(printf '%s\n' "$OUT" | wc -l)" 3 "--limit caps the rows"
run --box-root "$WORLD/box" history --since 2999-01-01
like "$OUT" 'No operations' "--since in the future matches nothing"
run --box-root "$WORLD/box" history --since yesterday
is "$RC" 2 "a malformed --since is a usage error"
run --box-root "$WORLD/box" history --limit 0
is "$RC" 2 "--limit 0 is a usage error"

run --box-root "$WORLD/box" history --json
is "$RC" 0 "history --json exits 0"
shape=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ops = d["operations"]
print(d["schema"], len(ops), ops[0]["kind"], ops[0]["outcome"], ops[2]["attempt_count"],
      sorted(ops[0].keys()) == sorted(["id","kind","target","outcome","stop_reason","started_at",
      "finished_at","duration_ms","user","uid","host","pid","command","pyward_version","attempt_count"]))')
is "$shape" "1 4 runtime.verify interrupted 3 True" "history --json has the documented shape"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(list(json.load(sys.stdin)))')" "['schema', 'operations']" \
	"history --json: the result envelope, schema first"

id=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print([o["id"] for o in json.load(sys.stdin)["operations"] if o["kind"]=="venv.install"][0])')
run --box-root "$WORLD/box" history show "$id"
is "$RC" 0 "history show exits 0"
like "$OUT" 'attempt 3 .* exit 0 +class ok' "history show lists the attempts"
like "$OUT" 'proxy: +http://127.0.0.1:3128' "history show names the proxy"
run --box-root "$WORLD/box" history show "$id" --json
seqs=$(printf '%s' "$OUT" | python3 -c 'import json,sys; o=json.load(sys.stdin)["operation"]; print(",".join(str(a["seq"])+a["class"] for a in o["attempts"]))')
is "$seqs" "1network,2network,3ok" "history show --json lists attempts in order"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(list(json.load(sys.stdin)))')" "['schema', 'operation']" \
	"history show --json: the result envelope, schema first"
run --box-root "$WORLD/box" history show 9999
is "$RC" 1 "history show of an unknown id fails"
run --box-root "$WORLD/box" history show abc
is "$RC" 2 "history show of a non-number is a usage error"

# A catalog that is not ours is reported and left untouched.
mkdir -p "$WORLD/bad"
printf 'this is not a database\n%.0s' $(seq 1 200) > "$WORLD/bad/catalog.sqlite3"
before=$(cksum < "$WORLD/bad/catalog.sqlite3")
run --box-root "$WORLD/bad" history
is "$RC" 1 "a foreign catalog file fails with exit 1"
like "$ERR" 'hint:' "the error carries a hint"
is "$(cksum < "$WORLD/bad/catalog.sqlite3")" "$before" "the foreign file is unchanged"

done_testing
