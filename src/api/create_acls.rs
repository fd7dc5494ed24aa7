//! CreateAcls (v0–3): ACLs added to the cluster metadata through the active controller, each
//! checked first (INVALID_REQUEST with Kafka's message for a binding that cannot exist); an
//! ACL identical to an existing one is not added twice. Without an authorizer every creation
//! is SECURITY_DISABLED, as on Kafka.

use super::acl_wire::{self, WireAcl};
use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::{CreateAclsRequest, CreateAclsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: CreateAclsRequest,
    _version: i16,
) -> Option<CreateAclsResponse> {
    let failed = |error_code: i16, message: String| {
        AclCreationResult::default()
            .with_error_code(error_code)
            .with_error_message(Some(wire_str(&message)))
    };
    if ctx.authorizer.is_none() {
        let results = request
            .creations
            .iter()
            .map(|_| {
                failed(
                    code::SECURITY_DISABLED,
                    "No Authorizer is configured.".into(),
                )
            })
            .collect();
        return Some(CreateAclsResponse::default().with_results(results));
    }
    let parsed: Vec<Result<_, String>> = request
        .creations
        .iter()
        .map(|c| {
            acl_wire::binding(WireAcl {
                resource_type: c.resource_type,
                resource_name: &c.resource_name,
                pattern_type: c.resource_pattern_type,
                principal: &c.principal,
                host: &c.host,
                operation: c.operation,
                permission: c.permission_type,
            })
        })
        .collect();
    let valid: Vec<_> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().cloned())
        .collect();
    let outcome = if valid.is_empty() {
        Ok(())
    } else {
        ctx.broker.create_acls(valid).await
    };
    let results = parsed
        .into_iter()
        .map(|p| match (p, &outcome) {
            (Err(reason), _) => failed(code::INVALID_REQUEST, reason),
            (Ok(_), Err(e)) => failed(e.code(), e.message()),
            (Ok(_), Ok(())) => AclCreationResult::default(),
        })
        .collect();
    Some(CreateAclsResponse::default().with_results(results))
}
