//! AlterPartitionReassignments: move partitions to other brokers, or cancel a move (null
//! replicas). Validation and outcome are `Broker::reassign_partition`: on one node the only
//! valid target is the current replica, so an accepted reassignment is complete at once.

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
};

pub async fn handle(
    ctx: &ApiContext,
    request: AlterPartitionReassignmentsRequest,
    version: i16,
) -> Option<AlterPartitionReassignmentsResponse> {
    // KIP-860: before v1 the replication factor may change freely.
    let allow_rf_change = version < 1 || request.allow_replication_factor_change;
    let responses = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let target: Option<Vec<i32>> =
                        p.replicas.as_ref().map(|r| r.iter().map(|b| b.0).collect());
                    let outcome = ctx.broker.reassign_partition(
                        &TopicPartition::new(&topic.name, p.partition_index),
                        target.as_deref(),
                        allow_rf_change,
                    );
                    let response = ReassignablePartitionResponse::default()
                        .with_partition_index(p.partition_index);
                    match outcome {
                        Ok(()) => response.with_error_code(code::NONE),
                        Err(e) => response
                            .with_error_code(e.code())
                            .with_error_message(Some(wire_str(&e.message()))),
                    }
                })
                .collect();
            ReassignableTopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    Some(
        AlterPartitionReassignmentsResponse::default()
            .with_allow_replication_factor_change(request.allow_replication_factor_change)
            .with_error_code(code::NONE)
            .with_responses(responses),
    )
}
