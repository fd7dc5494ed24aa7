#!/usr/bin/env bash
# How the costs of one node grow with its partition count: Sluice against Apache Kafka
# (compat/kafka-peer, the same release's jars), side by side in one run, the same clients, each
# system in turn at each size, under this machine's open-file limit (`ulimit -n`, 20,000 here,
# which neither system may raise). For PARTITIONS in SIZES (default 1000 10000 50000):
#   creation: topics of at most 5,000 partitions (Kafka refuses a request of over 10,000
#     metadata records, so a 10,000-partition topic) made with Kafka's
#     kafka-topics, timed from the first request until every partition's directory exists;
#   descriptors and RSS once created; idle CPU over IDLE seconds (default 60), in % of a core;
#   Metadata of all topics (v1, raw frame): median of 5 calls, ms;
#   produce 100 B x MESSAGES (default 1,000,000) spread round-robin over the first topic's
#     partitions (librdkafka: cargo bench --bench broker, linger.ms 5), msgs/s;
#   restart: SIGTERM, start again on the same data, timed until a Metadata of all topics
#     answers every partition with a leader (the first served request that needs them all).
# A system that cannot reach a size (Kafka past its descriptors) gets "failed" and the stage it
# failed at. Prints each measurement and a table of the results with the ratio Sluice/Kafka; a
# measurement, not a test: CI does not run it.
# Not yet here (issue 30's list): 10,000 idle connections, groups of 1/100/1,000 members,
# fan-out to 100 groups, a 3-node cluster of 10,000 partitions, the log-log plots.
# Usage: bench/scale.sh [SIZES...]   (IDLE=60 MESSAGES=1000000 in the environment)
set -uo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1000 10000 50000}")
read -r -a sizes <<<"${sizes[*]}"
idle=${IDLE:-60}
messages=${MESSAGES:-1000000}
peer=compat/kafka-peer/kafka
cargo build --quiet --release --bin sluice || exit 2
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
"$peer" fetch || exit 2
work=$(mktemp -d)
sluice_pid=""
kafka_dir=""
cleanup() {
  [[ -n "$sluice_pid" ]] && { kill "$sluice_pid" 2>/dev/null; wait "$sluice_pid" 2>/dev/null; }
  [[ -n "$kafka_dir" ]] && "$peer" stop "$kafka_dir" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
rss_mib() { awk '$1 == "VmRSS:" {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
t() { "$peer" tool "$@" 2>/dev/null; }

# Metadata v1 of all topics, N times: prints "median-ms partitions-with-a-leader" (or fails).
metadata() { # host:port times
  python3 - "$1" "$2" <<'PY'
import socket, struct, sys, time
host, port = sys.argv[1].split(":")
times = int(sys.argv[2])
def call(s, body):
    s.sendall(struct.pack(">i", len(body)) + body)
    def exactly(n):
        out = b""
        while len(out) < n:
            chunk = s.recv(min(1 << 20, n - len(out)))
            if not chunk: raise OSError("closed")
            out += chunk
        return out
    return exactly(struct.unpack(">i", exactly(4))[0])
request = struct.pack(">hhih", 3, 1, 1, -1) + struct.pack(">i", -1)
s = socket.create_connection((host, int(port)), 5)
s.settimeout(60)
took, led = [], 0
for _ in range(times):
    t0 = time.perf_counter()
    r = call(s, request)
    took.append((time.perf_counter() - t0) * 1000)
# Count partitions with a leader in the last answer (v1: brokers, controller, topics).
at = 4
def i16():
    global at; v = struct.unpack_from(">h", r, at)[0]; at += 2; return v
def i32():
    global at; v = struct.unpack_from(">i", r, at)[0]; at += 4; return v
def string():
    global at; n = i16(); at += max(n, 0)
for _ in range(i32()):
    i32(); string(); i32(); string()
i32()
for _ in range(i32()):
    i16(); string(); at += 1
    for _ in range(i32()):
        error = i16(); i32(); leader = i32()
        replicas = i32(); at += 4 * replicas
        isr = i32(); at += 4 * isr
        led += error == 0 and leader >= 0
took.sort()
print(f"{took[len(took) // 2]:.1f} {led}")
PY
}
# Until a Metadata of all topics shows N partitions led; prints the ms since $3 (epoch ms).
served_after() { # host:port partitions since-ms timeout-s
  local deadline=$(( $(date +%s) + $4 )) out
  while (( $(date +%s) < deadline )); do
    out=$(metadata "$1" 1 2>/dev/null) && [[ ${out#* } -ge $2 ]] && { echo $(( $(now_ms) - $3 )); return 0; }
    sleep 0.1
  done
  return 1
}
partition_dirs() { find "$1" -mindepth 1 -maxdepth 2 -type d -name 'scale-*-[0-9]*' 2>/dev/null | wc -l; }

start_sluice() { # data-dir -> bootstrap, pid
  local port cport
  port=$(free_port); cport=$(free_port)
  ./target/release/sluice --override "log.dirs=$1" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
    --override "advertised.listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "controller.quorum.voters=1@127.0.0.1:$cport" >>"$1.log" 2>&1 &
  sluice_pid=$!
  bootstrap="127.0.0.1:$port"
  for _ in $(seq 1 600); do metadata "$bootstrap" 1 >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

results="$work/results"
: >"$results"
record() { echo "$1 $2 $3 $4" >>"$results"; printf '  %-7s %6s %-28s %s\n' "$1" "$2" "$3" "$4"; }

for n in "${sizes[@]}"; do
  per_topic=$(( n < 5000 ? n : 5000 ))
  topics=$(( (n + per_topic - 1) / per_topic ))
  for system in kafka sluice; do
    echo "$n partitions: $system"
    data="$work/$system-$n"
    if [[ $system == kafka ]]; then
      kafka_dir="$data"
      bootstrap=$("$peer" start "$kafka_dir" 1) || { record "$system" "$n" start failed; continue; }
      pid=$(cat "$kafka_dir/node-1/pid")
      logs="$kafka_dir/node-1"
    else
      mkdir -p "$data"
      start_sluice "$data" || { record "$system" "$n" start failed; continue; }
      pid=$sluice_pid
      logs="$data"
    fi
    t0=$(now_ms)
    for ((i = 0; i < topics; i++)); do
      "$peer" tool kafka-topics --bootstrap-server "$bootstrap" --create --topic "scale-$i" \
        --partitions "$per_topic" --replication-factor 1 >"$work/create.out" 2>&1 \
        || { echo "  kafka-topics: $(grep -m1 -iE 'error|exception' "$work/create.out")"; break; }
    done
    # Until every partition's directory exists; given up after 60 s without a new one.
    created="" seen=0 progressed=$(date +%s)
    while kill -0 "$pid" 2>/dev/null && (( $(date +%s) - progressed < 60 )); do
      count=$(partition_dirs "$logs")
      (( count >= n )) && { created=$(( $(now_ms) - t0 )); break; }
      (( count > seen )) && { seen=$count; progressed=$(date +%s); }
      sleep 0.1
    done
    if [[ -z "$created" ]] || ! served_after "$bootstrap" "$n" "$t0" 300 >/dev/null; then
      record "$system" "$n" creation "failed($(partition_dirs "$logs")-dirs,$(kill -0 "$pid" 2>/dev/null && echo alive || echo exited))"
    else
      record "$system" "$n" creation-ms "$created"
      record "$system" "$n" descriptors "$(fds "$pid")"
      record "$system" "$n" rss-mib "$(rss_mib "$pid")"
      c0=$(cpu_s "$pid"); sleep "$idle"; c1=$(cpu_s "$pid")
      record "$system" "$n" idle-cpu-% "$(echo "$c0 $c1 $idle" | awk '{printf "%.2f", ($2 - $1) * 100 / $3}')"
      record "$system" "$n" metadata-all-ms "$(metadata "$bootstrap" 5 | cut -d' ' -f1)"
      rate=$(cargo bench --quiet --bench broker -- --bootstrap "$bootstrap" --scenarios produce \
        --produce-topic scale-0 --partitions "$per_topic" --messages "$messages" 2>/dev/null \
        | sed -nE 's/.*: ([0-9.]+) msgs\/s.*/\1/p' | head -1)
      record "$system" "$n" produce-msgs/s "${rate:-failed}"
      # Restart on the same data.
      if [[ $system == kafka ]]; then
        kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
        t0=$(now_ms)
        "$peer" restart "$kafka_dir" 1 >/dev/null
        pid=$(cat "$kafka_dir/node-1/pid")
      else
        kill "$pid"; wait "$pid" 2>/dev/null
        t0=$(now_ms)
        start_sluice "$data" >/dev/null || true
        pid=$sluice_pid
      fi
      if restarted=$(served_after "$bootstrap" "$n" "$t0" 600); then
        record "$system" "$n" restart-ms "$restarted"
        record "$system" "$n" rss-after-restart-mib "$(rss_mib "$pid")"
      else
        record "$system" "$n" restart "failed"
      fi
    fi
    if [[ $system == kafka ]]; then "$peer" stop "$kafka_dir" >/dev/null 2>&1; kafka_dir=""
    else kill "$sluice_pid" 2>/dev/null; wait "$sluice_pid" 2>/dev/null; sluice_pid=""; fi
    rm -rf "$data"
    # The next system starts on a settled disk, not under the last one's write-back.
    sync
  done
done

echo
python3 - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    system, n, metric, value = line.split(maxsplit=3)
    rows.setdefault((int(n), metric), {})[system] = value.strip()
print("| partitions | measure | Kafka 4.4 | Sluice | Sluice/Kafka |")
print("|---|---|---|---|---|")
for (n, metric), v in sorted(rows.items()):
    k, s = v.get("kafka", "-"), v.get("sluice", "-")
    try:
        ratio = f"{float(s) / float(k):.2f}"
    except (ValueError, ZeroDivisionError):
        ratio = "-"
    print(f"| {n:,} | {metric} | {k} | {s} | {ratio} |")
PY
