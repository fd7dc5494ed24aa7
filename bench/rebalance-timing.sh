#!/usr/bin/env bash
# Measures classic-protocol rebalance times with default settings (broker and librdkafka):
#   1. first member of a new group until it is assigned (includes group.initial.rebalance.delay.ms)
#   2. a second member joining a stable group, until both are assigned
#   3. a member killed with SIGKILL, until the survivor owns every partition again
#      (session.timeout.ms, librdkafka default 45 s)
# Uses kcat as the group members. Prints one line per measurement. Takes about a minute.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin sluice || exit 2
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
./target/debug/sluice --override listeners=PLAINTEXT://127.0.0.1:0 --override "log.dirs=$work/data" >"$work/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do bootstrap=$(grep -o 'listening on [0-9.:]*' "$work/broker.log" | sed 's/listening on //'); [[ -n "$bootstrap" ]] && break; sleep 0.1; done
seq 1 4 | kcat -b "$bootstrap" -P -t timing -p 0 2>/dev/null  # creates the topic (1 partition by default)
now() { date +%s.%N; }
wait_for() { # file, pattern, count -> waits until the pattern occurs count times (60 s max)
  for _ in $(seq 1 1200); do [[ $(grep -c "$2" "$1" 2>/dev/null) -ge $3 ]] && return 0; sleep 0.05; done; return 1
}
elapsed() { echo "$2 - $1" | bc; }

start=$(now)
kcat -b "$bootstrap" -G timing-group -f '' timing 2>"$work/a.log" & pids+=($!); a=$!
wait_for "$work/a.log" "assigned:" 1 && echo "first member assigned after $(elapsed "$start" "$(now)") s (group.initial.rebalance.delay.ms=3000)"

start=$(now)
kcat -b "$bootstrap" -G timing-group -f '' timing 2>"$work/b.log" & pids+=($!); b=$!
wait_for "$work/b.log" "rebalanced" 1 && wait_for "$work/a.log" "assigned:" 2 && echo "second member joined, rebalance complete after $(elapsed "$start" "$(now)") s"

owner=$(grep -l 'assigned: timing \[0\]' "$work/a.log" "$work/b.log" | tail -1)
if [[ "$owner" == "$work/a.log" ]]; then victim=$a; survivor="$work/b.log"; else victim=$b; survivor="$work/a.log"; fi
before=$(grep -c "assigned:" "$survivor")
start=$(now)
kill -9 "$victim"; wait "$victim" 2>/dev/null
wait_for "$survivor" "assigned: timing \[0\]" 1 && echo "SIGKILLed member evicted, partition reassigned after $(elapsed "$start" "$(now)") s (session.timeout.ms=45000)"
