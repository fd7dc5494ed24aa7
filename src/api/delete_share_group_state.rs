//! DeleteShareGroupState (KIP-932, inter-broker): the group coordinator deletes a
//! share-partition's state (DeleteShareGroupOffsets, DeleteGroups).

use super::ApiContext;
use super::share_state::{apply, error_fields};
use crate::share::store::StateOp;
use kafka_protocol::messages::delete_share_group_state_response::{
    DeleteStateResult, PartitionResult,
};
use kafka_protocol::messages::{DeleteShareGroupStateRequest, DeleteShareGroupStateResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteShareGroupStateRequest,
    _version: i16,
) -> Option<DeleteShareGroupStateResponse> {
    let mut results = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in topic.partitions {
            let outcome = apply(
                ctx,
                &request.group_id,
                topic.topic_id,
                p.partition,
                StateOp::Delete,
            )
            .await;
            let (error_code, error_message) = error_fields(&outcome);
            partitions.push(
                PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(error_code)
                    .with_error_message(error_message),
            );
        }
        results.push(
            DeleteStateResult::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(DeleteShareGroupStateResponse::default().with_results(results))
}
