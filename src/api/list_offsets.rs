//! ListOffsets: earliest (-2), latest (-1: the high watermark, or the last stable offset for
//! read_committed), max timestamp (-3), earliest local (-4), latest tiered (-5), earliest
//! pending upload (-6, v11), or the first offset at or after a timestamp.

use super::ApiContext;
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ListOffsetsRequest,
    version: i16,
) -> Option<ListOffsetsResponse> {
    // From v2; a read_committed consumer's "latest" is the last stable offset.
    let read_committed = request.isolation_level == 1;
    let mut topics = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let tp = TopicPartition::new(&topic.name, p.partition_index);
            let result = ctx
                .broker
                .list_offset(&tp, p.timestamp, p.current_leader_epoch, read_committed)
                .await;
            let response =
                ListOffsetsPartitionResponse::default().with_partition_index(p.partition_index);
            partitions.push(match result {
                Ok((offset, timestamp, leader_epoch)) => response
                    .with_error_code(code::NONE)
                    .with_offset(offset)
                    .with_timestamp(timestamp)
                    // The field exists from v4.
                    .with_leader_epoch(if offset >= 0 && version >= 4 {
                        leader_epoch
                    } else {
                        -1
                    }),
                Err(e) => response
                    .with_error_code(e.code())
                    .with_offset(-1)
                    .with_timestamp(-1)
                    .with_leader_epoch(-1),
            });
        }
        topics.push(
            ListOffsetsTopicResponse::default()
                .with_name(topic.name)
                .with_partitions(partitions),
        );
    }
    Some(ListOffsetsResponse::default().with_topics(topics))
}
