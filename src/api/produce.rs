//! Produce: wraps each partition's records once ([`ProducedBatch`]), checks the request's own
//! rules on them, and hands them to the replica layer's one entry
//! ([`crate::replica::ReplicaManager::append_records`]), which checks, appends and waits as the
//! acks ask. acks=0 gets no response;
//! acks=1 is answered once the batch is in the log, acks=-1 once the ISR has it too. A
//! partition refused because this broker does not lead it names its leader (KIP-951). A
//! transactional batch that would begin its producer's transaction on a partition is first
//! verified with the transaction coordinator (KIP-890).

use super::{ApiContext, LeaderHint, wire_str};
use crate::auth::quota::QuotaType;
use crate::error::{Error, code};
use crate::record::RecordError;
use crate::record::produced::ProducedBatch;
use crate::replica::{ProduceSettings, TxnPartitionCheck};
use crate::storage::log::AppendInfo;
use crate::types::TopicPartition;
use kafka_protocol::messages::produce_response::{
    BatchIndexAndErrorMessage, LeaderIdAndEpoch, NodeEndpoint, PartitionProduceResponse,
    TopicProduceResponse,
};
use kafka_protocol::messages::{BrokerId, ProduceRequest, ProduceResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ProduceRequest,
    version: i16,
) -> Option<ProduceResponse> {
    let acks = request.acks;
    let settings = ProduceSettings {
        acks,
        timeout: std::time::Duration::from_millis(request.timeout_ms.max(0) as u64),
        transactional_id: request.transactional_id.as_deref().map(|id| id.as_str()),
        // v12+ comes from a producer of transaction version 2, which sends no
        // AddPartitionsToTxn: its first batch on a partition adds it (Kafka's ADD_PARTITION).
        transaction_check: if version >= 12 {
            TxnPartitionCheck::Add
        } else {
            TxnPartitionCheck::Verify
        },
    };
    // Each partition's records are wrapped once: the first batch's header is parsed here and
    // travels down with them.
    let topics: Vec<_> = request
        .topic_data
        .into_iter()
        .map(|topic| {
            let batches: Vec<(i32, Option<ProducedBatch>)> = topic
                .partition_data
                .into_iter()
                .map(|data| (data.index, data.records.map(ProducedBatch::new)))
                .collect();
            (topic.name, topic.topic_id, batches)
        })
        .collect();
    // Kafka refuses the whole request (every partition) before anything is appended.
    let transactional_without_id = settings.transactional_id.is_none()
        && topics.iter().any(|(_, _, batches)| {
            batches
                .iter()
                .any(|(_, batch)| batch.as_ref().is_some_and(|b| b.is_transactional()))
        });
    let mut responses = Vec::with_capacity(topics.len());
    let mut names = Vec::with_capacity(topics.len());
    // What goes to the replica layer, and where each answer goes in the response.
    let mut appends = Vec::new();
    let mut slots = Vec::new();
    for (topic_name, topic_id, batches) in topics {
        // v13+ names topics by id.
        let name: Result<String, Error> = if version >= 13 {
            ctx.broker
                .topic_by_id(topic_id)
                .map(|t| t.name.to_string())
                .ok_or(Error::UnknownTopicId)
        } else {
            Ok(topic_name.to_string())
        };
        let mut partitions = Vec::with_capacity(batches.len());
        for (index, batch) in batches {
            let refused = match (&name, matches!(acks, -1..=1)) {
                _ if transactional_without_id => Err(Error::TransactionalIdAuthorizationFailed),
                (_, false) => Err(Error::InvalidRequiredAcks(acks)),
                (Err(_), _) => Err(Error::UnknownTopicId),
                (Ok(name), true) => match batch {
                    None => Err(Error::Record(RecordError::Invalid(
                        "produce request without records".into(),
                    ))),
                    Some(batch) => batch
                        .check_request(version)
                        .map(|()| (name, batch))
                        .map_err(Error::from),
                },
            };
            match refused {
                Ok((name, batch)) => {
                    appends.push((TopicPartition::new(name, index), batch));
                    slots.push((responses.len(), partitions.len()));
                    partitions.push(PartitionProduceResponse::default().with_index(index));
                }
                Err(e) => partitions.push(partition_response(index, Err(e))),
            }
        }
        responses.push(
            TopicProduceResponse::default()
                .with_name(topic_name)
                .with_topic_id(topic_id)
                .with_partition_responses(partitions),
        );
        names.push(name.ok());
    }
    let results = ctx
        .broker
        .replicas()
        .append_records(appends, settings)
        .await;
    for ((topic, slot), result) in slots.into_iter().zip(results) {
        let partition = &mut responses[topic].partition_responses[slot];
        let not_in_transaction = matches!(result, Err(Error::NotInTransaction));
        *partition = partition_response(partition.index, result);
        // A batch outside its producer's transaction: v11+ producers abort the transaction
        // and go on (TRANSACTION_ABORTABLE), older ones know INVALID_TXN_STATE only.
        if not_in_transaction && version >= 11 {
            partition.error_code = code::TRANSACTION_ABORTABLE;
        }
    }
    // The produce quota counts the whole request once it is handled (as Kafka's callback
    // does); over it, the response says so and the connection waits.
    let (user, client_id) = ctx.quota_identity();
    let throttle_ms = ctx.broker.client_quotas().record(
        QuotaType::Produce,
        user,
        client_id,
        ctx.request_bytes as f64,
    );
    ctx.throttle(throttle_ms);
    if acks == 0 {
        return None;
    }
    let node_endpoints = if version >= 10 {
        add_leader_hints(ctx, &mut responses, &names)
    } else {
        Vec::new()
    };
    Some(
        ProduceResponse::default()
            .with_throttle_time_ms(throttle_ms.min(i32::MAX as u32) as i32)
            .with_responses(responses)
            .with_node_endpoints(node_endpoints),
    )
}

