//! The process's typed configuration ([`BrokerConfig`]): every broker property read, checked
//! against its definition and resolved (fallbacks such as `log.retention.hours`,
//! per-listener overrides).

use super::{
    ACCEPTED_WITHOUT_EFFECT, ClusterConfig, ConfigError, DynamicLayers, LONG_MAX, ListenerConfig,
    ListenerOverrides, SecurityProtocol, TOPIC_CONFIGS, all_broker_configs, broker_config_def,
    invalid, security, validate_value,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How a client quota's rate is sampled (`quota.window.num` windows of
/// `quota.window.size.seconds`, Kafka's `MetricConfig` for quota sensors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaWindows {
    pub samples: u32,
    pub window_ms: i64,
}

impl QuotaWindows {
    /// The span over which samples count: older ones are obsolete.
    pub fn span_ms(&self) -> i64 {
        i64::from(self.samples) * self.window_ms
    }
}

/// The process-wide configuration. Every value has been validated; topic defaults are kept as
/// the effective broker-level values of each topic config's synonym.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub node_id: i32,
    pub listeners: Vec<ListenerConfig>,
    pub advertised_listeners: Vec<ListenerConfig>,
    /// The `listener.name.<listener>.` security properties that were set.
    pub listener_overrides: ListenerOverrides,
    /// `listener.security.protocol.map`, for listeners this node connects to without
    /// binding them (another node's controller listener).
    pub listener_protocols: BTreeMap<String, SecurityProtocol>,
    /// The first of `log.dirs`: it also holds `meta.properties`' node identity, the metadata
    /// log and the bootstrap records (Kafka's `metadata.log.dir` defaults to it).
    pub log_dir: PathBuf,
    /// Every one of `log.dirs` (JBOD), `log_dir` first.
    pub log_dirs: Vec<PathBuf>,
    pub num_partitions: i32,
    pub default_replication_factor: i32,
    pub auto_create_topics_enable: bool,
    pub delete_topic_enable: bool,
    pub transaction_partition_verification: bool,
    pub retention_check_interval_ms: u64,
    pub flush_scheduler_interval_ms: u64,
    pub checkpoint_interval_ms: u64,
    pub socket_request_max_bytes: usize,
    pub max_connections: usize,
    /// `max.connection.creation.rate`: new connections per second across listeners.
    pub max_connection_creation_rate: i32,
    pub max_connections_per_ip: usize,
    /// `max.connections.per.ip.overrides`, host names resolved.
    pub max_connections_per_ip_overrides: BTreeMap<std::net::IpAddr, usize>,
    /// `quota.window.num` and `quota.window.size.seconds`.
    pub quota_windows: QuotaWindows,
    /// `metadata.log.max.record.bytes.between.snapshots`.
    pub metadata_snapshot_after_bytes: u64,
    /// `leader.replication.throttled.rate` and `follower.replication.throttled.rate`, bytes
    /// per second.
    pub leader_replication_throttled_rate: i64,
    pub follower_replication_throttled_rate: i64,
    /// `replica.alter.log.dirs.io.max.bytes.per.second`: what moves between log directories
    /// copy per second, all together.
    pub alter_log_dirs_rate: i64,
    /// `replication.quota.window.num` and `replication.quota.window.size.seconds`.
    pub replication_quota_windows: QuotaWindows,
    /// `controller.quota.window.num` and `controller.quota.window.size.seconds`.
    pub controller_quota_windows: QuotaWindows,
    /// `None`: idle connections are kept.
    pub connections_max_idle: Option<std::time::Duration>,
    /// `None`: no bound on request memory.
    pub queued_max_request_bytes: Option<usize>,
    pub max_request_partition_size_limit: i32,
    pub fetch_session_cache_slots: usize,
    pub recovery_threads: usize,
    /// `log.segment.open.files.max`; `None`: half the open-file limit.
    pub segment_open_files_max: Option<usize>,
    /// `log.segment.writeback.bytes` (0: left to the kernel).
    pub segment_writeback_bytes: u64,
    /// `log.index.mapped.files.max`; `None`: half of `vm.max_map_count`.
    pub index_mapped_files_max: Option<usize>,
    pub cluster_id: Option<String>,
    pub offsets_topic_partitions: i32,
    pub offsets_topic_segment_bytes: i32,
    pub transaction_state_partitions: i32,
    pub transaction_state_segment_bytes: i32,
    pub transaction_state_min_isr: i32,
    pub transaction_max_timeout_ms: i32,
    pub transaction_abort_interval_ms: u64,
    pub transactional_id_expiration_ms: i64,
    pub transaction_remove_expired_interval_ms: u64,
    pub offsets_retention_ms: i64,
    pub offsets_retention_check_interval_ms: u64,
    pub offset_metadata_max_bytes: usize,
    pub group_min_session_timeout_ms: i32,
    pub group_max_session_timeout_ms: i32,
    pub group_initial_rebalance_delay_ms: i32,
    pub group_max_size: usize,
    pub consumer_session_timeout_ms: i32,
    pub consumer_heartbeat_interval_ms: i32,
    /// `group.consumer.assignment.interval.ms` (KIP-1263).
    pub consumer_assignment_interval_ms: i32,
    pub consumer_assignors: Vec<String>,
    pub consumer_max_size: usize,
    /// Defaults of streams groups (`group.streams.*`, KIP-1071).
    pub streams: StreamsGroupDefaults,
    pub share: ShareGroupDefaults,
    pub producer_id_expiration_ms: i64,
    pub http: HttpConfig,
    pub cluster: ClusterConfig,
    /// Every known broker property with its effective value and whether it was set explicitly.
    pub values: BTreeMap<&'static str, ConfigValue>,
    /// Effective default of each topic config, keyed by the topic config name.
    pub topic_defaults: BTreeMap<&'static str, ConfigValue>,
    /// Properties from [`ACCEPTED_WITHOUT_EFFECT`] that were set.
    pub without_effect: Vec<String>,
    /// The properties the process was started with (file, environment, `--override`), which
    /// dynamic configs overlay.
    pub static_props: BTreeMap<String, String>,
    /// The dynamic configs applied (empty until the metadata says otherwise).
    pub dynamic: DynamicLayers,
}

