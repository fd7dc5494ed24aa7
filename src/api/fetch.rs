//! Fetch: reads record batches as stored, waiting up to `max_wait_ms` for `min_bytes`.
//! Sessions (KIP-227) are not kept yet: a request that opens one (epoch 0) gets session id 0,
//! which tells the client to keep sending full requests; a request naming a session gets
//! FETCH_SESSION_ID_NOT_FOUND. Topics are named by id from v13.

use super::ApiContext;
use crate::error::{Error, code};
use crate::replica::{
    FetchLimits, FetchRequestPartition, FetchedPartition, SINGLE_NODE_LEADER_EPOCH,
};
use crate::types::TopicPartition;
use bytes::Bytes;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::{FetchRequest, FetchResponse, TopicName};
use std::time::Duration;

/// Kafka's cap on how long a fetch may wait, so a hostile max_wait_ms cannot pin a request.
const MAX_WAIT_CAP_MS: i32 = 30 * 60 * 1000;

/// One requested topic as the response must echo it, with each partition's read slot (an
/// index into the reads handed to the replica manager) or its error.
struct TopicPlan {
    name: TopicName,
    id: uuid::Uuid,
    slots: Vec<(i32, Result<usize, Error>)>,
}

pub async fn handle(
    ctx: &ApiContext,
    request: FetchRequest,
    version: i16,
) -> Option<FetchResponse> {
    if version >= 7 && (request.session_id != 0 || request.session_epoch > 0) {
        return Some(
            FetchResponse::default()
                .with_error_code(code::FETCH_SESSION_ID_NOT_FOUND)
                .with_session_id(0),
        );
    }
    let read_committed = request.isolation_level == 1;
    let mut plan: Vec<TopicPlan> = Vec::new();
    let mut reads = Vec::new();
    for topic in &request.topics {
        let name = if version >= 13 {
            ctx.broker
                .topic_by_id(topic.topic_id)
                .map(|t| t.name.to_string())
                .ok_or(Error::UnknownTopicId)
        } else {
            Ok(topic.topic.to_string())
        };
        let mut slots = Vec::new();
        for partition in &topic.partitions {
            let slot = match &name {
                Err(_) => Err(Error::UnknownTopicId),
                Ok(_) if partition.current_leader_epoch > SINGLE_NODE_LEADER_EPOCH => {
                    Err(Error::UnknownLeaderEpoch(partition.current_leader_epoch))
                }
                Ok(name) => {
                    reads.push(FetchRequestPartition {
                        tp: TopicPartition::new(name, partition.partition),
                        fetch_offset: partition.fetch_offset,
                        partition_max_bytes: partition.partition_max_bytes.max(0) as usize,
                    });
                    Ok(reads.len() - 1)
                }
            };
            slots.push((partition.partition, slot));
        }
        plan.push(TopicPlan {
            name: topic.topic.clone(),
            id: topic.topic_id,
            slots,
        });
    }
    let limits = FetchLimits {
        min_bytes: request.min_bytes.max(0) as usize,
        max_bytes: if version >= 3 {
            request.max_bytes.max(0) as usize
        } else {
            i32::MAX as usize
        },
        max_wait: Duration::from_millis(request.max_wait_ms.clamp(0, MAX_WAIT_CAP_MS) as u64),
    };
    let mut results: Vec<Option<FetchedPartition>> = ctx
        .broker
        .replicas()
        .fetch(&reads, limits)
        .await
        .into_iter()
        .map(Some)
        .collect();
    let responses = plan
        .into_iter()
        .map(|TopicPlan { name, id, slots }| {
            let partitions = slots
                .into_iter()
                .map(|(index, slot)| {
                    let fetched = match slot {
                        Ok(i) => results[i].take().unwrap_or(FetchedPartition {
                            result: Err(Error::UnknownTopicOrPartition),
                            offsets: None,
                        }),
                        Err(e) => FetchedPartition {
                            result: Err(e),
                            offsets: None,
                        },
                    };
                    partition_data(index, fetched, read_committed)
                })
                .collect();
            FetchableTopicResponse::default()
                .with_topic(name)
                .with_topic_id(id)
                .with_partitions(partitions)
        })
        .collect();
    Some(
        FetchResponse::default()
            .with_error_code(code::NONE)
            .with_session_id(0)
            .with_responses(responses),
    )
}

fn partition_data(index: i32, fetched: FetchedPartition, read_committed: bool) -> PartitionData {
    let mut data = PartitionData::default()
        .with_partition_index(index)
        .with_aborted_transactions(read_committed.then(Vec::new))
        .with_preferred_read_replica(kafka_protocol::messages::BrokerId(-1));
    if let Some(offsets) = fetched.offsets {
        data = data
            .with_high_watermark(offsets.high_watermark)
            .with_last_stable_offset(offsets.last_stable_offset)
            .with_log_start_offset(offsets.log_start_offset);
    } else {
        data = data
            .with_high_watermark(-1)
            .with_last_stable_offset(-1)
            .with_log_start_offset(-1);
    }
    match fetched.result {
        Ok(records) => data
            .with_error_code(code::NONE)
            .with_records(Some(records.unwrap_or_else(Bytes::new))),
        Err(e) => data
            .with_error_code(e.code())
            .with_records(Some(Bytes::new())),
    }
}
