#!/usr/bin/env bash
# The cost of record validation (Kafka's LogValidator: every produced record walked, compressed
# batches decompressed within a bound): `cargo bench --bench broker` produce and consume,
# 1,000,000 x 100 B, uncompressed and zstd, against two broker builds alternating in one run,
# two rounds each (ROUNDS=n for more), with the ratio new/old of each figure
# (bench/old-against-new.sh with those settings).
# Usage: bench/hardening.sh OLD_SLUICE_BINARY [MESSAGES]
#   e.g. git worktree add /tmp/old b1a30df && (cd /tmp/old && cargo build --release --bin sluice)
#        bench/hardening.sh /tmp/old/target/release/sluice
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2} SIZES=100 CODECS="none zstd" MESSAGES_100=${2:-1000000} \
  exec bench/old-against-new.sh "${1:?usage: bench/hardening.sh OLD_SLUICE_BINARY [MESSAGES]}"
