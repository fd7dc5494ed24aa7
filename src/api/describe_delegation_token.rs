//! DescribeDelegationToken (v1–3, KIP-48): the tokens in this broker's metadata whose owner,
//! requester or a renewer is one of the owners asked for (all of them for a null list, none
//! for an empty one), with their hmacs. With an authorizer the gate keeps those the
//! principal owns, requested or renews, and those it may DESCRIBE (the token) or
//! DESCRIBE_TOKENS (its owner), as Kafka's `filterToken`; without one every token is shown,
//! as on Kafka.

use super::{ApiContext, split_principal, wire_str};
use crate::error::TokenError;
use kafka_protocol::messages::describe_delegation_token_response::{
    DescribedDelegationToken, DescribedDelegationTokenRenewer,
};
use kafka_protocol::messages::{DescribeDelegationTokenRequest, DescribeDelegationTokenResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeDelegationTokenRequest,
    version: i16,
) -> Option<DescribeDelegationTokenResponse> {
    let refused =
        |e: TokenError| Some(DescribeDelegationTokenResponse::default().with_error_code(e.code()));
    if !super::context::token_requests_allowed(ctx) {
        return refused(TokenError::RequestNotAllowed);
    }
    let settings = ctx.broker.token_settings();
    if !settings.enabled() {
        return refused(TokenError::AuthDisabled);
    }
    let owners: Option<Vec<String>> = request.owners.as_ref().map(|owners| {
        owners
            .iter()
            .map(|o| {
                format!(
                    "{}:{}",
                    o.principal_type.as_str(),
                    o.principal_name.as_str()
                )
            })
            .collect()
    });
    let tokens = ctx
        .broker
        .delegation_tokens()
        .into_iter()
        .filter(|token| {
            owners
                .as_ref()
                .is_none_or(|owners| owners.iter().any(|o| token.owner_or_renewer(o)))
        })
        .map(|token| {
            let (owner_type, owner_name) = split_principal(&token.owner);
            let mut described = DescribedDelegationToken::default()
                .with_principal_type(owner_type)
                .with_principal_name(owner_name);
            // The requester from v3.
            if version >= 3 {
                let (requester_type, requester_name) = split_principal(&token.requester);
                described = described
                    .with_token_requester_principal_type(requester_type)
                    .with_token_requester_principal_name(requester_name);
            }
            described
                .with_issue_timestamp(token.issue_timestamp_ms)
                .with_expiry_timestamp(token.expiry_timestamp_ms)
                .with_max_timestamp(token.max_timestamp_ms)
                .with_hmac(settings.hmac(&token.token_id).unwrap_or_default().into())
                .with_token_id(wire_str(&token.token_id))
                .with_renewers(
                    token
                        .renewers
                        .iter()
                        .map(|r| {
                            let (principal_type, principal_name) = split_principal(r);
                            DescribedDelegationTokenRenewer::default()
                                .with_principal_type(principal_type)
                                .with_principal_name(principal_name)
                        })
                        .collect(),
                )
        })
        .collect();
    Some(DescribeDelegationTokenResponse::default().with_tokens(tokens))
}
