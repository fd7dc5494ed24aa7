//! InitProducerId: a producer id and epoch. Without a transactional id, a fresh producer id
//! with epoch 0 every time, as Kafka does for idempotent producers. With one, the transaction
//! coordinator's answer: the id's producer, its epoch bumped (fencing older instances), after
//! aborting a transaction the previous instance left open (CONCURRENT_TRANSACTIONS meanwhile,
//! which the client retries).

use super::ApiContext;
use crate::error::code;
use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, ProducerId};

pub async fn handle(
    ctx: &ApiContext,
    request: InitProducerIdRequest,
    version: i16,
) -> Option<InitProducerIdResponse> {
    let response = InitProducerIdResponse::default()
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match request.transactional_id.as_ref().map(|id| id.as_str()) {
        None => {}
        // Kafka: an empty transactional id is an invalid request.
        Some("") => return Some(response.with_error_code(code::INVALID_REQUEST)),
        Some(transactional_id) => {
            // v3+ (KIP-360): a producer that already has an id and epoch says so.
            let expected = (version >= 3 && request.producer_id.0 >= 0)
                .then_some((request.producer_id.0, request.producer_epoch));
            let outcome = ctx
                .broker
                .transaction_coordinator()
                .init_producer_id(transactional_id, request.transaction_timeout_ms, expected)
                .await;
            return Some(match outcome {
                Ok((producer_id, epoch)) => response
                    .with_error_code(code::NONE)
                    .with_producer_id(ProducerId(producer_id))
                    .with_producer_epoch(epoch),
                Err(e) => response.with_error_code(e.code(version >= 4)),
            });
        }
    }
    Some(match ctx.broker.allocate_producer_id().await {
        Ok(id) => response
            .with_error_code(code::NONE)
            .with_producer_id(ProducerId(id))
            .with_producer_epoch(0),
        Err(e) => {
            tracing::error!(error = %e, "cannot allocate a producer id");
            response.with_error_code(e.code())
        }
    })
}
