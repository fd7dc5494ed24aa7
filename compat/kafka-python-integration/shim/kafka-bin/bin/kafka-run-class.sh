#!/usr/bin/env bash
# kafka-python's KafkaFixture starts its broker as `kafka-run-class.sh kafka.Kafka PROPS`, with
# -Djava.security.auth.login.config=FILE in KAFKA_OPTS on SASL (Sluice reads it there, as the
# JVM would). This starts Sluice ($SLUICE_BIN) on PROPS in this process instead, and prints the
# line the fixture waits for ("[KafkaRaftServer nodeId=N] Kafka Server started") once Sluice
# logs that it listens; the fixture's stop() signals this PID, which is Sluice's.
set -u
if [[ "${1:-}" != kafka.Kafka || -z "${2:-}" ]]; then
  echo "kafka-run-class.sh (Sluice shim): only 'kafka.Kafka PROPERTIES' is supported" >&2
  exit 2
fi
props=$2
node=$(sed -n 's/^node\.id=//p' "$props" | head -1)
announce() {
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case "$line" in
      *"listening on "*) printf '[KafkaRaftServer nodeId=%s] Kafka Server started (sluice)\n' "$node" ;;
    esac
  done
}
exec "${SLUICE_BIN:?SLUICE_BIN must name the sluice binary}" --config "$props" > >(announce) 2>&1
