//! AlterPartition (controller listener): a partition leader asks the controller to change the
//! ISR of the partitions it leads, all it has to ask in one request (Kafka's
//! `AlterPartitionManager` batches likewise); each partition is answered on its own. The same
//! file builds the request a leader sends and reads its answer.

use super::ApiContext;
use super::broker_registration::unexpected;
use crate::controller::control::IsrChange;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::image::PartitionRegistration;
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::alter_partition_response as response;
use kafka_protocol::messages::{AlterPartitionRequest, AlterPartitionResponse, BrokerId};
use std::collections::HashMap;
use uuid::Uuid;

pub async fn handle(
    ctx: &ApiContext,
    request: AlterPartitionRequest,
    version: i16,
) -> Option<AlterPartitionResponse> {
    let mut changes = Vec::new();
    for topic in &request.topics {
        for partition in &topic.partitions {
            let new_isr = if version >= 3 {
                partition
                    .new_isr_with_epochs
                    .iter()
                    .map(|b| b.broker_id.0)
                    .collect()
            } else {
                partition.new_isr.iter().map(|b| b.0).collect()
            };
            changes.push(IsrChange {
                broker_id: request.broker_id.0,
                broker_epoch: request.broker_epoch,
                topic_id: topic.topic_id,
                partition: partition.partition_index,
                leader_epoch: partition.leader_epoch,
                partition_epoch: partition.partition_epoch,
                new_isr,
            });
        }
    }
    let count = changes.len();
    // One decision for the whole request, as Kafka's controller makes.
    let outcomes: Vec<Result<PartitionRegistration, i16>> = match ctx
        .broker
        .controller()
        .call(ControllerOp::AlterPartition(changes))
        .await
    {
        Ok(ControllerReply::Partitions(outcomes)) if outcomes.len() == count => outcomes,
        Ok(other) => vec![Err(unexpected(&other).code()); count],
        Err(e) => vec![Err(e.code()); count],
    };
    let mut outcomes = outcomes.into_iter();
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .zip(outcomes.by_ref())
                .map(|(partition, outcome)| {
                    let answer = response::PartitionData::default()
                        .with_partition_index(partition.partition_index);
                    match outcome {
                        Ok(p) => answer
                            .with_leader_id(BrokerId(p.leader))
                            .with_leader_epoch(p.leader_epoch)
                            .with_isr(p.isr.into_iter().map(BrokerId).collect())
                            .with_partition_epoch(p.partition_epoch),
                        Err(code) => answer.with_error_code(code),
                    }
                })
                .collect();
            response::TopicData::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    Some(AlterPartitionResponse::default().with_topics(topics))
}

/// The request a leader sends for its ISR changes (v3: ISR members with their broker
/// epochs; -1 leaves the epoch unchecked), partitions grouped by topic. The changes come
/// from one broker at one broker epoch (the first change's are sent).
pub fn request_for(changes: &[IsrChange]) -> AlterPartitionRequest {
    let mut topics: Vec<TopicData> = Vec::new();
    for change in changes {
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
        match topics.last_mut() {
            Some(topic) if topic.topic_id == change.topic_id => topic.partitions.push(partition),
            _ => topics.push(
                TopicData::default()
                    .with_topic_id(change.topic_id)
                    .with_partitions(vec![partition]),
            ),
        }
    }
    let (broker_id, broker_epoch) = changes
        .first()
        .map_or((-1, -1), |c| (c.broker_id, c.broker_epoch));
    AlterPartitionRequest::default()
        .with_broker_id(BrokerId(broker_id))
        .with_broker_epoch(broker_epoch)
        .with_topics(topics)
}

/// The controller's answer to [`request_for`]`(changes)`: each change's outcome, in the
/// order of `changes` (a partition the answer leaves out is UNKNOWN_SERVER_ERROR).
pub fn reply_from(
    response: AlterPartitionResponse,
    changes: &[IsrChange],
) -> Result<ControllerReply, Error> {
    if let Some(e) = Error::from_code(response.error_code, None) {
        return Err(e);
    }
    let mut answered: HashMap<(Uuid, i32), Result<PartitionRegistration, i16>> = HashMap::new();
    for topic in response.topics {
        for partition in topic.partitions {
            let outcome = match partition.error_code {
                0 => Ok(PartitionRegistration {
                    replicas: Vec::new(),
                    isr: partition.isr.into_iter().map(|b| b.0).collect(),
                    leader: partition.leader_id.0,
                    leader_epoch: partition.leader_epoch,
                    partition_epoch: partition.partition_epoch,
                    reassignment: Default::default(),
                    directories: Default::default(),
                }),
                code => Err(code),
            };
            answered.insert((topic.topic_id, partition.partition_index), outcome);
        }
    }
    Ok(ControllerReply::Partitions(
        changes
            .iter()
            .map(|c| {
                answered
                    .remove(&(c.topic_id, c.partition))
                    .unwrap_or(Err(crate::error::code::UNKNOWN_SERVER_ERROR))
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(topic_id: Uuid, partition: i32, new_isr: Vec<i32>) -> IsrChange {
        IsrChange {
            broker_id: 2,
            broker_epoch: 9,
            topic_id,
            partition,
            leader_epoch: 1,
            partition_epoch: 4,
            new_isr,
        }
    }

    /// Many changes go in one request, grouped by topic, and each comes back to its change
    /// whatever order the answer has; a partition left out of the answer is an error.
    #[test]
    fn changes_of_many_partitions_travel_in_one_request_and_come_back_in_order() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let changes = vec![
            change(a, 0, vec![2, 1]),
            change(a, 5, vec![2]),
            change(b, 3, vec![2, 3]),
            change(b, 4, vec![2]),
        ];
        let request = request_for(&changes);
        assert_eq!((request.broker_id.0, request.broker_epoch), (2, 9));
        let grouped: Vec<(Uuid, Vec<i32>)> = request
            .topics
            .iter()
            .map(|t| {
                (
                    t.topic_id,
                    t.partitions.iter().map(|p| p.partition_index).collect(),
                )
            })
            .collect();
        assert_eq!(grouped, vec![(a, vec![0, 5]), (b, vec![3, 4])]);
        let answer = |index: i32, error: i16| {
            response::PartitionData::default()
                .with_partition_index(index)
                .with_error_code(error)
                .with_leader_id(BrokerId(2))
                .with_isr(vec![BrokerId(2), BrokerId(index)])
                .with_partition_epoch(5)
        };
        let response = AlterPartitionResponse::default().with_topics(vec![
            response::TopicData::default()
                .with_topic_id(b)
                .with_partitions(vec![answer(3, 0)]),
            response::TopicData::default()
                .with_topic_id(a)
                .with_partitions(vec![answer(5, 0), answer(0, 108)]),
        ]);
        let Ok(ControllerReply::Partitions(outcomes)) = reply_from(response, &changes) else {
            panic!("answered");
        };
        assert_eq!(outcomes[0], Err(108));
        assert_eq!(outcomes[1].as_ref().map(|p| p.isr.clone()), Ok(vec![2, 5]));
        assert_eq!(outcomes[2].as_ref().map(|p| p.partition_epoch), Ok(5));
        assert_eq!(
            outcomes[3],
            Err(crate::error::code::UNKNOWN_SERVER_ERROR),
            "left out of the answer"
        );
    }
}
