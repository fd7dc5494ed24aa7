#!/usr/bin/env bash
# Kafka's own kafka-configs (compat/kafka-peer), against the Sluice node the fixture started.
exec "${KAFKA_PEER:?KAFKA_PEER must name compat/kafka-peer/kafka}" tool kafka-configs "$@"
