//! DeleteAcls (v0–3): every ACL matching each filter removed through the active controller,
//! reported per filter. Without an authorizer: SECURITY_DISABLED, as on Kafka.

use super::acl_wire::{self, WireFilter};
use super::{ApiContext, wire_str};
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::{DeleteAclsRequest, DeleteAclsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteAclsRequest,
    _version: i16,
) -> Option<DeleteAclsResponse> {
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
    let results = acl_wire::answer_each(
        ctx,
        parsed,
        async |valid| ctx.broker.delete_acls(valid).await,
        |result| match result {
            Err((error_code, message)) => DeleteAclsFilterResult::default()
                .with_error_code(error_code)
                .with_error_message(Some(wire_str(&message))),
            Ok(matched) => DeleteAclsFilterResult::default().with_matching_acls(
                matched
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
        },
    )
    .await;
    Some(DeleteAclsResponse::default().with_filter_results(results))
}
