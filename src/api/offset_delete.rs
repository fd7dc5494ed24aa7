//! OffsetDelete: removes committed offsets of topics the group is not subscribed to.

use super::ApiContext;
use crate::error::{GroupError, code};
use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::{OffsetDeleteRequest, OffsetDeleteResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: OffsetDeleteRequest,
    _version: i16,
) -> Option<OffsetDeleteResponse> {
    let partitions: Vec<(String, i32)> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.to_string(), p.partition_index))
        })
        .collect();
    let outcome = match super::coordinator_for(ctx, &request.group_id).await {
        Err(e) => Err(e),
        Ok(groups) => groups.delete_offsets(&request.group_id, &partitions),
    };
    let mut results = match outcome {
        Err(e) => return Some(OffsetDeleteResponse::default().with_error_code(e.code())),
        Ok(results) => results.into_iter(),
    };
    let topics = request
        .topics
        .into_iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let error = results
                        .next()
                        .and_then(|r| r.err())
                        .map(GroupError::code)
                        .unwrap_or(code::NONE);
                    OffsetDeleteResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(error)
                })
                .collect();
            OffsetDeleteResponseTopic::default()
                .with_name(t.name)
                .with_partitions(partitions)
        })
        .collect();
    Some(
        OffsetDeleteResponse::default()
            .with_error_code(code::NONE)
            .with_topics(topics),
    )
}
