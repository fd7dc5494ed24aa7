//! CreateDelegationToken (v1–3, KIP-48): a token for the requester, or from v3 for another
//! owner (CREATE_TOKENS on that user, checked by the authorize gate), made by the active
//! controller. Refused as Kafka refuses it on PLAINTEXT, on TLS without a client certificate
//! and on connections that authenticated with a token. A broker forwarding the request to
//! the controller listener names the requester in a tagged field of its own (Kafka wraps
//! forwarded requests in an Envelope carrying the principal; Sluice has no Envelope).

use super::renew_delegation_token::requester;
use super::{ApiContext, split_principal, wire_str};
use crate::controller::control::TokenRequest;
use crate::error::{TokenError, code};
use kafka_protocol::messages::{CreateDelegationTokenRequest, CreateDelegationTokenResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: CreateDelegationTokenRequest,
    version: i16,
) -> Option<CreateDelegationTokenResponse> {
    let forwarded = ctx.is_controller_listener();
    let Some(requester) = requester(ctx, &request.unknown_tagged_fields) else {
        return Some(failed(code::INVALID_REQUEST, "", "", version));
    };
    let owner = owner_of(&request).unwrap_or_else(|| requester.clone());
    if !forwarded && !super::context::token_requests_allowed(ctx) {
        return Some(failed(
            TokenError::RequestNotAllowed.code(),
            &owner,
            &requester,
            version,
        ));
    }
    let token_request = TokenRequest {
        owner: owner.clone(),
        requester: requester.clone(),
        renewers: request
            .renewers
            .iter()
            .map(|r| {
                format!(
                    "{}:{}",
                    r.principal_type.as_str(),
                    r.principal_name.as_str()
                )
            })
            .collect(),
        max_lifetime_ms: request.max_lifetime_ms,
    };
    match ctx.broker.create_delegation_token(token_request).await {
        Ok(created) => {
            let token = created.token;
            Some(
                with_principals(
                    CreateDelegationTokenResponse::default(),
                    &token.owner,
                    &token.requester,
                    version,
                )
                .with_issue_timestamp_ms(token.issue_timestamp_ms)
                .with_expiry_timestamp_ms(token.expiry_timestamp_ms)
                .with_max_timestamp_ms(token.max_timestamp_ms)
                .with_token_id(wire_str(&token.token_id))
                .with_hmac(created.hmac.into()),
            )
        }
        Err(e) => Some(failed(e.code(), &owner, &requester, version)),
    }
}

/// The owner a v3 request names (`None`: the requester), as `Type:name`.
pub fn owner_of(request: &CreateDelegationTokenRequest) -> Option<String> {
    let name = request
        .owner_principal_name
        .as_deref()
        .filter(|n| !n.is_empty())?;
    let principal_type = request
        .owner_principal_type
        .as_deref()
        .filter(|t| !t.is_empty())
        .unwrap_or(crate::auth::KafkaPrincipal::USER_TYPE);
    Some(format!("{principal_type}:{name}"))
}

/// Kafka's answer to a refused creation: the owner and requester, timestamps of -1, no
/// token.
pub fn failed(
    error_code: i16,
    owner: &str,
    requester: &str,
    version: i16,
) -> CreateDelegationTokenResponse {
    with_principals(
        CreateDelegationTokenResponse::default(),
        owner,
        requester,
        version,
    )
    .with_error_code(error_code)
    .with_issue_timestamp_ms(-1)
    .with_expiry_timestamp_ms(-1)
    .with_max_timestamp_ms(-1)
}

/// The owner, and from v3 the requester.
fn with_principals(
    response: CreateDelegationTokenResponse,
    owner: &str,
    requester: &str,
    version: i16,
) -> CreateDelegationTokenResponse {
    let (owner_type, owner_name) = split_principal(owner);
    let response = response
        .with_principal_type(owner_type)
        .with_principal_name(owner_name);
    if version < 3 {
        return response;
    }
    let (requester_type, requester_name) = split_principal(requester);
    response
        .with_token_requester_principal_type(requester_type)
        .with_token_requester_principal_name(requester_name)
}