/// The HTTP listener (metrics, console, JSON API): `http.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// `http.listener` as host and port; `None` when it is off.
    pub listener: Option<(String, u16)>,
    /// Whether `http.listener` was set rather than defaulted: a listener asked for must bind,
    /// a default one that cannot (its port is taken) is skipped with a warning.
    pub listener_explicit: bool,
    /// `http.metrics.partition.series.enable`.
    pub partition_series: bool,
    /// `http.listener.security.protocol`; its settings are those of a listener named
    /// [`HTTP_LISTENER`].
    pub security_protocol: SecurityProtocol,
}

/// The listener name the HTTP listener's security settings are looked up under
/// (`listener.name.http.*`).
pub const HTTP_LISTENER: &str = "HTTP";

impl HttpConfig {
    fn parse(value: &str) -> Result<Option<(String, u16)>, ConfigError> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(None);
        }
        let (host, port) = value
            .rsplit_once(':')
            .ok_or_else(|| invalid("http.listener", value, "expected host:port"))?;
        let port = port.parse::<u16>().map_err(|_| {
            invalid(
                "http.listener",
                value,
                "the port is not a number from 0 to 65535",
            )
        })?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        Ok(Some((host.to_string(), port)))
    }
}

/// The broker's `group.streams.*` settings: the defaults of every streams group (KIP-1071).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsGroupDefaults {
    pub session_timeout_ms: i32,
    pub heartbeat_interval_ms: i32,
    pub num_standby_replicas: i32,
    pub initial_rebalance_delay_ms: i32,
    pub max_size: usize,
    pub acceptable_recovery_lag: i64,
    pub task_offset_interval_ms: i32,
    /// `group.streams.rack.aware.assignment.tags`.
    pub rack_aware_assignment_tags: Vec<String>,
}

