//! EndTxn: a transactional producer commits or aborts. Answered once the coordinator has
//! written the prepared state; the markers are written to every partition of the
//! transaction afterwards (the producer's next transaction waits for that with
//! CONCURRENT_TRANSACTIONS). v5+ comes from a producer of transaction version 2 (KIP-890
//! part 2): the end bumps its epoch, and the answer carries the producer id and epoch of its
//! next transaction.

use super::ApiContext;
use crate::error::code;
use crate::txn::state::EPOCH_BUMP_VERSION;
use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse, ProducerId};

/// The first EndTxn version of transaction version 2 (Kafka's `EndTxnRequest.isTransactionV2Enabled`).
const EPOCH_BUMP_REQUEST_VERSION: i16 = 5;

pub async fn handle(
    ctx: &ApiContext,
    request: EndTxnRequest,
    version: i16,
) -> Option<EndTxnResponse> {
    let transaction_version = if version >= EPOCH_BUMP_REQUEST_VERSION {
        EPOCH_BUMP_VERSION
    } else {
        0
    };
    let outcome = ctx
        .broker
        .transaction_coordinator()
        .end_transaction(
            &request.transactional_id,
            request.producer_id.0,
            request.producer_epoch,
            request.committed,
            transaction_version,
        )
        .await;
    let (error_code, (producer_id, producer_epoch)) = match outcome {
        Ok(next) => (code::NONE, next),
        Err(e) => (e.code(version >= 2), (-1, -1)),
    };
    let mut response = EndTxnResponse::default().with_error_code(error_code);
    if version >= EPOCH_BUMP_REQUEST_VERSION {
        response = response
            .with_producer_id(ProducerId(producer_id))
            .with_producer_epoch(producer_epoch);
    } else {
        response = response
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
    }
    Some(response)
}
