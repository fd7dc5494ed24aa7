//! The decision of Kafka's `StandardAuthorizer` over a set of ACLs: super users may do
//! anything; otherwise the ACLs whose pattern covers the resource (its literal name, the `*`
//! wildcard, prefixes of the name) are looked at — a DENY for the principal (or `User:*`),
//! host (or `*`) and operation (or ALL) wins, then an ALLOW (where READ, WRITE, DELETE and
//! ALTER imply DESCRIBE, and ALTER_CONFIGS implies DESCRIBE_CONFIGS; implication never applies
//! to DENY); a resource with ACLs but none allowing is denied; a resource without any ACL is
//! allowed only with `allow.everyone.if.no.acl.found`. `authorize_by_resource_type` is Kafka's
//! `Authorizer.authorizeByResourceType` (may the principal do this to *some* resource of the
//! type), used for idempotent producers.

use super::KafkaPrincipal;
use super::acl::{AclBinding, AclOperation, PatternType, PermissionType, ResourceType, WILDCARD};
use std::collections::BTreeSet;

/// The authorizer's settings (`super.users`, `allow.everyone.if.no.acl.found`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Authorizer {
    super_users: BTreeSet<String>,
    allow_everyone_if_no_acl_found: bool,
}

/// Who is asking, from where.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    pub principal: &'a KafkaPrincipal,
    /// The client's IP address as text (`127.0.0.1`).
    pub host: &'a str,
}

impl Requester<'_> {
    fn matches(&self, acl: &AclBinding) -> bool {
        let principal_ok = acl.principal == "User:*"
            || KafkaPrincipal::parse(&acl.principal).is_some_and(|p| p == *self.principal);
        principal_ok && (acl.host == WILDCARD || acl.host == self.host)
    }
}

/// Kafka's class name of its authorizer (KRaft's StandardAuthorizer).
pub const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

impl Authorizer {
    /// The authorizer `authorizer.class.name` asks for, if any.
    pub fn from_config(config: &crate::config::BrokerConfig) -> Option<Self> {
        let value = |name: &str| config.values.get(name).and_then(|v| v.value.clone());
        let class = value("authorizer.class.name").unwrap_or_default();
        if class.trim().is_empty() {
            return None;
        }
        Some(Self::new(
            &value("super.users").unwrap_or_default(),
            value("allow.everyone.if.no.acl.found")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
        ))
    }

    /// From `super.users` (`User:a;User:b`) and `allow.everyone.if.no.acl.found`.
    pub fn new(super_users: &str, allow_everyone_if_no_acl_found: bool) -> Self {
        Self {
            super_users: super_users
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            allow_everyone_if_no_acl_found,
        }
    }

    pub fn is_super_user(&self, principal: &KafkaPrincipal) -> bool {
        self.super_users.contains(&principal.to_string())
    }

