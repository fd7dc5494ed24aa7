# Shared by the compat suites: start a fresh broker (or use --bootstrap), count results.
# Source it from a suite's run script after setting SUITE.
set -uo pipefail
COMPAT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$COMPAT_ROOT"

# The broker the suites run: the release build, or the debug build the tests already made when
# COMPAT_PROFILE=debug (CI: the clients' behaviour is the same and it saves the release build).
COMPAT_PROFILE="${COMPAT_PROFILE:-release}"
case "$COMPAT_PROFILE" in
  release) SLUICE="$COMPAT_ROOT/target/release/sluice"; profile_flag=(--release) ;;
  debug) SLUICE="$COMPAT_ROOT/target/debug/sluice"; profile_flag=() ;;
  *) echo "COMPAT_PROFILE must be release or debug, not $COMPAT_PROFILE"; exit 2 ;;
esac
build_sluice() { cargo build --quiet "${profile_flag[@]}" --bin sluice || exit 2; }

bootstrap=""
if [[ "${1:-}" == "--bootstrap" ]]; then bootstrap="${2:?--bootstrap needs HOST:PORT}"; fi

work=$(mktemp -d)
broker_pid=""
# Whether process $1 (a child of this script) still runs: an exited child stays a zombie, to
# kill -0 alive, until it is waited for.
running() { local state; state=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $state != Z* ]]; }
# Stops process $1 (a child) with SIGTERM and waits for it, at most 60 s: then SIGKILL, a line
# naming $2, and false. A broker that does not stop must not hold up the run for ever.
stop_process() {
  local pid=$1 what=${2:-process $1}
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 600); do
    running "$pid" || { wait "$pid" 2>/dev/null; return 0; }
    sleep 0.1
  done
  echo "$what (pid $pid) still ran 60 s after SIGTERM; killed"
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  return 1
}
cleanup() {
  if [[ -n "$broker_pid" ]]; then stop_process "$broker_pid" broker; fi
  if [[ -n "$secure_pid" ]]; then stop_process "$secure_pid" "secure broker"; fi
  rm -rf "$work"
}
trap cleanup EXIT
# SIGTERM (compat/run --parallel's time limit for a suite): a failed case, and the end of each
# log the suite keeps, so that a suite stuck somewhere says where.
on_sigterm() {
  trap - TERM
  echo "FAIL $SUITE/within-its-time-limit: stopped by SIGTERM; the end of each log it kept:"
  local log
  for log in "$work"/*.log; do
    [[ -f "$log" ]] || continue
    echo "     --- ${log##*/}"; tail -15 "$log" | sed 's/^/     /'
  done
  failed=$((failed + 1))
  finish
  exit 143
}
trap on_sigterm TERM

# Starts our own broker on a free loopback port unless --bootstrap was given.
start_broker() {
  [[ -n "$bootstrap" ]] && return 0
  build_sluice
  "$SLUICE" --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$work/data" \
    --override group.initial.rebalance.delay.ms=0 "$@" >"$work/broker.log" 2>&1 &
  broker_pid=$!
  for _ in $(seq 1 300); do
    bootstrap=$(grep -o 'listening on [0-9.:]*' "$work/broker.log" | head -1 | sed 's/listening on //')
    [[ -n "$bootstrap" ]] && return 0
    kill -0 "$broker_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "broker did not start:"; cat "$work/broker.log"; exit 2
}

