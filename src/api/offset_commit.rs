//! OffsetCommit: validated against the group's generation and member, written to
//! `__consumer_offsets`, then acknowledged. v2-v4 may carry an explicit retention time; v10
//! names topics by id (the partitions of an unknown id answer UNKNOWN_TOPIC_ID).

use super::ApiContext;
use crate::group::OffsetCommit;
use crate::types::now_ms;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: OffsetCommitRequest,
    version: i16,
) -> Option<OffsetCommitResponse> {
    // v10 names topics by id; an unknown id fails its partitions.
    let names: Vec<Option<String>> = request
        .topics
        .iter()
        .map(|t| super::topic_named(ctx, &t.name, t.topic_id, version >= 10))
        .collect();
    let mut commits = Vec::new();
    for (topic, name) in request.topics.iter().zip(&names) {
        let Some(name) = name else { continue };
        for p in &topic.partitions {
            commits.push(OffsetCommit {
                topic: name.clone(),
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: if version >= 6 {
                    p.committed_leader_epoch
                } else {
                    -1
                },
                metadata: p
                    .committed_metadata
                    .as_ref()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            });
        }
    }
    let expire = (2..=4)
        .contains(&version)
        .then_some(request.retention_time_ms)
        .filter(|r| *r >= 0)
        .map(|r| now_ms().saturating_add(r));
    let mut codes = super::offset_commit_codes(ctx, &request.group_id, commits.len(), |groups| {
        let by = crate::group::CommitBy {
            member_id: &request.member_id,
            instance: request.group_instance_id.as_deref(),
            generation: request.generation_id_or_member_epoch,
            epoch_aware: version >= 9,
        };
        groups.commit_offsets(&request.group_id, &by, expire, &commits)
    })
    .await;
    let topics = request
        .topics
        .into_iter()
        .zip(&names)
        .map(|(topic, name)| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let code = match name {
                        Some(_) => codes.next_code(),
                        None => crate::error::code::UNKNOWN_TOPIC_ID,
                    };
                    OffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code)
                })
                .collect();
            OffsetCommitResponseTopic::default()
                .with_name(topic.name)
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    Some(OffsetCommitResponse::default().with_topics(topics))
}
