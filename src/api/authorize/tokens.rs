//! The checks of the delegation-token APIs (KIP-48), as Kafka's: creating a token for
//! another owner needs CREATE_TOKENS on that user; a described token is shown to its owner,
//! requester and renewers, and to whoever may DESCRIBE it or DESCRIBE_TOKENS its owner.
//! Renewing and expiring take no ACL (the controller checks the owner or a renewer asks), so
//! their gate is `none`.

use super::{Authz, Gate, check_answer, require};
use crate::api::ApiContext;
use crate::api::create_delegation_token::{failed, owner_of};
use crate::auth::acl::{AclOperation, ResourceType};
use crate::error::TokenError;
use kafka_protocol::messages::*;

pub fn create_delegation_token(
    ctx: &ApiContext,
    request: CreateDelegationTokenRequest,
    version: i16,
) -> Gate<CreateDelegationTokenRequest, CreateDelegationTokenResponse> {
    let requester = ctx.principal.to_string();
    // A connection that may not ask for tokens at all is answered by the handler, as Kafka
    // checks that first.
    let may_ask = crate::api::context::token_requests_allowed(ctx);
    require(
        ctx,
        request,
        |authz, request| {
            let owner = owner_of(request).unwrap_or_else(|| requester.clone());
            !may_ask
                || owner == requester
                || authz.allowed(AclOperation::CreateTokens, ResourceType::User, &owner)
        },
        |request| {
            let owner = owner_of(request).unwrap_or_else(|| ctx.principal.to_string());
            failed(
                TokenError::AuthorizationFailed.code(),
                &owner,
                &ctx.principal.to_string(),
                version,
            )
        },
    )
}

pub fn describe_delegation_token(
    ctx: &ApiContext,
    request: DescribeDelegationTokenRequest,
    _version: i16,
) -> Gate<DescribeDelegationTokenRequest, DescribeDelegationTokenResponse> {
    check_answer(
        ctx,
        request,
        |authz: &Authz, response: &mut DescribeDelegationTokenResponse| {
            let principal = authz.principal.to_string();
            response.tokens.retain(|token| {
                let owner = format!("{}:{}", token.principal_type, token.principal_name);
                // Owner, requester (not in v1-2 answers) and renewers from the metadata.
                let shown_to_principal = authz
                    .image
                    .delegation_tokens
                    .get(token.token_id.as_str())
                    .is_some_and(|t| t.owner_or_renewer(&principal));
                shown_to_principal
                    || authz.allowed(
                        AclOperation::Describe,
                        ResourceType::DelegationToken,
                        &token.token_id,
                    )
                    || authz.allowed(AclOperation::DescribeTokens, ResourceType::User, &owner)
            });
        },
    )
}
