//! CreatePartitions: grows a topic's partition count (never shrinks it).

use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: CreatePartitionsRequest,
    version: i16,
) -> Option<CreatePartitionsResponse> {
    let mut results = Vec::new();
    let mut quota = ctx.mutation_quota(version, STRICT_QUOTA_SINCE);
    for topic in request.topics {
        results.push({
            let assignments: Option<Vec<Vec<i32>>> = topic.assignments.as_ref().map(|a| {
                a.iter()
                    .map(|x| x.broker_ids.iter().map(|b| b.0).collect())
                    .collect()
            });
            let added = ctx
                .broker
                .topic(&topic.name)
                .map_or(0, |t| (topic.count - t.partitions).max(0));
            let result = if quota.record(f64::from(added)).is_err() {
                Err(crate::error::Error::ThrottlingQuotaExceeded)
            } else {
                ctx.broker
                    .create_partitions(
                        &topic.name,
                        topic.count,
                        assignments.as_deref(),
                        request.validate_only,
                    )
                    .await
            };
            let response = CreatePartitionsTopicResult::default().with_name(topic.name);
            match result {
                Ok(()) => response.with_error_code(code::NONE),
                Err(e) => response
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            }
        });
    }
    let throttle_ms = quota.throttle_ms();
    ctx.throttle(throttle_ms);
    Some(
        CreatePartitionsResponse::default()
            .with_throttle_time_ms(throttle_ms.min(i32::MAX as u32) as i32)
            .with_results(results),
    )
}

/// The version from which an exceeded mutation quota refuses new partitions, as Kafka.
const STRICT_QUOTA_SINCE: i16 = 3;