/// `max.connections.per.ip.overrides`: `host:count` pairs (split at the last colon, so an IPv6
/// address may be given bare), each host an address or a name resolved now, as Kafka resolves
/// it when it reads the config. Kafka's requirement: `max.connections.per.ip` may be 0 only
/// with overrides.
fn per_ip_overrides(
    text: Option<&str>,
    default_limit: i64,
) -> Result<BTreeMap<std::net::IpAddr, usize>, ConfigError> {
    use std::net::ToSocketAddrs;
    const NAME: &str = "max.connections.per.ip.overrides";
    let text = text.unwrap_or_default().trim();
    let mut overrides = BTreeMap::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let bad = |reason: String| ConfigError::Invalid {
            name: NAME.to_string(),
            value: text.to_string(),
            reason,
        };
        let (host, count) = entry
            .rsplit_once(':')
            .ok_or_else(|| bad(format!("'{entry}' is not host:count")))?;
        let host = host.trim().trim_start_matches('[').trim_end_matches(']');
        let count: usize = count
            .trim()
            .parse()
            .map_err(|_| bad(format!("'{}' is not a connection count", count.trim())))?;
        let address = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => ip,
            Err(_) => (host, 0)
                .to_socket_addrs()
                .ok()
                .and_then(|mut addresses| addresses.next())
                .map(|a| a.ip())
                .ok_or_else(|| bad(format!("unknown host {host}")))?,
        };
        overrides.insert(address, count);
    }
    if default_limit == 0 && overrides.is_empty() {
        return Err(ConfigError::Refused(
            "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.".into(),
        ));
    }
    Ok(overrides)
}

/// A comma-separated list of tag keys (`rack.aware.assignment.tags`), blanks dropped.
pub fn split_tags(text: Option<&str>) -> Vec<String> {
    text.unwrap_or_default()
        .split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The broker's `group.share.*` settings: the defaults of every share group (KIP-932).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareGroupDefaults {
    pub session_timeout_ms: i32,
    pub heartbeat_interval_ms: i32,
    pub record_lock_duration_ms: i32,
    pub min_record_lock_duration_ms: i32,
    pub max_record_lock_duration_ms: i32,
    pub delivery_count_limit: i16,
    pub max_record_locks: usize,
    pub max_size: usize,
    pub max_sessions: usize,
    pub state_topic_partitions: i32,
    pub state_topic_segment_bytes: i32,
    /// `share.coordinator.state.topic.min.isr`.
    pub state_topic_min_isr: i32,
}

/// An effective value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigValue {
    pub value: Option<String>,
    pub source: ConfigSource,
}

/// Where a config value comes from, in Kafka's DescribeConfigs terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    TopicOverride,
    /// A dynamic group config (Kafka's DYNAMIC_GROUP_CONFIG).
    GroupOverride,
    /// This broker's own dynamic config (DYNAMIC_BROKER_CONFIG).
    DynamicBroker,
    /// The cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG).
    DynamicDefault,
    StaticBroker,
    Default,
}

impl BrokerConfig {
    /// A security property as one listener sees it: its `listener.name.<listener>.` value,
    /// else the broker-wide value or default.
    pub fn listener_value(&self, listener: &str, property: &str) -> Option<String> {
        self.listener_overrides
            .get(listener, property)
            .map(str::to_string)
            .or_else(|| self.values.get(property).and_then(|v| v.value.clone()))
    }

    /// The security protocol of the listener named `name` (a name the map does not list is
    /// PLAINTEXT), whether or not this node binds it.
    pub fn protocol_of(&self, name: &str) -> SecurityProtocol {
        self.listener_protocols
            .get(name)
            .copied()
            .unwrap_or(SecurityProtocol::Plaintext)
    }

    /// The listener configured under `name`.
    pub fn listener(&self, name: &str) -> Option<&ListenerConfig> {
        self.listeners.iter().find(|l| l.name == name)
    }

