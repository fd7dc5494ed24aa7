//! Configuration with Kafka's names, types and defaults: the `.properties` reader and the
//! environment of the Kafka images, the definitions of every property this broker knows
//! (type, default, validation, documentation), and the typed views built from them:
//! [`BrokerConfig`] for the process and [`LogConfig`] for one topic (broker defaults overlaid
//! with the topic's overrides). An unknown or malformed property is an error that names it;
//! nothing is silently ignored.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the error type; the module's public names |
//! | `properties.rs` | the `.properties` format, the `KAFKA_*` environment |
//! | `defs.rs` | every broker, topic and group property's definition (one table each: kept whole), value checks |
//! | `security.rs` | the security properties, listener overrides, security protocols |
//! | `cluster.rs` | listeners, the quorum's voters, `process.roles`, replication settings |
//! | `broker.rs` | [`BrokerConfig`]: every broker property read and resolved |
//! | `topic.rs` | [`LogConfig`], topic overrides, DescribeConfigs of topics and the broker |
//! | `group.rs` | group configs: validation and description |
//! | `dynamic.rs` | dynamic broker configs: which may change at runtime, checks, layers, synonyms |
//! | `jaas.rs` | the JAAS syntax of SASL properties, and static JAAS files |

use thiserror::Error;

#[macro_use]
mod defs;
mod broker;
mod cluster;
mod dynamic;
mod group;
pub mod jaas;
mod properties;
mod security;
#[cfg(test)]
mod tests;
mod topic;

pub use broker::*;
pub use cluster::*;
pub use defs::*;
pub use dynamic::*;
pub use group::*;
pub use properties::*;
pub use topic::*;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("unknown property '{0}'")]
    Unknown(String),
    /// Kafka's ConfigException text, which clients and tools show.
    #[error("Invalid value {value} for configuration {name}: {reason}")]
    Invalid {
        name: String,
        value: String,
        reason: String,
    },
    #[error("cannot read config file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("malformed line {line} in config: '{text}'")]
    Syntax { line: usize, text: String },
    /// A change Kafka refuses with a message of its own (a dynamic broker config that cannot
    /// change, a group config outside the broker's bounds): the whole message.
    #[error("{0}")]
    Refused(String),
}

fn invalid(name: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

pub use security::{
    DEFAULT_PRINCIPAL_BUILDER, ListenerOverrides, SECURITY_CONFIGS, SecurityProtocol,
    jaas_file_from_kafka_opts,
};
