//! Group configs (the GROUP config resource): the share and consumer group settings a group
//! may override, checked against the broker's bounds, and described as DescribeConfigs
//! reports them.

use super::{
    BrokerConfig, ConfigError, ConfigSource, ConfigValue, DescribedConfig, GROUP_CONFIGS,
    group_config_def, overridable, parse_iso_duration, validate_value,
};
use std::collections::BTreeMap;

/// Validates a group's config overrides against the broker's limits.
pub fn validate_group_configs(
    broker: &BrokerConfig,
    configs: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    // A bound the broker sets (its effective value; the definitions give every one).
    let bound = |property: &str| -> i64 {
        broker
            .values
            .get(property)
            .and_then(|v| v.value.as_deref())
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    for (name, value) in configs {
        let def = group_config_def(name)
            .ok_or_else(|| ConfigError::Refused(format!("Unknown group config name: {name}")))?;
        validate_value(def, value)?;
        // Kafka's GroupConfig.validate: timeouts and intervals within the broker's bounds.
        let within = |min: &str, max: &str| -> Result<(), ConfigError> {
            let (min, max) = (bound(min), bound(max));
            let n: i64 = value.trim().parse().unwrap_or(i64::MIN);
            if n < min || n > max {
                return Err(ConfigError::Refused(format!(
                    "{name} must be in the range {min} to {max} inclusive."
                )));
            }
            Ok(())
        };
        match name.as_str() {
            "consumer.session.timeout.ms" => within(
                "group.consumer.min.session.timeout.ms",
                "group.consumer.max.session.timeout.ms",
            )?,
            "consumer.heartbeat.interval.ms" => within(
                "group.consumer.min.heartbeat.interval.ms",
                "group.consumer.max.heartbeat.interval.ms",
            )?,
            "share.session.timeout.ms" => within(
                "group.share.min.session.timeout.ms",
                "group.share.max.session.timeout.ms",
            )?,
            "share.heartbeat.interval.ms" => within(
                "group.share.min.heartbeat.interval.ms",
                "group.share.max.heartbeat.interval.ms",
            )?,
            "streams.session.timeout.ms" => within(
                "group.streams.min.session.timeout.ms",
                "group.streams.max.session.timeout.ms",
            )?,
            "streams.heartbeat.interval.ms" => within(
                "group.streams.min.heartbeat.interval.ms",
                "group.streams.max.heartbeat.interval.ms",
            )?,
            "streams.num.standby.replicas" => {
                let max = bound("group.streams.max.standby.replicas");
                if value.trim().parse::<i64>().is_ok_and(|n| n > max) {
                    return Err(ConfigError::Refused(format!(
                        "{name} must be less than or equal to {max}"
                    )));
                }
            }
            _ => {}
        }
        let invalid = |reason: String| ConfigError::Invalid {
            name: name.clone(),
            value: value.clone(),
            reason,
        };
        match name.as_str() {
            "share.record.lock.duration.ms" => {
                let (min, max) = (
                    broker.share.min_record_lock_duration_ms,
                    broker.share.max_record_lock_duration_ms,
                );
                let ms: i64 = value.trim().parse().unwrap_or(-1);
                if ms < min as i64 || ms > max as i64 {
                    return Err(invalid(format!(
                        "must be within group.share.min.record.lock.duration.ms ({min}) and group.share.max.record.lock.duration.ms ({max})"
                    )));
                }
            }
            "share.auto.offset.reset" => {
                let value = value.trim();
                let ok = matches!(value, "latest" | "earliest")
                    || value
                        .strip_prefix("by_duration:")
                        .and_then(parse_iso_duration)
                        .is_some();
                if !ok {
                    return Err(invalid(
                        "must be latest, earliest or by_duration:<ISO-8601 duration>".into(),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every group config with its effective value, as Kafka 4.4 describes a GROUP resource:
/// synonyms the group's override, then the broker property's chain (dynamic, static,
/// default) — or, for a config without one, its own default —; the source the first one's.
pub fn describe_group_configs(
    broker: &BrokerConfig,
    overrides: &BTreeMap<String, String>,
) -> Vec<DescribedConfig> {
    GROUP_CONFIGS
        .iter()
        .map(|def| {
            let mut synonyms = Vec::new();
            if let Some(v) = overrides.get(def.name) {
                synonyms.push((
                    def.name.to_string(),
                    Some(v.clone()),
                    ConfigSource::GroupOverride,
                ));
            }
            let fallback = match def.broker_synonym {
                Some(synonym) => {
                    synonyms.extend(broker.synonym_chain(synonym));
                    broker.values.get(synonym).and_then(|v| v.value.clone())
                }
                None => {
                    let default = def.default.map(str::to_string);
                    synonyms.push((def.name.to_string(), default.clone(), ConfigSource::Default));
                    default
                }
            };
            let source = synonyms.first().map_or(ConfigSource::Default, |s| s.2);
            overridable(
                def,
                overrides,
                ConfigSource::GroupOverride,
                ConfigValue {
                    value: fallback.or_else(|| def.default.map(str::to_string)),
                    source,
                },
                synonyms,
            )
        })
        .collect()
}