    /// Splits properties into those this broker knows and the names of the others. For
    /// properties taken from an image's environment, which also carries variables for other
    /// components (cp-kafka's `KAFKA_REST_*`, `KAFKA_CONFLUENT_*`): Kafka logs those and goes
    /// on, and so does the caller; a property file's unknown names stay errors.
    pub fn split_unknown(
        props: BTreeMap<String, String>,
    ) -> (BTreeMap<String, String>, Vec<String>) {
        let mut unknown = Vec::new();
        let known = props
            .into_iter()
            .filter(|(name, _)| {
                let is_known = broker_config_def(name).is_some()
                    || ACCEPTED_WITHOUT_EFFECT.contains(&name.as_str())
                    || security::per_listener_def(name).is_some();
                if !is_known {
                    unknown.push(name.clone());
                }
                is_known
            })
            .collect();
        (known, unknown)
    }

    /// Builds the configuration from file properties overlaid with `--override`s.
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let static_props = props.clone();
        let mut props = props.clone();
        let mut listener_overrides = ListenerOverrides::take_from(&mut props)?;
        let props = &props;
        let mut without_effect = Vec::new();
        for (name, value) in props {
            if ACCEPTED_WITHOUT_EFFECT.contains(&name.as_str()) {
                without_effect.push(name.clone());
                continue;
            }
            let def = broker_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
            validate_value(def, value)?;
        }
        let values: BTreeMap<&'static str, ConfigValue> = all_broker_configs()
            .map(|def| {
                let value = match props.get(def.name) {
                    Some(v) => ConfigValue {
                        value: Some(v.trim().to_string()),
                        source: ConfigSource::StaticBroker,
                    },
                    None => ConfigValue {
                        value: def.default.map(str::to_string),
                        source: ConfigSource::Default,
                    },
                };
                (def.name, value)
            })
            .collect();
        let get = |name: &str| values.get(name).and_then(|v| v.value.clone());
        let explicit = |name: &str| props.get(name).map(|v| v.trim().to_string());
        let int = |name: &str| -> i64 { get(name).and_then(|v| v.parse().ok()).unwrap_or(0) };

