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
  cargo build --quiet --bin sluice || exit 2
  ./target/debug/sluice --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$work/data" \
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

passed=0; failed=0
check() { # name, expected substring, actual output
  if [[ "$3" == *"$2"* ]]; then echo "ok   $SUITE/$1"; passed=$((passed + 1));
  else echo "FAIL $SUITE/$1: expected '$2' in:"; echo "$3" | sed 's/^/     /'; failed=$((failed + 1)); fi
}
check_eq() { # name, expected, actual (exact)
  if [[ "$3" == "$2" ]]; then echo "ok   $SUITE/$1"; passed=$((passed + 1));
  else echo "FAIL $SUITE/$1: expected '$2', got '$3'"; failed=$((failed + 1)); fi
}
# Counts "ok"/"FAIL" lines printed by a client script and echoes them.
tally() {
  while IFS= read -r line; do
    echo "$line"
    case "$line" in
      "ok   "*) passed=$((passed + 1)) ;;
      "FAIL "*) failed=$((failed + 1)) ;;
    esac
  done
}
finish() {
  echo "$SUITE: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
