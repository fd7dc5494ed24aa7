#!/usr/bin/env bash
# Bitnami's entry point: runs its arguments (the command).
exec "$@"
