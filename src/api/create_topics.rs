//! CreateTopics: default partition count and replication factor (-1), explicit assignments,
//! validated configs, `validate_only`. From v5 the response carries the topic's configs.

use super::{ApiContext, wire_str};
use crate::api::describe_configs::source_code;
use crate::broker::NewTopic;
use crate::controller::control::{MAX_PARTITIONS_PER_REQUEST, TOO_MANY_PARTITIONS};
use crate::error::code;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: CreateTopicsRequest,
    version: i16,
) -> Option<CreateTopicsResponse> {
    let broker = &ctx.broker;
    let mut results = Vec::with_capacity(request.topics.len());
    if total_partitions(&request, broker.config().num_partitions) > MAX_PARTITIONS_PER_REQUEST {
        // As Kafka's controller: the whole request is refused, every topic with the same error.
        for topic in request.topics {
            results.push(
                CreatableTopicResult::default()
                    .with_name(topic.name)
                    .with_error_code(code::POLICY_VIOLATION)
                    .with_error_message(Some(wire_str(TOO_MANY_PARTITIONS)))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1),
            );
        }
        return Some(CreateTopicsResponse::default().with_topics(results));
    }
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for topic in &request.topics {
        *seen.entry(topic.name.as_str()).or_default() += 1;
    }
    let duplicated: std::collections::HashSet<String> = seen
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(name, _)| name.to_string())
        .collect();
    let default_partitions = broker.config().num_partitions;
    let mut quota = ctx.mutation_quota(version, STRICT_QUOTA_SINCE);
    for topic in request.topics {
        let name = topic.name.to_string();
        let result = CreatableTopicResult::default().with_name(topic.name.clone());
        if duplicated.contains(&name) {
            results.push(
                result
                    .with_error_code(code::INVALID_REQUEST)
                    .with_error_message(Some(wire_str(
                        "topic given more than once in the request",
                    ))),
            );
            continue;
        }
        if quota
            .record(partitions_of(&topic, default_partitions) as f64)
            .is_err()
        {
            results.push(
                result
                    .with_error_code(code::THROTTLING_QUOTA_EXCEEDED)
                    .with_error_message(Some(wire_str(
                        &crate::error::Error::ThrottlingQuotaExceeded.message(),
                    )))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1),
            );
            continue;
        }
        let mut configs = BTreeMap::new();
        for config in &topic.configs {
            if let Some(value) = &config.value {
                configs.insert(config.name.to_string(), value.to_string());
            }
        }
        let mut assignments = topic.assignments.clone();
        assignments.sort_by_key(|a| a.partition_index);
        let request_topic = NewTopic {
            name,
            partitions: topic.num_partitions,
            replication_factor: topic.replication_factor,
            assignments: assignments
                .iter()
                .map(|a| a.broker_ids.iter().map(|b| b.0).collect())
                .collect(),
            configs,
        };
        results.push(
            match broker
                .create_topic(request_topic, request.validate_only)
                .await
            {
                Ok(info) => {
                    let configs = (version >= 5).then(|| {
                        broker
                            .config()
                            .describe_topic(&info.configs)
                            .into_iter()
                            .map(|c| {
                                CreatableTopicConfigs::default()
                                    .with_name(wire_str(&c.name))
                                    .with_value(c.value.map(|v| wire_str(&v)))
                                    .with_read_only(c.read_only)
                                    .with_config_source(source_code(c.source))
                                    .with_is_sensitive(false)
                            })
                            .collect()
                    });
                    result
                        .with_error_code(code::NONE)
                        .with_topic_id(info.id)
                        .with_num_partitions(info.partitions)
                        .with_replication_factor(1)
                        .with_configs(configs)
                }
                Err(e) => result
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message())))
                    .with_num_partitions(-1)
                    .with_replication_factor(-1),
            },
        );
    }
    let throttle_ms = quota.throttle_ms();
    ctx.throttle(throttle_ms);
    Some(
        CreateTopicsResponse::default()
            .with_throttle_time_ms(throttle_ms.min(i32::MAX as u32) as i32)
            .with_topics(results),
    )
}

/// The version from which an exceeded mutation quota refuses topics (older ones are only
/// throttled), as Kafka.
const STRICT_QUOTA_SINCE: i16 = 6;

/// The partitions a CreateTopics request would create, counted as Kafka's controller does
/// (`validateTotalNumberOfPartitions`): the default for -1, the assignments when given.
fn total_partitions(request: &CreateTopicsRequest, default_partitions: i32) -> i64 {
    request
        .topics
        .iter()
        .map(|topic| partitions_of(topic, default_partitions))
        .sum()
}

fn partitions_of(
    topic: &kafka_protocol::messages::create_topics_request::CreatableTopic,
    default_partitions: i32,
) -> i64 {
    if !topic.assignments.is_empty() {
        topic.assignments.len() as i64
    } else if topic.num_partitions == -1 {
        i64::from(default_partitions)
    } else {
        i64::from(topic.num_partitions.max(0))
    }
}
