//! Topics created when the broker starts: `sluice serve --create-topic
//! NAME[:PARTITIONS[:REPLICATION[:key=value,...]]]` and the `KAFKA_CREATE_TOPICS` list of the
//! wurstmeister images that compose files still use (`orders:3:1,events:1:1:compact`, items
//! split by `KAFKA_CREATE_TOPICS_SEPARATOR`, `,` by default). A bare fourth field is
//! wurstmeister's `cleanup.policy`; `key=value` pairs are topic configs, and in a list a
//! `key=value` item with no `:` continues the configs of the topic before it. An omitted (or
//! empty) count takes the broker's default, as CreateTopics' -1 does.
//!
//! Every spec is checked before the broker opens anything: the name by Kafka's rules, counts
//! as positive numbers, configs against the topic config definitions. A bad one stops the
//! start with a message naming it.

use crate::broker::NewTopic;
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("topic to create at startup '{spec}': {reason}")]
pub struct StartupTopicError {
    pub spec: String,
    pub reason: String,
}

/// One `--create-topic` spec.
pub fn parse_spec(spec: &str) -> Result<NewTopic, StartupTopicError> {
    let fail = |reason: String| StartupTopicError {
        spec: spec.to_string(),
        reason,
    };
    let mut fields = spec.trim().splitn(4, ':');
    let name = fields.next().unwrap_or_default().trim().to_string();
    crate::metadata::validate_topic_name(&name).map_err(&fail)?;
    let partitions = count(fields.next(), "partitions", i32::MAX).map_err(&fail)?;
    let replication_factor =
        count(fields.next(), "replication factor", i16::MAX as i32).map_err(&fail)? as i16;
    let mut configs = BTreeMap::new();
    if let Some(rest) = fields.next() {
        for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or(("cleanup.policy", item));
            configs.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    crate::config::validate_topic_overrides(&configs).map_err(|e| fail(e.to_string()))?;
    Ok(NewTopic {
        name,
        partitions,
        replication_factor,
        assignments: Vec::new(),
        configs,
    })
}

/// A `KAFKA_CREATE_TOPICS` list, its items split by `separator`.
pub fn parse_list(list: &str, separator: &str) -> Result<Vec<NewTopic>, StartupTopicError> {
    let separator = if separator.is_empty() { "," } else { separator };
    // Items without a ':' that hold a '=' are further configs of the topic before them.
    let mut specs: Vec<String> = Vec::new();
    for item in list
        .split(separator)
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        match specs.last_mut() {
            Some(previous) if !item.contains(':') && item.contains('=') => {
                previous.push(',');
                previous.push_str(item);
            }
            _ => specs.push(item.to_string()),
        }
    }
    specs.iter().map(|spec| parse_spec(spec)).collect()
}

/// A partition count or replication factor: empty or absent is the broker's default (-1).
fn count(field: Option<&str>, what: &str, max: i32) -> Result<i32, String> {
    let text = field.map(str::trim).unwrap_or_default();
    if text.is_empty() {
        return Ok(-1);
    }
    match text.parse::<i32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "the {what} must be a number from 1 to {max}, not '{text}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_take_kafkas_defaults_and_topic_configs() {
        let topic = parse_spec("orders").unwrap();
        assert_eq!((topic.partitions, topic.replication_factor), (-1, -1));
        let topic = parse_spec("orders:3:1:retention.ms=1000,cleanup.policy=compact").unwrap();
        assert_eq!((topic.partitions, topic.replication_factor), (3, 1));
        assert_eq!(topic.configs["retention.ms"], "1000");
        assert_eq!(topic.configs["cleanup.policy"], "compact");
        assert_eq!(parse_spec("t::1").unwrap().partitions, -1);
    }

    #[test]
    fn wurstmeister_lists_parse_as_its_script_does() {
        let topics = parse_list(
            "orders:3:1, events:1:1:compact,logs:2:1:cleanup.policy=delete,retention.ms=60000",
            ",",
        )
        .unwrap();
        let names: Vec<_> = topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["orders", "events", "logs"]);
        assert_eq!(topics[1].configs["cleanup.policy"], "compact");
        assert_eq!(topics[2].configs["retention.ms"], "60000");
        let topics = parse_list("a:1:1;b:2:1", ";").unwrap();
        assert_eq!(topics.len(), 2);
        assert!(parse_list("", ",").unwrap().is_empty());
    }

    #[test]
    fn bad_specs_are_named() {
        for bad in [
            "",
            "bad name:1:1",
            "t:0:1",
            "t:x:1",
            "t:1:40000",
            "t:1:1:retention.mss=1",
            "t:1:1:cleanup.policy=sometimes",
            "..",
        ] {
            let error = parse_spec(bad).unwrap_err();
            assert_eq!(error.spec, bad);
            assert!(error.to_string().contains(bad), "{error}");
        }
    }
}
