#!/usr/bin/env bash
# Runs the broker benchmark (benches/broker.rs, librdkafka through the rdkafka crate) against
# Sluice and against Tansu on its SQLite engine (the disk-backed peer) and its memory engine
# (which costs almost nothing, so it shows the client's own ceiling on this machine), one
# after the other in one run, and prints every summary line. With RDKAFKA_PERFORMANCE set to a
# build of librdkafka's examples/rdkafka_performance, each broker is also measured with it
# (1,000,000 x 100 B, acks=1, one partition: the issue's reference figures).
# JSON lines go to $OUT/{sluice,tansu-sqlite,tansu-memory}.json.
# Usage: bench/side-by-side.sh TANSU_BINARY [benchmark options, e.g. --messages 1000000]
# Tansu 0.6: cargo install tansu --version 0.6.0 --no-default-features --features libsql,dynostore --root DIR
set -uo pipefail
cd "$(dirname "$0")/.."
tansu=$(realpath "${1:?usage: bench/side-by-side.sh TANSU_BINARY [benchmark options]}")
shift
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
bench() { cargo bench --quiet --bench broker -- "$@" 2>/dev/null | grep -v '^{' ; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
rss_peak() { grep VmHWM "/proc/$1/status" 2>/dev/null | awk '{printf "%.1f MiB", $2/1024}'; }
cpu_s() { awk '{print ($14+$15)/100}' "/proc/$1/stat" 2>/dev/null; }
# rdkafka_performance: produce then consume 1,000,000 x 100 B on one partition.
reference() { # bootstrap pid topic
  [[ -n "${RDKAFKA_PERFORMANCE:-}" ]] || return 0
  bench --bootstrap "$1" --create-topic "$3" --partitions 1
  local c0 c1 c2
  c0=$(cpu_s "$2")
  "$RDKAFKA_PERFORMANCE" -P -t "$3" -p 0 -s 100 -c 1000000 -b "$1" -X acks=1 2>&1 | tail -1 | sed 's/^/rdkafka_performance produce: /'
  c1=$(cpu_s "$2")
  timeout 300 "$RDKAFKA_PERFORMANCE" -C -t "$3" -p 0 -o beginning -c 1000000 -b "$1" 2>&1 | grep 'consumed in' | tail -1 | sed 's/^/rdkafka_performance consume: /'
  c2=$(cpu_s "$2")
  echo "rdkafka_performance broker cpu: produce $(echo "$c1 - $c0" | bc) s, consume $(echo "$c2 - $c1" | bc) s; peak rss $(rss_peak "$2")"
}

echo "== sluice"
port=$(free_port)
./target/release/sluice --override "listeners=PLAINTEXT://127.0.0.1:$port" --override "log.dirs=$work/sluice" >"$work/sluice.log" 2>&1 &
pid=$!
wait_port "$port"
reference "127.0.0.1:$port" "$pid" perf-reference
kill "$pid"; wait "$pid" 2>/dev/null; pid=""
bench --json "$out/sluice.json" "$@"

for engine in sqlite memory; do
  port=$(free_port)
  case $engine in
    sqlite) storage="sqlite://tansu.db" ;;  # Tansu resolves the path against its working directory
    memory) storage="memory://tansu/" ;;
  esac
  (cd "$work" && exec "$tansu" broker --storage-engine "$storage" --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port") >"$work/tansu-$engine.log" 2>&1 &
  pid=$!
  wait_port "$port"
  echo "== tansu-$engine"
  reference "127.0.0.1:$port" "$pid" perf-reference
  bench --bootstrap "127.0.0.1:$port" --broker-pid "$pid" --scenarios produce,consume,latency \
    --json "$out/tansu-$engine.json" "$@"
  kill "$pid"; wait "$pid" 2>/dev/null; pid=""
done
echo "JSON lines in $out"