    /// May `who` perform `operation` on the resource `name` of `resource_type`?
    pub fn authorize<'a>(
        &self,
        acls: impl IntoIterator<Item = &'a AclBinding>,
        who: Requester<'_>,
        operation: AclOperation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        if self.is_super_user(who.principal) {
            return true;
        }
        let mut has_resource_acls = false;
        let mut allowed = false;
        for acl in acls {
            if acl.resource_type != resource_type || !covers(acl, name) {
                continue;
            }
            has_resource_acls = true;
            if !who.matches(acl) {
                continue;
            }
            match acl.permission {
                PermissionType::Deny
                    if acl.operation == AclOperation::All || acl.operation == operation =>
                {
                    return false;
                }
                PermissionType::Allow if allows(acl.operation, operation) => allowed = true,
                _ => {}
            }
        }
        allowed || (!has_resource_acls && self.allow_everyone_if_no_acl_found)
    }

    /// May `who` perform `operation` on at least one resource of `resource_type` (Kafka's
    /// `authorizeByResourceType`)?
    pub fn authorize_by_resource_type<'a>(
        &self,
        acls: impl IntoIterator<Item = &'a AclBinding> + Clone,
        who: Requester<'_>,
        operation: AclOperation,
        resource_type: ResourceType,
    ) -> bool {
        // Kafka checks a made-up name first: super users, and no ACLs at all with
        // allow.everyone.if.no.acl.found.
        if self.authorize(acls.clone(), who, operation, resource_type, "hardcode") {
            return true;
        }
        let mut deny_literal = BTreeSet::new();
        let mut deny_prefixed = BTreeSet::new();
        let mut allow = Vec::new();
        let mut wildcard_allow = false;
        for acl in acls {
            if acl.resource_type != resource_type
                || !who.matches(acl)
                || (acl.operation != operation && acl.operation != AclOperation::All)
            {
                continue;
            }
            match (acl.permission, acl.pattern_type) {
                (PermissionType::Deny, PatternType::Literal) if acl.resource_name == WILDCARD => {
                    return false;
                }
                (PermissionType::Deny, PatternType::Literal) => {
                    deny_literal.insert(acl.resource_name.as_str());
                }
                (PermissionType::Deny, PatternType::Prefixed) => {
                    deny_prefixed.insert(acl.resource_name.as_str());
                }
                (PermissionType::Allow, PatternType::Literal) if acl.resource_name == WILDCARD => {
                    wildcard_allow = true;
                }
                (
                    PermissionType::Allow,
                    pattern @ (PatternType::Literal | PatternType::Prefixed),
                ) => {
                    allow.push((pattern, acl.resource_name.as_str()));
                }
                _ => {}
            }
        }
        // A wildcard DENY anywhere returned above, before this.
        wildcard_allow
            || allow.into_iter().any(|(pattern, name)| {
                let denied_literally =
                    pattern == PatternType::Literal && deny_literal.contains(name);
                let denied_by_prefix = name
                    .char_indices()
                    .map(|(i, c)| &name[..i + c.len_utf8()])
                    .any(|prefix| deny_prefixed.contains(prefix));
                !denied_literally && !denied_by_prefix
            })
    }
}

/// Whether the ACL's pattern covers the resource name.
fn covers(acl: &AclBinding, name: &str) -> bool {
    match acl.pattern_type {
        PatternType::Literal => acl.resource_name == name || acl.resource_name == WILDCARD,
        PatternType::Prefixed => name.starts_with(&acl.resource_name),
        _ => false,
    }
}

