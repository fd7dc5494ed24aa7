//! EndTxn: a transactional producer commits or aborts. Answered once the coordinator has
//! written the prepared state; the markers are written to every partition of the
//! transaction afterwards (the producer's next transaction waits for that with
//! CONCURRENT_TRANSACTIONS).

use super::ApiContext;
use crate::error::code;
use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse, ProducerId};

pub async fn handle(
    ctx: &ApiContext,
    request: EndTxnRequest,
    version: i16,
) -> Option<EndTxnResponse> {
    let outcome = ctx
        .broker
        .transaction_coordinator()
        .end_transaction(
            &request.transactional_id,
            request.producer_id.0,
            request.producer_epoch,
            request.committed,
        )
        .await;
    let mut response = EndTxnResponse::default()
        .with_error_code(outcome.err().map_or(code::NONE, |e| e.code(version >= 2)));
    if version >= 5 {
        // Transactions version 1: the producer keeps its id and epoch.
        response = response
            .with_producer_id(request.producer_id)
            .with_producer_epoch(request.producer_epoch);
    } else {
        response = response
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
    }
    Some(response)
}
