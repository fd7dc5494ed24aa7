//! AlterPartitionReassignments: move partitions to other brokers, or cancel a move (null
//! replicas), through the active controller (forwarded there, as Kafka's brokers do). The
//! controller checks each partition (`controller::control::reassignments`); the data moves
//! as the new replicas catch up, and the move completes once they are all in sync. The same
//! file builds the request a broker forwards for one partition and reads its answer.

use super::{ApiContext, wire_str};
use crate::controller::service::ControllerReply;
use crate::error::{Error, code};
use crate::types::TopicPartition;
use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, BrokerId, TopicName,
};
use std::time::Duration;

/// The version a broker forwards with (KIP-860's `allowReplicationFactorChange`).
pub const FORWARD_VERSION: i16 = 1;

pub async fn handle(
    ctx: &ApiContext,
    request: AlterPartitionReassignmentsRequest,
    version: i16,
) -> Option<AlterPartitionReassignmentsResponse> {
    // KIP-860: before v1 the replication factor may change freely.
    let allow_rf_change = version < 1 || request.allow_replication_factor_change;
    let mut responses = Vec::with_capacity(request.topics.len());
    for topic in &request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let target: Option<Vec<i32>> =
                p.replicas.as_ref().map(|r| r.iter().map(|b| b.0).collect());
            let outcome = ctx
                .broker
                .reassign_partition(
                    &TopicPartition::new(&topic.name, p.partition_index),
                    target,
                    allow_rf_change,
                )
                .await;
            let response =
                ReassignablePartitionResponse::default().with_partition_index(p.partition_index);
            partitions.push(match outcome {
                Ok(()) => response
                    .with_error_code(code::NONE)
                    .with_error_message(None),
                Err(e) => response
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            });
        }
        responses.push(
            ReassignableTopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions),
        );
    }
    Some(
        AlterPartitionReassignmentsResponse::default()
            .with_allow_replication_factor_change(request.allow_replication_factor_change)
            .with_error_code(code::NONE)
            .with_responses(responses),
    )
}

/// The request a broker forwards to the active controller for one partition.
pub fn request_for(
    topic: &str,
    partition: i32,
    target: Option<&[i32]>,
    allow_replication_factor_change: bool,
    timeout: Duration,
) -> AlterPartitionReassignmentsRequest {
    AlterPartitionReassignmentsRequest::default()
        .with_timeout_ms(timeout.as_millis().min(i32::MAX as u128) as i32)
        .with_allow_replication_factor_change(allow_replication_factor_change)
        .with_topics(vec![
            ReassignableTopic::default()
                .with_name(TopicName(wire_str(topic)))
                .with_partitions(vec![
                    ReassignablePartition::default()
                        .with_partition_index(partition)
                        .with_replicas(target.map(|t| t.iter().copied().map(BrokerId).collect())),
                ]),
        ])
}

/// The controller's answer for that one partition.
pub fn reply_from(response: AlterPartitionReassignmentsResponse) -> Result<ControllerReply, Error> {
    if let Some(e) = Error::from_code(response.error_code, response.error_message.as_deref()) {
        return Err(e);
    }
    let partition = response
        .responses
        .into_iter()
        .flat_map(|t| t.partitions)
        .next()
        .ok_or_else(|| {
            Error::InvalidRequest("AlterPartitionReassignments answered nothing".into())
        })?;
    match Error::from_code(partition.error_code, partition.error_message.as_deref()) {
        Some(e) => Err(e),
        None => Ok(ControllerReply::Done),
    }
}
