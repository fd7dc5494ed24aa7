//! ACL bindings and filters between their wire form (CreateAcls, DescribeAcls, DeleteAcls)
//! and the core's, shared by those three APIs and by forwarding to the controller.

use crate::auth::acl::{
    AclBinding, AclFilter, AclOperation, PatternType, PermissionType, ResourceType,
};
use kafka_protocol::protocol::StrBytes;

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
