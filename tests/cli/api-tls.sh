#!/bin/sh
# pyward serve over TLS (--tls-cert/--tls-key): a CA and a server
# certificate for localhost made by openssl here (tests/fixtures/make_ca.sh),
# curl --cacert against the listener, and what is refused: plain HTTP on the
# TLS port, a client that does not trust the CA, a key that is not the
# certificate's, half a pair, an address off loopback without TLS.
. "$TOP_SRCDIR/tests/lib.sh"
command -v openssl >/dev/null 2>&1 || skip_all "openssl not installed"
serve_world
sh "$TOP_SRCDIR/tests/fixtures/make_ca.sh" "$WORLD/tls" || skip_all "openssl could not make the test CA"
CA="$WORLD/tls/ca.pem" CERT="$WORLD/tls/server.pem" KEY="$WORLD/tls/server.key"
TOKEN=0123456789abcdef0123456789abcdef
printf 'ops-team %s\n' "$TOKEN" > "$WORLD/tokens"
chmod 600 "$WORLD/tokens"
printf 'audit_log = none\n' > "$PYWARD_SYSTEM_CONFIG"

# S PATH [curl args]: HTTPS with the token; the status in CODE, curl's exit in CURL_RC.
S() {
	_p=$1; shift
	CODE=$(curl -s -o "$WORLD/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$@" "https://localhost:$PORT$_p")
	CURL_RC=$?
	BODY=$(cat "$WORLD/body" 2>/dev/null)
}

plan 17

# ---- a TLS listener on loopback
serve tls --listen 127.0.0.1:0 --token-file "$WORLD/tokens" --tls-cert "$CERT" --tls-key "$KEY"
ok "serve starts with --tls-cert and --tls-key" test -n "$PORT"
TLS=$SERVE_PID
like "$(cat "$WORLD/tls.err")" "^listening on 127\.0\.0\.1:$PORT \(TLS\)$" "its listening line says TLS"
S /api/runtime/python --cacert "$CA"
is "$CODE" 200 "curl --cacert with the test CA: 200 over HTTPS"
is "$(J 'd["state"]')" "not-provisioned" "the status object came over TLS"
PROTO=$(curl -s -o /dev/null -w '%{scheme} %{ssl_verify_result}' --cacert "$CA" -H "Authorization: Bearer $TOKEN" \
	"https://localhost:$PORT/api/runtime/python")
is "$PROTO" "HTTPS 0" "curl verified the server's certificate (ssl_verify_result 0)"
CN=$(openssl s_client -connect "127.0.0.1:$PORT" -servername localhost -CAfile "$CA" </dev/null 2>/dev/null |
	openssl x509 -noout -subject 2>/dev/null)
like "$CN" "CN ?= ?localhost" "the certificate served is the one given (CN=localhost)"
CODE=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer wrongwrongwrongwrong" \
	"https://localhost:$PORT/api/runtime/python")
is "$CODE" 401 "the token is still required over TLS: 401"
S /api/runtime/python --cacert "$WORLD/tls/other-ca.pem"
is "$CURL_RC" 60 "a client that does not trust the CA refuses the server (curl exit 60)"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/runtime/python")
is "$CODE" 000 "plain HTTP on the TLS port gets no HTTP answer"
S /api/runtime/python --cacert "$CA"
is "$CODE" 200 "and the listener still serves TLS afterwards"
stop_serve "$TLS"

# ---- what is refused before serving
run --box-root "$BOX" serve --listen 127.0.0.1:0 --token-file "$WORLD/tokens" --tls-cert "$CERT"
is "$RC" 2 "--tls-cert without --tls-key: usage error (exit 2)"
run --box-root "$BOX" serve --listen 127.0.0.1:0 --token-file "$WORLD/tokens" --tls-cert "$CERT" --tls-key "$WORLD/tls/ca.key"
like "$RC:$ERR" "^[1-9][0-9]*:.*cannot start the HTTP server" "a key that is not the certificate's: serve refuses to start"
like "$ERR" "PEM pair" "and the hint says they must be a pair"
run --box-root "$BOX" serve --listen 0.0.0.0:0 --token-file "$WORLD/tokens"
is "$RC" 3 "an address off loopback without TLS is refused (exit 3)"

# ---- an address off loopback with TLS: it serves; Host must be allowed by name
serve any --listen 0.0.0.0:0 --token-file "$WORLD/tokens" --tls-cert "$CERT" --tls-key "$KEY"
ANY=$SERVE_PID
like "$(cat "$WORLD/any.err")" "^listening on 0\.0\.0\.0:[1-9][0-9]* \(TLS\)$" "0.0.0.0 with TLS starts"
S /api/runtime/python --cacert "$CA"
is "$CODE $(J 'd["error"]["code"]')" "403 host-not-allowed" "Host: localhost is not this listener's name without --allow-host"
stop_serve "$ANY"
serve any2 --listen 0.0.0.0:0 --token-file "$WORLD/tokens" --tls-cert "$CERT" --tls-key "$KEY" --allow-host localhost
ANY=$SERVE_PID
S /api/runtime/python --cacert "$CA"
is "$CODE" 200 "with --allow-host localhost it answers over TLS: 200"
stop_serve "$ANY"

done_testing
