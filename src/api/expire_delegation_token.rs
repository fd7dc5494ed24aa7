//! ExpireDelegationToken (v1–2, KIP-48): the token of an hmac expired by its owner or a
//! renewer after a period, or at once for a negative one, on the active controller; refused
//! on connections that may not ask for tokens (see CreateDelegationToken).

use super::ApiContext;
use super::forward::forwarded_requester;
use crate::error::{TokenError, code};
use kafka_protocol::messages::{ExpireDelegationTokenRequest, ExpireDelegationTokenResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: ExpireDelegationTokenRequest,
    _version: i16,
) -> Option<ExpireDelegationTokenResponse> {
    let answer = |error_code: i16, expiry: i64| {
        Some(
            ExpireDelegationTokenResponse::default()
                .with_error_code(error_code)
                .with_expiry_timestamp_ms(expiry),
        )
    };
    let forwarded = ctx.is_controller_listener();
    let requester = if forwarded {
        forwarded_requester(&request.unknown_tagged_fields)
    } else {
        Some(ctx.principal.to_string())
    };
    let Some(requester) = requester else {
        return answer(code::INVALID_REQUEST, 0);
    };
    if !forwarded && !super::context::token_requests_allowed(ctx) {
        return answer(TokenError::RequestNotAllowed.code(), -1);
    }
    match ctx
        .broker
        .expire_delegation_token(
            requester,
            request.hmac.to_vec(),
            request.expiry_time_period_ms,
        )
        .await
    {
        Ok(expiry) => answer(code::NONE, expiry),
        Err(e) => answer(e.code(), 0),
    }
}
