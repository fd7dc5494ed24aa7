//! AddPartitionsToTxn: a transactional producer adds the partitions it is about to write to
//! its transaction (v0–v3, one transaction per request), or a broker checks that they are in
//! it (v4+, batched, `verify_only`, KIP-890) or adds them for a producer of transaction
//! version 2, whose Produce or TxnOffsetCommit stands for the add (v5+ `verify_only` false).
//! Every partition of a request gets the same answer, as in Kafka.

use super::ApiContext;
use crate::error::code;
use crate::replica::TxnPartitionCheck;
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
            CLIENT_TRANSACTION_VERSION,
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
            // Only a broker serving a transaction-version-2 producer adds (Kafka's
            // `AddPartitionsToTxnManager` with ADD_PARTITION).
            let outcome = add(
                ctx,
                &txn.transactional_id,
                txn.producer_id.0,
                txn.producer_epoch,
                &txn.topics,
                crate::txn::state::EPOCH_BUMP_VERSION,
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

/// A producer that adds its partitions itself keeps the older protocol (versions 0/1).
const CLIENT_TRANSACTION_VERSION: i16 = 0;

async fn add(
    ctx: &ApiContext,
    transactional_id: &str,
    producer_id: i64,
    epoch: i16,
    topics: &[AddPartitionsToTxnTopic],
    transaction_version: i16,
) -> Result<(), crate::error::CoordinatorError> {
    let mut partitions: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    for topic in topics {
        partitions
            .entry(topic.name.to_string())
            .or_default()
            .extend(topic.partitions.iter().copied());
    }
    ctx.broker
        .transaction_coordinator()
        .add_partitions(
            transactional_id,
            producer_id,
            epoch,
            &partitions,
            transaction_version,
        )
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

/// The partition leader's side of KIP-890: asks the transaction coordinator on another
/// broker, with AddPartitionsToTxn v5, whether a partition is in a producer's ongoing
/// transaction (`verify_only`), or to add it (a producer of transaction version 2).
#[derive(Debug)]
pub struct VerifySender {
    broker: std::sync::Weak<crate::broker::Broker>,
    client_id: String,
    security: crate::net::PeerSecurity,
}

impl VerifySender {
    pub fn new(
        broker: &std::sync::Arc<crate::broker::Broker>,
        security: crate::net::PeerSecurity,
    ) -> Self {
        Self {
            client_id: format!("sluice-broker-{}", broker.node_id()),
            broker: std::sync::Arc::downgrade(broker),
            security,
        }
    }

    async fn ask(
        &self,
        coordinator: i32,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        partition: &TopicPartition,
        check: TxnPartitionCheck,
    ) -> Result<i16, String> {
        use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTransaction;
        use kafka_protocol::messages::{ApiKey, ProducerId, TopicName, TransactionalId};
        let broker = self.broker.upgrade().ok_or("the broker is shutting down")?;
        let listener = &broker.config().cluster.inter_broker_listener;
        let image = broker.metadata().image();
        let endpoint = image
            .brokers
            .get(&coordinator)
            .and_then(|b| b.endpoint(listener))
            .ok_or_else(|| format!("broker {coordinator} has no {listener} endpoint"))?;
        let address = format!("{}:{}", endpoint.host, endpoint.port);
        let timeout =
            std::time::Duration::from_millis(broker.config().cluster.replica_socket_timeout_ms);
        let request = AddPartitionsToTxnRequest::default().with_transactions(vec![
            AddPartitionsToTxnTransaction::default()
                .with_transactional_id(TransactionalId(super::wire_str(transactional_id)))
                .with_producer_id(ProducerId(producer_id))
                .with_producer_epoch(producer_epoch)
                .with_verify_only(check == TxnPartitionCheck::Verify)
                .with_topics(vec![
                    AddPartitionsToTxnTopic::default()
                        .with_name(TopicName(super::wire_str(&partition.topic)))
                        .with_partitions(vec![partition.partition]),
                ]),
        ]);
        let mut connection =
            crate::net::PeerConnection::connect(&address, &self.client_id, timeout, &self.security)
                .await
                .map_err(|e| e.to_string())?;
        let response: AddPartitionsToTxnResponse = connection
            .request(ApiKey::AddPartitionsToTxn, 5, &request, timeout)
            .await
            .map_err(|e| e.to_string())?;
        if response.error_code != code::NONE {
            return Ok(response.error_code);
        }
        response
            .results_by_transaction
            .iter()
            .flat_map(|t| t.topic_results.iter())
            .flat_map(|t| t.results_by_partition.iter())
            .map(|p| p.partition_error_code)
            .next()
            .ok_or_else(|| "an answer without the partition".to_string())
    }
}

impl crate::txn::coordinator::RemoteVerifier for VerifySender {
    fn verify<'a>(
        &'a self,
        coordinator: i32,
        transactional_id: &'a str,
        producer_id: i64,
        producer_epoch: i16,
        partition: &'a TopicPartition,
        check: TxnPartitionCheck,
    ) -> crate::txn::coordinator::BoxFuture<'a, Result<(), crate::error::Error>> {
        use crate::error::Error;
        Box::pin(async move {
            match self
                .ask(
                    coordinator,
                    transactional_id,
                    producer_id,
                    producer_epoch,
                    partition,
                    check,
                )
                .await
            {
                Ok(code::NONE) => Ok(()),
                Ok(code::INVALID_TXN_STATE | code::INVALID_PRODUCER_ID_MAPPING) => {
                    Err(Error::NotInTransaction)
                }
                Ok(code::PRODUCER_FENCED | code::INVALID_PRODUCER_EPOCH) => {
                    Err(Error::ProducerFencedByCoordinator)
                }
                Ok(code::CONCURRENT_TRANSACTIONS) => Err(Error::PreviousTransactionCompleting),
                Ok(other) => Err(Error::TransactionNotVerified(format!(
                    "the coordinator answered error code {other}"
                ))),
                Err(reason) => Err(Error::TransactionNotVerified(reason)),
            }
        })
    }
}
