//! Produce: validates each partition's record batch and appends it. acks=0 gets no response;
//! acks=1 is answered once the batch is in the log, acks=-1 once the ISR has it too. A
//! partition refused because this broker does not lead it names its leader (KIP-951). A
//! transactional batch that would begin its producer's transaction on a partition is first
//! verified with the transaction coordinator (KIP-890).

use super::{ApiContext, LeaderHint, wire_str};
use crate::error::{Error, code};
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
    let timeout = std::time::Duration::from_millis(request.timeout_ms.max(0) as u64);
    // Every partition is appended first, then each waits for durability and replication:
    // the partitions of one request replicate at the same time.
    let mut appended = Vec::new();
    let mut responses = Vec::with_capacity(request.topic_data.len());
    let mut names = Vec::with_capacity(request.topic_data.len());
    // Kafka refuses the whole request (every partition) before anything is appended.
    let transactional_without_id = request.transactional_id.is_none()
        && request.topic_data.iter().any(|topic| {
            topic.partition_data.iter().any(|data| {
                first_batch(&data.records).is_some_and(|batch| batch.is_transactional())
            })
        });
    for topic in request.topic_data {
        // v13+ names topics by id.
        let name: Result<String, Error> = if version >= 13 {
            ctx.broker
                .topic_by_id(topic.topic_id)
                .map(|t| t.name.to_string())
                .ok_or(Error::UnknownTopicId)
        } else {
            Ok(topic.name.to_string())
        };
        let mut partitions = Vec::with_capacity(topic.partition_data.len());
        for data in topic.partition_data {
            let result = match (&name, matches!(acks, -1..=1)) {
                _ if transactional_without_id => Err(Error::TransactionalIdAuthorizationFailed),
                (_, false) => Err(Error::InvalidRequiredAcks(acks)),
                (Err(_), _) => Err(Error::UnknownTopicId),
                (Ok(name), true) => match check_records_for_version(&data.records, version) {
                    Err(e) => Err(e),
                    Ok(()) => {
                        append(
                            ctx,
                            &TopicPartition::new(name, data.index),
                            data.records,
                            acks,
                            request.transactional_id.as_deref().map(|id| id.as_str()),
                        )
                        .await
                    }
                },
            };
            if let Ok((partition, info)) = &result {
                appended.push((responses.len(), partitions.len(), partition.clone(), *info));
            }
            partitions.push(partition_response(data.index, result.map(|(_, info)| info)));
        }
        responses.push(
            TopicProduceResponse::default()
                .with_name(topic.name)
                .with_topic_id(topic.topic_id)
                .with_partition_responses(partitions),
        );
        names.push(name.ok());
    }
    for (topic, slot, partition, info) in appended {
        if let Err(e) = complete(&partition, &info, acks, timeout).await {
            let index = responses[topic].partition_responses[slot].index;
            responses[topic].partition_responses[slot] = partition_response(index, Err(e));
        }
    }
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

/// What an append must wait for before it is acknowledged: the fsync `flush.messages` asks
/// for, and with acks=all the ISR.
async fn complete(
    partition: &crate::replica::Partition,
    info: &crate::storage::log::AppendInfo,
    acks: i16,
    timeout: std::time::Duration,
) -> Result<(), Error> {
    if info.flush_due {
        partition.flush_to(info.last_offset + 1).await?;
    }
    if acks == -1 {
        partition
            .wait_for_replication(info.last_offset + 1, timeout)
            .await?;
    }
    Ok(())
}

/// What Kafka checks of a partition's records before the log sees them
/// (`ProduceRequest.validateRecords`, in its order): one whole batch is there (INVALID_RECORD,
/// or CORRUPT_MESSAGE for a length below any record's), of magic 2 (every version served is
/// v3+), zstd only from v7 on, and no second batch.
fn check_records_for_version(records: &Option<bytes::Bytes>, version: i16) -> Result<(), Error> {
    use crate::record::{Compression, MAGIC_V2, RecordError, frame_first_batch};
    let Some(bytes) = records.as_deref() else {
        return Ok(());
    };
    let Some(first) = frame_first_batch(bytes)? else {
        return Err(Error::Record(RecordError::Invalid(format!(
            "Produce requests with version {version} must have at least one record batch per partition"
        ))));
    };
    if first.magic != MAGIC_V2 {
        return Err(Error::Record(RecordError::Invalid(format!(
            "Produce requests with version {version} are only allowed to contain record batches with magic version 2"
        ))));
    }
    if version < 7 && first.compression == Some(Compression::Zstd) {
        return Err(Error::UnsupportedCompressionType(format!(
            "Produce requests with version {version} are not allowed to use ZStandard compression"
        )));
    }
    if frame_first_batch(&bytes[first.size..])?.is_some() {
        return Err(Error::Record(RecordError::Invalid(format!(
            "Produce requests with version {version} are only allowed to contain exactly one record batch per partition"
        ))));
    }
    Ok(())
}

/// The first batch of a partition's records, when it is whole.
fn first_batch(records: &Option<bytes::Bytes>) -> Option<crate::record::BatchView<'_>> {
    let bytes = records.as_deref()?;
    let (_, size, _) = crate::record::peek_offset_and_size(bytes)?;
    crate::record::BatchView::new(bytes.get(..size)?).ok()
}

async fn append(
    ctx: &ApiContext,
    tp: &TopicPartition,
    records: Option<bytes::Bytes>,
    acks: i16,
    transactional_id: Option<&str>,
) -> Result<
    (
        std::sync::Arc<crate::replica::Partition>,
        crate::storage::log::AppendInfo,
    ),
    Error,
> {
    let records = records.ok_or_else(|| {
        Error::Record(crate::record::RecordError::Invalid(
            "produce request without records".into(),
        ))
    })?;
    ctx.broker
        .append_produced(tp, records, acks, transactional_id)
        .await
}

fn partition_response(
    index: i32,
    result: Result<crate::storage::log::AppendInfo, Error>,
) -> PartitionProduceResponse {
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
