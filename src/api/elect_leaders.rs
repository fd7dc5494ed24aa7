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
    let elect = |topic: &TopicName, partition: i32| {
        let outcome = ctx
            .broker
            .elect_leader(&TopicPartition::new(topic, partition), election);
        let result = PartitionResult::default().with_partition_id(partition);
        match outcome {
            Ok(()) => result.with_error_code(code::NONE),
            Err(e) => result
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.message()))),
        }
    };
    let results = match &request.topic_partitions {
        Some(topics) => topics
            .iter()
            .map(|t| {
                ReplicaElectionResult::default()
                    .with_topic(t.topic.clone())
                    .with_partition_result(
                        t.partitions.iter().map(|&p| elect(&t.topic, p)).collect(),
                    )
            })
            .collect(),
        None => ctx
            .broker
            .topics()
            .iter()
            .map(|t| {
                let name = TopicName(wire_str(&t.name));
                let partitions = (0..t.partitions)
                    .map(|p| elect(&name, p))
                    .filter(|r| r.error_code != code::ELECTION_NOT_NEEDED)
                    .collect();
                ReplicaElectionResult::default()
                    .with_topic(name)
                    .with_partition_result(partitions)
            })
            .collect(),
    };
    Some(
        ElectLeadersResponse::default()
            .with_error_code(code::NONE)
            .with_replica_election_results(results),
    )
}
