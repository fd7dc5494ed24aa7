//! InitProducerId for idempotent producers: a fresh producer id with epoch 0 every time, as
//! Kafka does when there is no transactional id. Transactional ids need the transaction
//! coordinator (issue 7), which does not exist yet: COORDINATOR_NOT_AVAILABLE, the same answer
//! FindCoordinator gives for transaction keys.

use super::ApiContext;
use crate::error::code;
use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, ProducerId};

pub async fn handle(
    ctx: &ApiContext,
    request: InitProducerIdRequest,
    _version: i16,
) -> Option<InitProducerIdResponse> {
    let response = InitProducerIdResponse::default()
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match request.transactional_id.as_ref().map(|id| id.as_str()) {
        None => {}
        // Kafka: an empty transactional id is an invalid request.
        Some("") => return Some(response.with_error_code(code::INVALID_REQUEST)),
        Some(_) => return Some(response.with_error_code(code::COORDINATOR_NOT_AVAILABLE)),
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
