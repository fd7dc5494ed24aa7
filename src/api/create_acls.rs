//! CreateAcls (v0–3): ACLs added to the cluster metadata through the active controller, each
//! checked first (INVALID_REQUEST with Kafka's message for a binding that cannot exist); an
//! ACL identical to an existing one is not added twice. Without an authorizer every creation
//! is SECURITY_DISABLED, as on Kafka.

use super::acl_wire::{self, WireAcl};
use super::{ApiContext, wire_str};
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::{CreateAclsRequest, CreateAclsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: CreateAclsRequest,
    _version: i16,
) -> Option<CreateAclsResponse> {
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
    let count = parsed.iter().filter(|p| p.is_ok()).count();
    let results = acl_wire::answer_each(
        ctx,
        parsed,
        async |valid| {
            ctx.broker
                .create_acls(valid)
                .await
                .map(|()| vec![(); count])
        },
        |result: Result<(), (i16, String)>| match result {
            Ok(()) => AclCreationResult::default(),
            Err((error_code, message)) => AclCreationResult::default()
                .with_error_code(error_code)
                .with_error_message(Some(wire_str(&message))),
        },
    )
    .await;
    Some(CreateAclsResponse::default().with_results(results))
}