        let node_id = match explicit("node.id").or_else(|| explicit("broker.id")) {
            Some(v) => v
                .parse::<i32>()
                .map_err(|_| invalid("node.id", &v, "not an integer"))?,
            None => 1,
        };
        let listeners_text = get("listeners").unwrap_or_default();
        let mut listeners = ListenerConfig::parse_list("listeners", &listeners_text)?;
        for listener in &listeners {
            listener.bind_address()?;
        }
        let protocols = security::parse_protocol_map(
            &get("listener.security.protocol.map").unwrap_or_default(),
        )?;
        let protocol_of = |name: &str| {
            protocols
                .get(name)
                .copied()
                .unwrap_or(SecurityProtocol::Plaintext)
        };
        for listener in &mut listeners {
            listener.protocol = protocol_of(&listener.name);
        }
        let http_protocol_name = get("http.listener.security.protocol").unwrap_or_default();
        let http_protocol =
            SecurityProtocol::from_name(http_protocol_name.trim()).ok_or_else(|| {
                invalid(
                    "http.listener.security.protocol",
                    &http_protocol_name,
                    "expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
                )
            })?;
        if let Some(path) = explicit("java.security.auth.login.config").filter(|p| !p.is_empty()) {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                invalid(
                    "java.security.auth.login.config",
                    &path,
                    format!("cannot read the JAAS file: {e}"),
                )
            })?;
            let sections = crate::config::jaas::parse_file(&text)
                .map_err(|e| invalid("java.security.auth.login.config", &path, e.to_string()))?;
            let names = listeners
                .iter()
                .map(|l| l.name.as_str())
                .chain(protocols.keys().map(String::as_str))
                .chain(std::iter::once(HTTP_LISTENER));
            listener_overrides.add_static_jaas(&sections, names);
        }
        let cluster = ClusterConfig::from_values(
            &get,
            &int,
            node_id,
            &listeners,
            explicit("security.inter.broker.protocol").is_some(),
        )?;
        let mut advertised_listeners = match explicit("advertised.listeners") {
            Some(text) => ListenerConfig::parse_list("advertised.listeners", &text)?,
            None => listeners.clone(),
        };
        for listener in &mut advertised_listeners {
            listener.protocol = protocol_of(&listener.name);
        }
        let log_dirs: Vec<PathBuf> = match explicit("log.dirs") {
            Some(dirs) => {
                let listed: Vec<PathBuf> = dirs
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from)
                    .collect();
                if listed.is_empty() {
                    return Err(invalid("log.dirs", &dirs, "no directory given"));
                }
                let mut unique = std::collections::HashSet::new();
                if let Some(twice) = listed.iter().find(|d| !unique.insert(*d)) {
                    return Err(invalid(
                        "log.dirs",
                        &dirs,
                        format!("{} is listed twice", twice.display()),
                    ));
                }
                listed
            }
            None => vec![PathBuf::from(
                get("log.dir").unwrap_or_else(|| "./data".into()),
            )],
        };
        let log_dir = log_dirs[0].clone();

        // Kafka's fallbacks: ms, else minutes, else hours.
        let retention_ms = explicit("log.retention.ms")
            .or_else(|| explicit("log.retention.minutes").map(|m| scaled_or_unlimited(&m, 60_000)))
            .unwrap_or_else(|| {
                scaled_or_unlimited(&get("log.retention.hours").unwrap_or_default(), 3_600_000)
            });
        let roll_ms = explicit("log.roll.ms").unwrap_or_else(|| {
            scaled_or_unlimited(&get("log.roll.hours").unwrap_or_default(), 3_600_000)
        });
        let roll_jitter_ms = explicit("log.roll.jitter.ms").unwrap_or_else(|| {
            scaled_or_unlimited(&get("log.roll.jitter.hours").unwrap_or_default(), 3_600_000)
        });
        let flush_ms = explicit("log.flush.interval.ms")
            .or_else(|| get("log.flush.scheduler.interval.ms"))
            .unwrap_or_else(|| LONG_MAX.into());

        let mut topic_defaults = BTreeMap::new();
        for def in TOPIC_CONFIGS {
            let synonym = def.broker_synonym.unwrap_or(def.name);
            let derived = match synonym {
                "log.retention.ms" => Some(retention_ms.clone()),
                "log.roll.ms" => Some(roll_ms.clone()),
                "log.roll.jitter.ms" => Some(roll_jitter_ms.clone()),
                "log.flush.interval.ms" => Some(flush_ms.clone()),
                _ => None,
            };
            let derived_is_explicit = match synonym {
                "log.retention.ms" => [
                    "log.retention.ms",
                    "log.retention.minutes",
                    "log.retention.hours",
                ]
                .iter()
                .any(|n| props.contains_key(*n)),
                "log.roll.ms" => {
                    props.contains_key("log.roll.ms") || props.contains_key("log.roll.hours")
                }
                "log.roll.jitter.ms" => {
                    props.contains_key("log.roll.jitter.ms")
                        || props.contains_key("log.roll.jitter.hours")
                }
                "log.flush.interval.ms" => {
                    props.contains_key("log.flush.interval.ms")
                        || props.contains_key("log.flush.scheduler.interval.ms")
                }
                other => props.contains_key(other),
            };
            let value = derived
                .or_else(|| get(synonym))
                .or_else(|| def.default.map(str::to_string));
            topic_defaults.insert(
                def.name,
                ConfigValue {
                    value,
                    source: if derived_is_explicit {
                        ConfigSource::StaticBroker
                    } else {
                        ConfigSource::Default
                    },
                },
            );
        }

        Ok(Self {
            node_id,
            listeners,
            advertised_listeners,
            listener_overrides,
            listener_protocols: protocols,
            log_dir,
            log_dirs,
            num_partitions: int("num.partitions") as i32,
            default_replication_factor: int("default.replication.factor") as i32,
            http: HttpConfig {
                listener: HttpConfig::parse(&get("http.listener").unwrap_or_default())?,
                listener_explicit: explicit("http.listener").is_some(),
                partition_series: get("http.metrics.partition.series.enable")
                    .is_none_or(|v| v.eq_ignore_ascii_case("true")),
                security_protocol: http_protocol,
            },
            auto_create_topics_enable: get("auto.create.topics.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            delete_topic_enable: get("delete.topic.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            transaction_partition_verification: get("transaction.partition.verification.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            retention_check_interval_ms: int("log.retention.check.interval.ms").max(1) as u64,
            flush_scheduler_interval_ms: int("log.flush.scheduler.interval.ms").max(0) as u64,
            checkpoint_interval_ms: int("log.flush.offset.checkpoint.interval.ms").max(1) as u64,
            socket_request_max_bytes: int("socket.request.max.bytes") as usize,
            max_connections: int("max.connections") as usize,
            max_connection_creation_rate: int("max.connection.creation.rate")
                .clamp(0, i64::from(i32::MAX)) as i32,
            max_connections_per_ip: int("max.connections.per.ip").max(0) as usize,
            max_connections_per_ip_overrides: per_ip_overrides(
                get("max.connections.per.ip.overrides").as_deref(),
                int("max.connections.per.ip"),
            )?,
            quota_windows: QuotaWindows {
                samples: int("quota.window.num").clamp(1, 1_000) as u32,
                window_ms: int("quota.window.size.seconds").clamp(1, 86_400) * 1000,
            },
            metadata_snapshot_after_bytes: int("metadata.log.max.record.bytes.between.snapshots")
                .max(1) as u64,
            leader_replication_throttled_rate: int("leader.replication.throttled.rate").max(0),
            follower_replication_throttled_rate: int("follower.replication.throttled.rate").max(0),
            alter_log_dirs_rate: int("replica.alter.log.dirs.io.max.bytes.per.second").max(1),
            replication_quota_windows: QuotaWindows {
                samples: int("replication.quota.window.num").clamp(1, 1_000) as u32,
                window_ms: int("replication.quota.window.size.seconds").clamp(1, 86_400) * 1000,
            },
            controller_quota_windows: QuotaWindows {
                samples: int("controller.quota.window.num").clamp(1, 1_000) as u32,
                window_ms: int("controller.quota.window.size.seconds").clamp(1, 86_400) * 1000,
            },
            connections_max_idle: u64::try_from(int("connections.max.idle.ms"))
                .ok()
                .map(std::time::Duration::from_millis),
            queued_max_request_bytes: usize::try_from(int("queued.max.request.bytes")).ok(),
            max_request_partition_size_limit: int("max.request.partition.size.limit") as i32,
            fetch_session_cache_slots: int("max.incremental.fetch.session.cache.slots").max(0)
                as usize,
            recovery_threads: int("num.recovery.threads.per.data.dir").max(1) as usize,
            segment_open_files_max: usize::try_from(int("log.segment.open.files.max"))
                .ok()
                .filter(|n| *n > 0),
            segment_writeback_bytes: u64::try_from(int("log.segment.writeback.bytes")).unwrap_or(0),
            index_mapped_files_max: usize::try_from(int("log.index.mapped.files.max"))
                .ok()
                .filter(|n| *n > 0),
            cluster_id: explicit("cluster.id"),
            offsets_topic_partitions: int("offsets.topic.num.partitions") as i32,
            offsets_topic_segment_bytes: int("offsets.topic.segment.bytes") as i32,
            transaction_state_partitions: int("transaction.state.log.num.partitions") as i32,
            transaction_state_segment_bytes: int("transaction.state.log.segment.bytes") as i32,
            transaction_state_min_isr: int("transaction.state.log.min.isr") as i32,
            transaction_max_timeout_ms: int("transaction.max.timeout.ms") as i32,
            transaction_abort_interval_ms: int(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            )
            .max(1) as u64,
            transactional_id_expiration_ms: int("transactional.id.expiration.ms"),
            transaction_remove_expired_interval_ms: int(
                "transaction.remove.expired.transaction.cleanup.interval.ms",
            )
            .max(1) as u64,
            offsets_retention_ms: int("offsets.retention.minutes").saturating_mul(60_000),
            offsets_retention_check_interval_ms: int("offsets.retention.check.interval.ms").max(1)
                as u64,
            offset_metadata_max_bytes: int("offset.metadata.max.bytes").max(0) as usize,
            group_min_session_timeout_ms: int("group.min.session.timeout.ms") as i32,
            group_max_session_timeout_ms: int("group.max.session.timeout.ms") as i32,
            group_initial_rebalance_delay_ms: int("group.initial.rebalance.delay.ms") as i32,
            group_max_size: int("group.max.size").max(1) as usize,
            consumer_session_timeout_ms: int("group.consumer.session.timeout.ms") as i32,
            consumer_heartbeat_interval_ms: int("group.consumer.heartbeat.interval.ms") as i32,
            consumer_assignment_interval_ms: int("group.consumer.assignment.interval.ms") as i32,
            consumer_assignors: get("group.consumer.assignors")
                .unwrap_or_default()
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect(),
            consumer_max_size: int("group.consumer.max.size").max(1) as usize,
            streams: StreamsGroupDefaults {
                session_timeout_ms: int("group.streams.session.timeout.ms") as i32,
                heartbeat_interval_ms: int("group.streams.heartbeat.interval.ms") as i32,
                num_standby_replicas: int("group.streams.num.standby.replicas") as i32,
                initial_rebalance_delay_ms: int("group.streams.initial.rebalance.delay.ms") as i32,
                max_size: int("group.streams.max.size").max(1) as usize,
                acceptable_recovery_lag: int("group.streams.acceptable.recovery.lag"),
                task_offset_interval_ms: int("group.streams.task.offset.interval.ms") as i32,
                rack_aware_assignment_tags: split_tags(
                    get("group.streams.rack.aware.assignment.tags").as_deref(),
                ),
            },
            share: ShareGroupDefaults {
                session_timeout_ms: int("group.share.session.timeout.ms") as i32,
                heartbeat_interval_ms: int("group.share.heartbeat.interval.ms") as i32,
                record_lock_duration_ms: int("group.share.record.lock.duration.ms") as i32,
                min_record_lock_duration_ms: int("group.share.min.record.lock.duration.ms") as i32,
                max_record_lock_duration_ms: int("group.share.max.record.lock.duration.ms") as i32,
                delivery_count_limit: int("group.share.delivery.count.limit").clamp(2, 10) as i16,
                max_record_locks: int("group.share.partition.max.record.locks").max(100) as usize,
                max_size: int("group.share.max.size").max(1) as usize,
                max_sessions: int("group.share.max.share.sessions").max(1) as usize,
                state_topic_partitions: int("share.coordinator.state.topic.num.partitions").max(1)
                    as i32,
                state_topic_segment_bytes: int("share.coordinator.state.topic.segment.bytes")
                    as i32,
                state_topic_min_isr: int("share.coordinator.state.topic.min.isr") as i32,
            },
            producer_id_expiration_ms: int("producer.id.expiration.ms").max(1),
            cluster,
            values,
            topic_defaults,
            without_effect,
            static_props,
            dynamic: DynamicLayers::default(),
        })
    }

    /// Kafka's default configuration with the given overrides (used by tests).
    pub fn with_overrides(pairs: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Self::from_properties(&props)
    }
}

pub(super) fn scaled_or_unlimited(value: &str, factor: i64) -> String {
    match value.trim().parse::<i64>() {
        Ok(n) if n < 0 => "-1".into(),
        Ok(n) => n.saturating_mul(factor).to_string(),
        Err(_) => LONG_MAX.into(),
    }
}
