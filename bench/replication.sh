#!/usr/bin/env bash
# acks=1 against acks=all on a three-node cluster (config/cluster-node-{1,2,3}.properties,
# loopback ports 9092-9094 and 19092-19094 must be free), side by side in one run with
# librdkafka's rdkafka_performance, alternating, two rounds. A measurement, not a test.
# Usage: RDKAFKA_PERFORMANCE=/path/to/rdkafka_performance bench/replication.sh [MESSAGES]
set -u
cd "$(dirname "$0")/.."
messages=${1:-1500000}
perf=${RDKAFKA_PERFORMANCE:?set RDKAFKA_PERFORMANCE to librdkafka examples/rdkafka_performance}
cargo build --quiet --release --bin sluice || exit 2
work=$(mktemp -d)
pids=()
stop() { kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$work"; }
trap stop EXIT
for i in 1 2 3; do
  ./target/release/sluice --config "config/cluster-node-$i.properties" --override "log.dirs=$work/n$i" > "$work/n$i.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 1 150); do
  ready=0
  for i in 1 2 3; do grep -q "listening on 127.0.0.1:909" "$work/n$i.log" 2>/dev/null && ready=$((ready + 1)); done
  [[ $ready == 3 ]] && break
  sleep 0.2
done
bootstrap=127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094
for round in 1 2; do
  for acks in 1 -1; do
    topic="bench-replication-$round-${acks/-/all}"
    # The first messages create the topic: 3 partitions, RF 3, min.insync.replicas 2.
    "$perf" -P -t "$topic" -b "$bootstrap" -s 100 -c 1000 -a "$acks" >/dev/null 2>&1
    result=$(timeout 300 "$perf" -P -t "$topic" -b "$bootstrap" -s 100 -c "$messages" -a "$acks" \
      -X linger.ms=5 -X enable.idempotence=false 2>&1 | grep -o '[0-9]* msgs/s' | tail -1)
    echo "round $round acks=$acks: $result"
  done
done
