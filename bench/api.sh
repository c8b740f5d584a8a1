#!/bin/sh
# GET /api/runtime/python from `pyward serve` over TCP loopback (bearer
# token, Host checked), beside
#   - `pyward runtime status --json` as a process per request (what a
#     monitoring script without the API would run), and
#   - nginx serving a static JSON file of the same size (the ceiling),
# in one run. Two loads:
#   fixed: exactly RATE requests a second (default 1,000) over 10 keep-alive
#          connections from bench/rate_client.c, a constant-rate client in the
#          manner of wrk2 (not in Debian): each request's latency counts from
#          when it was due, so a stall shows in every request it held back.
#          ROUNDS rounds (default 3), serve and nginx interleaved, each with
#          the load average beside it; medians at the end (goal: p99 under
#          5 ms at 1,000 requests/s). The client's own lateness (how late it
#          sent, p99) is printed too: on a crowded machine it is part of every
#          latency, nginx's as much as serve's; and the time from the actual
#          send to the whole answer (p99), which leaves the client's lateness
#          out.
#   max:   wrk, as fast as it goes with 10 connections (goal: at least half of
#          nginx's requests/s).
# The box has the suite's fixture runtime installed (from a local archive),
# so the status is the real one. nginx is started on a loopback port by this
# script and stopped by its own PID, as is pyward serve.
# MODE=jobs: instead, GET /api/jobs (the list) and GET /api/jobs/ID (a job an
# earlier server ran, read from the catalog) with JOBS rows in api_jobs
# (default 50), beside the same endpoints of a server built from BASE_BUILD
# (e.g. a build of an older commit) on the same box, rounds interleaved:
# the fixed load and wrk's max for each, and the ratios.
# Run it at raised priority (CPU is shared): nice -n -5 bench/api.sh
# Usage: BUILD_DIR=_build [RATE=1000] [ROUNDS=3] [MODE=jobs BASE_BUILD=dir [JOBS=50]] bench/api.sh [SECONDS]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/_build}
case $build in /*) ;; *) build=$here/$build ;; esac
secs=${1:-10}
rate=${RATE:-1000}
rounds=${ROUNDS:-3}
py="$build/src/pyward"
[ -x "$py" ] || { echo "build first: ./setup.sh test" >&2; exit 2; }
for t in wrk nginx curl python3 cc; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] ||
		{ echo "$t needed: ./setup.sh deps installs wrk and nginx" >&2; exit 2; }
done
nginx_bin=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)

WORLD=$(mktemp -d)
SERVE_PID="" NGINX_PID="" BASE_PID=""
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	[ -n "$BASE_PID" ] && kill "$BASE_PID" 2>/dev/null && wait "$BASE_PID" 2>/dev/null
	[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
	rm -rf "$WORLD"
}
trap cleanup EXIT
export HOME="$WORLD/home" XDG_CONFIG_HOME="$WORLD/xdg" PYWARD_SYSTEM_CONFIG="$WORLD/none.conf"
mkdir -p "$HOME" "$WORLD/box" "$WORLD/ws" "$WORLD/www"
printf 'audit_log = none\n' > "$PYWARD_SYSTEM_CONFIG"
cc -O2 -std=c11 -pthread "$here/bench/rate_client.c" -o "$WORLD/rate_client"

# ---- a box with the fixture runtime
set -- $(sh "$here/tests/fixtures/make_runtime_archive.sh" "$WORLD/rel")
ver=$1 sha=$2 size=$3
printf 'version\trelease\tplatform\turl\tsha256\tsize\n%s\t1\t%s-unknown-linux-gnu\thttps://localhost/x.tar.gz\t%s\t%s\n' \
	"$ver" "$(uname -m)" "$sha" "$size" > "$WORLD/pins.tsv"
"$py" --box-root "$WORLD/box" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" --no-baseline \
	--archive "$WORLD/rel/cpython-fixture-install_only.tar.gz" --yes -q --no-progress >/dev/null 2>&1 ||
"$py" --box-root "$WORLD/box" -C "$WORLD/ws" runtime install --pins "$WORLD/pins.tsv" \
	--archive "$WORLD/rel/cpython-fixture-install_only.tar.gz" --yes -q --no-progress >/dev/null

# ---- pyward serve on a free loopback port
token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
printf 'bench %s\n' "$token" > "$WORLD/tokens" && chmod 600 "$WORLD/tokens"
# serve_on BIN NAME: BIN serves the box in the background (its pid in
# served_pid, its stderr in $WORLD/NAME.err); served_port NAME prints its
# port once it listens (nothing when it does not within 5 s).
serve_on() {
	"$1" --box-root "$WORLD/box" -C "$WORLD/ws" serve --listen 127.0.0.1:0 --token-file "$WORLD/tokens" \
		--max-connections 200 2> "$WORLD/$2.err" &
	served_pid=$!
}
served_port() {
	i=0
	while ! grep -q 'listening on 127' "$WORLD/$1.err" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORLD/$1.err"
}
serve_on "$py" serve
SERVE_PID=$served_pid
port=$(served_port serve)
[ -n "$port" ] || { cat "$WORLD/serve.err" >&2; exit 1; }
api="http://127.0.0.1:$port/api/runtime/python"
curl -sf -H "Authorization: Bearer $token" "$api" > "$WORLD/www/status.json"
bytes=$(wc -c < "$WORLD/www/status.json")
# nginx's workers run as another user when started by root: let them in.
chmod 711 "$WORLD" && chmod 755 "$WORLD/www" && chmod 644 "$WORLD/www/status.json"

# ---- nginx with the same bytes, one worker per core as a tuned site would
nport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$WORLD/nginx.conf" <<EOF
daemon off;
worker_processes auto;
pid $WORLD/nginx.pid;
error_log $WORLD/nginx.err;
events { worker_connections 512; }
http {
	access_log off;
	keepalive_requests 1000000;
	client_body_temp_path $WORLD/tmp; proxy_temp_path $WORLD/tmp; fastcgi_temp_path $WORLD/tmp;
	uwsgi_temp_path $WORLD/tmp; scgi_temp_path $WORLD/tmp;
	server {
		listen 127.0.0.1:$nport;
		root $WORLD/www;
		location / { default_type application/json; }
	}
}
EOF
mkdir -p "$WORLD/tmp"
"$nginx_bin" -c "$WORLD/nginx.conf" -e "$WORLD/nginx.err" &
NGINX_PID=$!
i=0
while ! curl -sf "http://127.0.0.1:$nport/status.json" >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
ngx="http://127.0.0.1:$nport/status.json"
[ "$(curl -sf "$ngx" | wc -c)" = "$bytes" ] || { echo "nginx did not serve the file" >&2; exit 1; }

# run NAME URL [HEADER]: wrk as fast as it goes; prints "NAME max req/s p50_ms p99_ms"
run() {
	name=$1 url=$2
	shift 2
	wrk -t2 -c10 -d"${secs}s" --latency "$@" "$url" > "$WORLD/wrk.out" 2>&1
	python3 - "$WORLD/wrk.out" "$name" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
lat = {m.group(1): ms(m.group(2), m.group(3)) for m in re.finditer(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
if errs:
    print("# %s: %s non-2xx answers" % (sys.argv[2], errs.group(1)), file=sys.stderr)
print("%s max %.0f %.3f %.3f" % (sys.argv[2], rps, lat.get("50", -1), lat.get("99", -1)))
EOF
}

# fixed NAME PORT PATH [HEADER]: RATE requests/s for SECONDS (the first one
# not counted); prints "NAME fixed req/s p50_ms p99_ms p999_ms max_ms late_p99_ms svc_p99_ms load1"
fixed() {
	name=$1 p=$2 path=$3
	shift 3
	set -- $("$WORLD/rate_client" 127.0.0.1 "$p" "$path" "$rate" "$secs" 10 1 "$@")
	[ "$#" -eq 13 ] || { echo "# $name: the rate client failed" >&2; return 1; }
	[ "$3" = 0 ] && [ "$4" = 0 ] || echo "# $name: $3 non-2xx answers, $4 errors" >&2
	echo "$name fixed $5 $6 $8 $9 ${10} ${11} ${13} $(cut -d' ' -f1 /proc/loadavg)"
}

# fixed_rounds: each line of standard input ("NAME PORT PATH [HEADER]") at
# the fixed load in turn, ROUNDS times, so the rounds interleave them.
fixed_rounds() {
	specs=$(cat)
	r=1
	while [ "$r" -le "$rounds" ]; do
		printf '%s\n' "$specs" | while read -r name p path header; do
			fixed "$name" "$p" "$path" ${header:+"$header"} </dev/null
		done
		r=$((r + 1))
	done
}

# ---- a process per request: sequential, like a cron job or a scrape wrapper
per_process() {
	n=$1
	python3 - "$py" "$WORLD/box" "$WORLD/ws" "$n" <<'EOF'
import subprocess, sys, time
py, box, ws, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lat = []
start = time.perf_counter()
for _ in range(n):
    t = time.perf_counter()
    subprocess.run([py, "--box-root", box, "-C", ws, "runtime", "status", "--json"], stdout=subprocess.DEVNULL, check=True)
    lat.append((time.perf_counter() - t) * 1000)
total = time.perf_counter() - start
lat.sort()
print("process sequential %.0f %.3f %.3f" % (n / total, lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]))
EOF
}

if [ "${MODE:-status}" = jobs ]; then
	base="${BASE_BUILD:?MODE=jobs needs BASE_BUILD=a build dir to compare with}/src/pyward"
	case $base in /*) ;; *) base=$here/$base ;; esac
	[ -x "$base" ] || { echo "no $base" >&2; exit 2; }
	python3 - "$WORLD/box/catalog.sqlite3" "${JOBS:-50}" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for i in range(int(sys.argv[2])):
    db.execute("INSERT INTO api_jobs (kind, target, user, args, host, pid, proc_start, created_at, finished_at,"
               " state, result, events) VALUES ('venv.install', 'env', 'bench', 'POST /api/venvs/install', 'h',"
               " 1, 0, '2026-12-04T00:00:00.000Z', '2026-12-04T00:00:01.000Z', 'ok', ?, 5)",
               ('{"schema":1,"operation":%d,"outcome":"ok"}' % (i + 1),))
db.commit()
EOF
	serve_on "$base" base
	BASE_PID=$served_pid
	bport=$(served_port base)
	[ -n "$bport" ] || { cat "$WORLD/base.err" >&2; exit 1; }
	auth="Authorization: Bearer $token"
	jid=$(curl -sf -H "$auth" "http://127.0.0.1:$port/api/jobs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
	[ "$(curl -sf -H "$auth" "http://127.0.0.1:$port/api/jobs/$jid" | wc -c)" = \
	  "$(curl -sf -H "$auth" "http://127.0.0.1:$bport/api/jobs/$jid" | wc -c)" ] || { echo "the two servers answer differently" >&2; exit 1; }
	echo "# MODE=jobs: ${JOBS:-50} jobs in the catalog; $(nproc) cores; nice $(nice); $(uptime | sed 's/.*load/load/')"
	echo "# this build: $py; base: $base"
	echo "# fixed: $rate req/s, 10 connections, ${secs}s (1s warm-up not counted), $rounds rounds interleaved"
	echo "# name load req/s p50_ms p99_ms p99.9_ms max_ms client_late_p99_ms sent_to_answer_p99_ms load1"
	printf '%s\n' "list-new $port /api/jobs $auth" "list-base $bport /api/jobs $auth" \
		"one-new $port /api/jobs/$jid $auth" "one-base $bport /api/jobs/$jid $auth" | fixed_rounds | tee "$WORLD/fixed"
	echo "# max: wrk -t2 -c10 -d${secs}s, each twice, interleaved; name load req/s p50_ms p99_ms load1"
	{
		for r in 1 2; do
			for n in list one; do
				path=/api/jobs; [ $n = one ] && path=/api/jobs/$jid
				echo "$(run $n-new "http://127.0.0.1:$port$path" -H "$auth") $(cut -d' ' -f1 /proc/loadavg)"
				echo "$(run $n-base "http://127.0.0.1:$bport$path" -H "$auth") $(cut -d' ' -f1 /proc/loadavg)"
			done
		done
	} | tee "$WORLD/max"
	python3 - "$WORLD/fixed" "$WORLD/max" <<'EOF'
import statistics, sys
fixed, mx = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    fixed.setdefault(f[0], []).append([float(x) for x in f[2:]])
for line in open(sys.argv[2]):
    f = line.split()
    mx.setdefault(f[0], []).append(float(f[2]))
med = lambda name, col: statistics.median(r[col] for r in fixed[name])
for n in ("list", "one"):
    new, old = n + "-new", n + "-base"
    print("%s: fixed load medians: p50 %.3f ms vs base %.3f ms (ratio %.2f); p99 %.3f ms vs %.3f ms (ratio %.2f)"
          % (n, med(new, 1), med(old, 1), med(new, 1) / med(old, 1), med(new, 2), med(old, 2), med(new, 2) / med(old, 2)))
    print("%s: max req/s (median of 2): %.0f vs base %.0f (ratio %.2f)"
          % (n, statistics.median(mx[new]), statistics.median(mx[old]), statistics.median(mx[new]) / statistics.median(mx[old])))
EOF
	exit 0
fi

echo "# GET /api/runtime/python: $bytes bytes of JSON; $(nproc) cores; nice $(nice); $(uptime | sed 's/.*load/load/')"
echo "# fixed: $rate req/s, 10 connections, ${secs}s (1s warm-up not counted), $rounds rounds interleaved"
echo "# name load req/s p50_ms p99_ms p99.9_ms max_ms client_late_p99_ms sent_to_answer_p99_ms load1"
auth="Authorization: Bearer $token"
printf '%s\n' "pyward-serve $port /api/runtime/python $auth" "nginx $nport /status.json" | fixed_rounds | tee "$WORLD/fixed"
echo "# max: wrk -t2 -c10 -d${secs}s"
echo "# name load req/s p50_ms p99_ms"
{
	run pyward-serve "$api" -H "$auth"
	run nginx "$ngx"
	per_process 200
} | tee "$WORLD/results"

python3 - "$WORLD/fixed" "$WORLD/results" "$rate" <<'EOF'
import statistics, sys
fixed = {}
for line in open(sys.argv[1]):
    f = line.split()
    fixed.setdefault(f[0], []).append([float(x) for x in f[2:]])
r = {}
for line in open(sys.argv[2]):
    name, load, rps, p50, p99 = line.split()
    r[(name, load)] = (float(rps), float(p50), float(p99))
def med(name, col):
    return statistics.median(row[col] for row in fixed[name])
s_p50, s_p99, n_p50, n_p99 = med("pyward-serve", 1), med("pyward-serve", 2), med("nginx", 1), med("nginx", 2)
print("fixed load, medians of %d rounds: serve %.0f req/s p50 %.3f ms p99 %.3f ms; nginx %.0f req/s p50 %.3f ms p99 %.3f ms"
      % (len(fixed["pyward-serve"]), med("pyward-serve", 0), s_p50, s_p99, med("nginx", 0), n_p50, n_p99))
print("serve p99 at %s req/s: %.2f ms (goal < 5 ms at 1,000 req/s): %s"
      % (sys.argv[3], s_p99, "met" if s_p99 < 5 else "missed"))
print("ratio serve/nginx p99 at the fixed load (median): %.2f; p50: %.2f" % (s_p99 / n_p99, s_p50 / n_p50))
print("the client's own lateness, p99 (median of rounds): %.2f ms beside serve, %.2f ms beside nginx"
      % (med("pyward-serve", 5), med("nginx", 5)))
print("from the actual send to the whole answer, p99 (median of rounds): serve %.3f ms, nginx %.3f ms"
      % (med("pyward-serve", 6), med("nginx", 6)))
print("rounds where serve's p99 < 5 ms: %d of %d (nginx: %d of %d)" % (
    sum(row[2] < 5 for row in fixed["pyward-serve"]), len(fixed["pyward-serve"]),
    sum(row[2] < 5 for row in fixed["nginx"]), len(fixed["nginx"])))
api_m, ngx_m, proc = r[("pyward-serve", "max")], r[("nginx", "max")], r[("process", "sequential")]
print("ratio serve/nginx req/s at max load: %.2f (goal >= 0.50)" % (api_m[0] / ngx_m[0]))
print("ratio process-per-request/serve p50 latency (fixed load): %.1f" % (proc[1] / s_p50))
print("ratio serve/process-per-request req/s: %.1f" % (api_m[0] / proc[0]))
EOF
