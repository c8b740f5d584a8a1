#!/bin/sh
# Package changes, history undo, venv verify, export and prune, end to end:
# real venvs from this machine's CPython, real pip, the suite's loopback
# PEP 503 index with the wheels the suite builds (make_wheels.py).
. "$TOP_SRCDIR/tests/lib.sh"
pip_world
SOCK="$WORLD/tmux.sock"
T() { tmux -S "$SOCK" "$@"; }
trap 'T kill-server 2>/dev/null; stop_servers; rm -rf "$WORLD"' EXIT
PY="$WS/.venv/bin/python"
version() { "$PY" -c "import $1; print($1.VERSION)" 2>/dev/null || echo none; }
last_op() { sqlite3 "$WORLD/box/catalog.sqlite3" "SELECT max(id) FROM operations"; }
ops_count() { sqlite3 "$WORLD/box/catalog.sqlite3" "SELECT count(*) FROM operations"; }
command -v sqlite3 >/dev/null || skip_all "the sqlite3 shell is needed"
plan 60

# ---- what create and install changed
P venv create --python "$SYS_PY"
create=$(last_op)
P history show "$create"
like "$OUT" "Install: pip \(" "create with the fast seed records pip as installed"
P venv install --index "$INDEX_ok_URL" pwtest-beta
install=$(last_op)
P history show "$install"
like "$OUT" "Install: pwtest-alpha \(1\.1\), pwtest-beta \(1\.0\)" "an install with a dependency lists both, apt-style"
P history show "$install" --json
is "$(J '[(p["name"], p["action"], p["old_version"], p["new_version"], p["installer"]) for p in d["operation"]["packages"]]')" \
	"[('pwtest-alpha', 'installed', None, '1.1', 'pip'), ('pwtest-beta', 'installed', None, '1.0', 'pip')]" \
	"history show --json has the changes as objects"
is "$(J 'd["operation"]["environment"], d["operation"]["undo_of"]')" "$WS/.venv None" "with the environment and no undo_of"
P history --package PWTEST_Alpha
is "$(printf '%s\n' "$OUT" | sed 1d | awk '{print $1}' | tr '\n' ' ')" "$install " "history --package finds the operation by any spelling"
P history --package nosuch
like "$OUT" "No operations" "history --package for an untouched package lists nothing"

# ---- undo an install with a dependency
n=$(ops_count)
P history undo "$install" --dry-run
is "$RC" 0 "a dry run exits 0"
like "$OUT" "uninstall pwtest-alpha 1\.1" "the dry run plans the dependency's removal"
like "$OUT" "uninstall pwtest-beta 1\.0" "and the package's"
is "$(version pwtest_beta) $(ops_count)" "1.0 $n" "a dry run changes nothing: the package stays, no operation is recorded"
P history undo "$install" </dev/null
is "$RC" 3 "without a terminal undo needs --yes (exit 3)"
like "$ERR" "pass --yes" "and says so"
is "$(version pwtest_beta)" "1.0" "a refused undo changes nothing"
P history undo "$install" --yes --json
is "$RC" 0 "undo --yes exits 0"
undo1=$(J 'd["operation"]')
is "$(version pwtest_alpha) $(version pwtest_beta)" "none none" "the install and its dependency are gone"
is "$(J 'sorted((c["name"], c["action"]) for c in d["changes"])')" "[('pwtest-alpha', 'removed'), ('pwtest-beta', 'removed')]" \
	"undo --json reports what it changed"
P history show "$undo1" --json
is "$(J 'd["operation"]["kind"], d["operation"]["undo_of"], d["operation"]["outcome"]')" "history.undo $install ok" \
	"the undo is an operation of its own, linked with undo_of"
P history show "$undo1"
like "$OUT" "undo of: +operation $install" "history show names the undone operation"
like "$OUT" "Remove: pwtest-alpha \(1\.1\), pwtest-beta \(1\.0\)" "and the removals"
# The History pane's details of the newest operation (the undo) show the same.
if command -v tmux >/dev/null 2>&1; then
	S=hist WAIT_SECONDS=20
	tui_start hist 100 30 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 '$PYWARD' --box-root '$WORLD/box' -C '$WS' --mode read-only; sleep 30"
	wait_for "q quit" >/dev/null
	T send-keys -t hist 5
	wait_for "history.undo" >/dev/null
	T send-keys -t hist Enter
	ok "the History pane's details list the package changes" wait_for "Remove: pwtest-alpha (1.1), pwtest-beta (1.0)"
	like "$SCREEN" "undo of: +operation $install" "and the operation undone"
	T kill-session -t hist 2>/dev/null
else
	skip 2 "tmux not installed"
fi

# ---- undo an upgrade
P venv install --index "$INDEX_ok_URL" 'pwtest-alpha==1.0'
P venv install --index "$INDEX_ok_URL" --upgrade pwtest-alpha
upgrade=$(last_op)
P history show "$upgrade"
like "$OUT" "Upgrade: pwtest-alpha \(1\.0 -> 1\.1\)" "an upgrade is recorded as old -> new"
P history undo "$upgrade" --yes --index "$INDEX_ok_URL"
is "$RC" 0 "undoing the upgrade exits 0"
is "$(version pwtest_alpha)" "1.0" "the previous version is back"
like "$OUT" "Downgrade: pwtest-alpha \(1\.1 -> 1\.0\)" "and the undo says it downgraded"
sqlite3 "$WORLD/box/catalog.sqlite3" "SELECT count(*) FROM attempts WHERE operation_id = $(last_op)" >"$WORLD/n"
is "$(cat "$WORLD/n")" "1" "its pip run is recorded as an attempt of the undo"

