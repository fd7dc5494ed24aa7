//! CreatePartitions: grows a topic's partition count (never shrinks it).

use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: CreatePartitionsRequest,
    _version: i16,
) -> Option<CreatePartitionsResponse> {
    let mut results = Vec::new();
    for topic in request.topics {
        results.push({
            let assignments: Option<Vec<Vec<i32>>> = topic.assignments.as_ref().map(|a| {
                a.iter()
                    .map(|x| x.broker_ids.iter().map(|b| b.0).collect())
                    .collect()
            });
            let result = ctx
                .broker
                .create_partitions(
                    &topic.name,
                    topic.count,
                    assignments.as_deref(),
                    request.validate_only,
                )
                .await;
            let response = CreatePartitionsTopicResult::default().with_name(topic.name);
            match result {
                Ok(()) => response.with_error_code(code::NONE),
                Err(e) => response
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            }
        });
    }
    Some(CreatePartitionsResponse::default().with_results(results))
}
