//! AlterPartition (controller listener): a partition leader asks the controller to change the
//! ISR. One partition per request is all a leader sends here; several are answered each.
//! The same file builds the request a leader sends.

use super::ApiContext;
use super::broker_registration::unexpected;
use crate::controller::control::IsrChange;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::image::PartitionRegistration;
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::alter_partition_response as response;
use kafka_protocol::messages::{AlterPartitionRequest, AlterPartitionResponse, BrokerId};

pub async fn handle(
    ctx: &ApiContext,
    request: AlterPartitionRequest,
    version: i16,
) -> Option<AlterPartitionResponse> {
    let mut topics = Vec::with_capacity(request.topics.len());
    for topic in request.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for partition in topic.partitions {
            let new_isr = if version >= 3 {
                partition
                    .new_isr_with_epochs
                    .iter()
                    .map(|b| b.broker_id.0)
                    .collect()
            } else {
                partition.new_isr.iter().map(|b| b.0).collect()
            };
            let op = ControllerOp::AlterPartition(IsrChange {
                broker_id: request.broker_id.0,
                broker_epoch: request.broker_epoch,
                topic_id: topic.topic_id,
                partition: partition.partition_index,
                leader_epoch: partition.leader_epoch,
                partition_epoch: partition.partition_epoch,
                new_isr,
            });
            let answer =
                response::PartitionData::default().with_partition_index(partition.partition_index);
            partitions.push(match ctx.broker.controller().call(op).await {
                Ok(ControllerReply::Partition(p)) => answer
                    .with_leader_id(BrokerId(p.leader))
                    .with_leader_epoch(p.leader_epoch)
                    .with_isr(p.isr.into_iter().map(BrokerId).collect())
                    .with_partition_epoch(p.partition_epoch),
                Ok(other) => answer.with_error_code(unexpected(&other).code()),
                Err(e) => answer.with_error_code(e.code()),
            });
        }
        topics.push(
            response::TopicData::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    Some(AlterPartitionResponse::default().with_topics(topics))
}

/// The request a leader sends (v3: ISR members with their broker epochs; -1 leaves the
/// epoch unchecked).
pub fn request_for(change: &IsrChange) -> AlterPartitionRequest {
    let partition = PartitionData::default()
        .with_partition_index(change.partition)
        .with_leader_epoch(change.leader_epoch)
        .with_partition_epoch(change.partition_epoch)
        .with_new_isr_with_epochs(
            change
                .new_isr
                .iter()
                .map(|id| {
                    BrokerState::default()
                        .with_broker_id(BrokerId(*id))
                        .with_broker_epoch(-1)
                })
                .collect(),
        );
    AlterPartitionRequest::default()
        .with_broker_id(BrokerId(change.broker_id))
        .with_broker_epoch(change.broker_epoch)
        .with_topics(vec![
            TopicData::default()
                .with_topic_id(change.topic_id)
                .with_partitions(vec![partition]),
        ])
}

pub fn reply_from(response: AlterPartitionResponse) -> Result<ControllerReply, Error> {
    if let Some(e) = Error::from_code(response.error_code, None) {
        return Err(e);
    }
    let partition = response
        .topics
        .into_iter()
        .flat_map(|t| t.partitions)
        .next()
        .ok_or_else(|| Error::InvalidRequest("AlterPartition answered no partition".into()))?;
    if let Some(e) = Error::from_code(partition.error_code, None) {
        return Err(e);
    }
    let isr: Vec<i32> = partition.isr.into_iter().map(|b| b.0).collect();
    Ok(ControllerReply::Partition(PartitionRegistration {
        replicas: Vec::new(),
        isr,
        leader: partition.leader_id.0,
        leader_epoch: partition.leader_epoch,
        partition_epoch: partition.partition_epoch,
        reassignment: Default::default(),
        directories: Default::default(),
    }))
}
