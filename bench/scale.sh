#!/usr/bin/env bash
# How the costs of one node grow with partitions, connections and group size: Sluice against
# Apache Kafka (compat/kafka-peer, the same release's jars), side by side in one run, the same
# clients, each system in turn at each size, under this machine's open-file limit (`ulimit -n`,
# 20,000 here, which neither system may raise). Sections (SECTIONS, default all four):
# partitions — for PARTITIONS in SIZES (default 1000 10000 15000 50000; 15,000 is about as
#   far as Kafka goes under 20,000 descriptors, so Kafka and Sluice are compared there too):
#   creation: topics of at most 5,000 partitions (Kafka refuses a request of over 10,000
#     metadata records, so a 10,000-partition topic) made one request each (librdkafka's
#     admin client, no JVM start per topic), timed from the first request until every
#     partition's directory exists (given up 30 s after the last new one: Kafka at 50,000);
#   descriptors and RSS once created; idle CPU over IDLE seconds (default 60), in % of a core;
#   Metadata of all topics (v1, raw frame): median of 5 calls, ms;
#   produce 100 B x MESSAGES (default 1,000,000) spread round-robin over the first topic's
#     partitions (librdkafka: cargo bench --bench broker, linger.ms 5), msgs/s;
#   restart: SIGTERM, start again on the same data, timed until a Metadata of all topics
#     answers every partition with a leader (the first served request that needs them all).
# connections — CONNECTIONS (default 1000 10000) connections opened 200 at a time, each
#   answered an ApiVersions and then held idle: connections/s, and the broker's RSS growth per
#   held connection in KiB.
# groups — a classic and a KIP-848 group (librdkafka, group.protocol=consumer) of MEMBERS
#   (default 1 100 1000) members on a topic of 1,000 partitions: ms from the last member's
#   subscribe until every member holds its share and every partition one owner, and the
#   broker's CPU seconds from the first member on; then fan-out: 100 consumers, each in a group
#   of its own, read 100,000 messages of 1 KiB from an 8-partition topic: aggregate MB/s.
#   (cargo bench --bench broker, scenarios group-classic, group-consumer and fan-out.)
# Both systems start with group.initial.rebalance.delay.ms=0 (compat/kafka-peer's setting).
# A system that cannot reach a size (Kafka past its descriptors) gets "failed" and the stage it
# failed at. Prints each measurement, writes the table with the ratio Sluice/Kafka to
# bench/scale.md and into README between its bench/scale.sh markers, and log-log plots of each
# measure against its size to bench/scale-*.png (matplotlib, installed into a venv under
# ~/.cache/sluice). A measurement, not a test: CI does not run it.
# cluster — three nodes (each broker and controller), CLUSTER_PARTITIONS (default 10,000)
#   partitions of replication factor 3: creation until all are led with three in sync; leader
#   failover after a SIGKILL of a node that is not the active controller (both systems' broker
#   session timeout, 9 s by default, is most of it); produce while it is down; ISR catch-up
#   after it is started again.
# Usage: bench/scale.sh [SIZES...]   (SECTIONS="partitions connections groups cluster" IDLE=60
#   MESSAGES=1000000 CONNECTIONS="1000 10000" MEMBERS="1 100 1000" in the environment)
set -uo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1000 10000 15000 50000}")
read -r -a sizes <<<"${sizes[*]}"
idle=${IDLE:-60}
messages=${MESSAGES:-1000000}
read -r -a sections <<<"${SECTIONS:-partitions connections groups cluster}"
read -r -a connection_counts <<<"${CONNECTIONS:-1000 10000}"
read -r -a group_sizes <<<"${MEMBERS:-1 100 1000}"
peer=compat/kafka-peer/kafka
# The commit the binaries are built from (a tree edited while the script runs does not change
# what it measures, so the stamp is taken here, not when the report is written).
SCALE_COMMIT=$(git rev-parse --short HEAD)
[[ -n "$(git status --porcelain --untracked-files=no)" ]] && SCALE_COMMIT+="-dirty"
export SCALE_COMMIT
cargo build --quiet --release --bin sluice || exit 2
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
"$peer" fetch || exit 2
work=$(mktemp -d)
sluice_pid=""
kafka_dir=""
cluster_pids=()
cleanup() {
  [[ -n "$sluice_pid" ]] && { kill "$sluice_pid" 2>/dev/null; wait "$sluice_pid" 2>/dev/null; }
  [[ -n "$kafka_dir" ]] && "$peer" stop "$kafka_dir" >/dev/null 2>&1
  for p in "${cluster_pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
rss_mib() { awk '$1 == "VmRSS:" {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
t() { "$peer" tool "$@" 2>/dev/null; }

# Metadata v1 of all topics, N times: prints "median-ms partitions-with-a-leader
# partitions-with-every-replica-in-sync controller-id" (or fails); a leader that is node DOWN
# does not count.
metadata() { # host:port times [down]
  python3 - "$1" "$2" "${3:--2}" <<'PY'
import socket, struct, sys, time
host, port = sys.argv[1].split(":")
times, down = int(sys.argv[2]), int(sys.argv[3])
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
took, led, full = [], 0, 0
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
controller = i32()
for _ in range(i32()):
    i16(); string(); at += 1
    for _ in range(i32()):
        error = i16(); i32(); leader = i32()
        replicas = i32(); at += 4 * replicas
        isr = i32(); at += 4 * isr
        led += error == 0 and leader >= 0 and leader != down
        full += error == 0 and isr == replicas
took.sort()
print(f"{took[len(took) // 2]:.1f} {led} {full} {controller}")
PY
}
# Until a Metadata of all topics asked of HOST:PORT passes TEST (bash, over $led, $full and
# $controller as `metadata` gives them, a leader DOWN not counted); prints the ms since SINCE.
metadata_until() { # host:port since-ms timeout-s down test
  local deadline=$(( $(date +%s) + $3 )) out ms led full controller
  while (( $(date +%s) < deadline )); do
    if out=$(metadata "$1" 1 "$4" 2>/dev/null); then
      read -r ms led full controller <<<"$out"
      eval "$5" && { echo $(( $(now_ms) - $2 )); return 0; }
    fi
    sleep 0.1
  done
  return 1
}
# Until a Metadata of all topics shows N partitions led; prints the ms since SINCE.
served_after() { metadata_until "$1" "$3" "$4" -2 "(( led >= $2 ))"; }
partition_dirs() { find "$1" -mindepth 1 -maxdepth 2 -type d -name 'scale-*-[0-9]*' 2>/dev/null | wc -l; }

start_sluice() { # data-dir -> bootstrap, pid
  local port cport
  port=$(free_port); cport=$(free_port)
  ./target/release/sluice --override "log.dirs=$1" \
    --override "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" \
    --override "advertised.listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "controller.quorum.voters=1@127.0.0.1:$cport" \
    --override group.initial.rebalance.delay.ms=0 --override http.listener=127.0.0.1:0 >>"$1.log" 2>&1 &
  sluice_pid=$!
  bootstrap="127.0.0.1:$port"
  for _ in $(seq 1 600); do metadata "$bootstrap" 1 >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

results="$work/results"
: >"$results"
section=partitions
record() { echo "$section $1 $2 $3 $4" >>"$results"; printf '  %-7s %6s %-28s %s\n' "$1" "$2" "$3" "$4"; }

partition_rows() {
  for n in "${sizes[@]}"; do
    per_topic=$(( n < 5000 ? n : 5000 ))
    topics=$(( (n + per_topic - 1) / per_topic ))
    for system in kafka sluice; do
      echo "$n partitions: $system ($(date +%T))"
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
        cargo bench --quiet --bench broker -- --bootstrap "$bootstrap" --create-topic "scale-$i" \
          --partitions "$per_topic" >"$work/create.out" 2>&1 \
          || { echo "  create: $(grep -m1 -iE 'error|panicked|creating' "$work/create.out")"; break; }
      done
      # Until every partition's directory exists; given up after 30 s without a new one.
      created="" seen=0 progressed=$(date +%s)
      while kill -0 "$pid" 2>/dev/null && (( $(date +%s) - progressed < 30 )); do
        count=$(partition_dirs "$logs")
        (( count >= n )) && { created=$(( $(now_ms) - t0 )); break; }
        (( count > seen )) && { seen=$count; progressed=$(date +%s); }
        sleep 0.1
      done
      if [[ -z "$created" ]] || ! served_after "$bootstrap" "$n" "$t0" 300 >/dev/null; then
        record "$system" "$n" creation-ms "failed($(partition_dirs "$logs")-dirs,$(kill -0 "$pid" 2>/dev/null && echo alive || echo exited))"
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
}

start_system() { # system data-dir -> pid, bootstrap (or fails)
  if [[ $1 == kafka ]]; then
    kafka_dir="$2"
    bootstrap=$("$peer" start "$kafka_dir" 1) || return 1
    pid=$(cat "$kafka_dir/node-1/pid")
  else
    mkdir -p "$2"
    start_sluice "$2" || return 1
    pid=$sluice_pid
  fi
}
stop_system() { # system
  if [[ $1 == kafka ]]; then "$peer" stop "$kafka_dir" >/dev/null 2>&1; kafka_dir=""
  else kill "$sluice_pid" 2>/dev/null; wait "$sluice_pid" 2>/dev/null; sluice_pid=""; fi
}
bench() { # cargo bench --bench broker arguments... -> its JSON lines
  cargo bench --quiet --bench broker -- --bootstrap "$bootstrap" --broker-pid "$pid" "$@" 2>/dev/null \
    | grep '^{'
}
json() { # field [scenario], from the JSON lines on stdin (the first that has it)
  python3 -c 'import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    o = json.loads(line)
    v = o.get(sys.argv[1])
    if v is not None and sys.argv[2] in ("", o["scenario"]) and not o.get("failed"):
        print(f"{v:.2f}" if isinstance(v, float) else v); break
else: print("failed")' "$1" "${2:-}"
}

# Connections, groups and fan-out, on one broker per system (connections first, on an idle one).
client_rows() {
  for system in kafka sluice; do
    echo "clients: $system ($(date +%T))"
    data="$work/$system-clients"
    section=connections
    start_system "$system" "$data" || { record "$system" 0 start failed; continue; }
    if [[ " ${sections[*]} " == *" connections "* ]]; then
      for count in "${connection_counts[@]}"; do
        before=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid/status")
        rm -f "$work/conn.out"
        python3 bench/scale-connections.py "$bootstrap" "$count" "$work/conn.out" & holder=$!
        while kill -0 "$holder" 2>/dev/null && [[ ! -s "$work/conn.out" ]]; do sleep 0.1; done
        if [[ -s "$work/conn.out" ]]; then
          sleep 2 # the broker settles: buffers of the last answers released
          after=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid/status")
          record "$system" "$count" connections/s "$(cat "$work/conn.out")"
          record "$system" "$count" rss-kib-per-connection "$(( (after - before) / count ))"
        else
          record "$system" "$count" connections failed
        fi
        kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
        # Until the broker has closed them all (it sees each client's FIN).
        for _ in $(seq 1 100); do (( $(fds "$pid") < 2000 )) && break; sleep 0.1; done
      done
    fi
    if [[ " ${sections[*]} " == *" groups "* ]]; then
      section=groups
      cargo bench --quiet --bench broker -- --bootstrap "$bootstrap" --create-topic groups \
        --partitions 1000 >/dev/null 2>&1
      for members in "${group_sizes[@]}"; do
        for protocol in classic consumer; do
          out=$(bench --scenarios "group-$protocol" --members "$members" --group-topic groups \
            --partitions 1000)
          record "$system" "$members" "$protocol-ms-to-stable" "$(json ms_to_stable <<<"$out")"
          record "$system" "$members" "$protocol-broker-cpu-s" "$(json broker_cpu_seconds <<<"$out")"
        done
      done
      section=fan-out
      out=$(bench --scenarios produce,fan-out --partitions 8 --size 1024 --messages 100000 \
        --members 100)
      record "$system" 100 fan-out-MB/s "$(json mb_per_sec fan-out <<<"$out")"
    fi
    stop_system "$system"
    rm -rf "$data"
    sync
  done
}

# Three nodes, each broker and controller, CLUSTER_PARTITIONS (default 10,000) partitions of
# replication factor 3 (min ISR 2): creation until every partition is led with all three in
# sync; leader failover: SIGKILL of a node that is not the active controller, until every
# partition is led by a live node; produce while it is down; ISR catch-up: the node started
# again, until every partition has all three in sync.
start_sluice_node() { # node -> (re)starts node i of the cluster in $work/sluice-cluster
  local i=$1 dir="$work/sluice-cluster"
  mkdir -p "$dir/node-$i"
  ./target/release/sluice --override "log.dirs=$dir/node-$i" --override node.id="$i" \
    --override process.roles=broker,controller \
    --override "listeners=PLAINTEXT://127.0.0.1:${cluster_ports[i]},CONTROLLER://127.0.0.1:${cluster_cports[i]}" \
    --override "advertised.listeners=PLAINTEXT://127.0.0.1:${cluster_ports[i]}" \
    --override controller.listener.names=CONTROLLER --override inter.broker.listener.name=PLAINTEXT \
    --override "controller.quorum.voters=$cluster_voters" --override default.replication.factor=3 \
    --override min.insync.replicas=2 --override offsets.topic.replication.factor=3 \
    --override group.initial.rebalance.delay.ms=0 --override http.listener=127.0.0.1:0 >>"$dir/node-$i.log" 2>&1 &
  cluster_pids[i]=$!
}
cluster_rows() {
  local n=${CLUSTER_PARTITIONS:-10000} system i addresses=() victim survivor t0 took
  local per_topic=$(( n < 5000 ? n : 5000 ))
  local topics=$(( (n + per_topic - 1) / per_topic ))
  section=cluster
  for system in kafka sluice; do
    echo "3 nodes, $n partitions: $system ($(date +%T))"
    if [[ $system == kafka ]]; then
      kafka_dir="$work/kafka-cluster"
      bootstrap=$("$peer" start "$kafka_dir" 3) || { record "$system" "$n" start failed; continue; }
      for i in 1 2 3; do cluster_pids[i]=$(cat "$kafka_dir/node-$i/pid"); done
      IFS=, read -r -a addresses <<<"$bootstrap"
      addresses=("" "${addresses[@]}")
    else
      cluster_voters=""
      for i in 1 2 3; do
        cluster_ports[i]=$(free_port); cluster_cports[i]=$(free_port)
        cluster_voters+="${cluster_voters:+,}$i@127.0.0.1:${cluster_cports[i]}"
        addresses[i]="127.0.0.1:${cluster_ports[i]}"
      done
      for i in 1 2 3; do start_sluice_node "$i"; done
      bootstrap="${addresses[1]},${addresses[2]},${addresses[3]}"
      metadata_until "${addresses[1]}" "$(now_ms)" 60 -2 true >/dev/null \
        || { record "$system" "$n" start failed; }
    fi
    t0=$(now_ms)
    for ((i = 0; i < topics; i++)); do
      t kafka-topics --bootstrap-server "$bootstrap" --create --topic "scale-$i" \
        --partitions "$per_topic" --replication-factor 3 >/dev/null
    done
    if took=$(metadata_until "${addresses[1]}" "$t0" 600 -2 "(( led >= $n && full >= $n ))"); then
      record "$system" "$n" creation-ms "$took"
      record "$system" "$n" rss-mib-of-node-1 "$(rss_mib "${cluster_pids[1]}")"
      read -r _ _ _ controller <<<"$(metadata "${addresses[1]}" 1)"
      victim=3; [[ "$controller" == 3 ]] && victim=2
      survivor=1; [[ "$controller" == 1 ]] && survivor=$(( 5 - victim ))
      kill -9 "${cluster_pids[victim]}"; wait "${cluster_pids[victim]}" 2>/dev/null
      t0=$(now_ms)
      if took=$(metadata_until "${addresses[survivor]}" "$t0" 300 "$victim" "(( led >= $n ))"); then
        record "$system" "$n" failover-ms "$took"
      else
        record "$system" "$n" failover-ms failed
      fi
      local live=() 
      for i in 1 2 3; do (( i != victim )) && live+=("${addresses[i]}"); done
      rate=$(cargo bench --quiet --bench broker -- --bootstrap "${live[0]},${live[1]}" \
        --scenarios produce --produce-topic scale-0 --partitions "$per_topic" \
        --messages "$messages" 2>/dev/null | sed -nE 's/.*: ([0-9.]+) msgs\/s.*/\1/p' | head -1)
      record "$system" "$n" produce-msgs/s-one-node-down "${rate:-failed}"
      t0=$(now_ms)
      if [[ $system == kafka ]]; then
        "$peer" restart "$kafka_dir" "$victim" >/dev/null
        cluster_pids[victim]=$(cat "$kafka_dir/node-$victim/pid")
      else
        start_sluice_node "$victim"
      fi
      if took=$(metadata_until "${addresses[survivor]}" "$t0" 600 -2 "(( full >= $n ))"); then
        record "$system" "$n" isr-catch-up-ms "$took"
      else
        record "$system" "$n" isr-catch-up-ms failed
      fi
    else
      record "$system" "$n" creation-ms failed
    fi
    if [[ $system == kafka ]]; then "$peer" stop "$kafka_dir" >/dev/null 2>&1; kafka_dir=""
    else
      for i in 1 2 3; do kill "${cluster_pids[i]}" 2>/dev/null; done
      for i in 1 2 3; do wait "${cluster_pids[i]}" 2>/dev/null; done
      rm -rf "$work/sluice-cluster"
    fi
    cluster_pids=()
    sync
  done
}

[[ " ${sections[*]} " == *" partitions "* ]] && partition_rows
[[ " ${sections[*]} " == *" connections "* || " ${sections[*]} " == *" groups "* ]] && client_rows
[[ " ${sections[*]} " == *" cluster "* ]] && cluster_rows

echo
venv="${SLUICE_CACHE:-$HOME/.cache/sluice}/bench-venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  python3 -m venv "$venv" && "$venv/bin/pip" install --quiet matplotlib >/dev/null 2>&1 \
    || echo "matplotlib could not be installed: no plots"
fi
plotter=python3
"$venv/bin/python" -c 'import matplotlib' 2>/dev/null && plotter="$venv/bin/python"
"$plotter" bench/scale-report.py "$results" bench README.md
echo "bench/scale.sh took $(( SECONDS / 60 )) min $(( SECONDS % 60 )) s, builds included"
