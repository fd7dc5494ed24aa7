#!/usr/bin/env bash
# An older build against this one, side by side in one run: `cargo bench --bench broker`
# produce and consume for each message size and codec, the two builds alternating within every
# round, with the ratio new/old of each figure (msgs/s) and each build's broker CPU seconds.
# Usage: bench/old-against-new.sh OLD_SLUICE_BINARY
#   e.g. git worktree add /tmp/old 53e0b97 && (cd /tmp/old && cargo build --release --bin sluice)
#        bench/old-against-new.sh /tmp/old/target/release/sluice
# Settings (environment): ROUNDS (3), SIZES (100 16384), CODECS (none), and per size the message count
# MESSAGES_<size> (100 B: 2,000,000; 16 KiB: 150,000; others: 1,000,000).
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: bench/old-against-new.sh OLD_SLUICE_BINARY}")
cargo build --quiet --release --bin sluice || exit 2
new=$(realpath target/release/sluice)
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
messages_for() {
  local var="MESSAGES_$1"
  case $1 in
    100) echo "${!var:-2000000}" ;;
    16384) echo "${!var:-150000}" ;;
    *) echo "${!var:-1000000}" ;;
  esac
}
for round in $(seq 1 "${ROUNDS:-3}"); do
  for size in ${SIZES:-100 16384}; do
    for codec in ${CODECS:-none}; do
      # Which build goes first alternates, so neither always runs on a warmer machine.
      builds=(old new)
      (( round % 2 == 0 )) && builds=(new old)
      for build in "${builds[@]}"; do
        binary=$old; [[ $build == new ]] && binary=$new
        cargo bench --quiet --bench broker -- --broker-bin "$binary" --scenarios produce,consume \
          --messages "$(messages_for "$size")" --size "$size" --codec "$codec" \
          --json "$out/$build-$size-$codec-$round.json" >/dev/null 2>&1
      done
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = {}
for name in sorted(os.listdir(out)):
    build, size, codec, round_ = name[:-5].split("-")
    for line in open(os.path.join(out, name)):
        entry = json.loads(line)
        if entry["scenario"] in ("produce", "consume"):
            rows.setdefault((entry["scenario"], int(size), codec, int(round_)), {})[build] = entry
print(f"{'scenario':<9} {'size':>6} {'codec':<5} {'round':>5} {'old msgs/s':>12} {'new msgs/s':>12} {'new/old':>8} {'old cpu s':>9} {'new cpu s':>9}")
ratios = {}
for (scenario, size, codec, round_), builds in sorted(rows.items()):
    old, new = builds.get("old"), builds.get("new")
    if not (old and new):
        continue
    ratio = new["msgs_per_sec"] / old["msgs_per_sec"]
    ratios.setdefault((scenario, size, codec), []).append(ratio)
    print(f"{scenario:<9} {size:>6} {codec:<5} {round_:>5} {old['msgs_per_sec']:>12,.0f} {new['msgs_per_sec']:>12,.0f} {ratio:>8.2f} "
          f"{old.get('broker_cpu_seconds', 0):>9.2f} {new.get('broker_cpu_seconds', 0):>9.2f}")
for (scenario, size, codec), values in sorted(ratios.items()):
    values.sort()
    print(f"{scenario:<9} {size:>6} {codec:<5} median new/old {values[len(values) // 2]:.2f} over {len(values)} rounds")
PY
