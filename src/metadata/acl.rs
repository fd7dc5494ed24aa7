//! ACLs as the cluster metadata stores them (KRaft's `AccessControlEntryRecord`): Kafka's
//! resource, pattern, operation and permission types with their wire ids, and one binding of
//! a resource pattern to an access control entry.

use serde::{Deserialize, Serialize};

/// `*`: every resource name (LITERAL patterns), every host, and with `User:` every user.
pub const WILDCARD: &str = "*";

/// `DescribeConfigs` as Kafka's enum constants spell it: `DESCRIBE_CONFIGS`.
fn upper_snake(variant: &str) -> String {
    let mut name = String::with_capacity(variant.len() + 4);
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $id:expr),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $($variant),* }

        impl $name {
            pub fn id(self) -> i8 {
                match self { $(Self::$variant => $id),* }
            }

            pub fn from_id(id: i8) -> Option<Self> {
                match id { $($id => Some(Self::$variant),)* _ => None }
            }

            /// Kafka's name (`TRANSACTIONAL_ID`, `DESCRIBE_CONFIGS`).
            pub fn kafka_name(self) -> String {
                match self { $(Self::$variant => upper_snake(stringify!($variant))),* }
            }

            /// From Kafka's name, in any case.
            pub fn from_kafka_name(name: &str) -> Option<Self> {
                [$(Self::$variant),*]
                    .into_iter()
                    .find(|v| v.kafka_name().eq_ignore_ascii_case(name.trim()))
            }
        }
    };
}

wire_enum!(
    /// Kafka's `ResourceType` (ANY only in filters).
    ResourceType {
        Any = 1,
        Topic = 2,
        Group = 3,
        Cluster = 4,
        TransactionalId = 5,
        DelegationToken = 6,
        User = 7,
    }
);

wire_enum!(
    /// Kafka's `PatternType` (ANY and MATCH only in filters).
    PatternType {
        Any = 1,
        Match = 2,
        Literal = 3,
        Prefixed = 4,
    }
);

wire_enum!(
    /// Kafka's `AclOperation` (ANY only in filters).
    AclOperation {
        Any = 1,
        All = 2,
        Read = 3,
        Write = 4,
        Create = 5,
        Delete = 6,
        Alter = 7,
        Describe = 8,
        ClusterAction = 9,
        DescribeConfigs = 10,
        AlterConfigs = 11,
        IdempotentWrite = 12,
        CreateTokens = 13,
        DescribeTokens = 14,
        TwoPhaseCommit = 15,
    }
);

wire_enum!(
    /// Kafka's `AclPermissionType` (ANY only in filters).
    PermissionType {
        Any = 1,
        Deny = 2,
        Allow = 3,
    }
);

/// One ACL: who may (or may not) do what to which resources, from where.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AclBinding {
    pub resource_type: ResourceType,
    pub resource_name: String,
    pub pattern_type: PatternType,
    /// `Type:name`, e.g. `User:alice` or `User:*`.
    pub principal: String,
    /// An IP address or `*`.
    pub host: String,
    pub operation: AclOperation,
    pub permission: PermissionType,
}
