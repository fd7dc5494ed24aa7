#!/usr/bin/env bash
# The cost of an active client quota, side by side in one run: two brokers of the same build,
# one without quotas and one where every request is measured against quotas it never reaches
# (the default user's producer_byte_rate, consumer_byte_rate, request_percentage and
# controller_mutation_rate set far above what the machine can do), driven alternately by
# `cargo bench --bench broker` (produce, then consume); prints msgs/s and broker CPU seconds of
# each, and the ratio quota/none per round.
# Usage: bench/quotas.sh [SLUICE_BINARY]   (default: this checkout's release build)
# Settings (environment): ROUNDS (4), MESSAGES (2,000,000), SIZE (100).
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${1:-}" ]]; then
  binary=$(realpath "$1")
else
  cargo build --quiet --release --bin sluice || exit 2
  binary=$(realpath target/release/sluice)
fi
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
declare -A bootstrap pid
for setting in none quota; do
  port=$(free_port)
  "$binary" --override "log.dirs=$work/$setting" --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override http.listener= >"$work/$setting.log" 2>&1 &
  pid[$setting]=$!
  pids+=($!)
  bootstrap[$setting]=127.0.0.1:$port
  wait_port "$port" || { echo "the $setting broker did not start"; cat "$work/$setting.log"; exit 2; }
done
"$binary" configs --bootstrap-server "${bootstrap[quota]}" --alter --entity-type users --entity-default \
  --add-config producer_byte_rate=1000000000000,consumer_byte_rate=1000000000000,request_percentage=1000000,controller_mutation_rate=1000000 \
  || exit 2
for round in $(seq 1 "${ROUNDS:-4}"); do
  order=(none quota)
  (( round % 2 == 0 )) && order=(quota none)
  for setting in "${order[@]}"; do
    cargo bench --quiet --bench broker -- --bootstrap "${bootstrap[$setting]}" --broker-pid "${pid[$setting]}" \
      --scenarios produce,consume --messages "${MESSAGES:-2000000}" --size "${SIZE:-100}" \
      --json "$work/$setting-$round.json" >/dev/null 2>&1 || { echo "benchmark failed ($setting, round $round)"; exit 2; }
  done
done
python3 - "$work" "${ROUNDS:-4}" <<'PY'
import json, sys, os
work, rounds = sys.argv[1], int(sys.argv[2])
def load(setting, r):
    out = {}
    for line in open(os.path.join(work, f"{setting}-{r}.json")):
        e = json.loads(line)
        out[e["scenario"]] = e
    return out
print(f"{'scenario':<9} {'round':>5} {'none msgs/s':>12} {'quota msgs/s':>13} {'quota/none':>10} {'none cpu s':>10} {'quota cpu s':>11}")
ratios = {}
for r in range(1, rounds + 1):
    none, quota = load("none", r), load("quota", r)
    for scenario in ("produce", "consume"):
        a, b = none[scenario], quota[scenario]
        ratio = b["msgs_per_sec"] / a["msgs_per_sec"]
        ratios.setdefault(scenario, []).append(ratio)
        print(f"{scenario:<9} {r:>5} {a['msgs_per_sec']:>12,.0f} {b['msgs_per_sec']:>13,.0f} {ratio:>10.3f} "
              f"{a.get('broker_cpu_seconds', 0):>10.2f} {b.get('broker_cpu_seconds', 0):>11.2f}")
for scenario, values in ratios.items():
    values.sort()
    print(f"{scenario:<9} median quota/none {values[len(values) // 2]:.3f} over {len(values)} rounds")
PY
