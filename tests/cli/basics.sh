#!/bin/sh
# The CLI skeleton: help, version, usage errors, exit codes, modes, paths.
. "$TOP_SRCDIR/tests/lib.sh"
make_world
plan 35

run --version
is "$RC" 0 "--version exits 0"
like "$OUT" '^pyward [0-9]+\.[0-9]+\.[0-9]+$' "--version prints the version"

run --help
is "$RC" 0 "--help exits 0"
like "$OUT" 'history' "--help lists the history command"
like "$OUT" '--box-root DIR' "--help lists the global options"

run help history
is "$RC" 0 "help history exits 0"
like "$OUT" 'history show ID' "help history shows the usage"

run help nosuch
is "$RC" 2 "help for an unknown command is a usage error"

run frobnicate
is "$RC" 2 "an unknown command exits 2"
like "$ERR" "unknown command 'frobnicate'" "an unknown command is named"

run --frob history
is "$RC" 2 "an unknown global option exits 2"
like "$ERR" "unknown or incomplete option '--frob'" "the unknown option is named"

run history --nope
is "$RC" 2 "an unknown command option exits 2"

run --mode sideways history
is "$RC" 2 "an unknown mode is refused with exit 2"
like "$ERR" "unknown mode 'sideways'" "the bad mode is named"

run --timeout -5 history
is "$RC" 2 "a negative timeout is a usage error"

run </dev/null
is "$RC" 2 "no command and no terminal exits 2"
like "$ERR" 'not a terminal' "no command and no terminal says why"

# Box root precedence: --box-root > PYWARD_HOME > system config > user config > default.
printf 'box_root = %s\n' "$WORLD/from-user" > "$XDG_CONFIG_HOME/pyward/config" 2>/dev/null ||
	{ mkdir -p "$XDG_CONFIG_HOME/pyward"; printf 'box_root = %s\n' "$WORLD/from-user" > "$XDG_CONFIG_HOME/pyward/config"; }
run -C "$WORLD/ws" paths --json
like "$OUT" "\"box_root\": \"$WORLD/from-user\"" "user config sets the box root"
like "$OUT" "\"schema\": 1" "paths --json has a schema member, as every JSON document does"
printf 'box_root = %s\n' "$WORLD/from-system" > "$PYWARD_SYSTEM_CONFIG"
run -C "$WORLD/ws" paths --json
like "$OUT" "\"box_root_source\": \"system config\"" "system config beats user config"
PYWARD_HOME="$WORLD/from-env" run -C "$WORLD/ws" paths --json
like "$OUT" "\"box_root\": \"$WORLD/from-env\"" "PYWARD_HOME beats the config files"
PYWARD_HOME="$WORLD/from-env" run --box-root "$WORLD/box" -C "$WORLD/ws" paths
like "$OUT" "box root: +$WORLD/box \(from --box-root\)" "--box-root beats everything"
like "$OUT" "workspace: +$WORLD/ws" "-C sets the workspace"

# A bad config line is an error naming the file and line, never ignored.
printf '# pyward\nbox_root = /x\nfrobnicate = 1\n' > "$PYWARD_SYSTEM_CONFIG"
run paths
is "$RC" 2 "a bad config line exits 2"
like "$ERR" "etc-pyward.conf:3" "the error names file and line"
rm -f "$PYWARD_SYSTEM_CONFIG"

run -C "$WORLD/nonexistent" paths
is "$RC" 2 "a missing workspace is a usage error"
like "$ERR" "workspace" "the missing workspace is named"

run --root "$WORLD/nonexistent" paths
is "$RC" 2 "a missing --root is a usage error"

# Global options are accepted after the command too.
run paths --mode read-only --box-root "$WORLD/box"
like "$OUT" 'mode: +read-only' "global options after the command apply"

run --json frobnicate
is "$RC" 2 "usage errors keep exit 2 with --json"
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); e=d["error"]; print(list(d), d["schema"], list(e), e["code"], e["exit_status"])')" \
	"['schema', 'error'] 1 ['code', 'message', 'hint', 'exit_status'] usage 2" \
	"--json: a usage error is the error object too, schema first as in every document"
like "$ERR" "^pyward: error: unknown command 'frobnicate'$" "the error line on stderr as before"
like "$ERR" "^pyward: hint: 'pyward --help' lists the commands and global options$" "and the hint line as before"
run --json history show 99999999
is "$(printf '%s' "$OUT" | "${PYTHON3:-python3}" -c 'import json,sys; d=json.load(sys.stdin); print(list(d), d["error"]["code"], d["error"]["hint"], d["error"]["exit_status"])')" \
	"['schema', 'error'] not-found None 1" "--json: an operation's error has the same shape (hint null when none)"

done_testing
