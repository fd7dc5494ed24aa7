#!/usr/bin/env bash
# The cost of the HTTP listener and its metrics on the data path, side by side in one run:
# `cargo bench --bench broker` produce and consume (1,000,000 x 100 B by default) against a
# broker with `http.listener` off and one with it on while a scraper reads /metrics every
# second (as Prometheus would, at a shorter interval than its default 15 s), alternating within
# every round, with the ratio on/off of each figure and each broker's CPU seconds.
# Usage: bench/metrics.sh [MESSAGES]   (ROUNDS=n, default 3; PARTITIONS, default 1)
set -uo pipefail
cd "$(dirname "$0")/.."
messages=${1:-1000000}
cargo bench --bench broker --no-run --quiet 2>/dev/null || exit 2
out=$(mktemp -d)
scraper=""
cleanup() { [[ -n "$scraper" ]] && kill "$scraper" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
scrapes=0
for round in $(seq 1 "${ROUNDS:-3}"); do
  variants=(off on)
  (( round % 2 == 0 )) && variants=(on off)
  for variant in "${variants[@]}"; do
    http=""
    if [[ $variant == on ]]; then
      port=$(free_port)
      http="127.0.0.1:$port"
      (while true; do curl -sf "http://$http/metrics" -o /dev/null && echo scraped; sleep 1; done) >>"$out/scrapes" 2>/dev/null &
      scraper=$!
    fi
    cargo bench --quiet --bench broker -- --override "http.listener=$http" --scenarios produce,consume \
      --messages "$messages" --partitions "${PARTITIONS:-1}" \
      --json "$out/$variant-$round.json" >/dev/null 2>&1
    if [[ -n "$scraper" ]]; then kill "$scraper" 2>/dev/null; wait "$scraper" 2>/dev/null; scraper=""; fi
  done
done
scrapes=$(grep -c scraped "$out/scrapes" 2>/dev/null || echo 0)
python3 - "$out" "$scrapes" <<'PY'
import json, sys, os
out, scrapes = sys.argv[1], sys.argv[2]
rows = {}
for name in sorted(os.listdir(out)):
    if not name.endswith(".json"):
        continue
    variant, round_ = name[:-5].split("-")
    for line in open(os.path.join(out, name)):
        entry = json.loads(line)
        if entry["scenario"] in ("produce", "consume"):
            rows.setdefault((entry["scenario"], int(round_)), {})[variant] = entry
print(f"{'scenario':<9} {'round':>5} {'off msgs/s':>12} {'on msgs/s':>12} {'on/off':>7} {'off cpu s':>9} {'on cpu s':>9}")
ratios = {}
for (scenario, round_), v in sorted(rows.items()):
    off, on = v.get("off"), v.get("on")
    if not (off and on):
        continue
    ratio = on["msgs_per_sec"] / off["msgs_per_sec"]
    ratios.setdefault(scenario, []).append(ratio)
    print(f"{scenario:<9} {round_:>5} {off['msgs_per_sec']:>12,.0f} {on['msgs_per_sec']:>12,.0f} {ratio:>7.3f} "
          f"{off.get('broker_cpu_seconds', 0):>9.2f} {on.get('broker_cpu_seconds', 0):>9.2f}")
for scenario, values in sorted(ratios.items()):
    values.sort()
    print(f"{scenario:<9} median on/off {values[len(values) // 2]:.3f} over {len(values)} rounds")
print(f"/metrics scraped {scrapes} times while the 'on' brokers ran")
PY
