#!/usr/bin/env bash
# `kafka-storage.sh format --standalone -t ID -c PROPS [--add-scram ...]`: Sluice's own format
# command takes the same arguments.
exec "${SLUICE_BIN:?SLUICE_BIN must name the sluice binary}" "$@"
