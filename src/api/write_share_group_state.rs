//! WriteShareGroupState (KIP-932, inter-broker): a partition leader persists a
//! share-partition's state with its share coordinator, answered once the ISR has it.

use super::ApiContext;
use super::share_state::{apply, batches_from_wire, error_fields};
use crate::share::state::Snapshot;
use crate::share::store::StateOp;
use kafka_protocol::messages::write_share_group_state_response::{
    PartitionResult, WriteStateResult,
};
use kafka_protocol::messages::{WriteShareGroupStateRequest, WriteShareGroupStateResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: WriteShareGroupStateRequest,
    _version: i16,
) -> Option<WriteShareGroupStateResponse> {
    let mut results = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in topic.partitions {
            let outcome = match batches_from_wire(&p.state_batches) {
                Ok(batches) => {
                    let snapshot = Snapshot {
                        snapshot_epoch: 0,
                        state_epoch: p.state_epoch,
                        leader_epoch: p.leader_epoch,
                        start_offset: p.start_offset,
                        create_timestamp: crate::types::now_ms(),
                        write_timestamp: crate::types::now_ms(),
                        batches,
                    };
                    let op = StateOp::Write(snapshot);
                    apply(ctx, &request.group_id, topic.topic_id, p.partition, op).await
                }
                Err(e) => Err(e),
            };
            let (error_code, error_message) = error_fields(&outcome);
            partitions.push(
                PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(error_code)
                    .with_error_message(error_message),
            );
        }
        results.push(
            WriteStateResult::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(WriteShareGroupStateResponse::default().with_results(results))
}
