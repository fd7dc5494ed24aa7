#!/usr/bin/env bash
# Sluice against Apache Kafka (compat/kafka-peer, the same release's jars), side by side in one
# run with the same clients: Kafka's own kafka-producer-perf-test, kafka-consumer-perf-test and
# EndToEndLatency (the Java client). For each system, alternating, ROUNDS times:
#   start to first request served (exec to an answered ApiVersions), idle RSS 5 s after;
#   produce 100 B x 2,000,000 and 16 KiB x 20,000 (acks=1), then consume them: msgs/s, MB/s;
#   consume the 100 B ones again with one share consumer (KIP-932, kafka-share-consumer-perf-test);
#   end-to-end latency of 10,000 x 100 B, one in flight (Kafka's EndToEndLatency, whole ms),
#   and at a fixed rate of 5,000 msgs/s for 10 s (librdkafka: cargo bench --bench broker's
#   latency scenario, linger.ms=0): p50, p99, p99.9;
#   broker CPU seconds per GB produced and consumed; peak RSS;
#   on three nodes: produce 100 B x 1,000,000 with acks=all (replication factor 3, min ISR 2).
# Prints each round and a table of medians with the ratio Sluice/Kafka. A measurement, not a
# test: CI does not run it. Usage: bench/against-kafka.sh [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
peer=compat/kafka-peer/kafka
cargo build --quiet --release --bin sluice || exit 2
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
"$peer" fetch || exit 2
work=$(mktemp -d)
pids=()
kafka_dir=""
cleanup() {
  [[ ${#pids[@]} -gt 0 ]] && { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
  [[ -n "$kafka_dir" ]] && "$peer" stop "$kafka_dir" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits until HOST:PORT answers ApiVersions; prints the milliseconds since $1 (epoch ms).
answered_after() {
  python3 - "$1" "$2" <<'PY'
import socket, struct, sys, time
start, (host, port) = int(sys.argv[1]), sys.argv[2].split(":")
request = struct.pack(">hhih", 18, 0, 1, -1)
deadline = time.time() + 120
while time.time() < deadline:
    try:
        s = socket.create_connection((host, int(port)), 0.5)
        s.sendall(struct.pack(">i", len(request)) + request)
        if len(s.recv(4)) == 4:
            print(int(time.time() * 1000) - start)
            sys.exit(0)
    except OSError:
        time.sleep(0.005)
sys.exit(1)
PY
}
now_ms() { date +%s%3N; }
rss_mib() { awk -v k="$2:" '$1 == k {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat"; }
kafka_pid() { cat "$kafka_dir/node-1/pid"; }

start_system() { # system nodes -> sets bootstrap, broker_pid, startup_ms
  local system=$1 nodes=$2
  if [[ $system == kafka ]]; then
    kafka_dir="$work/kafka"; rm -rf "$kafka_dir"
    bootstrap=$("$peer" start "$kafka_dir" "$nodes") || exit 2
    broker_pid=$(kafka_pid)
    # From the node's launch (after formatting) to its "Kafka Server started" line, when it
    # serves requests (the peer's own readiness poll is too coarse to time).
    startup_ms=$(python3 - "$kafka_dir/node-1" <<'PY'
import datetime, re, sys
node = sys.argv[1]
launched = int(open(f"{node}/launched-ms").read())
for line in open(f"{node}/server.log"):
    if "Kafka Server started" in line:
        stamp = datetime.datetime.strptime(re.match(r"\[([^\]]+)\]", line).group(1), "%Y-%m-%d %H:%M:%S,%f")
        print(int(stamp.timestamp() * 1000) - launched)
        break
PY
)
    return
  fi
  local i ports=() cports=() voters="" t0
  for ((i = 1; i <= nodes; i++)); do ports[i]=$(free_port); cports[i]=$(free_port); voters+="${voters:+,}$i@127.0.0.1:${cports[i]}"; done
  bootstrap=""
  t0=$(now_ms)
  for ((i = 1; i <= nodes; i++)); do
    # The peer's settings that are not Kafka's defaults (compat/kafka-peer/kafka), so both
    # brokers start consumer groups alike.
    local args=(--override "log.dirs=$work/sluice-$i" --override group.initial.rebalance.delay.ms=0)
    if (( nodes == 1 )); then
      args+=(--override "listeners=PLAINTEXT://127.0.0.1:${ports[i]}")
    else
      args+=(--override node.id=$i --override process.roles=broker,controller
        --override "listeners=PLAINTEXT://127.0.0.1:${ports[i]},CONTROLLER://127.0.0.1:${cports[i]}"
        --override controller.listener.names=CONTROLLER --override inter.broker.listener.name=PLAINTEXT
        --override "controller.quorum.voters=$voters" --override default.replication.factor=3
        --override min.insync.replicas=2 --override offsets.topic.replication.factor=3)
    fi
    rm -rf "$work/sluice-$i"
    ./target/release/sluice "${args[@]}" >"$work/sluice-$i.log" 2>&1 &
    pids+=($!)
    (( i == 1 )) && broker_pid=$!
    bootstrap+="${bootstrap:+,}127.0.0.1:${ports[i]}"
  done
  startup_ms=$(answered_after "$t0" "127.0.0.1:${ports[1]}") || exit 2
}
stop_system() {
  if [[ $1 == kafka ]]; then "$peer" stop "$kafka_dir"; kafka_dir=""; else kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; pids=(); fi
}
t() { "$peer" tool "$@" 2>/dev/null; }
create() { t kafka-topics --bootstrap-server "$bootstrap" --create --topic "$1" --partitions "$2" --replication-factor "$3" ${4:+--config "$4"} >/dev/null; }
produce() { # topic count size acks -> "msgs/s MB/s"
  t kafka-producer-perf-test --topic "$1" --num-records "$2" --record-size "$3" --throughput -1 \
    --producer-props bootstrap.servers="$bootstrap" acks="$4" linger.ms=5 batch.size=262144 max.request.size=16777216 \
    | tail -1 | sed -nE 's/.* records sent, ([0-9.]+) records\/sec \(([0-9.]+) MB\/sec\).*/\1 \2/p'
}
consume() { # topic count -> "msgs/s MB/s fetch-MB/s" (the last without the group's join)
  t kafka-consumer-perf-test --bootstrap-server "$bootstrap" --topic "$1" --messages "$2" --timeout 60000 \
    | tail -1 | awk -F', *' '{print $6, $4, $9}'
}
share_consume() { # topic count -> "msgs/s MB/s": one KafkaShareConsumer (KIP-932) from the start
  local group="share-perf-$RANDOM"
  t kafka-configs --bootstrap-server "$bootstrap" --alter --entity-type groups --entity-name "$group" \
    --add-config share.auto.offset.reset=earliest >/dev/null
  for _ in $(seq 1 60); do # until the group config is applied (Kafka publishes it asynchronously)
    t kafka-configs --bootstrap-server "$bootstrap" --describe --entity-type groups --entity-name "$group" \
      | grep -q 'share.auto.offset.reset=earliest' && break
    sleep 0.5
  done
  t kafka-share-consumer-perf-test --bootstrap-server "$bootstrap" --topic "$1" --group "$group" --num-records "$2" \
    --timeout 60000 | tail -1 | awk -F', *' '{print $5, $4}'
}
latency() { # topic -> "p50 p99 p99.9" (ms)
  t kafka-e2e-latency "$bootstrap" "$1" 10000 1 100 | sed -nE 's/.*50th = ([0-9.]+), 99th = ([0-9.]+), 99.9th = ([0-9.]+).*/\1 \2 \3/p'
}

results="$work/results"
: >"$results"
record() { echo "$1 $2 $3" >>"$results"; printf '  %-9s %-28s %s\n' "$1" "$2" "$3"; }
for round in $(seq 1 "$rounds"); do
  for system in kafka sluice; do
    echo "round $round: $system"
    start_system "$system" 1
    record "$system" start-to-first-request-ms "$startup_ms"
    sleep 5
    record "$system" idle-rss-mib "$(rss_mib "$broker_pid" VmRSS)"
    create small 1 1; create large 1 1; create latency 1 1
    cpu0=$(cpu_s "$broker_pid")
    read -r m mb <<<"$(produce small 2000000 100 1)"; record "$system" produce-100B-msgs/s "$m"; record "$system" produce-100B-MB/s "$mb"
    read -r m mb <<<"$(produce large 20000 16384 1)"; record "$system" produce-16KiB-msgs/s "$m"; record "$system" produce-16KiB-MB/s "$mb"
    read -r m mb fmb <<<"$(consume small 2000000)"; record "$system" consume-100B-msgs/s "$m"; record "$system" consume-100B-MB/s "$mb"
    record "$system" consume-100B-fetch-MB/s "$fmb"
    read -r m mb fmb <<<"$(consume large 20000)"; record "$system" consume-16KiB-msgs/s "$m"; record "$system" consume-16KiB-MB/s "$mb"
    record "$system" consume-16KiB-fetch-MB/s "$fmb"
    cpu1=$(cpu_s "$broker_pid")
    gb=$(python3 -c 'print(2 * (2000000 * 100 + 20000 * 16384) / 1e9)')
    record "$system" broker-cpu-s-per-GB "$(python3 -c "print(round(($cpu1 - $cpu0) / $gb, 2))")"
    read -r m mb <<<"$(share_consume small 2000000)"; record "$system" share-consume-100B-msgs/s "$m"
    record "$system" share-consume-100B-MB/s "$mb"
    read -r p50 p99 p999 <<<"$(latency latency)"
    record "$system" e2e-latency-p50-ms "$p50"; record "$system" e2e-latency-p99-ms "$p99"; record "$system" e2e-latency-p99.9-ms "$p999"
    fixed=$(cargo bench --quiet --bench broker -- --bootstrap "$bootstrap" --broker-pid "$broker_pid" \
      --scenarios latency --rate 5000 --latency-seconds 10 2>/dev/null | grep '^{' | python3 -c '
import json, sys
for line in sys.stdin:
    entry = json.loads(line)
    if entry.get("scenario") == "latency":
        l = entry["latency_ms"]; print(l["p50"], l["p99"], l["p99_9"])')
    read -r p50 p99 p999 <<<"$fixed"
    record "$system" rate-5000-latency-p50-ms "$p50"; record "$system" rate-5000-latency-p99-ms "$p99"
    record "$system" rate-5000-latency-p99.9-ms "$p999"
    record "$system" peak-rss-mib "$(rss_mib "$broker_pid" VmHWM)"
    stop_system "$system"
    start_system "$system" 3
    create replicated 3 3 min.insync.replicas=2
    read -r m mb <<<"$(produce replicated 1000000 100 all)"; record "$system" 3-nodes-acks-all-100B-msgs/s "$m"
    stop_system "$system"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
values = {}
for line in open(sys.argv[1]):
    system, metric, value = line.split()
    try:
        values.setdefault(metric, {}).setdefault(system, []).append(float(value))
    except ValueError:
        pass
lower_is_better = ("-ms", "rss", "cpu")
print(f"\n| measure | Apache Kafka | Sluice | Sluice / Kafka | better |")
print("|---|---|---|---|---|")
for metric, by_system in values.items():
    k, s = (statistics.median(by_system.get(x, [float("nan")])) for x in ("kafka", "sluice"))
    ratio = s / k if k else float("nan")
    better = "lower" if any(w in metric for w in lower_is_better) and "/s" not in metric else "higher"
    print(f"| {metric} | {k:,.2f} | {s:,.2f} | {ratio:.2f} | {better} |")
PY
