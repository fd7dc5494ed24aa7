//! DescribeTransactions (v0, KIP-664): a transactional id's state as its coordinator holds
//! it — producer id and epoch, state, timeout, start time and the partitions of the open
//! transaction (`kafka-transactions.sh describe`).

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::txn::state::TxnState;
use kafka_protocol::messages::describe_transactions_response::{TopicData, TransactionState};
use kafka_protocol::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, ProducerId, TopicName,
};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeTransactionsRequest,
    _version: i16,
) -> Option<DescribeTransactionsResponse> {
    let coordinator = ctx.broker.transaction_coordinator();
    let mut states = Vec::with_capacity(request.transactional_ids.len());
    for transactional_id in request.transactional_ids {
        let state = TransactionState::default()
            .with_transactional_id(transactional_id.clone())
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
            .with_transaction_start_time_ms(-1);
        states.push(match coordinator.describe(&transactional_id).await {
            Err(e) => state.with_error_code(e.code(true)),
            // Kafka answers a forgotten (Dead) id as it answers an unknown one.
            Ok(None) => state.with_error_code(code::TRANSACTIONAL_ID_NOT_FOUND),
            Ok(Some(meta)) if meta.state == TxnState::Dead => {
                state.with_error_code(code::TRANSACTIONAL_ID_NOT_FOUND)
            }
            Ok(Some(meta)) => state
                .with_transaction_state(wire_str(meta.state.name()))
                .with_transaction_timeout_ms(meta.timeout_ms)
                .with_transaction_start_time_ms(meta.start_ms)
                .with_producer_id(ProducerId(meta.producer_id))
                .with_producer_epoch(meta.producer_epoch)
                .with_topics(
                    meta.partitions
                        .into_iter()
                        .map(|(topic, partitions)| {
                            TopicData::default()
                                .with_topic(TopicName(wire_str(&topic)))
                                .with_partitions(partitions.into_iter().collect())
                        })
                        .collect(),
                ),
        });
    }
    Some(DescribeTransactionsResponse::default().with_transaction_states(states))
}
