#!/usr/bin/env bash
# The cost of idempotence: a single release broker, librdkafka's rdkafka_performance producing
# 100-byte messages with acks=all, plain and idempotent, alternating, two rounds. A
# measurement, not a test. rdkafka_performance has no transactional mode: the cost of
# transactions is measured by `cargo bench --bench broker` (scenarios produce-idempotent and
# produce-transactional; the command is in its doc comment).
# Usage: RDKAFKA_PERFORMANCE=/path/to/rdkafka_performance bench/idempotence.sh [MESSAGES] [PORT]
set -uo pipefail
cd "$(dirname "$0")/.."
messages=${1:-1000000}
port=${2:-9192}
perf=${RDKAFKA_PERFORMANCE:?set RDKAFKA_PERFORMANCE to librdkafka examples/rdkafka_performance}
cargo build --quiet --release --bin sluice || exit 2
work=$(mktemp -d)
./target/release/sluice --override "log.dirs=$work/data" \
  --override "listeners=PLAINTEXT://127.0.0.1:$port" > "$work/broker.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 150); do
  grep -q "listening on 127.0.0.1:$port" "$work/broker.log" 2>/dev/null && break
  sleep 0.2
done
for round in 1 2; do
  for idempotence in false true; do
    topic="bench-idempotence-$round-$idempotence"
    "$perf" -P -t "$topic" -b "127.0.0.1:$port" -s 100 -c 1000 -a -1 >/dev/null 2>&1
    result=$(timeout 300 "$perf" -P -t "$topic" -b "127.0.0.1:$port" -s 100 -c "$messages" -a -1 \
      -X linger.ms=5 -X enable.idempotence=$idempotence 2>&1 | grep -o '[0-9]* msgs/s' | tail -1)
    echo "round $round acks=all enable.idempotence=$idempotence: $result"
  done
done
