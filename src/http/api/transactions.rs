//! Transactions and producers: `GET /api/v1/transactions` (the transactional ids this broker
//! coordinates, as ListTransactions shows those a principal may describe),
//! `GET /api/v1/transactions/{id}` (state, producer, timeout, the partitions of the open
//! transaction, as DescribeTransactions), and `GET /api/v1/topics/{topic}/producers` (the
//! idempotent and transactional producers each partition led here knows, as DescribeProducers
//! shows them to a principal that may READ the topic — where hanging transactions show).

use super::{ApiError, ApiResult};
use crate::auth::acl::AclOperation;
use crate::broker::Broker;
use crate::error::CoordinatorError;
use crate::http::access::Access;
use crate::replica::partition::ActiveProducer;
use crate::txn::state::TxnMetadata;
use crate::types::TopicPartition;
use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct TransactionView {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub state: &'static str,
    pub timeout_ms: i32,
    /// When the open transaction started, -1 without one.
    pub start_ms: i64,
    pub last_update_ms: i64,
    /// The partitions of the open transaction, by topic (those the principal may describe).
    pub partitions: BTreeMap<String, Vec<i32>>,
}

fn view(meta: TxnMetadata, access: &Access) -> TransactionView {
    TransactionView {
        partitions: meta
            .partitions
            .into_iter()
            .filter(|(topic, _)| access.sees_topic(topic))
            .map(|(topic, partitions)| (topic, partitions.into_iter().collect()))
            .collect(),
        transactional_id: meta.transactional_id,
        producer_id: meta.producer_id,
        producer_epoch: meta.producer_epoch,
        state: meta.state.name(),
        timeout_ms: meta.timeout_ms,
        start_ms: meta.start_ms,
        last_update_ms: meta.last_update_ms,
    }
}

fn coordinator_error(error: CoordinatorError) -> ApiError {
    ApiError::of_code(error.code(true), error.to_string())
}

pub async fn list(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<TransactionView>> {
    let all = broker
        .transaction_coordinator()
        .list()
        .await
        .map_err(coordinator_error)?;
    Ok(Json(
        all.into_iter()
            .filter(|meta| access.transactional_id(AclOperation::Describe, &meta.transactional_id))
            .map(|meta| view(meta, &access))
            .collect(),
    ))
}

pub async fn describe(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(transactional_id): Path<String>,
) -> ApiResult<TransactionView> {
    access.require(
        access.transactional_id(AclOperation::Describe, &transactional_id),
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        format!(
            "{} may not DESCRIBE transactional id {transactional_id}",
            access.principal()
        ),
    )?;
    let unknown = || {
        ApiError::not_found(
            "TRANSACTIONAL_ID_NOT_FOUND",
            format!("no transactional id {transactional_id}"),
        )
    };
    // Before any transactional producer came, there is no transaction state anywhere.
    if broker
        .topic(crate::txn::coordinator::TRANSACTION_STATE_TOPIC)
        .is_none()
    {
        return Err(unknown());
    }
    let meta = broker
        .transaction_coordinator()
        .describe(&transactional_id)
        .await
        .map_err(coordinator_error)?
        .ok_or_else(unknown)?;
    Ok(Json(view(meta, &access)))
}

#[derive(Debug, Serialize)]
pub struct PartitionProducers {
    pub partition: i32,
    /// `null` when this broker does not lead the partition (its leader knows them).
    pub producers: Option<Vec<ActiveProducer>>,
}

pub async fn producers(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(topic): Path<String>,
) -> ApiResult<Vec<PartitionProducers>> {
    access.require_topic(AclOperation::Read, &topic)?;
    let partitions = broker.topic(&topic).map(|t| t.partitions).ok_or_else(|| {
        ApiError::not_found(
            "UNKNOWN_TOPIC_OR_PARTITION",
            format!("no topic named {topic}"),
        )
    })?;
    let replicas = broker.replicas();
    Ok(Json(
        (0..partitions)
            .map(|partition| PartitionProducers {
                partition,
                producers: replicas
                    .get(&TopicPartition::new(&topic, partition))
                    .and_then(|p| p.active_producers())
                    .ok(),
            })
            .collect(),
    ))
}
