//! DeleteTopics: by name (all versions) or by topic id (v6+); the topic's log directories are
//! removed.

use super::{ApiContext, wire_str};
use crate::error::{Error, code};
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteTopicsRequest,
    version: i16,
) -> Option<DeleteTopicsResponse> {
    let broker = &ctx.broker;
    let targets: Vec<(Option<TopicName>, uuid::Uuid)> = if version >= 6 {
        request
            .topics
            .into_iter()
            .map(|t| (t.name, t.topic_id))
            .collect()
    } else {
        request
            .topic_names
            .into_iter()
            .map(|n| (Some(n), uuid::Uuid::nil()))
            .collect()
    };
    let mut responses = Vec::new();
    let mut quota = ctx.mutation_quota(version, STRICT_QUOTA_SINCE);
    for (name, id) in targets {
        responses.push({
            let topic = match &name {
                Some(name) => broker.topic(name),
                None => broker.topic_by_id(id),
            };
            let partitions = topic.as_ref().map_or(0, |t| t.partitions);
            let result = if quota.record(f64::from(partitions)).is_err() {
                Err(Error::ThrottlingQuotaExceeded)
            } else {
                match (&name, topic) {
                    (Some(name), _) => broker.delete_topic(name).await,
                    (None, Some(t)) => broker.delete_topic(&t.name).await,
                    (None, None) => Err(Error::UnknownTopicId),
                }
            };
            match result {
                Ok(info) => DeletableTopicResult::default()
                    .with_name(Some(TopicName(StrBytes::from_string(
                        info.name.to_string(),
                    ))))
                    .with_topic_id(info.id)
                    .with_error_code(code::NONE),
                Err(e) => DeletableTopicResult::default()
                    .with_name(name)
                    .with_topic_id(id)
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            }
        });
    }
    let throttle_ms = quota.throttle_ms();
    ctx.throttle(throttle_ms);
    Some(
        DeleteTopicsResponse::default()
            .with_throttle_time_ms(throttle_ms.min(i32::MAX as u32) as i32)
            .with_responses(responses),
    )
}

/// The version from which an exceeded mutation quota refuses deletions, as Kafka.
const STRICT_QUOTA_SINCE: i16 = 5;
