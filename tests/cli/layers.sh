#!/bin/sh
# The layers hold (DESIGN.md "Layers"): core includes only core; ops
# includes core and ops; a front end (src/cli, src/tui, src/mcp, src/api,
# any other folder of src/) includes core, ops and its own headers, never
# another front end's. src/main.c, the composition root, may include all.
# The scratchpad's client and host (core/scratch_*.h) are reached only
# through the scratchpad operations (ops/op_scratch.h), as every other use
# case is through its operation: no front end includes them.
# Read from the #include "..." lines of every .c and .h under src/.
. "$TOP_SRCDIR/tests/lib.sh"
plan 12

# Print one line per include that breaks a rule, for the tree under $1/src.
violations() {
	(cd "$1/src" && find . -name '*.[ch]' | sed 's#^\./##' | sort | while read -r f; do
		layer=${f%%/*}
		[ "$layer" = "$f" ] && continue # src/main.c
		dir=${f%/*}
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			case $inc in
			*/*) to=${inc%%/*} ;;
			*)
				if [ -e "$dir/$inc" ]; then to=$layer
				elif [ -e "core/$inc" ]; then to=core
				else continue # config.h and other generated headers
				fi ;;
			esac
			case $layer:$to:${inc##*/} in
			core:core:* | ops:core:* | ops:ops:*) ;;
			core:*) echo "$f: core includes $inc ($to)" ;;
			ops:*) echo "$f: ops includes $inc (front end $to)" ;;
			*:core:scratch_*) echo "$f: front end $layer includes $inc (the scratchpad is reached through ops/op_scratch.h)" ;;
			*:core:* | *:ops:*) ;;
			*) [ "$layer" = "$to" ] || echo "$f: front end $layer includes $inc (front end $to)" ;;
			esac
		done
	done)
}

out=$(violations "$TOP_SRCDIR")
is "$out" "" "no file of src/ includes across the layers"
ok "src/main.c is the only file at the top of src/" test "$(cd "$TOP_SRCDIR/src" && ls -p | grep -v / | tr '\n' ' ')" = "main.c "
ok "src/ops exists as its own library" grep -q 'src/ops/libpywardops.a' "$TOP_SRCDIR/Makefile.am"
# Listing operations and jobs is a use case too: a front end asks ops
# (pw_op_history_list, pw_op_jobs_list), which builds the list's JSON once.
out=$(cd "$TOP_SRCDIR/src" && grep -nE '\b(pw_catalog_ops_query|pw_jobs_list)[[:space:]]*\(' -- */*.c | grep -vE '^(core|ops)/')
is "$out" "" "no front end queries the catalog's operations or jobs itself"

# The check itself finds each kind of crossing (a tree made to break them).
T=$(mktemp -d "${TMPDIR:-/tmp}/pyward-layers.XXXXXX")
mkdir -p "$T/src/core" "$T/src/ops" "$T/src/cli" "$T/src/tui" "$T/src/mcp"
: >"$T/src/core/err.h"; : >"$T/src/ops/ctx.h"; : >"$T/src/cli/cli.h"; : >"$T/src/tui/tui.h"
printf '#include "config.h"\n#include "err.h"\n#include "ops/ctx.h"\n' >"$T/src/core/a.c"
printf '#include "cli/cli.h"\n' >"$T/src/ops/b.c"
printf '#include "ops/ctx.h"\n#include "err.h"\n#include "tui/tui.h"\n' >"$T/src/cli/c.c"
printf '#include "cli/cli.h"\n#include "tui/tui.h"\n' >"$T/src/tui/d.c"
printf '  #  include "cli/cli.h"  /* spaced */\n' >"$T/src/mcp/e.c"
: >"$T/src/core/scratch_client.h"; : >"$T/src/ops/op_scratch.h"
printf '#include "ops/op_scratch.h"\n#include "scratch_client.h"\n' >"$T/src/tui/f.c"
printf '#include "scratch_client.h"\n' >"$T/src/ops/g.c"
printf '#include "cli/cli.h"\n#include "tui/tui.h"\n' >"$T/src/main.c"
out=$(violations "$T")
like "$out" '^core/a\.c: core includes ops/ctx\.h' "core including ops is caught"
like "$out" '^ops/b\.c: ops includes cli/cli\.h' "ops including a front end is caught"
like "$out" '^cli/c\.c: front end cli includes tui/tui\.h' "the CLI including the TUI is caught"
like "$out" '^tui/d\.c: front end tui includes cli/cli\.h' "the TUI including the CLI is caught"
like "$out" '^mcp/e\.c: front end mcp includes cli/cli\.h' "a new front end including the CLI is caught (spaced #include too)"
like "$out" '^tui/f\.c: front end tui includes scratch_client\.h \(the scratchpad is reached through ops' \
	"a front end including the scratchpad client of core is caught"
ok "the scratchpad operations may use it" sh -c '! printf "%s\n" "$1" | grep -q "^ops/g\.c"' - "$out"
is "$(printf '%s\n' "$out" | grep -c .)" "6" "nothing else is flagged: own headers, core, ops and main.c are fine"
rm -rf "$T"
done_testing
