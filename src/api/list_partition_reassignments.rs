//! ListPartitionReassignments: the reassignments in progress. On one node an accepted
//! reassignment completes when it is accepted (see `Broker::reassign_partition`), so none is
//! ever in progress and the list is empty; as in Kafka, partitions that are not being
//! reassigned (or do not exist) are simply not listed.

use super::ApiContext;
use crate::error::code;
use kafka_protocol::messages::{
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
};

pub async fn handle(
    _ctx: &ApiContext,
    _request: ListPartitionReassignmentsRequest,
    _version: i16,
) -> Option<ListPartitionReassignmentsResponse> {
    Some(
        ListPartitionReassignmentsResponse::default()
            .with_error_code(code::NONE)
            .with_topics(Vec::new()),
    )
}
