//! ExpireDelegationToken (v1–2, KIP-48): the token of an hmac expired by its owner or a
//! renewer after a period, or at once for a negative one, on the active controller; refused
//! on connections that may not ask for tokens (see CreateDelegationToken).

use super::ApiContext;
use super::renew_delegation_token::{Change, change_expiry};
use kafka_protocol::messages::{ExpireDelegationTokenRequest, ExpireDelegationTokenResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ExpireDelegationTokenRequest,
    _version: i16,
) -> Option<ExpireDelegationTokenResponse> {
    let (error_code, expiry) = change_expiry(
        ctx,
        &request.unknown_tagged_fields,
        &request.hmac,
        request.expiry_time_period_ms,
        Change::Expire,
    )
    .await;
    Some(
        ExpireDelegationTokenResponse::default()
            .with_error_code(error_code)
            .with_expiry_timestamp_ms(expiry),
    )
}