/// Whether an ALLOW of `granted` permits `wanted`.
fn allows(granted: AclOperation, wanted: AclOperation) -> bool {
    use AclOperation::*;
    granted == All
        || granted == wanted
        || (wanted == Describe && matches!(granted, Read | Write | Delete | Alter))
        || (wanted == DescribeConfigs && granted == AlterConfigs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(
        name: &str,
        pattern: PatternType,
        principal: &str,
        operation: AclOperation,
        permission: PermissionType,
    ) -> AclBinding {
        AclBinding {
            resource_type: ResourceType::Topic,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: principal.into(),
            host: "*".into(),
            operation,
            permission,
        }
    }

    const ALICE: &str = "User:alice";

    fn check(authorizer: &Authorizer, acls: &[AclBinding], op: AclOperation, topic: &str) -> bool {
        let alice = KafkaPrincipal::user("alice");
        let who = Requester {
            principal: &alice,
            host: "10.0.0.1",
        };
        authorizer.authorize(acls, who, op, ResourceType::Topic, topic)
    }

    /// Cases of Kafka's `StandardAuthorizerTest`.
    #[test]
    fn deny_wins_implications_apply_to_allow_only_and_no_acls_follow_the_default() {
        use AclOperation::*;
        use PatternType::*;
        use PermissionType::*;
        let strict = Authorizer::new("User:admin", false);
        let open = Authorizer::new("", true);
        assert!(
            !check(&strict, &[], Read, "t"),
            "no ACLs, not allowed by default"
        );
        assert!(check(&open, &[], Read, "t"));
        let read = [acl("t", Literal, ALICE, Read, Allow)];
        assert!(check(&strict, &read, Read, "t"));
        assert!(
            check(&strict, &read, Describe, "t"),
            "READ implies DESCRIBE"
        );
        assert!(!check(&strict, &read, Write, "t"));
        assert!(
            !check(&open, &read, Write, "t"),
            "the topic has ACLs: the default is out"
        );
        assert!(
            check(&open, &read, Write, "other"),
            "other topics have none"
        );
        let deny_read = [
            acl("*", Literal, "User:*", All, Allow),
            acl("t", Literal, ALICE, Read, Deny),
        ];
        assert!(!check(&strict, &deny_read, Read, "t"));
        assert!(
            check(&strict, &deny_read, Describe, "t"),
            "a DENY of READ does not deny DESCRIBE"
        );
        assert!(check(&strict, &deny_read, Read, "u"));
        let prefixed = [
            acl("orders-", Prefixed, ALICE, Write, Allow),
            acl("orders-secret", Literal, "User:*", All, Deny),
        ];
        assert!(check(&strict, &prefixed, Write, "orders-eu"));
        assert!(!check(&strict, &prefixed, Write, "orders-secret"));
        assert!(!check(&strict, &prefixed, Write, "order"));
        let configs = [acl("t", Literal, ALICE, AlterConfigs, Allow)];
        assert!(check(&strict, &configs, DescribeConfigs, "t"));
        let bob_only = [acl("t", Literal, "User:bob", Read, Allow)];
        assert!(!check(&open, &bob_only, Read, "t"));
        let admin = KafkaPrincipal::user("admin");
        let who = Requester {
            principal: &admin,
            host: "1.2.3.4",
        };
        assert!(strict.authorize(&deny_read, who, Read, ResourceType::Topic, "t"));
        let mut other_host = acl("t", Literal, ALICE, Read, Allow);
        other_host.host = "10.0.0.2".into();
        assert!(!check(&strict, &[other_host], Read, "t"));
    }

    /// Cases of Kafka's `AuthorizerTest.testAuthorizeByResourceType*`.
    #[test]
    fn by_resource_type_finds_an_allow_not_dominated_by_a_deny() {
        use AclOperation::*;
        use PatternType::*;
        use PermissionType::*;
        let strict = Authorizer::new("", false);
        let alice = KafkaPrincipal::user("alice");
        let who = Requester {
            principal: &alice,
            host: "10.0.0.1",
        };
        let by_type = |acls: &[AclBinding]| {
            strict.authorize_by_resource_type(acls, who, Write, ResourceType::Topic)
        };
        assert!(!by_type(&[]));
        assert!(by_type(&[acl("a", Literal, ALICE, Write, Allow)]));
        assert!(!by_type(&[
            acl("a", Literal, ALICE, Write, Allow),
            acl("a", Literal, ALICE, Write, Deny)
        ]));
        assert!(!by_type(&[
            acl("abc", Prefixed, ALICE, Write, Allow),
            acl("ab", Prefixed, ALICE, Write, Deny)
        ]));
        assert!(by_type(&[
            acl("abc", Prefixed, ALICE, Write, Allow),
            acl("abcd", Prefixed, ALICE, Write, Deny)
        ]));
        assert!(!by_type(&[
            acl("*", Literal, "User:*", Write, Allow),
            acl("*", Literal, ALICE, Write, Deny)
        ]));
        assert!(by_type(&[acl("*", Literal, "User:*", Write, Allow)]));
        assert!(!by_type(&[
            acl("a", Literal, ALICE, Write, Allow),
            acl("*", Literal, ALICE, All, Deny)
        ]));
        assert!(!by_type(&[acl("a", Literal, ALICE, Read, Allow)]));
    }
}
