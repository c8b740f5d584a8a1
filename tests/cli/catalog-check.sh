#!/bin/sh
# `pyward history check`: the whole catalog read for damage (every page,
# every index against its table) without writing, for a sysadmin or a
# timer, now that a writing open of a large catalog no longer reads it all.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
PY=${PYTHON3:-python3}
plan 24

P history check
is "$RC" 0 "no catalog yet: nothing damaged (exit 0)"
ok "and none was created" test ! -e "$BOX/catalog.sqlite3"

"$UNIT_HELPER_DIR/catalog_fill" "$BOX/catalog.sqlite3" 300
P history check
is "$RC" 0 "a sound catalog: exit 0"
like "$OUT" "catalog .*/box/catalog.sqlite3: no damage found \([0-9]+ pages read" "it says so, with the pages read"
P --json history check
like "$OUT" '"damaged": false' "--json: damaged false"
like "$OUT" '"problems": \[\]' "and no problems"

# the counters the triggers keep (schema 7), edited by hand in a copy:
# each mismatch with the rows is a problem line (ad9367e: no damage found)
mkdir -p "$WORLD/box2"
cp "$BOX/catalog.sqlite3" "$WORLD/box2/"
P2() { run --box-root "$WORLD/box2" -C "$WORLD/ws" "$@"; }
sqlite3 "$WORLD/box2/catalog.sqlite3" "UPDATE operation_counts SET n = n + 5 WHERE kind = 'venv.install' AND outcome = 'ok'"
P2 history check
is "$RC" 1 "an operation count that differs from the rows: exit 1"
like "$OUT" "operation_counts: [0-9]+ operations 'venv.install ok' kept, [0-9]+ in the rows" "the count is named, kept and counted"
sqlite3 "$WORLD/box2/catalog.sqlite3" "UPDATE operation_counts SET n = n - 5 WHERE kind = 'venv.install' AND outcome = 'ok';
	DELETE FROM attempt_counts WHERE class = 'network';
	UPDATE last_finished SET operation_id = 1 WHERE kind = 'venv.install'"
P2 --json history check
is "$RC" 1 "attempt and last-finished counters that differ: exit 1"
like "$OUT" "attempt_counts: 0 attempts of class 'network' kept, [0-9]+ in the rows" "the attempt count is named"
like "$OUT" "last_finished: operation 1 kept as the last 'venv.install' finished, the rows say [0-9]+" "the last finished is named"
unlike "$OUT" "operation_counts" "the operation count put back is not reported"
like "$OUT" '"damaged": true' "--json: damaged true"
sqlite3 "$WORLD/box2/catalog.sqlite3" "INSERT INTO attempt_counts SELECT class, count(*) FROM attempts WHERE class = 'network' GROUP BY class;
	UPDATE last_finished SET operation_id = (SELECT id FROM operations WHERE kind = 'venv.install' AND outcome IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1) WHERE kind = 'venv.install'"
P2 history check
is "$RC" 0 "with every counter put back, no damage found again"

# the last cell of a middle leaf of operations points off its page
"$PY" "$TOP_SRCDIR/tests/fixtures/damage_catalog.py" "$BOX/catalog.sqlite3"
before=$(sha256sum <"$BOX/catalog.sqlite3")
P history check
is "$RC" 1 "a damaged catalog: exit 1"
like "$OUT" "Offset 4094 out of range|corrupt|malformed" "the problem SQLite found is printed"
like "$ERR" "catalog .*/box/catalog.sqlite3 is damaged: [0-9]+ problems found" "stderr says the catalog is damaged"
like "$ERR" "restore a backup" "with what to do"
P --json history check
is "$RC" 1 "--json: exit 1 too"
like "$OUT" '"damaged": true' "--json: damaged true"
like "$OUT" '"problems": \[$' "with the problems listed"
is "$(sha256sum <"$BOX/catalog.sqlite3")" "$before" "the check wrote nothing to the damaged file"

P history check now
is "$RC" 2 "check takes no operands (exit 2)"
P history check --before 2026-01-01
is "$RC" 2 "nor the other verbs' options (exit 2)"
done_testing
