//! WriteTxnMarkers (v1): a transaction coordinator ends a producer's transaction on the
//! partitions this broker leads, with a commit or abort marker in each. Each partition is
//! answered once its marker is replicated to the ISR (markers are written with acks=all, as
//! Kafka does), so the coordinator only completes a transaction every replica can show.

use super::ApiContext;
use crate::error::{Error, code};
use crate::record::control::{Marker, MarkerKind};
use crate::types::TopicPartition;
use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};
use std::time::Duration;

/// How long a marker waits for the ISR (Kafka uses the coordinator's request timeout).
const REPLICATION_WAIT: Duration = Duration::from_secs(30);

pub async fn handle(
    ctx: &ApiContext,
    request: WriteTxnMarkersRequest,
    _version: i16,
) -> Option<WriteTxnMarkersResponse> {
    let mut markers = Vec::with_capacity(request.markers.len());
    for entry in request.markers {
        let marker = Marker {
            kind: if entry.transaction_result {
                MarkerKind::Commit
            } else {
                MarkerKind::Abort
            },
            coordinator_epoch: entry.coordinator_epoch,
        };
        let mut topics = Vec::with_capacity(entry.topics.len());
        for topic in entry.topics {
            let mut partitions = Vec::with_capacity(topic.partition_indexes.len());
            for index in topic.partition_indexes {
                let tp = TopicPartition::new(&topic.name, index);
                let outcome =
                    write_marker(ctx, &tp, entry.producer_id.0, entry.producer_epoch, marker).await;
                partitions.push(
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(index)
                        .with_error_code(outcome.err().map_or(code::NONE, |e| e.code())),
                );
            }
            topics.push(
                WritableTxnMarkerTopicResult::default()
                    .with_name(topic.name)
                    .with_partitions(partitions),
            );
        }
        markers.push(
            WritableTxnMarkerResult::default()
                .with_producer_id(entry.producer_id)
                .with_topics(topics),
        );
    }
    Some(WriteTxnMarkersResponse::default().with_markers(markers))
}

async fn write_marker(
    ctx: &ApiContext,
    tp: &TopicPartition,
    producer_id: i64,
    producer_epoch: i16,
    marker: Marker,
) -> Result<(), Error> {
    let partition = ctx.broker.replicas().get(tp)?;
    let info = partition.append_marker(producer_id, producer_epoch, marker)?;
    if info.flush_due {
        partition.flush_to(info.last_offset + 1).await?;
    }
    partition
        .wait_for_replication(info.last_offset + 1, REPLICATION_WAIT)
        .await
}
