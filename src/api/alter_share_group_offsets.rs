//! AlterShareGroupOffsets (KIP-932): sets the start offset of share-partitions of a group
//! with no members (creating the group when new); each starts over with a new state epoch.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, ShareError, code};
use kafka_protocol::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::{AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: AlterShareGroupOffsetsRequest,
    _version: i16,
) -> Option<AlterShareGroupOffsetsResponse> {
    let top = |e: ShareError| {
        Some(
            AlterShareGroupOffsetsResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string()))),
        )
    };
    let shares = match super::share_coordinator_for(ctx, &request.group_id).await {
        Ok(s) => s,
        Err(e) => return top(e),
    };
    if shares
        .describe(&request.group_id)
        .is_some_and(|g| !g.members.is_empty())
    {
        return top(ShareError::Group(GroupError::NonEmptyGroup));
    }
    let mut responses = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let info = ctx.broker.topic(&topic.topic_name);
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let outcome = match &info {
                None => Err(ShareError::Group(GroupError::UnknownTopicOrPartition)),
                Some(t) if p.partition_index < 0 || p.partition_index >= t.partitions => {
                    Err(ShareError::Group(GroupError::UnknownTopicOrPartition))
                }
                Some(_) if p.start_offset < 0 => Err(ShareError::Group(GroupError::InvalidRequest)),
                Some(t) => {
                    shares
                        .alter_start_offset(
                            &request.group_id,
                            t.id,
                            p.partition_index,
                            p.start_offset,
                        )
                        .await
                }
            };
            let mut answer = AlterShareGroupOffsetsResponsePartition::default()
                .with_partition_index(p.partition_index);
            if let Err(e) = outcome {
                answer = answer
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.to_string())));
            }
            partitions.push(answer);
        }
        responses.push(
            AlterShareGroupOffsetsResponseTopic::default()
                .with_topic_id(info.map(|t| t.id).unwrap_or_default())
                .with_topic_name(topic.topic_name)
                .with_partitions(partitions),
        );
    }
    Some(
        AlterShareGroupOffsetsResponse::default()
            .with_error_code(code::NONE)
            .with_responses(responses),
    )
}
