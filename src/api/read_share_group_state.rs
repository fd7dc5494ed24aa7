//! ReadShareGroupState (KIP-932, inter-broker): a partition leader loads a share-partition's
//! state from its share coordinator, fencing the leaders of older epochs.

use super::ApiContext;
use super::share_state::{apply, batches_to_wire, error_fields};
use crate::share::store::StateOp;
use kafka_protocol::messages::read_share_group_state_response::{PartitionResult, ReadStateResult};
use kafka_protocol::messages::{ReadShareGroupStateRequest, ReadShareGroupStateResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ReadShareGroupStateRequest,
    _version: i16,
) -> Option<ReadShareGroupStateResponse> {
    let mut results = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in topic.partitions {
            let op = StateOp::Read {
                leader_epoch: p.leader_epoch,
            };
            let outcome = apply(ctx, &request.group_id, topic.topic_id, p.partition, op).await;
            let (error_code, error_message) = error_fields(&outcome);
            // A share-partition without state reads start offset -1 (Kafka's uninitialized).
            let state = outcome.ok().flatten();
            partitions.push(
                PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(error_code)
                    .with_error_message(error_message)
                    .with_state_epoch(state.as_ref().map_or(0, |s| s.state_epoch))
                    .with_start_offset(state.as_ref().map_or(-1, |s| s.start_offset))
                    .with_state_batches(
                        state.map_or_else(Vec::new, |s| batches_to_wire(&s.batches)),
                    ),
            );
        }
        results.push(
            ReadStateResult::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(ReadShareGroupStateResponse::default().with_results(results))
}
