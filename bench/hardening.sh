#!/usr/bin/env bash
# The cost of record validation (Kafka's LogValidator: every produced record walked, compressed
# batches decompressed within a bound): `cargo bench --bench broker` produce and consume,
# 1,000,000 x 100 B, uncompressed and zstd, against two broker builds alternating in one run,
# two rounds each (ROUNDS=n for more), with the ratio new/old of each figure.
# Usage: bench/hardening.sh OLD_SLUICE_BINARY [MESSAGES]
#   e.g. git worktree add /tmp/old b1a30df && (cd /tmp/old && cargo build --release --bin sluice)
#        bench/hardening.sh /tmp/old/target/release/sluice
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: bench/hardening.sh OLD_SLUICE_BINARY [MESSAGES]}")
messages=${2:-1000000}
cargo build --quiet --release --bin sluice || exit 2
new=$(realpath target/release/sluice)
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "${ROUNDS:-2}"); do
  for codec in none zstd; do
    for build in old new; do
      binary=$old; [[ $build == new ]] && binary=$new
      cargo bench --quiet --bench broker -- --broker-bin "$binary" --scenarios produce,consume \
        --messages "$messages" --codec "$codec" --json "$out/$build-$codec-$round.json" >/dev/null 2>&1
    done
  done
done
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = {}
for name in sorted(os.listdir(out)):
    build, codec, round_ = name[:-5].split("-")
    for line in open(os.path.join(out, name)):
        entry = json.loads(line)
        if entry["scenario"] in ("produce", "consume"):
            rows.setdefault((entry["scenario"], codec, round_), {})[build] = entry
print(f"{'scenario':<9} {'codec':<5} {'round':<5} {'old msgs/s':>12} {'new msgs/s':>12} {'new/old':>8} {'old cpu s':>9} {'new cpu s':>9}")
for (scenario, codec, round_), builds in sorted(rows.items()):
    old, new = builds.get("old"), builds.get("new")
    if not (old and new):
        continue
    ratio = new["msgs_per_sec"] / old["msgs_per_sec"]
    print(f"{scenario:<9} {codec:<5} {round_:<5} {old['msgs_per_sec']:>12,.0f} {new['msgs_per_sec']:>12,.0f} {ratio:>8.2f} "
          f"{old.get('broker_cpu_seconds', 0):>9.2f} {new.get('broker_cpu_seconds', 0):>9.2f}")
PY
