#!/usr/bin/env bash
# Bitnami's command (/opt/bitnami/scripts/kafka/run.sh), for Sluice: the KAFKA_CFG_*
# environment, KAFKA_KRAFT_CLUSTER_ID and /bitnami/kafka/data, through the image's one entry
# point.
exec /etc/kafka/docker/run "$@"
