//! DeleteAcls (v0–3): every ACL matching each filter removed through the active controller,
//! reported per filter. Without an authorizer: SECURITY_DISABLED, as on Kafka.

use super::acl_wire::{self, WireFilter};
use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::{DeleteAclsRequest, DeleteAclsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteAclsRequest,
    _version: i16,
) -> Option<DeleteAclsResponse> {
    let failed = |error_code: i16, message: String| {
        DeleteAclsFilterResult::default()
            .with_error_code(error_code)
            .with_error_message(Some(wire_str(&message)))
    };
    if ctx.authorizer.is_none() {
        let results = request
            .filters
            .iter()
            .map(|_| {
                failed(
                    code::SECURITY_DISABLED,
                    "No Authorizer is configured.".into(),
                )
            })
            .collect();
        return Some(DeleteAclsResponse::default().with_filter_results(results));
    }
    let parsed: Vec<Result<_, String>> = request
        .filters
        .iter()
        .map(|f| {
            acl_wire::filter(WireFilter {
                resource_type: f.resource_type_filter,
                resource_name: f.resource_name_filter.as_ref(),
                pattern_type: f.pattern_type_filter,
                principal: f.principal_filter.as_ref(),
                host: f.host_filter.as_ref(),
                operation: f.operation,
                permission: f.permission_type,
            })
        })
        .collect();
    let valid: Vec<_> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().cloned())
        .collect();
    let outcome = if valid.is_empty() {
        Ok(Vec::new())
    } else {
        ctx.broker.delete_acls(valid).await
    };
    let mut matched = match &outcome {
        Ok(matched) => matched.clone().into_iter(),
        Err(_) => Vec::new().into_iter(),
    };
    let results = parsed
        .into_iter()
        .map(|p| match (p, &outcome) {
            (Err(reason), _) => failed(code::INVALID_REQUEST, reason),
            (Ok(_), Err(e)) => failed(e.code(), e.message()),
            (Ok(_), Ok(_)) => DeleteAclsFilterResult::default().with_matching_acls(
                matched
                    .next()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|acl| {
                        DeleteAclsMatchingAcl::default()
                            .with_resource_type(acl.resource_type.id())
                            .with_resource_name(wire_str(&acl.resource_name))
                            .with_pattern_type(acl.pattern_type.id())
                            .with_principal(wire_str(&acl.principal))
                            .with_host(wire_str(&acl.host))
                            .with_operation(acl.operation.id())
                            .with_permission_type(acl.permission.id())
                    })
                    .collect(),
            ),
        })
        .collect();
    Some(DeleteAclsResponse::default().with_filter_results(results))
}
