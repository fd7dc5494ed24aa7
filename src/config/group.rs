//! Group configs (the GROUP config resource): the consumer, share and streams group settings a
//! group may override (Kafka 4.4's `GroupConfig`), checked against the broker's bounds with
//! Kafka's messages, and described as DescribeConfigs reports them.

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
            "consumer.assignment.interval.ms" => within(
                "group.consumer.min.assignment.interval.ms",
                "group.consumer.max.assignment.interval.ms",
            )?,
            "share.assignment.interval.ms" => within(
                "group.share.min.assignment.interval.ms",
                "group.share.max.assignment.interval.ms",
            )?,
            "streams.assignment.interval.ms" => within(
                "group.streams.min.assignment.interval.ms",
                "group.streams.max.assignment.interval.ms",
            )?,
            "share.delivery.count.limit" => within(
                "group.share.min.delivery.count.limit",
                "group.share.max.delivery.count.limit",
            )?,
            "share.partition.max.record.locks" => within(
                "group.share.min.partition.max.record.locks",
                "group.share.max.partition.max.record.locks",
            )?,
            "streams.assignor.name" => {
                let registered: Vec<String> = broker
                    .values
                    .get("group.streams.assignors")
                    .and_then(|v| v.value.as_deref())
                    .unwrap_or("sticky")
                    .split(',')
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty())
                    .collect();
                if !registered.iter().any(|a| a == value.trim()) {
                    return Err(ConfigError::Refused(format!(
                        "streams.assignor.name '{}' is not a registered task assignor. Registered assignors are: [{}].",
                        value.trim(),
                        registered.join(", ")
                    )));
                }
            }
            "streams.rack.aware.assignment.tags" => {
                let tags: Vec<&str> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .collect();
                let distinct: std::collections::BTreeSet<&str> = tags.iter().copied().collect();
                if distinct.len() != tags.len() {
                    return Err(ConfigError::Refused(
                        "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
                            .into(),
                    ));
                }
            }
            "errors.deadletterqueue.topic.name" => {
                let topic = value.trim();
                if topic.starts_with("__") {
                    return Err(ConfigError::Refused(
                        "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
                            .into(),
                    ));
                }
                if !topic.is_empty() {
                    return Err(ConfigError::Refused(
                        "errors.deadletterqueue.topic.name: Sluice does not write share groups' dead-letter queues yet"
                            .into(),
                    ));
                }
            }
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
    // Kafka's validateSessionExceedsHeartbeat: with either set, the group's session timeout
    // (or the broker's default) must exceed its heartbeat interval (or the broker's).
    for kind in ["consumer", "share", "streams"] {
        let (session, heartbeat) = (
            format!("{kind}.session.timeout.ms"),
            format!("{kind}.heartbeat.interval.ms"),
        );
        if !configs.contains_key(&session) && !configs.contains_key(&heartbeat) {
            continue;
        }
        let value = |name: &str| -> i64 {
            configs
                .get(name)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| bound(&format!("group.{name}")))
        };
        if value(&session) <= value(&heartbeat) {
            return Err(ConfigError::Refused(format!(
                "{session} must be greater than {heartbeat}"
            )));
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
