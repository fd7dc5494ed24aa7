//! A topic's configuration ([`LogConfig`]: the broker's defaults overlaid with the topic's
//! overrides), the overrides checked, and what DescribeConfigs reports of topics and of the
//! broker (value, source, synonyms).

use super::{
    BrokerConfig, ConfigDef, ConfigError, ConfigSource, ConfigType, ConfigValue, TOPIC_CONFIGS,
    all_broker_configs, broker_config_def, broker_synonyms, is_dynamic, topic_config_def,
    validate_value,
};
use std::collections::{BTreeMap, BTreeSet};

/// The typed settings of one partition log: broker defaults overlaid with topic overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    pub segment_bytes: u64,
    pub segment_ms: i64,
    pub segment_jitter_ms: i64,
    pub segment_index_bytes: u64,
    pub index_interval_bytes: u64,
    pub retention_ms: i64,
    pub retention_bytes: i64,
    pub flush_messages: i64,
    pub flush_ms: i64,
    pub max_message_bytes: usize,
    pub log_append_time: bool,
    pub timestamp_before_max_ms: i64,
    pub timestamp_after_max_ms: i64,
    pub min_insync_replicas: i32,
    pub cleanup_delete: bool,
    pub cleanup_compact: bool,
    pub delete_retention_ms: i64,
    pub min_compaction_lag_ms: i64,
    /// `preallocate`: reserve an active segment's blocks up to `segment.bytes`.
    pub preallocate: bool,
    /// `compression.type`: `producer`, `uncompressed` or a codec's name.
    pub compression_type: String,
    /// `compression.gzip.level`, `compression.lz4.level`, `compression.zstd.level`.
    pub gzip_level: i32,
    pub lz4_level: i32,
    pub zstd_level: i32,
    /// `leader.replication.throttled.replicas`.
    pub leader_throttled: ThrottledReplicas,
    /// `follower.replication.throttled.replicas`.
    pub follower_throttled: ThrottledReplicas,
}

/// A topic's throttled replicas list (KIP-73): none, all (`*`), or `partition:broker` pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ThrottledReplicas {
    #[default]
    None,
    All,
    Listed(Vec<(i32, i32)>),
}

impl ThrottledReplicas {
    /// Reads a validated list; entries that do not parse are left out.
    pub fn parse(text: &str) -> Self {
        let items: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect();
        if items == ["*"] {
            return ThrottledReplicas::All;
        }
        let pairs: Vec<(i32, i32)> = items
            .iter()
            .filter_map(|item| {
                let (partition, broker) = item.split_once(':')?;
                Some((partition.trim().parse().ok()?, broker.trim().parse().ok()?))
            })
            .collect();
        if pairs.is_empty() {
            ThrottledReplicas::None
        } else {
            ThrottledReplicas::Listed(pairs)
        }
    }

    /// Whether the replica of `partition` on `broker` is throttled.
    pub fn includes(&self, partition: i32, broker: i32) -> bool {
        match self {
            ThrottledReplicas::None => false,
            ThrottledReplicas::All => true,
            ThrottledReplicas::Listed(pairs) => pairs.contains(&(partition, broker)),
        }
    }
}

impl LogConfig {
    /// Resolves the effective value of every topic config. `overrides` must already be valid.
    pub fn resolve(
        defaults: &BTreeMap<&'static str, ConfigValue>,
        overrides: &BTreeMap<String, String>,
    ) -> Self {
        let get = |name: &str| -> String {
            overrides
                .get(name)
                .cloned()
                .or_else(|| defaults.get(name).and_then(|v| v.value.clone()))
                .unwrap_or_default()
        };
        let long = |name: &str| get(name).trim().parse::<i64>().unwrap_or(i64::MAX);
        Self {
            segment_bytes: long("segment.bytes").max(14) as u64,
            segment_ms: long("segment.ms"),
            segment_jitter_ms: long("segment.jitter.ms"),
            segment_index_bytes: long("segment.index.bytes").max(8) as u64,
            index_interval_bytes: long("index.interval.bytes").max(0) as u64,
            retention_ms: long("retention.ms"),
            retention_bytes: long("retention.bytes"),
            flush_messages: long("flush.messages"),
            flush_ms: long("flush.ms"),
            max_message_bytes: long("max.message.bytes").clamp(0, i32::MAX as i64) as usize,
            log_append_time: get("message.timestamp.type") == "LogAppendTime",
            timestamp_before_max_ms: long("message.timestamp.before.max.ms").max(0),
            timestamp_after_max_ms: long("message.timestamp.after.max.ms").max(0),
            min_insync_replicas: long("min.insync.replicas").clamp(1, i32::MAX as i64) as i32,
            cleanup_delete: get("cleanup.policy")
                .split(',')
                .any(|p| p.trim() == "delete"),
            cleanup_compact: get("cleanup.policy")
                .split(',')
                .any(|p| p.trim() == "compact"),
            delete_retention_ms: long("delete.retention.ms"),
            compression_type: get("compression.type").trim().to_string(),
            gzip_level: long("compression.gzip.level").clamp(-1, 9) as i32,
            lz4_level: long("compression.lz4.level").clamp(1, 17) as i32,
            zstd_level: long("compression.zstd.level").clamp(-131_072, 22) as i32,
            min_compaction_lag_ms: long("min.compaction.lag.ms"),
            preallocate: get("preallocate").trim().eq_ignore_ascii_case("true"),
            leader_throttled: ThrottledReplicas::parse(&get(
                "leader.replication.throttled.replicas",
            )),
            follower_throttled: ThrottledReplicas::parse(&get(
                "follower.replication.throttled.replicas",
            )),
        }
    }
}

