//! DescribeAcls (v0–3): the ACLs matching a filter, grouped by resource pattern. Without an
//! authorizer: SECURITY_DISABLED, as on Kafka.

use super::acl_wire::{self, WireFilter};
use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{DescribeAclsRequest, DescribeAclsResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeAclsRequest,
    _version: i16,
) -> Option<DescribeAclsResponse> {
    let refused = |error_code: i16, message: &str| {
        Some(
            DescribeAclsResponse::default()
                .with_error_code(error_code)
                .with_error_message(Some(wire_str(message))),
        )
    };
    if ctx.authorizer.is_none() {
        return refused(code::SECURITY_DISABLED, super::acl_wire::NO_AUTHORIZER);
    }
    let filter = match acl_wire::filter(WireFilter {
        resource_type: request.resource_type_filter,
        resource_name: request.resource_name_filter.as_ref(),
        pattern_type: request.pattern_type_filter,
        principal: request.principal_filter.as_ref(),
        host: request.host_filter.as_ref(),
        operation: request.operation,
        permission: request.permission_type,
    }) {
        Ok(filter) => filter,
        Err(reason) => return refused(code::INVALID_REQUEST, &reason),
    };
    let image = ctx.broker.metadata().image();
    let mut by_resource: BTreeMap<(i8, &str, i8), Vec<AclDescription>> = BTreeMap::new();
    for acl in image.acls.values().filter(|acl| filter.matches(acl)) {
        by_resource
            .entry((
                acl.resource_type.id(),
                acl.resource_name.as_str(),
                acl.pattern_type.id(),
            ))
            .or_default()
            .push(
                AclDescription::default()
                    .with_principal(wire_str(&acl.principal))
                    .with_host(wire_str(&acl.host))
                    .with_operation(acl.operation.id())
                    .with_permission_type(acl.permission.id()),
            );
    }
    let resources = by_resource
        .into_iter()
        .map(|((resource_type, name, pattern_type), acls)| {
            DescribeAclsResource::default()
                .with_resource_type(resource_type)
                .with_resource_name(wire_str(name))
                .with_pattern_type(pattern_type)
                .with_acls(acls)
        })
        .collect();
    Some(DescribeAclsResponse::default().with_resources(resources))
}
