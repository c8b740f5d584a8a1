#!/bin/sh
# pyward serve against hostile and careless clients: every JSON answer
# carries "schema"; bodies that are not a JSON object (invalid UTF-8,
# nesting past the parser's depth, members an endpoint does not take) are
# refused 400 in the error shape by every POST endpoint; random bytes on
# the socket; many half-open connections held against --max-connections and
# --request-timeout; bodies trickled a byte at a time. Each loop is bounded
# in count and time (a few seconds).
. "$TOP_SRCDIR/tests/lib.sh"
serve_world
HOSTILE="${PYTHON3:-python3} $TOP_SRCDIR/tests/cli/api_hostile.py"
mkdir -p "$WORLD/ws"

U() { _m=$1 _p=$2; shift 2; CODE=$(curl -s -o "$WORLD/body" -D "$WORLD/headers" -w '%{http_code}' --unix-socket "$SOCK" -X "$_m" "$@" "http://localhost$_p"); BODY=$(cat "$WORLD/body"); }
# SHAPE: "schema error.code" of BODY, or what the JSON reader said.
shape() { J 'd.get("schema"), d["error"]["code"] if "error" in d else None, bool(d.get("error", {}).get("message"))'; }

plan 46

SOCK="$WORLD/api.sock"
serve main --listen "unix:$SOCK" --request-timeout 2 --max-connections 8
MAIN=$SERVE_PID

# ---- "schema" on every JSON answer (on 539e54f GET /api/jobs, a job and
# every error answered without it)
U POST /api/venvs/install -H 'Content-Type: application/json' --data '{"venv": "nope", "packages": ["pwtest-alpha"]}'
is "$CODE $(J 'd.get("schema"), d.get("kind")')" "202 1 venv.install" "a started job (202) carries schema"
JOB=$(J 'd["id"]')
U GET /api/jobs
is "$CODE $(J 'd.get("schema"), type(d["jobs"]).__name__')" "200 1 list" "GET /api/jobs carries schema"
U GET "/api/jobs/$JOB"
is "$CODE $(J 'd.get("schema"), d["id"]')" "200 1 $JOB" "GET /api/jobs/ID carries schema"
U GET /api/jobs/999
is "$CODE $(shape)" "404 1 not-found True" "an error (404) carries schema beside error"
is "$(J 'sorted(d["error"]), d["error"]["exit_status"]')" "['code', 'exit_status', 'hint', 'message'] 1" \
	"the error member is the CLI's --json one: exit_status 1 for not-found"
U PUT /api/jobs
is "$CODE $(shape)" "405 1 method-not-allowed True" "405 carries schema"
is "$(J 'd["error"]["exit_status"]')" "2" "405: exit_status 2, a usage error's"
like "$(cat "$WORLD/headers")" "Allow: " "405 still with Allow"
U GET /api/venvs
is "$CODE $(J 'd.get("schema")')" "200 1" "GET /api/venvs carries schema"
U GET /api/history
is "$CODE $(J 'd.get("schema")')" "200 1" "GET /api/history carries schema"
U GET /api/runtime/python
is "$CODE $(J 'd.get("schema")')" "200 1" "GET /api/runtime/python carries schema"

# ---- bodies that are not a JSON object, to every POST endpoint: 400
# bad-json (or bad-request for a member it does not take) in the error
# shape, and nothing done (on 539e54f verify and rollback ignored the body
# and ran)
U GET /api/history
BEFORE=$(J 'len(d["operations"])')
printf '{"consent": "\377\376"}' > "$WORLD/utf8.json"
"${PYTHON3:-python3}" -c 'import sys; sys.stdout.write("[" * 5000 + "]" * 5000)' > "$WORLD/deep-array.json"
"${PYTHON3:-python3}" -c 'import sys; sys.stdout.write("{\"a\":" * 4000 + "1" + "}" * 4000)' > "$WORLD/deep-object.json"
for EP in /api/runtime/python/install /api/runtime/python/verify /api/runtime/python/rollback /api/venvs /api/venvs/install /api/venvs/uninstall; do
	for F in utf8 deep-array deep-object; do
		U POST "$EP" -H 'Content-Type: application/json' --data-binary "@$WORLD/$F.json"
		is "$CODE $(shape)" "400 1 bad-json True" "POST $EP, $F body: 400 bad-json in the error shape"
	done
