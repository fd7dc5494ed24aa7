//! ElectLeaders: preferred (0) or unclean (1) leader election for the listed partitions, or
//! for every partition when the list is null (then, as in Kafka, partitions whose election
//! is not needed are left out of the response). The decision is `Broker::elect_leader`.

use super::{ApiContext, wire_str};
use crate::broker::ElectionType;
use crate::error::{Error, code};
use crate::types::TopicPartition;
use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::{ElectLeadersRequest, ElectLeadersResponse, TopicName};

pub async fn handle(
    ctx: &ApiContext,
    request: ElectLeadersRequest,
    version: i16,
) -> Option<ElectLeadersResponse> {
    // v0 has no election type: it always asked for the preferred replica.
    let election = match (version, request.election_type) {
        (0, _) | (_, 0) => ElectionType::Preferred,
        (_, 1) => ElectionType::Unclean,
        (_, other) => {
            let e = Error::InvalidRequest(format!("unknown election type {other}"));
            return Some(ElectLeadersResponse::default().with_error_code(e.code()));
        }
    };
    // (topic, partitions, whether "not needed" results are left out)
    let targets: Vec<(TopicName, Vec<i32>, bool)> = match &request.topic_partitions {
        Some(topics) => topics
            .iter()
            .map(|t| (t.topic.clone(), t.partitions.clone(), false))
            .collect(),
        None => ctx
            .broker
            .topics()
            .iter()
            .map(|t| {
                (
                    TopicName(wire_str(&t.name)),
                    (0..t.partitions).collect(),
                    true,
                )
            })
            .collect(),
    };
    let mut results = Vec::with_capacity(targets.len());
    for (topic, partitions, skip_not_needed) in targets {
        let mut partition_results = Vec::with_capacity(partitions.len());
        for partition in partitions {
            let outcome = ctx
                .broker
                .elect_leader(&TopicPartition::new(&topic, partition), election)
                .await;
            let result = PartitionResult::default().with_partition_id(partition);
            let result = match outcome {
                Ok(()) => result.with_error_code(code::NONE),
                Err(e) => result
                    .with_error_code(e.code())
                    .with_error_message(Some(wire_str(&e.message()))),
            };
            if !(skip_not_needed && result.error_code == code::ELECTION_NOT_NEEDED) {
                partition_results.push(result);
            }
        }
        results.push(
            ReplicaElectionResult::default()
                .with_topic(topic)
                .with_partition_result(partition_results),
        );
    }
    Some(
        ElectLeadersResponse::default()
            .with_error_code(code::NONE)
            .with_replica_election_results(results),
    )
}
