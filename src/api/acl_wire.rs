//! ACL bindings and filters between their wire form (CreateAcls, DescribeAcls, DeleteAcls)
//! and the core's, shared by those three APIs and by forwarding to the controller.

use super::ApiContext;
use crate::auth::acl::{
    AclBinding, AclFilter, AclOperation, PatternType, PermissionType, ResourceType,
};
use crate::error::{Error, code};
use kafka_protocol::protocol::StrBytes;

/// Kafka's message for an ACL API on a broker without an authorizer (SECURITY_DISABLED).
pub const NO_AUTHORIZER: &str = "No Authorizer is configured.";

/// What CreateAcls and DeleteAcls share: without an authorizer every entry answers
/// SECURITY_DISABLED; else the entries that parsed go to the controller in one change
/// (`apply`, one result per entry it was given), and each entry is answered with its parse
/// error (INVALID_REQUEST), the change's error, or its own result.
pub async fn answer_each<P: Clone, R: Default, T>(
    ctx: &ApiContext,
    parsed: Vec<Result<P, String>>,
    apply: impl AsyncFnOnce(Vec<P>) -> Result<Vec<R>, Error>,
    answer: impl Fn(Result<R, (i16, String)>) -> T,
) -> Vec<T> {
    if ctx.authorizer.is_none() {
        return parsed
            .iter()
            .map(|_| answer(Err((code::SECURITY_DISABLED, NO_AUTHORIZER.into()))))
            .collect();
    }
    let valid: Vec<P> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().cloned())
        .collect();
    let outcome = if valid.is_empty() {
        Ok(Vec::new())
    } else {
        apply(valid).await
    };
    let (mut results, error) = match outcome {
        Ok(results) => (results.into_iter(), None),
        Err(e) => (Vec::new().into_iter(), Some(e)),
    };
    parsed
        .into_iter()
        .map(|p| match (p, &error) {
            (Err(reason), _) => answer(Err((code::INVALID_REQUEST, reason))),
            (Ok(_), Some(e)) => answer(Err((e.code(), e.message()))),
            (Ok(_), None) => answer(Ok(results.next().unwrap_or_default())),
        })
        .collect()
}

/// The wire fields of a binding, in the order every ACL message carries them.
pub struct WireAcl<'a> {
    pub resource_type: i8,
    pub resource_name: &'a str,
    pub pattern_type: i8,
    pub principal: &'a str,
    pub host: &'a str,
    pub operation: i8,
    pub permission: i8,
}

/// A binding to create; `Err` with Kafka's message when a field is unknown or not creatable.
pub fn binding(wire: WireAcl<'_>) -> Result<AclBinding, String> {
    let pattern = wire.pattern_type;
    let binding = AclBinding {
        resource_type: ResourceType::from_id(wire.resource_type)
            .ok_or_else(|| format!("Invalid resource type {}", wire.resource_type))?,
        resource_name: wire.resource_name.to_string(),
        pattern_type: PatternType::from_id(pattern)
            .ok_or_else(|| format!("Invalid pattern type {pattern}"))?,
        principal: wire.principal.to_string(),
        host: wire.host.to_string(),
        operation: AclOperation::from_id(wire.operation)
            .ok_or_else(|| format!("Invalid operation {}", wire.operation))?,
        permission: PermissionType::from_id(wire.permission)
            .ok_or_else(|| format!("Invalid permission type {}", wire.permission))?,
    };
    match binding.invalid_reason() {
        Some(reason) => Err(reason.to_string()),
        None => Ok(binding),
    }
}

/// The wire fields of a DescribeAcls / DeleteAcls filter.
pub struct WireFilter<'a> {
    pub resource_type: i8,
    pub resource_name: Option<&'a StrBytes>,
    pub pattern_type: i8,
    pub principal: Option<&'a StrBytes>,
    pub host: Option<&'a StrBytes>,
    pub operation: i8,
    pub permission: i8,
}

pub fn filter(wire: WireFilter<'_>) -> Result<AclFilter, String> {
    let pattern = wire.pattern_type;
    Ok(AclFilter {
        resource_type: ResourceType::from_id(wire.resource_type)
            .ok_or_else(|| format!("Invalid resource type filter {}", wire.resource_type))?,
        resource_name: wire.resource_name.map(|n| n.to_string()),
        pattern_type: PatternType::from_id(pattern)
            .ok_or_else(|| format!("Invalid pattern type filter {pattern}"))?,
        principal: wire.principal.map(|p| p.to_string()),
        host: wire.host.map(|h| h.to_string()),
        operation: AclOperation::from_id(wire.operation)
            .ok_or_else(|| format!("Invalid operation filter {}", wire.operation))?,
        permission: PermissionType::from_id(wire.permission)
            .ok_or_else(|| format!("Invalid permission type filter {}", wire.permission))?,
    })
}
