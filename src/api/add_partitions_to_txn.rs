//! AddPartitionsToTxn: a transactional producer adds the partitions it is about to write to
//! its transaction (v0–v3, one transaction per request), or a broker checks that they are in
//! it (v4+, batched, `verify_only`, KIP-890). Every partition of a request gets the same
//! answer, as in Kafka.

use super::ApiContext;
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
use std::collections::{BTreeMap, BTreeSet};

pub async fn handle(
    ctx: &ApiContext,
    request: AddPartitionsToTxnRequest,
    version: i16,
) -> Option<AddPartitionsToTxnResponse> {
    let producer_fenced = version >= 2;
    if version <= 3 {
        let topics = &request.v3_and_below_topics;
        let outcome = add(
            ctx,
            &request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id.0,
            request.v3_and_below_producer_epoch,
            topics,
        )
        .await;
        let error = outcome
            .err()
            .map_or(code::NONE, |e| e.code(producer_fenced));
        return Some(
            AddPartitionsToTxnResponse::default()
                .with_results_by_topic_v3_and_below(results(topics, |_| error)),
        );
    }
    let mut transactions = Vec::with_capacity(request.transactions.len());
    for txn in &request.transactions {
        let topic_results = if txn.verify_only {
            let partitions: Vec<TopicPartition> = txn
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| TopicPartition::new(&t.name, *p))
                })
                .collect();
            match verify(ctx, txn, &partitions).await {
                Ok(verified) => {
                    let mut index = 0;
                    results(&txn.topics, |_| {
                        let ok = verified.get(index).copied().unwrap_or(false);
                        index += 1;
                        if ok {
                            code::NONE
                        } else {
                            code::INVALID_TXN_STATE
                        }
                    })
                }
                Err(error) => results(&txn.topics, |_| error),
            }
        } else {
            let outcome = add(
                ctx,
                &txn.transactional_id,
                txn.producer_id.0,
                txn.producer_epoch,
                &txn.topics,
            )
            .await;
            let error = outcome
                .err()
                .map_or(code::NONE, |e| e.code(producer_fenced));
            results(&txn.topics, |_| error)
        };
        transactions.push(
            AddPartitionsToTxnResult::default()
                .with_transactional_id(txn.transactional_id.clone())
                .with_topic_results(topic_results),
        );
    }
    Some(AddPartitionsToTxnResponse::default().with_results_by_transaction(transactions))
}

async fn add(
    ctx: &ApiContext,
    transactional_id: &str,
    producer_id: i64,
    epoch: i16,
    topics: &[AddPartitionsToTxnTopic],
) -> Result<(), crate::txn::coordinator::CoordinatorError> {
    let mut partitions: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    for topic in topics {
        partitions
            .entry(topic.name.to_string())
            .or_default()
            .extend(topic.partitions.iter().copied());
    }
    ctx.broker
        .transaction_coordinator()
        .add_partitions(transactional_id, producer_id, epoch, &partitions)
        .await
}

async fn verify(
    ctx: &ApiContext,
    txn: &kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTransaction,
    partitions: &[TopicPartition],
) -> Result<Vec<bool>, i16> {
    ctx.broker
        .transaction_coordinator()
        .verify_partitions(
            &txn.transactional_id,
            txn.producer_id.0,
            txn.producer_epoch,
            partitions,
        )
        .await
        .map_err(|e| e.code(true))
}

/// One result per requested partition, in request order.
fn results(
    topics: &[AddPartitionsToTxnTopic],
    mut error_for: impl FnMut(&TopicPartition) -> i16,
) -> Vec<AddPartitionsToTxnTopicResult> {
    topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let tp = TopicPartition::new(&topic.name, *p);
                    AddPartitionsToTxnPartitionResult::default()
                        .with_partition_index(*p)
                        .with_partition_error_code(error_for(&tp))
                })
                .collect();
            AddPartitionsToTxnTopicResult::default()
                .with_name(topic.name.clone())
                .with_results_by_partition(partitions)
        })
        .collect()
}
