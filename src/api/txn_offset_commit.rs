//! TxnOffsetCommit: a transactional producer commits a group's offsets as part of its
//! transaction (`send_offsets_to_transaction`, consume-transform-produce). The group's
//! coordinator writes them in the producer's transaction; they become the group's committed
//! offsets when the commit marker reaches the group's partition, and are dropped on abort.
//! Before that the group's partition is added to the transaction (v5+: a producer of
//! transaction version 2 sends no AddOffsetsToTxn) or verified to be in it (KIP-890).

use super::ApiContext;
use crate::error::{Error, GroupError};
use crate::group::OffsetCommit;
use crate::replica::TxnPartitionCheck;
use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: TxnOffsetCommitRequest,
    version: i16,
) -> Option<TxnOffsetCommitResponse> {
    // v6 names topics by id; the partitions of an unknown id answer UNKNOWN_TOPIC_ID.
    let names: Vec<Option<String>> = request
        .topics
        .iter()
        .map(|t| super::topic_named(ctx, &t.name, t.topic_id, version >= 6))
        .collect();
    let commits: Vec<OffsetCommit> = request
        .topics
        .iter()
        .zip(&names)
        .filter_map(|(topic, name)| name.as_ref().map(|name| (topic, name)))
        .flat_map(|(topic, name)| {
            topic.partitions.iter().map(|p| OffsetCommit {
                topic: name.clone(),
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: if version >= 2 {
                    p.committed_leader_epoch
                } else {
                    -1
                },
                metadata: p
                    .committed_metadata
                    .as_ref()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            })
        })
        .collect();
    // v3+ carries the member's generation (KIP-447); older versions are not checked.
    let generation = if version >= 3 {
        request.generation_id
    } else {
        -1
    };
    let refused = match super::coordinator_for(ctx, &request.group_id).await {
        // Not the group's coordinator: the commit below answers that.
        Err(_) => None,
        Ok(_) => transaction_check(ctx, &request, version).await.err(),
    };
    let mut codes = super::offset_commit_codes(ctx, &request.group_id, commits.len(), |groups| {
        if let Some(refused) = refused {
            return Err(refused);
        }
        groups.txn_commit_offsets(
            &request.group_id,
            request.producer_id.0,
            request.producer_epoch,
            &request.member_id,
            request.group_instance_id.as_deref(),
            generation,
            &commits,
        )
    })
    .await;
    let topics = request
        .topics
        .into_iter()
        .zip(&names)
        .map(|(topic, name)| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let code = match name {
                        Some(_) => codes.next_code(),
                        None => crate::error::code::UNKNOWN_TOPIC_ID,
                    };
                    TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code)
                })
                .collect();
            TxnOffsetCommitResponseTopic::default()
                .with_name(topic.name)
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    Some(TxnOffsetCommitResponse::default().with_topics(topics))
}

/// The group's partition added to (v5+) or verified in the producer's transaction; a refusal
/// as the group coordinator answers it (Kafka's `handleOperationException`).
async fn transaction_check(
    ctx: &ApiContext,
    request: &TxnOffsetCommitRequest,
    version: i16,
) -> Result<(), GroupError> {
    let check = if version >= 5 {
        TxnPartitionCheck::Add
    } else {
        TxnPartitionCheck::Verify
    };
    let outcome = ctx
        .broker
        .check_offsets_in_transaction(
            &request.transactional_id,
            request.producer_id.0,
            request.producer_epoch,
            &request.group_id,
            check,
        )
        .await;
    outcome.map_err(|e| match e {
        Error::NotInTransaction if version >= 4 => GroupError::TransactionAbortable,
        Error::NotInTransaction => GroupError::InvalidTxnState,
        Error::ProducerFencedByCoordinator => GroupError::InvalidProducerEpoch,
        Error::NotLeaderOrFollower => GroupError::NotCoordinator,
        _ => GroupError::CoordinatorNotAvailable,
    })
}
