//! RenewDelegationToken (v1–2, KIP-48): the token of an hmac renewed by its owner or a
//! renewer, on the active controller; refused on connections that may not ask for tokens
//! (see CreateDelegationToken), with Kafka's expiry timestamps (-1 then, 0 for the
//! controller's refusals). ExpireDelegationToken answers through [`change_expiry`] too.

use super::ApiContext;
use super::forward::forwarded_requester;
use crate::error::{TokenError, code};
use bytes::Bytes;
use kafka_protocol::messages::{RenewDelegationTokenRequest, RenewDelegationTokenResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: RenewDelegationTokenRequest,
    _version: i16,
) -> Option<RenewDelegationTokenResponse> {
    let (error_code, expiry) = change_expiry(
        ctx,
        &request.unknown_tagged_fields,
        &request.hmac,
        request.renew_period_ms,
        Change::Renew,
    )
    .await;
    Some(
        RenewDelegationTokenResponse::default()
            .with_error_code(error_code)
            .with_expiry_timestamp_ms(expiry),
    )
}

/// What is done to a token's expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Renew,
    Expire,
}

/// Renews or expires the token of `hmac` for the request's principal (or, on the controller
/// listener, the requester the forwarding broker named): the error code and the expiry
/// timestamp to answer.
pub async fn change_expiry(
    ctx: &ApiContext,
    tagged: &BTreeMap<i32, Bytes>,
    hmac: &Bytes,
    period_ms: i64,
    change: Change,
) -> (i16, i64) {
    let Some(requester) = requester(ctx, tagged) else {
        return (code::INVALID_REQUEST, 0);
    };
    if !ctx.is_controller_listener() && !super::context::token_requests_allowed(ctx) {
        return (TokenError::RequestNotAllowed.code(), -1);
    }
    let hmac = hmac.to_vec();
    let changed = match change {
        Change::Renew => {
            ctx.broker
                .renew_delegation_token(requester, hmac, period_ms)
                .await
        }
        Change::Expire => {
            ctx.broker
                .expire_delegation_token(requester, hmac, period_ms)
                .await
        }
    };
    match changed {
        Ok(expiry) => (code::NONE, expiry),
        Err(e) => (e.code(), 0),
    }
}

/// Who asks: the connection's principal, or on the controller listener the requester the
/// forwarding broker named (`None` when it named none).
pub fn requester(ctx: &ApiContext, tagged: &BTreeMap<i32, Bytes>) -> Option<String> {
    if ctx.is_controller_listener() {
        forwarded_requester(tagged)
    } else {
        Some(ctx.principal.to_string())
    }
}
