//! AssignReplicasToDirs (controller listener, KIP-858): a broker tells the active controller
//! which of its log directories each of its replicas is in, so a directory that fails later
//! moves exactly its replicas' leadership away. The same file builds the request a broker
//! sends and reads its answer.

use super::ApiContext;
use super::broker_registration::unexpected;
use crate::controller::control::DirectoryAssignment;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use kafka_protocol::messages::assign_replicas_to_dirs_request as req;
use kafka_protocol::messages::assign_replicas_to_dirs_response as resp;
use kafka_protocol::messages::{
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, BrokerId,
};
use std::collections::BTreeMap;
use uuid::Uuid;

pub async fn handle(
    ctx: &ApiContext,
    request: AssignReplicasToDirsRequest,
    _version: i16,
) -> Option<AssignReplicasToDirsResponse> {
    let assignments = assignments_of(&request);
    let op = ControllerOp::AssignReplicasToDirs {
        broker: request.broker_id.0,
        broker_epoch: request.broker_epoch,
        assignments: assignments.clone(),
    };
    let response = AssignReplicasToDirsResponse::default();
    Some(match ctx.broker.controller().call(op).await {
        Ok(ControllerReply::DirectoriesAssigned(codes)) => {
            response.with_directories(answer(&assignments, &codes))
        }
        Ok(other) => response.with_error_code(unexpected(&other).code()),
        Err(e) => response.with_error_code(e.code()),
    })
}

/// The request's assignments, flattened in request order.
fn assignments_of(request: &AssignReplicasToDirsRequest) -> Vec<DirectoryAssignment> {
    request
        .directories
        .iter()
        .flat_map(|dir| {
            dir.topics.iter().flat_map(move |topic| {
                topic.partitions.iter().map(move |p| DirectoryAssignment {
                    topic_id: topic.topic_id,
                    partition: p.partition_index,
                    directory_id: dir.id,
                })
            })
        })
        .collect()
}

/// Assignments grouped by directory, then topic (the request's shape).
fn grouped<T: Copy>(
    assignments: &[DirectoryAssignment],
    values: impl Fn(usize) -> T,
) -> BTreeMap<Uuid, BTreeMap<Uuid, Vec<(i32, T)>>> {
    let mut grouped: BTreeMap<Uuid, BTreeMap<Uuid, Vec<(i32, T)>>> = BTreeMap::new();
    for (i, a) in assignments.iter().enumerate() {
        grouped
            .entry(a.directory_id)
            .or_default()
            .entry(a.topic_id)
            .or_default()
            .push((a.partition, values(i)));
    }
    grouped
}

fn answer(assignments: &[DirectoryAssignment], codes: &[i16]) -> Vec<resp::DirectoryData> {
    let by_dir = grouped(assignments, |i| codes.get(i).copied().unwrap_or(code::NONE));
    by_dir
        .into_iter()
        .map(|(dir, topics)| {
            resp::DirectoryData::default().with_id(dir).with_topics(
                topics
                    .into_iter()
                    .map(|(topic_id, partitions)| {
                        resp::TopicData::default()
                            .with_topic_id(topic_id)
                            .with_partitions(
                                partitions
                                    .into_iter()
                                    .map(|(p, error)| {
                                        resp::PartitionData::default()
                                            .with_partition_index(p)
                                            .with_error_code(error)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The request a broker sends.
pub fn request_for(
    broker: i32,
    broker_epoch: i64,
    assignments: &[DirectoryAssignment],
) -> AssignReplicasToDirsRequest {
    let directories = grouped(assignments, |_| ())
        .into_iter()
        .map(|(dir, topics)| {
            req::DirectoryData::default().with_id(dir).with_topics(
                topics
                    .into_iter()
                    .map(|(topic_id, partitions)| {
                        req::TopicData::default()
                            .with_topic_id(topic_id)
                            .with_partitions(
                                partitions
                                    .into_iter()
                                    .map(|(p, ())| {
                                        req::PartitionData::default().with_partition_index(p)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            )
        })
        .collect();
    AssignReplicasToDirsRequest::default()
        .with_broker_id(BrokerId(broker))
        .with_broker_epoch(broker_epoch)
        .with_directories(directories)
}

/// The controller's answer, as codes in the order of `assignments`.
pub fn reply_from(
    response: AssignReplicasToDirsResponse,
    assignments: &[DirectoryAssignment],
) -> Result<ControllerReply, Error> {
    if let Some(e) = Error::from_code(response.error_code, None) {
        return Err(e);
    }
    let mut codes: BTreeMap<(Uuid, Uuid, i32), i16> = BTreeMap::new();
    for dir in &response.directories {
        for topic in &dir.topics {
            for p in &topic.partitions {
                codes.insert((dir.id, topic.topic_id, p.partition_index), p.error_code);
            }
        }
    }
    Ok(ControllerReply::DirectoriesAssigned(
        assignments
            .iter()
            .map(|a| {
                codes
                    .get(&(a.directory_id, a.topic_id, a.partition))
                    .copied()
                    .unwrap_or(code::NONE)
            })
            .collect(),
    ))
}