/// KIP-951 (v10+): partitions refused for leadership name their current leader, and the
/// response carries those leaders' endpoints.
fn add_leader_hints(
    ctx: &ApiContext,
    responses: &mut [TopicProduceResponse],
    names: &[Option<String>],
) -> Vec<NodeEndpoint> {
    let mut endpoints: Vec<NodeEndpoint> = Vec::new();
    for (topic, name) in responses.iter_mut().zip(names) {
        let Some(name) = name else { continue };
        for partition in &mut topic.partition_responses {
            let tp = TopicPartition::new(name, partition.index);
            let Some(hint) = LeaderHint::for_error(ctx, &tp, partition.error_code) else {
                continue;
            };
            partition.current_leader = LeaderIdAndEpoch::default()
                .with_leader_id(BrokerId(hint.leader_id))
                .with_leader_epoch(hint.leader_epoch);
            if !endpoints.iter().any(|e| e.node_id.0 == hint.leader_id) {
                endpoints.push(
                    NodeEndpoint::default()
                        .with_node_id(BrokerId(hint.leader_id))
                        .with_host(wire_str(&hint.host))
                        .with_port(hint.port)
                        .with_rack(hint.rack.as_deref().map(wire_str)),
                );
            }
        }
    }
    endpoints
}

fn partition_response(index: i32, result: Result<AppendInfo, Error>) -> PartitionProduceResponse {
    match result {
        Ok(info) => PartitionProduceResponse::default()
            .with_index(index)
            .with_error_code(code::NONE)
            .with_base_offset(info.base_offset)
            .with_log_append_time_ms(info.log_append_time)
            .with_log_start_offset(info.log_start_offset),
        Err(e) => {
            let message = wire_str(&e.message());
            let record_errors = e
                .record_issues()
                .iter()
                .map(|issue| {
                    BatchIndexAndErrorMessage::default()
                        .with_batch_index(issue.index)
                        .with_batch_index_error_message(Some(wire_str(&issue.message)))
                })
                .collect();
            tracing::debug!(partition = index, error = %e, "produce rejected");
            PartitionProduceResponse::default()
                .with_index(index)
                .with_error_code(e.code())
                .with_base_offset(-1)
                .with_log_append_time_ms(-1)
                .with_log_start_offset(-1)
                .with_record_errors(record_errors)
                .with_error_message(Some(message))
        }
    }
}
