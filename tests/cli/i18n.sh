#!/bin/sh
# Translations: LANGUAGE=de gives German (help, errors with hints, history),
# English stays the fallback, and every message in the sources is translated
# in po/de.po, so a new untranslated string fails here.
. "$TOP_SRCDIR/tests/lib.sh"

grep -q '^#define ENABLE_NLS 1' "$TOP_BUILDDIR/config.h" 2>/dev/null ||
	skip_all "built without NLS (configure --disable-nls)"
for tool in xgettext msgmerge msgfmt msgcmp; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "$tool not found (install gettext)"
done
MO="$TOP_BUILDDIR/tests/locale/de/LC_MESSAGES/pyward.mo"
[ -s "$MO" ] || skip_all "no $MO (run through make check, which builds it)"

plan 23
make_world
# Built-in catalogs of the build tree, not an installed (maybe older) copy.
export PYWARD_LOCALEDIR="$TOP_BUILDDIR/tests/locale"
PO="$TOP_SRCDIR/po"

# make_world sets LC_ALL=C.UTF-8 and LANGUAGE= (English); C.UTF-8 is not "C",
# so gettext honours LANGUAGE there without any generated locale.
de() { LANGUAGE=de run "$@"; }

# ---- German
de --help
is "$RC" 0 "--help in German exits 0"
like "$OUT" '^Aufruf: pyward \[GLOBALE OPTIONEN\] BEFEHL \[ARGUMENTE\]$' "--help: German usage line"
like "$OUT" '^Befehle:$' "--help: German 'Commands:'"
like "$OUT" 'Globale Optionen:' "--help: German 'Global options:'"
unlike "$OUT" 'Commands:|Global options:|show this help' "--help: no English left in it"

de frobnicate
is "$RC" 2 "unknown command: exit 2"
like "$ERR" "^pyward: Fehler: unbekannter Befehl »frobnicate«$" "unknown command: German message with the name in it"
like "$ERR" "^pyward: Hinweis: »pyward --help« nennt die Befehle" "unknown command: German pointer to --help"

de --mode read-only venv create
is "$RC" 3 "read-only refusal: exit 3"
like "$ERR" '^pyward: Fehler: das Anlegen einer Umgebung ändert etwas, aber der Modus ist »read-only«$' \
	"read-only refusal: German error line"
like "$ERR" '^pyward: Hinweis: .*--mode workspace-write' "read-only refusal: German hint keeps the option"

printf 'this is not a database, and it is not ours\n' > "$WORLD/box/catalog.sqlite3"
de --box-root "$WORLD/box" history
is "$RC" 1 "foreign catalog: exit 1"
like "$ERR" '^pyward: Fehler: Katalog .*catalog.sqlite3: keine SQLite-Datenbank$' "foreign catalog: German error from core"
like "$ERR" '^pyward: Hinweis: .*--box-root' "foreign catalog: German hint from core"
rm -f "$WORLD/box/catalog.sqlite3"

de --box-root "$WORLD/box" history
is "$RC" 0 "history on an empty catalog: exit 0"
like "$OUT" '^Keine Vorgänge aufgezeichnet' "history on an empty catalog: German"

# ---- English is the fallback
run --help
like "$OUT" '^Usage: pyward \[GLOBAL OPTIONS\] COMMAND \[ARGS\]$' "LANGUAGE empty: English --help"
LANGUAGE=de LC_ALL=C run frobnicate
like "$ERR" "^pyward: error: unknown command 'frobnicate'$" "LANGUAGE=de in the C locale: English, as gettext documents"
LANGUAGE=xx run frobnicate
like "$ERR" "^pyward: error: unknown command 'frobnicate'$" "a language with no translation: English"

# ---- Completeness: the messages in the sources now, not only those in po/.
# Every source file that marks strings is listed in POTFILES.in.
missing=""
for f in $(cd "$TOP_SRCDIR" && grep -lE '\b[NP]?_\("' src/*.c src/*/*.c); do
	grep -qx "$f" "$PO/POTFILES.in" || missing="$missing $f"
done
is "$missing" "" "every source file with marked strings is in po/POTFILES.in"

opts=$(sed -n 's/^XGETTEXT_OPTIONS *= *//p' "$PO/Makevars")
# shellcheck disable=SC2086
(cd "$TOP_SRCDIR" && xgettext $opts --files-from=po/POTFILES.in -o "$WORLD/fresh.pot") 2>"$WORLD/xgettext.err"
ok "xgettext extracts the messages" test -s "$WORLD/fresh.pot"
msgcmp --use-untranslated --use-fuzzy "$PO/pyward.pot" "$WORLD/fresh.pot" >"$WORLD/msgcmp.err" 2>&1
is "$?" 0 "po/pyward.pot has every message of the sources (make -C po pyward.pot-update)"
[ -s "$WORLD/msgcmp.err" ] && sed 's/^/#   /' "$WORLD/msgcmp.err" | head -n 20

# The msgids of a PO file, one a line (the header's empty one left out).
msgids() { awk '/^msgid / { if ($0 == "msgid \"\"") { getline; if ($0 !~ /^msgstr/) print } else print }'; }
msgmerge -q --no-fuzzy-matching -o "$WORLD/de.po" "$PO/de.po" "$WORLD/fresh.pot" 2>/dev/null
stats=$(LC_ALL=C msgfmt -c --statistics -o /dev/null "$WORLD/de.po" 2>&1)
like "$stats" '^[1-9][0-9]* translated messages\.$' "de.po translates every message, none fuzzy ($stats)"
if ! printf '%s\n' "$stats" | grep -Eq '^[0-9]+ translated messages\.$'; then
	msgattrib --only-fuzzy "$WORLD/de.po" 2>/dev/null | msgids | head -n 15 | sed 's/^/#   fuzzy: /'
	msgattrib --untranslated "$WORLD/de.po" 2>/dev/null | msgids | head -n 15 | sed 's/^/#   untranslated: /'
fi
done_testing
