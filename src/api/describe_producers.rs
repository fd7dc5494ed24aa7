//! DescribeProducers (v0, KIP-664): the idempotent and transactional producers a partition's
//! leader knows — epoch, last sequence and timestamp, the coordinator epoch of their last
//! marker, and where their open transaction starts (`kafka-transactions.sh
//! describe-producers`, for finding hanging transactions).

use super::{ApiContext, wire_str};
use crate::types::TopicPartition;
use kafka_protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse, ProducerId};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeProducersRequest,
    _version: i16,
) -> Option<DescribeProducersResponse> {
    let replicas = ctx.broker.replicas();
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partition_indexes
                .iter()
                .map(|index| {
                    let tp = TopicPartition::new(&topic.name, *index);
                    let response = PartitionResponse::default().with_partition_index(*index);
                    match replicas.get(&tp).and_then(|p| p.active_producers()) {
                        Ok(producers) => response.with_active_producers(
                            producers
                                .into_iter()
                                .map(|p| {
                                    ProducerState::default()
                                        .with_producer_id(ProducerId(p.producer_id))
                                        .with_producer_epoch(p.producer_epoch as i32)
                                        .with_last_sequence(p.last_sequence)
                                        .with_last_timestamp(p.last_timestamp)
                                        .with_coordinator_epoch(p.coordinator_epoch)
                                        .with_current_txn_start_offset(p.current_txn_start_offset)
                                })
                                .collect(),
                        ),
                        Err(e) => response
                            .with_error_code(e.code())
                            .with_error_message(Some(wire_str(&e.message()))),
                    }
                })
                .collect();
            TopicResponse::default()
                .with_name(topic.name)
                .with_partitions(partitions)
        })
        .collect();
    Some(DescribeProducersResponse::default().with_topics(topics))
}
