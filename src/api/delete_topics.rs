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
    for (name, id) in targets {
        responses.push({
            let result = match &name {
                Some(name) => broker.delete_topic(name).await,
                None => match broker.topic_by_id(id) {
                    Some(t) => broker.delete_topic(&t.name).await,
                    None => Err(Error::UnknownTopicId),
                },
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
    Some(DeleteTopicsResponse::default().with_responses(responses))
}
