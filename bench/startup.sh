#!/usr/bin/env bash
# Startup and footprint, Sluice beside Apache Kafka (compat/kafka-peer: the JVM, its jars from
# Maven Central): from exec to the "Kafka Server started" line (each broker's own log
# timestamp), the resident memory 5 s later with no client, and what is installed (the
# stripped binary; Kafka's jars). A fresh single node in a temporary directory each round.
# Usage: bench/startup.sh [ROUNDS]     (3 by default; builds the release binary first)
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
cargo build --quiet --release --bin sluice || exit 2
work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  compat/kafka-peer/kafka stop "$work/kafka" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
strip -o "$work/sluice" target/release/sluice
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ms() { date -d "$1" +%s%3N; }
rss_mib() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
wait_for() { # file pattern
  for _ in $(seq 1 1200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}
compat/kafka-peer/kafka fetch || exit 2
printf '%-7s %5s %12s %13s\n' broker round "ready (ms)" "idle RSS MiB"
for round in $(seq 1 "$rounds"); do
  dir="$work/sluice-$round"; mkdir -p "$dir"
  launched=$(date +%s%3N)
  "$work/sluice" --override "listeners=PLAINTEXT://127.0.0.1:$(free_port)" --override "log.dirs=$dir/data" \
    >"$dir/log" 2>&1 &
  pid=$!
  wait_for "$dir/log" "Kafka Server started" || { echo "sluice did not start"; cat "$dir/log"; exit 1; }
  ready=$(ms "$(grep -m1 "Kafka Server started" "$dir/log" | awk '{print $1}')")
  sleep 5
  printf '%-7s %5s %12s %13s\n' sluice "$round" "$((ready - launched))" "$(rss_mib "$pid")"
  kill "$pid"; wait "$pid" 2>/dev/null; pid=""

  compat/kafka-peer/kafka start "$work/kafka" >/dev/null || exit 1
  node="$work/kafka/node-1"
  line=$(grep -m1 "Kafka Server started" "$node/server.log")
  ready=$(ms "$(sed -E 's/^\[([0-9-]+ [0-9:]+),([0-9]+)\].*/\1.\2/' <<<"$line")")
  sleep 5
  printf '%-7s %5s %12s %13s\n' kafka "$round" "$((ready - $(cat "$node/launched-ms")))" "$(rss_mib "$(cat "$node/pid")")"
  compat/kafka-peer/kafka stop "$work/kafka"; rm -rf "$work/kafka"
done
echo "sluice binary (stripped): $(du -h "$work/sluice" | cut -f1); Kafka's jars: $(du -sh "$(compat/kafka-peer/kafka classpath | sed 's:/\*$::')" | cut -f1)"
