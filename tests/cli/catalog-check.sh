#!/bin/sh
# `pyward history check`: the whole catalog read for damage (every page,
# every index against its table) without writing, for a sysadmin or a
# timer, now that a writing open of a large catalog no longer reads it all.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
BOX="$WORLD/box"
P() { run --box-root "$BOX" -C "$WORLD/ws" "$@"; }
PY=${PYTHON3:-python3}
plan 16

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