# ---- undo an uninstall
P venv uninstall pwtest-alpha
uninstall=$(last_op)
is "$(version pwtest_alpha)" "none" "uninstalled"
P history undo "$uninstall" --yes --index "$INDEX_ok_URL"
is "$RC" 0 "undoing the uninstall exits 0"
is "$(version pwtest_alpha)" "1.0" "the removed version is installed again"

# ---- refusals
P venv install --index "$INDEX_ok_URL" --upgrade pwtest-alpha
up2=$(last_op)
P venv install --index "$INDEX_ok_URL" pwtest-beta
later=$(last_op)
P venv uninstall pwtest-alpha
later2=$(last_op)
P history undo "$up2" --yes --index "$INDEX_ok_URL"
is "$RC" 3 "undo refuses when later operations changed the same package (exit 3)"
like "$ERR" "operation $later2 changed the same packages later" "and names the operation in the way (the beta install left alpha alone)"
like "$OUT" "in the way: operation $later2" "the refusal shows the plan and what is in the way"
is "$(version pwtest_alpha)" "none" "a refused undo changes nothing"
P history undo "$up2" --dry-run --json
is "$(J 'd["plan"]["later_operations"], d["outcome"]')" "[$later2] refused" "--json lists the operations in the way"
P history undo "$up2" --yes --force --index "$INDEX_ok_URL"
is "$RC" 0 "--force undoes it anyway"
is "$(version pwtest_alpha)" "1.0" "the version before that operation is installed"
P history undo "$up2" --yes --index "$INDEX_ok_URL"
is "$RC" 3 "undoing it again is refused: the undo itself changed the same package later"

# a runtime install is undone by runtime rollback
sqlite3 "$WORLD/box/catalog.sqlite3" "INSERT INTO operations (kind, target, args, started_at, finished_at, outcome, user, uid, host, pid, pyward_version)
	VALUES ('runtime.install', '3.12.13', 'pyward runtime install', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', 'ok', 'x', 0, 'h', 1, '0')"
P history undo "$(last_op)" --yes
is "$RC" 3 "undo of a runtime install is refused"
like "$ERR" "runtime rollback" "and points to runtime rollback"

# the environment is gone
P venv create "$WS/other" --python "$SYS_PY"
P venv install --venv other --index "$INDEX_ok_URL" pwtest-alpha
gone=$(last_op)
P venv remove other
P history undo "$gone" --yes
is "$RC" 3 "undo refuses when the environment is gone"
like "$ERR" "is gone" "and says so"

# ---- venv verify (rpm -V for an environment)
P venv verify
is "$RC" 0 "a fresh environment verifies"
like "$OUT" "0 modified, 0 missing, 0 unexpected" "nothing differs"
like "$OUT" "unchecked \(no hash in RECORD\)" "hashless RECORD entries are counted as unchecked"
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf 'VERSION = "hacked"\n' > "$site/pwtest_alpha/__init__.py"
rm "$site/pwtest_alpha-1.0.dist-info/top_level.txt"
printf 'x' > "$site/pwtest_alpha/stray.py"
P venv verify
is "$RC" 1 "a changed environment fails verify (exit 1)"
like "$OUT" "modified +$site/pwtest_alpha/__init__.py" "a modified file is reported"
like "$OUT" "missing +$site/pwtest_alpha-1.0.dist-info/top_level.txt" "a missing file is reported"
like "$OUT" "unexpected +$site/pwtest_alpha/stray.py" "an unexpected file is reported"
P venv verify --format rpm
is "$OUT" "missing     $site/pwtest_alpha-1.0.dist-info/top_level.txt
S.5.?????    $site/pwtest_alpha/__init__.py
unexpected  $site/pwtest_alpha/stray.py" "--format rpm prints rpm -V's lines, by path"
P venv verify --json
is "$(J 'd["ok"], d["modified"], d["missing"], d["unexpected"], [x["name"] for x in d["distributions"] if x["modified"]]')" \
	"False 1 1 1 ['pwtest-alpha']" "--json has the counts and the distribution"
"$PY" -c 'import pwtest_alpha' # writes a bytecode cache: not unexpected
P venv verify --format rpm
unlike "$OUT" "__pycache__" "bytecode caches Python writes are not reported"

# ---- export and prune
P history export
is "$RC" 0 "export exits 0"
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c 'import json,sys; ls=[json.loads(l) for l in sys.stdin]; i=[o for o in ls if o["kind"]=="venv.install"][0]; print(len(ls), ls[0]["id"] < ls[-1]["id"], [p["name"] for p in i["packages"]])')" \
	"$(ops_count) True ['pwtest-alpha', 'pwtest-beta']" "export --format jsonl: one object per operation, oldest first, with package changes"
P history export --format csv --since 2026-01-02
is "$(printf '%s\n' "$OUT" | "$SYS_PY" -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["kind"], r[1]["packages"])')" \
	"venv.create Install: pwtest-alpha (1.1), pwtest-beta (1.0)" "export --format csv with a header row"
n=$(ops_count)
P history prune --before 2026-06-01
is "$RC" 3 "prune without --yes and without a terminal is refused"
P history prune --before 2026-06-01 --yes
is "$RC" 0 "prune exits 0"
like "$OUT" "deleted 1 operations started before 2026-06-01" "it says how many it deleted"
is "$(ops_count)" "$n" "the old operation went, the prune's record came"
P history --kind history.prune --json
is "$(J 'd["operations"][0]["user"] != "", d["operations"][0]["outcome"]')" "True ok" "the prune is recorded with who and when"
P --mode read-only history prune --before 2030-01-01 --yes
is "$RC" 3 "prune is a change: refused in read-only mode"

done_testing
