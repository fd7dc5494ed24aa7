//! ReadShareGroupStateSummary (KIP-932, inter-broker): a share-partition's start offset and
//! epochs for the group coordinator (DescribeShareGroupOffsets), fencing no one.

use super::ApiContext;
use super::share_state::{apply, error_fields};
use crate::share::store::StateOp;
use kafka_protocol::messages::read_share_group_state_summary_response::{
    PartitionResult, ReadStateSummaryResult,
};
use kafka_protocol::messages::{
    ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse,
};

pub async fn handle(
    ctx: &ApiContext,
    request: ReadShareGroupStateSummaryRequest,
    _version: i16,
) -> Option<ReadShareGroupStateSummaryResponse> {
    let mut results = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in topic.partitions {
            let outcome = apply(
                ctx,
                &request.group_id,
                topic.topic_id,
                p.partition,
                StateOp::Summary,
            )
            .await;
            let (error_code, error_message) = error_fields(&outcome);
            let state = outcome.ok().flatten();
            partitions.push(
                PartitionResult::default()
                    .with_partition(p.partition)
                    .with_error_code(error_code)
                    .with_error_message(error_message)
                    .with_state_epoch(state.as_ref().map_or(0, |s| s.state_epoch))
                    .with_leader_epoch(state.as_ref().map_or(-1, |s| s.leader_epoch))
                    .with_start_offset(state.as_ref().map_or(-1, |s| s.start_offset)),
            );
        }
        results.push(
            ReadStateSummaryResult::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(ReadShareGroupStateSummaryResponse::default().with_results(results))
}
