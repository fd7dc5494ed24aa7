//! ACL bindings as clients send them: which bindings CreateAcls may create, and the filters
//! DescribeAcls and DeleteAcls match bindings with (ANY matches every value, MATCH a pattern
//! type matches the literal, wildcard and prefixed patterns that apply to a name).

pub use crate::metadata::acl::{
    AclBinding, AclOperation, PatternType, PermissionType, ResourceType, WILDCARD,
};

impl AclBinding {
    /// Why this binding cannot be created, in Kafka's words (CreateAcls answers
    /// INVALID_REQUEST with it), if it cannot.
    pub fn invalid_reason(&self) -> Option<&'static str> {
        if matches!(self.resource_type, ResourceType::Any) {
            return Some("Invalid resource type: ANY");
        }
        if !matches!(
            self.pattern_type,
            PatternType::Literal | PatternType::Prefixed
        ) {
            return Some("Invalid pattern type: only LITERAL and PREFIXED patterns can be created");
        }
        if matches!(self.operation, AclOperation::Any) {
            return Some("Invalid operation: ANY");
        }
        if matches!(self.permission, PermissionType::Any) {
            return Some("Invalid permission type: ANY");
        }
        if self.resource_name.is_empty() {
            return Some("Resource name should not be empty");
        }
        if self.resource_type == ResourceType::Cluster && self.resource_name != "kafka-cluster" {
            return Some("The only valid name for the CLUSTER resource is kafka-cluster");
        }
        if self.host.is_empty() {
            return Some("Host should not be empty");
        }
        match crate::auth::KafkaPrincipal::parse(&self.principal) {
            None => Some("Could not parse principal"),
            Some(_) => None,
        }
    }
}

/// A DescribeAcls / DeleteAcls filter: `None` fields match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFilter {
    pub resource_type: ResourceType,
    pub resource_name: Option<String>,
    pub pattern_type: PatternType,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: AclOperation,
    pub permission: PermissionType,
}

impl AclFilter {
    pub fn matches(&self, acl: &AclBinding) -> bool {
        let type_ok =
            self.resource_type == ResourceType::Any || self.resource_type == acl.resource_type;
        let pattern_ok = match (self.pattern_type, &self.resource_name) {
            (PatternType::Any, None) => true,
            (PatternType::Any, Some(name)) => *name == acl.resource_name,
            (PatternType::Match, None) => true,
            // MATCH: the exact name, the wildcard, and prefixes of the name.
            (PatternType::Match, Some(name)) => match acl.pattern_type {
                PatternType::Literal => acl.resource_name == *name || acl.resource_name == WILDCARD,
                PatternType::Prefixed => name.starts_with(&acl.resource_name),
                _ => false,
            },
            (wanted, name) => {
                wanted == acl.pattern_type && name.as_ref().is_none_or(|n| *n == acl.resource_name)
            }
        };
        let principal_ok = self.principal.as_ref().is_none_or(|p| *p == acl.principal);
        let host_ok = self.host.as_ref().is_none_or(|h| *h == acl.host);
        let operation_ok = self.operation == AclOperation::Any || self.operation == acl.operation;
        let permission_ok =
            self.permission == PermissionType::Any || self.permission == acl.permission;
        type_ok && pattern_ok && principal_ok && host_ok && operation_ok && permission_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(name: &str, pattern: PatternType) -> AclBinding {
        AclBinding {
            resource_type: ResourceType::Topic,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission: PermissionType::Allow,
        }
    }

    #[test]
    fn ids_are_kafkas() {
        assert_eq!(ResourceType::TransactionalId.id(), 5);
        assert_eq!(PatternType::from_id(4), Some(PatternType::Prefixed));
        assert_eq!(
            AclOperation::from_id(12),
            Some(AclOperation::IdempotentWrite)
        );
        assert_eq!(PermissionType::Allow.id(), 3);
        assert_eq!(ResourceType::from_id(0), None, "UNKNOWN is not a value");
    }

    #[test]
    fn filters_match_as_kafkas_acl_binding_filter() {
        let filter = |pattern, name: Option<&str>| AclFilter {
            resource_type: ResourceType::Any,
            resource_name: name.map(str::to_string),
            pattern_type: pattern,
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission: PermissionType::Any,
        };
        let literal = acl("orders", PatternType::Literal);
        let wildcard = acl("*", PatternType::Literal);
        let prefixed = acl("ord", PatternType::Prefixed);
        let other = acl("payments", PatternType::Literal);
        let matching = filter(PatternType::Match, Some("orders"));
        assert!(matching.matches(&literal));
        assert!(matching.matches(&wildcard));
        assert!(matching.matches(&prefixed));
        assert!(!matching.matches(&other));
        assert!(filter(PatternType::Any, None).matches(&other));
        assert!(filter(PatternType::Any, Some("ord")).matches(&prefixed));
        assert!(!filter(PatternType::Literal, Some("ord")).matches(&prefixed));
        assert!(filter(PatternType::Prefixed, None).matches(&prefixed));
        assert!(!filter(PatternType::Prefixed, None).matches(&literal));
    }

    #[test]
    fn bindings_that_cannot_exist_are_refused() {
        assert_eq!(acl("orders", PatternType::Literal).invalid_reason(), None);
        assert!(acl("orders", PatternType::Match).invalid_reason().is_some());
        let mut cluster = acl("orders", PatternType::Literal);
        cluster.resource_type = ResourceType::Cluster;
        assert!(cluster.invalid_reason().is_some());
        cluster.resource_name = "kafka-cluster".into();
        assert_eq!(cluster.invalid_reason(), None);
        let mut nobody = acl("orders", PatternType::Literal);
        nobody.principal = "alice".into();
        assert!(nobody.invalid_reason().is_some());
    }
}