done
U POST /api/runtime/python/verify -H 'Content-Type: application/json' --data '{"deep": true}'
is "$CODE $(shape)" "400 1 bad-request True" "verify with a member it does not take: 400"
# A member name cut at 100 bytes in the message, inside a two-byte letter:
# the error shape stays (on 539e54f the answer was {} with no error).
U POST /api/venvs -H 'Content-Type: application/json' --data "{\"$(printf 'a%.0s' $(seq 99))\u00e9\u00e9\": 1}"
is "$CODE $(shape)" "400 1 bad-request True" "a member named past the message's cut, inside a letter: 400 in the error shape"
is "$(J 'd["error"]["message"] == "unknown member \"" + "a" * 99 + "\ufffd\""')" "True" \
	"the cut letter's byte shown as U+FFFD, the rest kept (pw_json_str, as the CLI's --json; before: dropped with the closing quote)"
U GET /api/history
is "$(J 'len(d["operations"])')" "$BEFORE" "none of them ran an operation"

# ---- random bytes on the socket: 3 rounds of 8 connections at once, seeded
# (some after a request line, some half-closed); each is answered (never 2xx
# or 5xx) or closed within 6 s, and the server goes on
$HOSTILE garbage "$SOCK" 3 8 20261204 6 > "$WORLD/garbage.txt" 2>&1
echo "# garbage: $(cat "$WORLD/garbage.txt")"
like "$(cat "$WORLD/garbage.txt")" 'open=0 5xx=0 2xx=0$' "random bytes: every connection answered 4xx or closed, none held, none 2xx/5xx"
ok "the server is still running" alive "$MAIN"
U GET /api/runtime/python
is "$CODE" 200 "and answers a whole request"

# ---- a request not complete within --request-timeout (2 s) is answered
# 408 in the error shape before it is cut (ad9367e closed it without a
# word): half a request then nothing, and nothing at all. curl's telnet://
# writes what it is given and prints what comes back.
cut_answer() { # FILE: "STATUS schema code" of the raw answer in FILE
	"${PYTHON3:-python3}" -c '
import json, sys
raw = open(sys.argv[1], "rb").read().decode()
head, _, body = raw.partition("\r\n\r\n")
d = json.loads(body)
print(head.split()[1], d.get("schema"), d["error"]["code"], "Connection: close" in head)' "$1" 2>&1
}
(printf 'GET /api/runtime/python HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' ; sleep 4) |
	curl -s --max-time 8 --unix-socket "$SOCK" telnet://localhost > "$WORLD/cut-half.txt"
is "$(cut_answer "$WORLD/cut-half.txt")" "408 1 request-timeout True" "half a request past --request-timeout: 408, schema 1, connection closed"
sleep 4 | curl -s --max-time 8 --unix-socket "$SOCK" telnet://localhost > "$WORLD/cut-silent.txt"
is "$(cut_answer "$WORLD/cut-silent.txt")" "408 1 request-timeout True" "a silent connection past it: 408 as well"

# ---- a body trickled a byte every 0.5 s (with a length, or chunked) is cut
# at --request-timeout (2 s) like a trickled header
for HOW in length chunked; do
	SLOWBODY=$($HOSTILE slowbody "$SOCK" $HOW 10 2>&1)
	ok "a $HOW body trickled a byte at a time is cut, not held ($SLOWBODY)" \
		"${PYTHON3:-python3}" -c "import sys; w = sys.argv[1].split(); sys.exit(not (w[0] in ('closed', 'answered') and float(w[1]) <= 6.0))" "$SLOWBODY"
done

# ---- many half-open connections: 40 at once against --max-connections 8
# (libmicrohttpd takes 8 more, to answer 429; the rest wait in the listen
# queue or are closed): the server's threads stay bounded and every held
# one is cut by --request-timeout (2 s)
BASE=$(awk '/^Threads:/ { print $2 }' "/proc/$MAIN/status")
$HOSTILE slowloris "$SOCK" "$MAIN" 40 12 > "$WORLD/slowloris.txt" 2>&1
echo "# slowloris: $(cat "$WORLD/slowloris.txt") (threads before: $BASE)"
THREADS=$(sed -n 's/.*threads=\([0-9]*\).*/\1/p' "$WORLD/slowloris.txt")
ok "threads while 40 half-open connections were held: at most one per connection taken (8 + 8) more than before" \
	test "${THREADS:-999}" -le $((BASE + 16))
like "$(cat "$WORLD/slowloris.txt")" 'open=0$' "every half-open connection was closed within 12 s"
LAST=$(sed -n 's/.*last_cut=\([0-9.]*\).*/\1/p' "$WORLD/slowloris.txt")
ok "the last was cut by --request-timeout (2 s) in waves of the connections taken, not held ($LAST s)" \
	"${PYTHON3:-python3}" -c "import sys; sys.exit(not 1.0 <= float(sys.argv[1]) <= 10.0)" "${LAST:-99}"
ok "the server is still running" alive "$MAIN"
U GET /api/runtime/python
is "$CODE" 200 "a whole request after them is answered"
sleep 0.5
AFTER=$(awk '/^Threads:/ { print $2 }' "/proc/$MAIN/status")
ok "the connections' threads are gone ($AFTER, before $BASE)" test "$AFTER" -le $((BASE + 1))
stop_serve "$MAIN"
