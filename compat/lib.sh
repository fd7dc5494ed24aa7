# Shared by the compat suites: start a fresh broker (or use --bootstrap), count results.
# Source it from a suite's run script after setting SUITE.
set -uo pipefail
COMPAT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$COMPAT_ROOT"

bootstrap=""
if [[ "${1:-}" == "--bootstrap" ]]; then bootstrap="${2:?--bootstrap needs HOST:PORT}"; fi

work=$(mktemp -d)
broker_pid=""
cleanup() {
  if [[ -n "$broker_pid" ]]; then kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Starts our own broker on a free loopback port unless --bootstrap was given.
start_broker() {
  [[ -n "$bootstrap" ]] && return 0
  cargo build --quiet --release --bin sluice || exit 2
  ./target/release/sluice --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$work/data" \
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
