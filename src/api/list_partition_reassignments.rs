//! ListPartitionReassignments: the reassignments in progress, from this broker's metadata
//! image (replicas, adding, removing); as in Kafka, partitions that are not being reassigned
//! (or do not exist) are simply not listed.

use super::ApiContext;
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use kafka_protocol::messages::{
    BrokerId, ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, TopicName,
};
use std::collections::HashSet;

pub async fn handle(
    ctx: &ApiContext,
    request: ListPartitionReassignmentsRequest,
    _version: i16,
) -> Option<ListPartitionReassignmentsResponse> {
    let wanted: Option<HashSet<TopicPartition>> = request.topics.as_ref().map(|topics| {
        topics
            .iter()
            .flat_map(|t| {
                t.partition_indexes
                    .iter()
                    .map(|p| TopicPartition::new(&t.name, *p))
            })
            .collect()
    });
    let brokers = |ids: Vec<i32>| ids.into_iter().map(BrokerId).collect();
    let topics = ctx
        .broker
        .reassignments(wanted.as_ref())
        .into_iter()
        .map(|(name, partitions)| {
            OngoingTopicReassignment::default()
                .with_name(TopicName(super::wire_str(&name)))
                .with_partitions(
                    partitions
                        .into_iter()
                        .map(|ongoing| {
                            OngoingPartitionReassignment::default()
                                .with_partition_index(ongoing.partition)
                                .with_replicas(brokers(ongoing.replicas))
                                .with_adding_replicas(brokers(ongoing.adding))
                                .with_removing_replicas(brokers(ongoing.removing))
                        })
                        .collect(),
                )
        })
        .collect();
    Some(
        ListPartitionReassignmentsResponse::default()
            .with_error_code(code::NONE)
            .with_topics(topics),
    )
}