/// One config as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedConfig {
    pub name: String,
    pub value: Option<String>,
    pub source: ConfigSource,
    /// `None`: a name no definition knows (a dynamic config stored as given), which Kafka
    /// describes as sensitive, of unknown type.
    pub kind: Option<ConfigType>,
    pub read_only: bool,
    pub doc: &'static str,
    /// Where the value could come from, most specific first: (name, value, source).
    pub synonyms: Vec<(String, Option<String>, ConfigSource)>,
}

/// A config a resource may override: its override (of `source`), else `fallback`.
pub(super) fn overridable(
    def: &ConfigDef,
    overrides: &BTreeMap<String, String>,
    source: ConfigSource,
    fallback: ConfigValue,
    synonyms: Vec<(String, Option<String>, ConfigSource)>,
) -> DescribedConfig {
    let (value, source) = match overrides.get(def.name) {
        Some(v) => (Some(v.clone()), source),
        None => (fallback.value, fallback.source),
    };
    DescribedConfig {
        name: def.name.to_string(),
        value,
        source,
        kind: Some(def.kind),
        read_only: false,
        doc: def.doc,
        synonyms,
    }
}

impl BrokerConfig {
    /// Every topic config of a topic with `overrides`, as Kafka's `createTopicConfigEntry`:
    /// the value in effect; synonyms the override, then the broker property's chain
    /// ([`BrokerConfig::synonym_chain`]); the source the first synonym's.
    pub fn describe_topic(&self, overrides: &BTreeMap<String, String>) -> Vec<DescribedConfig> {
        TOPIC_CONFIGS
            .iter()
            .map(|def| {
                let mut synonyms = Vec::new();
                if let Some(v) = overrides.get(def.name) {
                    synonyms.push((
                        def.name.to_string(),
                        Some(v.clone()),
                        ConfigSource::TopicOverride,
                    ));
                }
                if let Some(synonym) = def.broker_synonym {
                    synonyms.extend(self.synonym_chain(synonym));
                }
                let value = overrides.get(def.name).cloned().or_else(|| {
                    self.topic_defaults
                        .get(def.name)
                        .and_then(|v| v.value.clone())
                });
                DescribedConfig {
                    name: def.name.to_string(),
                    value,
                    source: synonyms.first().map_or(ConfigSource::Default, |s| s.2),
                    kind: Some(def.kind),
                    read_only: false,
                    doc: def.doc,
                    synonyms,
                }
            })
            .collect()
    }

    /// This broker's configs, as Kafka describes its own broker resource: every property
    /// (and every dynamic one stored under a name no definition knows) with its value in
    /// effect and its synonym chain; changeable ones are those Kafka updates dynamically.
    pub fn describe(&self) -> Vec<DescribedConfig> {
        let mut described: Vec<DescribedConfig> = all_broker_configs()
            .map(|def| {
                let current = self.values.get(def.name).cloned().unwrap_or(ConfigValue {
                    value: None,
                    source: ConfigSource::Default,
                });
                let synonyms = self.synonym_chain(def.name);
                DescribedConfig {
                    name: def.name.to_string(),
                    value: current.value,
                    source: synonyms.first().map_or(ConfigSource::Default, |s| s.2),
                    kind: Some(def.kind),
                    read_only: !is_dynamic(def.name),
                    doc: def.doc,
                    synonyms,
                }
            })
            .collect();
        let stored: BTreeSet<&String> = self
            .dynamic
            .per_broker
            .keys()
            .chain(self.dynamic.cluster_default.keys())
            .filter(|n| broker_config_def(n).is_none())
            .collect();
        for name in stored {
            described.push(self.describe_stored(name, self.synonym_chain(name)));
        }
        described.sort_by(|a, b| a.name.cmp(&b.name));
        described
    }

    /// The cluster-wide dynamic defaults (the broker resource named `""`), as Kafka
    /// describes them: only those set, each with its dynamic-default synonyms.
    pub fn describe_dynamic_defaults(&self) -> Vec<DescribedConfig> {
        self.dynamic
            .cluster_default
            .keys()
            .map(|name| {
                let synonyms: Vec<_> = self
                    .synonym_chain(name)
                    .into_iter()
                    .filter(|s| s.2 == ConfigSource::DynamicDefault)
                    .collect();
                let mut described = self.describe_stored(name, synonyms);
                described.value = self.dynamic.cluster_default.get(name).cloned();
                described
            })
            .collect()
    }

    /// A stored dynamic config: typed by its definition (a listener's one by its base
    /// property's), else of unknown type.
    fn describe_stored(
        &self,
        name: &str,
        synonyms: Vec<(String, Option<String>, ConfigSource)>,
    ) -> DescribedConfig {
        let base = broker_synonyms(name).pop().unwrap_or_default();
        let def = broker_config_def(name).or_else(|| broker_config_def(&base));
        let value = self
            .values
            .get(name)
            .and_then(|v| v.value.clone())
            .or_else(|| self.dynamic.value(name).and_then(|v| v.value));
        DescribedConfig {
            name: name.to_string(),
            value,
            source: synonyms.first().map_or(ConfigSource::Default, |s| s.2),
            kind: def.map(|d| d.kind),
            read_only: !is_dynamic(name),
            doc: def.map_or("", |d| d.doc),
            synonyms,
        }
    }
}

/// Validates a set of topic config overrides (name known, value well-formed).
pub fn validate_topic_overrides(overrides: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    for (name, value) in overrides {
        let def = topic_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
        validate_value(def, value)?;
    }
    Ok(())
}
