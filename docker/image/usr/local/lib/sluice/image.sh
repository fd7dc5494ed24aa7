# Shared by the image's start scripts (/etc/kafka/docker/run, /etc/confluent/docker/*): what
# apache/kafka's and Confluent's scripts do before the broker starts, with Sluice doing the
# work. Sourced by bash; defines functions only.
#   image_export_args VAR=value...   `run VAR=value` sets variables, as both images' run does
#   image_check_roles                a controller-only node takes no advertised listeners
#   image_default_listeners          KAFKA_LISTENERS from KAFKA_ADVERTISED_LISTENERS (hosts ->
#                                    0.0.0.0) when unset
#   image_secrets                    KAFKA_SSL_*_FILENAME / *_CREDENTIALS in /etc/kafka/secrets
#                                    -> locations and passwords, as both images read them
#   image_render FILE [MOUNTED] [DEFAULTS]
#                                    FILE = MOUNTED (if it exists) + the environment's
#                                    properties; DEFAULTS when that is empty; log.dirs added when
#                                    neither sets it (Bitnami's /bitnami/kafka/data when the
#                                    environment is Bitnami's, else /var/lib/kafka/data)
#   image_format FILE [CLUSTER_ID]   kafka-storage format --ignore-formatted
#   image_launch FILE                exec the broker, with KAFKA_CREATE_TOPICS if set
# Paths are the image's.

image_export_args() {
  if [ $# -ne 0 ]; then
    echo "===> Overriding env params with args ..."
    for var in "$@"; do
      export "$var"
    done
  fi
}

image_is_bitnami() {
  compgen -v KAFKA_CFG_ >/dev/null 2>&1
}

image_check_roles() {
  if [[ "${KAFKA_PROCESS_ROLES-}" == "controller" && -n "${KAFKA_ADVERTISED_LISTENERS-}" ]]; then
    echo "KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller."
    exit 1
  fi
}

image_default_listeners() {
  if [[ -z "${KAFKA_LISTENERS-}" && "${KAFKA_PROCESS_ROLES-}" != "controller" && -n "${KAFKA_ADVERTISED_LISTENERS-}" ]]; then
    KAFKA_LISTENERS=$(echo "$KAFKA_ADVERTISED_LISTENERS" | sed -e 's|://[^:]*:|://0.0.0.0:|g')
    export KAFKA_LISTENERS
  fi
}

# The secrets convention of both images: file names relative to /etc/kafka/secrets, passwords
# in files beside them.
image_secrets() {
  local dir=/etc/kafka/secrets
  local name
  if [[ -n "${KAFKA_SSL_KEYSTORE_FILENAME-}" ]]; then
    export KAFKA_SSL_KEYSTORE_LOCATION="$dir/$KAFKA_SSL_KEYSTORE_FILENAME"
  fi
  if [[ -n "${KAFKA_SSL_TRUSTSTORE_FILENAME-}" ]]; then
    export KAFKA_SSL_TRUSTSTORE_LOCATION="$dir/$KAFKA_SSL_TRUSTSTORE_FILENAME"
  fi
  for name in KEY KEYSTORE TRUSTSTORE; do
    local credentials="KAFKA_SSL_${name}_CREDENTIALS"
    if [[ -n "${!credentials-}" ]]; then
      if [[ ! -r "$dir/${!credentials}" ]]; then
        echo "$dir/${!credentials} file does not exist"
        exit 1
      fi
      export "KAFKA_SSL_${name}_PASSWORD=$(cat "$dir/${!credentials}")"
      # Not properties of the broker: the files' names.
      unset "$credentials"
    fi
  done
  unset KAFKA_SSL_KEYSTORE_FILENAME KAFKA_SSL_TRUSTSTORE_FILENAME
}

image_render() {
  local file=$1 mounted=${2:-} defaults=${3:-}
  mkdir -p "$(dirname "$file")"
  if [[ -n "$mounted" && -f "$mounted" ]]; then
    echo "User provided kafka configs found via file input. Any properties provided via env variables will be appended to this."
    cp "$mounted" "$file"
    printf '\n' >>"$file"
  else
    : >"$file"
  fi
  sluice env-properties >>"$file"
  if ! grep -q '[^[:space:]]' "$file"; then
    if [[ -n "$defaults" && -f "$defaults" ]]; then
      echo "User provided kafka configs not found (neither via file input nor via environment variables). Falling back to default configs."
      cp "$defaults" "$file"
    fi
  fi
  if ! grep -Eq '^[[:space:]]*log\.dirs?[[:space:]]*[=:]' "$file"; then
    local data=/var/lib/kafka/data
    image_is_bitnami && data=/bitnami/kafka/data
    printf 'log.dirs=%s\n' "$data" >>"$file"
  fi
}

image_format() {
  local file=$1 cluster_id=${2:-}
  local args=(format --ignore-formatted -c "$file")
  [[ -n "$cluster_id" ]] && args+=(--cluster-id "$cluster_id")
  sluice "${args[@]}"
}

image_launch() {
  local file=$1
  local args=(serve --config "$file")
  if [[ -n "${KAFKA_CREATE_TOPICS-}" ]]; then
    args+=(--create-topics "$KAFKA_CREATE_TOPICS" --create-topics-separator "${KAFKA_CREATE_TOPICS_SEPARATOR:-,}")
  fi
  exec sluice "${args[@]}"
}
