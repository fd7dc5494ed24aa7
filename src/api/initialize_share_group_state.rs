//! InitializeShareGroupState (KIP-932, inter-broker): the group coordinator gives a
//! share-partition a start offset under a new state epoch (AlterShareGroupOffsets), which
//! fences the state its leader caches.

use super::ApiContext;
use super::share_state::{apply, error_fields};
use crate::share::store::StateOp;
use kafka_protocol::messages::initialize_share_group_state_response::{
    InitializeStateResult, PartitionResult,
};
use kafka_protocol::messages::{
    InitializeShareGroupStateRequest, InitializeShareGroupStateResponse,
};

pub async fn handle(
    ctx: &ApiContext,
    request: InitializeShareGroupStateRequest,
    _version: i16,
) -> Option<InitializeShareGroupStateResponse> {
    let mut results = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in topic.partitions {
            let op = StateOp::Initialize {
                state_epoch: p.state_epoch,
                start_offset: p.start_offset,
            };
            let outcome = apply(ctx, &request.group_id, topic.topic_id, p.partition, op).await;
            let (error_code, error_message) = error_fields(&outcome);
            partitions.push(
                PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(error_code)
                    .with_error_message(error_message),
            );
        }
        results.push(
            InitializeStateResult::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(InitializeShareGroupStateResponse::default().with_results(results))
}
