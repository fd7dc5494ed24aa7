#!/usr/bin/env bash
# Large-message produce against the disk: for each message size, `dd` writing the same bytes in
# blocks of that size to a new file, and each broker build producing them (librdkafka,
# `cargo bench --bench broker` scenario produce, acks=1, one partition), on the same file
# system, in one run: the broker's rate as a ratio of dd's, each build in turn within every
# round, medians of ROUNDS (default 5).
# Both write into the page cache and neither syncs (the broker does not fsync by default; a
# produce is acknowledged once its batch is in the page cache, as dd's write returns). Before
# each measurement the page cache is written back and dropped (`sync`, and
# /proc/sys/vm/drop_caches when writable: run as root), so every write starts cold.
# Two rates each: into the page cache (until dd returns; until the last acknowledgement) and on
# disk (until a sync of the file system after that returns: the rate the disk took the data at).
# Also printed: the broker's and the client's CPU seconds per GB. On a small machine the
# client (librdkafka copies every message, then the kernel copies it into the socket) shares
# the cores with the broker, where dd has one core to itself.
# Usage: bench/large-messages.sh [NAME=SLUICE_BINARY[,key=value...] ...]
#   default: sluice=target/release/sluice. A lever in the code is measured by naming an older
#   build next to the new one (git worktree add /tmp/old COMMIT && cargo build --release in it);
#   a lever in the configuration by a broker override after the binary, e.g.
#   bench/large-messages.sh plain=target/release/sluice prealloc=target/release/sluice,log.preallocate=true
# Settings (environment): SIZES (16384 1048576), BYTES per measurement (3276800000), ROUNDS (5),
#   DIR (the file system written to: default target/large-messages).
set -uo pipefail
cd "$(dirname "$0")/.."
read -r -a sizes <<<"${SIZES:-16384 1048576}"
bytes=${BYTES:-3276800000}
rounds=${ROUNDS:-5}
builds=("${@:-sluice=target/release/sluice}")
cargo build --quiet --release --bin sluice || exit 2
bench=$(cargo bench --bench broker --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "broker":
        print(m["executable"])')
[[ -x "$bench" ]] || { echo "cannot build the bench binary" >&2; exit 2; }
root=${DIR:-target/large-messages}
mkdir -p "$root" && root=$(realpath "$root")
work=$(mktemp -d "$root/run.XXXXXX")
broker_pid=""
cleanup() {
  [[ -n "$broker_pid" ]] && { kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null; }
cold() {
  sync
  if [[ -w /proc/sys/vm/drop_caches ]]; then echo 3 >/proc/sys/vm/drop_caches; fi
}
[[ -w /proc/sys/vm/drop_caches ]] || echo "note: not root, the page cache is synced but not dropped between runs" >&2
results=$work/results
: >"$results"

# dd SIZE: "page-cache-MB/s on-disk-MB/s" writing BYTES in blocks of SIZE to a new file: until
# dd returns, and until a sync of the file system after it returns.
run_dd() {
  local size=$1 count=$(( bytes / $1 )) started written synced
  rm -f "$work/dd.out"
  cold
  started=$(date +%s%N)
  dd if=/dev/zero of="$work/dd.out" bs="$size" count="$count" status=none || return 1
  written=$(date +%s%N)
  sync -f "$work"
  synced=$(date +%s%N)
  rm -f "$work/dd.out"
  python3 -c "b = $count * $size; print(f'{b / (($written - $started) / 1e9) / 1e6:.1f} {b / (($synced - $started) / 1e9) / 1e6:.1f}')"
}

# broker BINARY SIZE OVERRIDES...: "page-cache-MB/s on-disk-MB/s broker-cpu-s client-cpu-s"
# producing BYTES in messages of SIZE to a fresh broker: until the last acknowledgement, and
# until a sync of the file system after it.
run_broker() {
  local binary=$1 size=$2; shift 2
  local port data args=() limit count=$(( bytes / size )) out client_cpu line ended synced
  port=$(free_port)
  data=$work/data
  rm -rf "$data"
  # A message of 1 MiB is more than Kafka's default message.max.bytes (1 MiB + 12 for the
  # batch, without the record's own overhead): raised on both ends, as a user sending them
  # would, and never lowered (librdkafka's bounds its requests too: batches of smaller
  # messages keep its default million bytes).
  limit=$(( size + 65536 > 1048588 ? size + 65536 : 1048588 ))
  args=(--override "listeners=PLAINTEXT://127.0.0.1:$port" --override "log.dirs=$data"
    --override "message.max.bytes=$limit" --override "http.listener=")
  for o in "$@"; do args+=(--override "$o"); done
  cold
  "$binary" "${args[@]}" >"$work/broker.log" 2>&1 &
  broker_pid=$!
  for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  out=$( { /usr/bin/time -f "client-cpu %U %S" "$bench" --bootstrap "127.0.0.1:$port" --broker-pid "$broker_pid" \
    --scenarios produce --messages "$count" --size "$size" \
    --producer-config "message.max.bytes=$(( limit > 1048588 ? limit : 1000000 ))" --json "$work/produce.json" >/dev/null; } 2>&1)
  ended=$(date +%s%N)
  sync -f "$data"
  synced=$(date +%s%N)
  kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; broker_pid=""
  client_cpu=$(awk '$1 == "client-cpu" {printf "%.2f", $2 + $3}' <<<"$out")
  line=$(grep '"scenario":"produce"' "$work/produce.json" 2>/dev/null) || { echo "failed"; return 1; }
  python3 -c 'import json, sys
e = json.loads(sys.argv[1])
if e["failed"]: print("failed"); sys.exit(1)
# The sync starts a few milliseconds after the last acknowledgement (the client exiting).
on_disk = e["mb_per_sec"] * e["seconds"] / (e["seconds"] + int(sys.argv[3]) / 1e9)
print("%.1f %.1f %.2f %s" % (e["mb_per_sec"], on_disk, e["broker_cpu_seconds"], sys.argv[2]))' "$line" "$client_cpu" "$(( synced - ended ))"
}

for round in $(seq 1 "$rounds"); do
  for size in "${sizes[@]}"; do
    if mbs=$(run_dd "$size"); then
      echo "round $round size $size dd: $mbs (MB/s into the page cache, MB/s on disk)"
      echo "$round $size dd $mbs 0 0" >>"$results"
    fi
    # Which build goes first alternates with the round, so no build always writes right after dd.
    order=("${builds[@]}")
    (( round % 2 == 0 )) && order=($(printf '%s\n' "${builds[@]}" | tac))
    for build in "${order[@]}"; do
      name=${build%%=*}; spec=${build#*=}
      IFS=, read -r -a parts <<<"$spec"
      binary=$(realpath "${parts[0]}")
      if figures=$(run_broker "$binary" "$size" "${parts[@]:1}"); then
        echo "round $round size $size $name: $figures (MB/s into the page cache, MB/s on disk, broker CPU s, client CPU s)"
        echo "$round $size $name $figures" >>"$results"
      else
        echo "round $round size $size $name: failed (log: $(tail -3 "$work/broker.log" | tr '\n' ' '))"
      fi
    done
  done
done

python3 - "$results" "$bytes" "${builds[@]%%=*}" <<'PY'
import statistics, sys
path, total, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for line in open(path):
    _round, size, name, *figures = line.split()
    rows.setdefault((int(size), name), []).append([float(f) for f in figures])
gb = total / 1e9
med = lambda got, i: statistics.median(f[i] for f in got)
print(f"\n{gb:.2f} GB per measurement, medians of the rounds; x dd: the ratio to dd's rate of the same size")
print(f"{'size':>8} {'writer':<16} {'page cache MB/s':>15} {'x dd':>5} {'on disk MB/s':>12} {'x dd':>5} {'broker CPU s/GB':>15} {'client CPU s/GB':>15} {'rounds':>6}")
for size in sorted({s for s, _ in rows}):
    dd = rows.get((size, "dd"))
    for name in ["dd", *names]:
        got = rows.get((size, name))
        if not got:
            continue
        cache, disk = med(got, 0), med(got, 1)
        x_cache = f"{cache / med(dd, 0):.2f}" if dd else "-"
        x_disk = f"{disk / med(dd, 1):.2f}" if dd else "-"
        cpu = f"{med(got, 2) / gb:>15.2f} {med(got, 3) / gb:>15.2f}" if name != "dd" else f"{'':>15} {'':>15}"
        print(f"{size:>8} {name:<16} {cache:>15.1f} {x_cache:>5} {disk:>12.1f} {x_disk:>5} {cpu} {len(got):>6}")
PY
