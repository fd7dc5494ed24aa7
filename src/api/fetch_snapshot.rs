//! FetchSnapshot (controller listener, KIP-630): a piece of the quorum leader's latest
//! metadata snapshot, for an observer whose fetch offset was compacted
//! (`api::metadata_fetch`). SNAPSHOT_NOT_FOUND when the snapshot asked for is no longer the
//! latest (the observer fetches again and is sent the newer one), NOT_LEADER_OR_FOLLOWER
//! from a voter that does not lead. The same file builds the observer's request and reads
//! its answer.

use super::{ApiContext, metadata_topic, raft_epoch as epoch, wire_str};
use crate::controller::observer::FETCH_MAX_BYTES;
use crate::controller::ops::SnapshotChunk;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use kafka_protocol::messages::fetch_snapshot_request::{
    PartitionSnapshot as AskedPartition, SnapshotId as AskedSnapshot, TopicSnapshot as AskedTopic,
};
use kafka_protocol::messages::fetch_snapshot_response::{
    LeaderIdAndEpoch, PartitionSnapshot, SnapshotId, TopicSnapshot,
};
use kafka_protocol::messages::{BrokerId, FetchSnapshotRequest, FetchSnapshotResponse, TopicName};

/// The version an observer asks with.
pub const VERSION: i16 = 0;

pub async fn handle(
    ctx: &ApiContext,
    request: FetchSnapshotRequest,
    _version: i16,
) -> Option<FetchSnapshotResponse> {
    let max_bytes = usize::try_from(request.max_bytes)
        .unwrap_or(0)
        .clamp(1, FETCH_MAX_BYTES);
    let mut topics = Vec::new();
    for topic in &request.topics {
        let mut partitions = Vec::new();
        for asked in &topic.partitions {
            let answer = if topic.name.as_str() == metadata_topic() && asked.partition == 0 {
                read(ctx, asked, max_bytes).await
            } else {
                PartitionSnapshot::default().with_error_code(code::UNKNOWN_TOPIC_OR_PARTITION)
            };
            partitions.push(answer.with_index(asked.partition));
        }
        topics.push(
            TopicSnapshot::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions),
        );
    }
    Some(FetchSnapshotResponse::default().with_topics(topics))
}

async fn read(ctx: &ApiContext, asked: &AskedPartition, max_bytes: usize) -> PartitionSnapshot {
    let id = &asked.snapshot_id;
    if id.end_offset < 0 || id.epoch < 0 || asked.position < 0 {
        return PartitionSnapshot::default().with_error_code(code::INVALID_REQUEST);
    }
    let controller = ctx.broker.controller();
    let op = ControllerOp::ReadMetadataSnapshot {
        index: id.end_offset as u64,
        term: id.epoch as u64,
        position: asked.position as u64,
        max_bytes,
    };
    let snapshot_id = SnapshotId::default()
        .with_end_offset(id.end_offset)
        .with_epoch(id.epoch);
    let status = *controller.status().borrow();
    let leader = LeaderIdAndEpoch::default()
        .with_leader_id(BrokerId(status.leader.map_or(-1, |l| l as i32)))
        .with_leader_epoch(epoch(status.term));
    let partition = PartitionSnapshot::default()
        .with_snapshot_id(snapshot_id)
        .with_current_leader(leader);
    match controller.call(op).await {
        Ok(ControllerReply::MetadataSnapshot(chunk)) => partition
            .with_size(chunk.size as i64)
            .with_position(chunk.position as i64)
            .with_unaligned_records(chunk.bytes),
        Ok(_) | Err(Error::NotController) => {
            partition.with_error_code(code::NOT_LEADER_OR_FOLLOWER)
        }
        Err(e) => partition.with_error_code(e.code()),
    }
}

/// An observer's request for the snapshot at `index` of `term`, from byte `position`.
pub fn request_for(observer: u64, index: u64, term: u64, position: u64) -> FetchSnapshotRequest {
    FetchSnapshotRequest::default()
        .with_replica_id(BrokerId(observer as i32))
        .with_max_bytes(FETCH_MAX_BYTES as i32)
        .with_topics(vec![
            AskedTopic::default()
                .with_name(TopicName(wire_str(metadata_topic())))
                .with_partitions(vec![
                    AskedPartition::default()
                        .with_partition(0)
                        .with_current_leader_epoch(epoch(term))
                        .with_snapshot_id(
                            AskedSnapshot::default()
                                .with_end_offset(index as i64)
                                .with_epoch(epoch(term)),
                        )
                        .with_position(position as i64),
                ]),
        ])
}

/// The piece the leader answered with.
pub fn chunk_from(response: FetchSnapshotResponse) -> Result<SnapshotChunk, Error> {
    if let Some(e) = Error::from_code(response.error_code, None) {
        return Err(e);
    }
    let Some(partition) = response
        .topics
        .into_iter()
        .flat_map(|t| t.partitions)
        .find(|p| p.index == 0)
    else {
        return Err(Error::InvalidRequest(
            "the snapshot fetch was answered without the metadata partition".into(),
        ));
    };
    if let Some(e) = Error::from_code(partition.error_code, None) {
        return Err(e);
    }
    if partition.size < 0 || partition.position < 0 {
        return Err(Error::InvalidRequest(format!(
            "snapshot piece of size {} at {}",
            partition.size, partition.position
        )));
    }
    Ok(SnapshotChunk {
        size: partition.size as u64,
        position: partition.position as u64,
        bytes: partition.unaligned_records,
    })
}
