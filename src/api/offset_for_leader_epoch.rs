//! OffsetForLeaderEpoch (v2–v4): where a leader epoch ends in the leader's log. Consumers use
//! it to check their position after a leader change (KIP-320: a position past the end of its
//! epoch was truncated away); the answer comes from the partition's leader-epoch cache.

use super::ApiContext;
use crate::types::TopicPartition;
use kafka_protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_protocol::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: OffsetForLeaderEpochRequest,
    _version: i16,
) -> Option<OffsetForLeaderEpochResponse> {
    let replicas = ctx.broker.replicas();
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let tp = TopicPartition::new(&topic.topic, p.partition);
                    let answer = replicas.get(&tp).and_then(|partition| {
                        partition.end_offset_for_epoch(p.current_leader_epoch, p.leader_epoch)
                    });
                    let response = EpochEndOffset::default().with_partition(p.partition);
                    match answer {
                        Ok((epoch, end_offset)) => response
                            .with_leader_epoch(epoch)
                            .with_end_offset(end_offset),
                        Err(e) => response
                            .with_error_code(e.code())
                            .with_leader_epoch(-1)
                            .with_end_offset(-1),
                    }
                })
                .collect();
            OffsetForLeaderTopicResult::default()
                .with_topic(topic.topic)
                .with_partitions(partitions)
        })
        .collect();
    Some(OffsetForLeaderEpochResponse::default().with_topics(topics))
}
