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
    for (name, value) in configs {
        let def = group_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
        validate_value(def, value)?;
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

/// Every group config with its effective value: the group's override, else the broker's.
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
                    let current = broker.values.get(synonym).cloned().unwrap_or(ConfigValue {
                        value: def.default.map(str::to_string),
                        source: ConfigSource::Default,
                    });
                    synonyms.push((synonym.to_string(), current.value.clone(), current.source));
                    current
                }
                None => ConfigValue {
                    value: def.default.map(str::to_string),
                    source: ConfigSource::Default,
                },
            };
            overridable(
                def,
                overrides,
                ConfigSource::GroupOverride,
                fallback,
                synonyms,
            )
        })
        .collect()
}