# A second broker with every security protocol (issue 17), for a suite's security cases:
# listeners SSL, SASL_PLAINTEXT, SASL_SSL and MTLS (SSL requiring client certificates, whose
# CN is the principal through ssl.principal.mapping.rules); PLAIN (users admin and alice, from a
# static JAAS file), SCRAM-SHA-256/512 (alice and admin, from `sluice format --add-scram`) and
# unsecured OAUTHBEARER; Kafka's StandardAuthorizer with User:admin a super user and
# allow.everyone.if.no.acl.found=true (a resource is closed once an ACL names it); delegation
# tokens enabled (`delegation.token.secret.key`).
# Certificates are made now with openssl: $pki/ca.pem, $pki/client.pem, $pki/client.key.
# Sets $secure_ssl, $secure_sasl_plaintext, $secure_sasl_ssl, $secure_mtls.
secure_pid=""
start_secure_broker() {
  build_sluice
  pki="$work/pki"; mkdir -p "$pki"
  (
    cd "$pki" || exit 2
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=compat CA" &&
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" &&
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt &&
    openssl pkcs8 -topk8 -nocrypt -in server.key -out server.pk8 && cat server.pk8 server.crt >server.pem &&
    openssl req -newkey rsa:2048 -nodes -keyout client.rsa -out client.csr -subj "/O=compat/CN=alice" &&
    printf 'extendedKeyUsage=clientAuth\n' >client.ext &&
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.pem &&
    openssl pkcs8 -topk8 -nocrypt -in client.rsa -out client.key
  ) >"$work/pki.log" 2>&1 || { echo "cannot make certificates:"; cat "$work/pki.log"; exit 2; }
  cat >"$pki/jaas.conf" <<'JAAS'
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
    user_admin="admin-secret" user_alice="alice-secret";
  org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
};
JAAS
  local data="$work/secure-data"
  "$SLUICE" format --override "log.dirs=$data" \
    --add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]' \
    --add-scram 'SCRAM-SHA-512=[name=alice,password=alice-secret]' \
    --add-scram 'SCRAM-SHA-256=[name=admin,password=admin-secret]' >"$work/format.log" 2>&1 \
    || { echo "sluice format failed:"; cat "$work/format.log"; exit 2; }
  "$SLUICE" --override "log.dirs=$data" \
    --override listeners=SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0 \
    --override listener.security.protocol.map=SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL \
    --override ssl.keystore.type=PEM --override "ssl.keystore.location=$pki/server.pem" \
    --override ssl.truststore.type=PEM --override "ssl.truststore.location=$pki/ca.pem" \
    --override listener.name.mtls.ssl.client.auth=required \
    --override 'listener.name.mtls.ssl.principal.mapping.rules=RULE:^.*CN=([^,]+).*$/$1/,DEFAULT' \
    --override sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER \
    --override "java.security.auth.login.config=$pki/jaas.conf" \
    --override authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \
    --override super.users=User:admin --override allow.everyone.if.no.acl.found=true \
    --override delegation.token.secret.key=compat-token-secret \
    --override group.initial.rebalance.delay.ms=0 >"$work/secure-broker.log" 2>&1 &
  secure_pid=$!
  local name
  for _ in $(seq 1 300); do
    for name in SSL SASL_PLAINTEXT SASL_SSL MTLS; do
      local address
      address=$(grep -E "listening on [0-9.:]+ listener=$name\$" "$work/secure-broker.log" | head -1 | sed -E 's/.*listening on ([0-9.:]+).*/\1/')
      printf -v "secure_${name,,}" '%s' "$address"
    done
    [[ -n "$secure_ssl" && -n "$secure_sasl_plaintext" && -n "$secure_sasl_ssl" && -n "$secure_mtls" ]] && return 0
    kill -0 "$secure_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "secure broker did not start:"; cat "$work/secure-broker.log"; exit 2
}

passed=0; failed=0; xfailed=0
expected_failure() { # suite/case -> the reason if the case is listed in EXPECTED_FAILURES
  grep -E "^$1[[:space:]]" "$COMPAT_ROOT/compat/EXPECTED_FAILURES" 2>/dev/null | sed -E 's/^[^[:space:]]+[[:space:]]+//'
}
check() { # name, expected substring, actual output
  if [[ "$3" == *"$2"* ]]; then echo "ok   $SUITE/$1"; passed=$((passed + 1));
  else echo "FAIL $SUITE/$1: expected '$2' in:"; echo "$3" | sed 's/^/     /'; failed=$((failed + 1)); fi
}
check_eq() { # name, expected, actual (exact)
  if [[ "$3" == "$2" ]]; then echo "ok   $SUITE/$1"; passed=$((passed + 1));
  else echo "FAIL $SUITE/$1: expected '$2', got '$3'"; failed=$((failed + 1)); fi
}
# Counts "ok"/"FAIL" lines printed by a client script and echoes them, applying
# EXPECTED_FAILURES.
tally() {
  while IFS= read -r line; do
    local name reason
    case "$line" in
      "ok   "*)
        name=${line#ok   }
        reason=$(expected_failure "$name")
        if [[ -n "$reason" ]]; then
          echo "XPASS $name: listed in compat/EXPECTED_FAILURES ($reason) but passed; remove the line"
          failed=$((failed + 1))
        else
          echo "$line"; passed=$((passed + 1))
        fi ;;
      "FAIL "*)
        name=${line#FAIL }; name=${name%%:*}
        reason=$(expected_failure "$name")
        if [[ -n "$reason" ]]; then
          echo "xfail $name ($reason)"; xfailed=$((xfailed + 1))
        else
          echo "$line"; failed=$((failed + 1))
        fi ;;
      *) echo "$line" ;;
    esac
  done
}
finish() {
  (( xfailed )) && echo "$SUITE: $xfailed expected failures (features not built yet, see compat/EXPECTED_FAILURES)"
  echo "$SUITE: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
