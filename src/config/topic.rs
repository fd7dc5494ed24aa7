//! A topic's configuration ([`LogConfig`]: the broker's defaults overlaid with the topic's
//! overrides), the overrides checked, and what DescribeConfigs reports of topics and of the
//! broker (value, source, synonyms).

use super::{
    BrokerConfig, ConfigDef, ConfigError, ConfigSource, ConfigType, ConfigValue, TOPIC_CONFIGS,
    all_broker_configs, topic_config_def, validate_value,
};
use std::collections::BTreeMap;

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
            min_compaction_lag_ms: long("min.compaction.lag.ms"),
        }
    }
}

/// One config as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedConfig {
    pub name: &'static str,
    pub value: Option<String>,
    pub source: ConfigSource,
    pub kind: ConfigType,
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
        name: def.name,
        value,
        source,
        kind: def.kind,
        read_only: false,
        doc: def.doc,
        synonyms,
    }
}

/// Every topic config with its effective value: the override, else the broker's value.
pub fn describe_topic_configs(
    defaults: &BTreeMap<&'static str, ConfigValue>,
    overrides: &BTreeMap<String, String>,
) -> Vec<DescribedConfig> {
    TOPIC_CONFIGS
        .iter()
        .map(|def| {
            let broker_value = defaults.get(def.name).cloned().unwrap_or(ConfigValue {
                value: None,
                source: ConfigSource::Default,
            });
            let mut synonyms = Vec::new();
            if let Some(v) = overrides.get(def.name) {
                synonyms.push((
                    def.name.to_string(),
                    Some(v.clone()),
                    ConfigSource::TopicOverride,
                ));
            }
            if let Some(synonym) = def.broker_synonym {
                if broker_value.source == ConfigSource::StaticBroker {
                    synonyms.push((
                        synonym.to_string(),
                        broker_value.value.clone(),
                        ConfigSource::StaticBroker,
                    ));
                }
                synonyms.push((
                    synonym.to_string(),
                    broker_value.value.clone(),
                    ConfigSource::Default,
                ));
            }
            overridable(
                def,
                overrides,
                ConfigSource::TopicOverride,
                broker_value,
                synonyms,
            )
        })
        .collect()
}

impl BrokerConfig {
    /// Every broker property with its effective value. Broker configs are static here (no
    /// dynamic broker config yet), so all are read-only.
    pub fn describe(&self) -> Vec<DescribedConfig> {
        all_broker_configs()
            .map(|def| {
                let current = self.values.get(def.name).cloned().unwrap_or(ConfigValue {
                    value: None,
                    source: ConfigSource::Default,
                });
                let mut synonyms =
                    vec![(def.name.to_string(), current.value.clone(), current.source)];
                if current.source != ConfigSource::Default && def.default.is_some() {
                    synonyms.push((
                        def.name.to_string(),
                        def.default.map(str::to_string),
                        ConfigSource::Default,
                    ));
                }
                DescribedConfig {
                    name: def.name,
                    value: current.value,
                    source: current.source,
                    kind: def.kind,
                    read_only: true,
                    doc: def.doc,
                    synonyms,
                }
            })
            .collect()
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
