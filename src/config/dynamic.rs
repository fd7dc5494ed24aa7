//! Dynamic broker configs (Kafka's `DynamicBrokerConfig`, KIP-226): which broker properties
//! may change at runtime — per broker (resource name `<id>`) or as the cluster-wide default
//! (resource name `""`) —, how a change is checked (with Kafka's errors and messages), the
//! effective configuration with the dynamic layers applied, and the synonym chains
//! DescribeConfigs reports (dynamic broker, dynamic default, static, default).
//!
//! The list of dynamic properties is Kafka 4.4's (`DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS`,
//! printed from its jar). Of those, Sluice applies some live, accepts some without effect (as
//! it accepts them statically: thread-pool sizes of a JVM broker), and refuses the rest with
//! a message saying so rather than storing a change it would not make.

use super::{
    ACCEPTED_WITHOUT_EFFECT, BrokerConfig, ConfigError, ConfigSource, ConfigValue,
    broker_config_def, security, validate_value,
};
use std::collections::BTreeMap;

/// Where a dynamic config may be set: Kafka's "per-broker" configs only under a broker id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    PerBroker,
    ClusterWide,
}

/// What a dynamic change of the config does here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Applied without a restart, to what reads it as it reads the static property.
    Live,
    /// Accepted and stored, with no effect: thread-pool sizes of a JVM broker (accepted
    /// statically too, see [`ACCEPTED_WITHOUT_EFFECT`]) and Kerberos settings (GSSAPI is not
    /// offered).
    None,
    /// Kafka changes it at runtime and Sluice cannot yet: the change is refused.
    Refused,
}

use Effect::{Live, None as NoEffect, Refused};
use Scope::{ClusterWide, PerBroker};

/// Kafka 4.4's dynamic broker configs, with their scope and what a change does here.
#[rustfmt::skip]
static DYNAMIC_CONFIGS: &[(&str, Scope, Effect)] = &[
    ("background.threads", ClusterWide, NoEffect),
    ("compression.gzip.level", ClusterWide, Live),
    ("compression.lz4.level", ClusterWide, Live),
    ("compression.type", ClusterWide, Live),
    ("compression.zstd.level", ClusterWide, Live),
    ("config.providers", ClusterWide, Refused),
    ("cordoned.log.dirs", PerBroker, Refused),
    ("errors.deadletterqueue.auto.create.topics.enable", ClusterWide, Refused),
    ("errors.deadletterqueue.topic.name.prefix", ClusterWide, Refused),
    ("follower.fetch.last.tiered.offset.enable", ClusterWide, Refused),
    ("follower.replication.throttled.rate", ClusterWide, Live),
    ("group.consumer.assignment.interval.ms", ClusterWide, Live),
    ("group.consumer.assignor.offload.enable", ClusterWide, Refused),
    ("group.coordinator.cached.buffer.max.bytes", ClusterWide, Refused),
    ("group.share.assignment.interval.ms", ClusterWide, NoEffect),
    ("group.share.assignor.offload.enable", ClusterWide, Refused),
    ("group.streams.assignment.interval.ms", ClusterWide, NoEffect),
    ("group.streams.assignor.offload.enable", ClusterWide, Refused),
    ("leader.replication.throttled.rate", ClusterWide, Live),
    ("listener.security.protocol.map", PerBroker, Refused),
    ("listeners", PerBroker, Refused),
    ("log.cleaner.backoff.ms", ClusterWide, Refused),
    ("log.cleaner.dedupe.buffer.size", ClusterWide, Refused),
    ("log.cleaner.delete.retention.ms", ClusterWide, Live),
    ("log.cleaner.io.buffer.load.factor", ClusterWide, Refused),
    ("log.cleaner.io.buffer.size", ClusterWide, Refused),
    ("log.cleaner.io.max.bytes.per.second", ClusterWide, Refused),
    ("log.cleaner.max.compaction.lag.ms", ClusterWide, Live),
    ("log.cleaner.min.cleanable.ratio", ClusterWide, Live),
    ("log.cleaner.min.compaction.lag.ms", ClusterWide, Live),
    ("log.cleaner.threads", ClusterWide, NoEffect),
    ("log.cleanup.policy", ClusterWide, Live),
    ("log.flush.interval.messages", ClusterWide, Live),
    ("log.flush.interval.ms", ClusterWide, Live),
    ("log.index.interval.bytes", ClusterWide, Live),
    ("log.index.size.max.bytes", ClusterWide, Live),
    ("log.local.retention.bytes", ClusterWide, Refused),
    ("log.local.retention.ms", ClusterWide, Refused),
    ("log.message.timestamp.after.max.ms", ClusterWide, Live),
    ("log.message.timestamp.before.max.ms", ClusterWide, Live),
    ("log.message.timestamp.type", ClusterWide, Live),
    ("log.preallocate", ClusterWide, Live),
    ("log.remote.copy.lag.bytes", ClusterWide, Refused),
    ("log.remote.copy.lag.ms", ClusterWide, Refused),
    ("log.retention.bytes", ClusterWide, Live),
    ("log.retention.ms", ClusterWide, Live),
    ("log.roll.jitter.ms", ClusterWide, Live),
    ("log.roll.ms", ClusterWide, Live),
    ("log.segment.bytes", ClusterWide, Live),
    ("log.segment.delete.delay.ms", ClusterWide, Live),
    ("max.connection.creation.rate", ClusterWide, Live),
    ("max.connections", ClusterWide, Live),
    ("max.connections.per.ip", ClusterWide, Live),
    ("max.connections.per.ip.overrides", ClusterWide, Live),
    ("max.decompressed.message.bytes", ClusterWide, Refused),
    ("message.max.bytes", ClusterWide, Live),
    ("metric.reporters", ClusterWide, Refused),
    ("min.insync.replicas", ClusterWide, Live),
    ("num.io.threads", ClusterWide, NoEffect),
    ("num.network.threads", ClusterWide, NoEffect),
    ("num.recovery.threads.per.data.dir", ClusterWide, NoEffect),
    ("num.replica.fetchers", ClusterWide, NoEffect),
    ("principal.builder.class", PerBroker, Refused),
    ("producer.id.expiration.ms", ClusterWide, Live),
    ("remote.fetch.max.wait.ms", ClusterWide, Refused),
    ("remote.list.offsets.request.timeout.ms", ClusterWide, Refused),
    ("remote.log.index.file.cache.total.size.bytes", ClusterWide, Refused),
    ("remote.log.manager.copier.thread.pool.size", ClusterWide, Refused),
    ("remote.log.manager.copy.max.bytes.per.second", ClusterWide, Refused),
    ("remote.log.manager.expiration.thread.pool.size", ClusterWide, Refused),
    ("remote.log.manager.fetch.max.bytes.per.second", ClusterWide, Refused),
    ("remote.log.manager.follower.thread.pool.size", ClusterWide, Refused),
    ("remote.log.reader.threads", ClusterWide, Refused),
    ("replica.alter.log.dirs.io.max.bytes.per.second", ClusterWide, Live),
    ("sasl.enabled.mechanisms", PerBroker, Refused),
    ("sasl.jaas.config", PerBroker, Refused),
    ("sasl.kerberos.kinit.cmd", PerBroker, NoEffect),
    ("sasl.kerberos.min.time.before.relogin", PerBroker, NoEffect),
    ("sasl.kerberos.principal.to.local.rules", PerBroker, NoEffect),
    ("sasl.kerberos.service.name", PerBroker, NoEffect),
    ("sasl.kerberos.ticket.renew.jitter", PerBroker, NoEffect),
    ("sasl.kerberos.ticket.renew.window.factor", PerBroker, NoEffect),
    ("sasl.login.refresh.buffer.seconds", PerBroker, Refused),
    ("sasl.login.refresh.min.period.seconds", PerBroker, Refused),
    ("sasl.login.refresh.window.factor", PerBroker, Refused),
    ("sasl.login.refresh.window.jitter", PerBroker, Refused),
    ("sasl.mechanism.inter.broker.protocol", PerBroker, Refused),
    ("share.coordinator.cached.buffer.max.bytes", ClusterWide, Refused),
    ("ssl.cipher.suites", PerBroker, Live),
    ("ssl.client.auth", PerBroker, Live),
    ("ssl.enabled.protocols", PerBroker, Live),
    ("ssl.endpoint.identification.algorithm", PerBroker, Refused),
    ("ssl.engine.factory.class", PerBroker, Refused),
    ("ssl.key.password", PerBroker, Live),
    ("ssl.keymanager.algorithm", PerBroker, NoEffect),
    ("ssl.keystore.certificate.chain", PerBroker, Live),
    ("ssl.keystore.key", PerBroker, Live),
    ("ssl.keystore.location", PerBroker, Live),
    ("ssl.keystore.password", PerBroker, Live),
    ("ssl.keystore.type", PerBroker, Live),
    ("ssl.protocol", PerBroker, Refused),
    ("ssl.provider", PerBroker, Refused),
    ("ssl.secure.random.implementation", PerBroker, NoEffect),
    ("ssl.trustmanager.algorithm", PerBroker, NoEffect),
    ("ssl.truststore.certificates", PerBroker, Live),
    ("ssl.truststore.location", PerBroker, Live),
    ("ssl.truststore.password", PerBroker, Live),
    ("ssl.truststore.type", PerBroker, Live),
    ("transaction.partition.verification.enable", ClusterWide, Live),
    ("unclean.leader.election.enable", ClusterWide, Live),
];

/// Kafka's `ClusterLevelListenerConfigs`: listener-prefixed, yet settable cluster-wide.
const CLUSTER_LEVEL_LISTENER_CONFIGS: &[&str] = &[
    "max.connections",
    "max.connection.creation.rate",
    "num.network.threads",
];

/// Kafka's `ListenerMechanismConfigs`: set as `listener.name.<l>.<mechanism>.<config>`.
const LISTENER_MECHANISM_CONFIGS: &[&str] = &[
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
];

fn dynamic_entry(name: &str) -> Option<(Scope, Effect)> {
    DYNAMIC_CONFIGS
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, scope, effect)| (*scope, *effect))
}

/// Kafka's `DynamicSecurityConfigs` (the SSL reconfigurables): settable per listener only.
fn is_security_config(name: &str) -> bool {
    name.starts_with("ssl.") && dynamic_entry(name).is_some_and(|(scope, _)| scope == PerBroker)
}

/// `listener.name.<listener>.<config>`'s `<config>`.
fn listener_base(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("listener.name.")?;
    rest.split_once('.').map(|(_, base)| base)
}

/// Whether DescribeConfigs marks the config changeable (Kafka: in `ALL_DYNAMIC_CONFIGS`).
pub fn is_dynamic(name: &str) -> bool {
    dynamic_entry(name).is_some()
}

/// A property Kafka knows as a broker config (a static one cannot change at runtime); a name
/// it does not know is stored as given, as Kafka stores it.
fn is_known(name: &str) -> bool {
    broker_config_def(name).is_some() || ACCEPTED_WITHOUT_EFFECT.contains(&name)
}

/// The dynamic configs a broker holds: its own (`--entity-name <id>`) and the cluster-wide
/// defaults (`--entity-default`), as the metadata image keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicLayers {
    pub per_broker: BTreeMap<String, String>,
    pub cluster_default: BTreeMap<String, String>,
}

/// Checks the complete set of dynamic configs a broker resource would hold after a change
/// (`per_broker`: the resource names a broker, else it is the cluster default), in Kafka's
/// order and with its messages; Kafka answers each failure with INVALID_REQUEST.
pub fn validate_dynamic_configs(
    configs: &BTreeMap<String, String>,
    per_broker: bool,
) -> Result<(), ConfigError> {
    let not_dynamic: Vec<&str> = configs
        .keys()
        .map(String::as_str)
        .filter(|n| is_known(n) && !is_dynamic(n))
        .collect();
    refuse("Cannot update these configs dynamically", &not_dynamic)?;
    let unprefixed: Vec<&str> = configs
        .keys()
        .map(String::as_str)
        .filter(|n| is_security_config(n))
        .collect();
    refuse(
        "These security configs can be dynamically updated only per-listener using the listener prefix",
        &unprefixed,
    )?;
    for (name, value) in configs {
        let base = listener_base(name).unwrap_or(name);
        let def = broker_config_def(base).or_else(|| security::per_listener_def(name));
        if let Some(def) = def {
            validate_value(def, value).map_err(|e| match e {
                ConfigError::Invalid { reason, .. } => ConfigError::Invalid {
                    name: name.clone(),
                    value: value.clone(),
                    reason,
                },
                other => other,
            })?;
        }
    }
    if !per_broker {
        let broker_only: Vec<&str> = configs
            .keys()
            .map(String::as_str)
            .filter(|n| match listener_base(n) {
                Some(base) => !CLUSTER_LEVEL_LISTENER_CONFIGS.contains(&base),
                None => dynamic_entry(n).is_some_and(|(scope, _)| scope == PerBroker),
            })
            .collect();
        refuse(
            "Cannot update these configs at default cluster level, broker id must be specified",
            &broker_only,
        )?;
    }
    let refused: Vec<&str> = configs
        .keys()
        .map(String::as_str)
        .filter(|n| match listener_base(n) {
            // A listener's own value of a config Kafka does not change at runtime.
            Some(base) => dynamic_entry(base).is_none_or(|(_, effect)| effect == Refused),
            None => dynamic_entry(n).is_some_and(|(_, effect)| effect == Refused),
        })
        .collect();
    refuse(
        "Sluice cannot apply these configs at runtime yet; set them in the broker's config file",
        &refused,
    )
}

fn refuse(reason: &str, names: &[&str]) -> Result<(), ConfigError> {
    if names.is_empty() {
        return Ok(());
    }
    Err(ConfigError::Refused(format!(
        "{reason}: [{}]",
        names.join(", ")
    )))
}

/// Kafka's `brokerConfigSynonyms`: the properties that set the same thing, most specific
/// first (a listener's own value before the broker-wide one).
pub fn broker_synonyms(name: &str) -> Vec<String> {
    const ROLL: &[&str] = &["log.roll.ms", "log.roll.hours"];
    const JITTER: &[&str] = &["log.roll.jitter.ms", "log.roll.jitter.hours"];
    const RETENTION: &[&str] = &[
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
    ];
    let group = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
    match name {
        "log.roll.ms" | "log.roll.hours" => group(ROLL),
        "log.roll.jitter.ms" | "log.roll.jitter.hours" => group(JITTER),
        "log.flush.interval.ms" => {
            group(&["log.flush.interval.ms", "log.flush.scheduler.interval.ms"])
        }
        n if RETENTION.contains(&n) => group(RETENTION),
        n => match listener_base(n) {
            Some(base) => {
                let base = LISTENER_MECHANISM_CONFIGS
                    .iter()
                    .find(|m| base.ends_with(*m))
                    .copied()
                    .unwrap_or(base);
                vec![n.to_string(), base.to_string()]
            }
            None => vec![n.to_string()],
        },
    }
}

impl BrokerConfig {
    /// This configuration with dynamic configs applied: the static properties overlaid with
    /// the cluster defaults and then this broker's own, of the configs Sluice applies live or
    /// accepts (a stored name it does not apply is only described). Sources say which layer
    /// each value came from.
    pub fn with_dynamic(&self, layers: DynamicLayers) -> Result<BrokerConfig, ConfigError> {
        // What the static configuration reads; the rest (a name no definition knows, a
        // setting without effect here) is only stored and described.
        let applied = |name: &str| {
            let base = listener_base(name).unwrap_or(name);
            (is_known(name) || security::per_listener_def(name).is_some())
                && dynamic_entry(base).is_some_and(|(_, effect)| effect != Refused)
        };
        let mut merged = self.static_props.clone();
        for layer in [&layers.cluster_default, &layers.per_broker] {
            for (name, value) in layer {
                if applied(name) {
                    merged.insert(name.clone(), value.clone());
                }
            }
        }
        let mut config = BrokerConfig::from_properties(&merged)?;
        config.static_props = self.static_props.clone();
        for (name, value) in config.values.iter_mut() {
            if let Some(source) = layers.dynamic_source(name) {
                value.source = source;
            }
        }
        for (topic_config, value) in config.topic_defaults.iter_mut() {
            let Some(def) = super::topic_config_def(topic_config) else {
                continue;
            };
            let Some(synonym) = def.broker_synonym else {
                continue;
            };
            if let Some(source) = broker_synonyms(synonym)
                .iter()
                .find_map(|n| layers.dynamic_source(n))
            {
                value.source = source;
            }
        }
        config.dynamic = layers;
        Ok(config)
    }

    /// Kafka's `configSynonyms`: every value of `name` and its synonyms, layer by layer
    /// (dynamic broker, dynamic default, static, default), from the first entry of `name`
    /// itself on.
    pub fn synonym_chain(&self, name: &str) -> Vec<(String, Option<String>, ConfigSource)> {
        let synonyms = broker_synonyms(name);
        let mut chain = Vec::new();
        for n in &synonyms {
            if let Some(v) = self.dynamic.per_broker.get(n) {
                chain.push((n.clone(), Some(v.clone()), ConfigSource::DynamicBroker));
            }
        }
        for n in &synonyms {
            if let Some(v) = self.dynamic.cluster_default.get(n) {
                chain.push((n.clone(), Some(v.clone()), ConfigSource::DynamicDefault));
            }
        }
        for n in &synonyms {
            if let Some(v) = self.static_props.get(n) {
                chain.push((
                    n.clone(),
                    Some(v.trim().to_string()),
                    ConfigSource::StaticBroker,
                ));
            }
        }
        for n in &synonyms {
            if let Some(default) = broker_config_def(n).and_then(|d| d.default) {
                chain.push((n.clone(), Some(default.to_string()), ConfigSource::Default));
            }
        }
        let first = chain
            .iter()
            .position(|(n, ..)| n == name)
            .unwrap_or(chain.len());
        chain.split_off(first)
    }
}

impl DynamicLayers {
    /// The dynamic layer `name` is set in, if any.
    fn dynamic_source(&self, name: &str) -> Option<ConfigSource> {
        if self.per_broker.contains_key(name) {
            Some(ConfigSource::DynamicBroker)
        } else if self.cluster_default.contains_key(name) {
            Some(ConfigSource::DynamicDefault)
        } else {
            None
        }
    }

    /// The value a dynamic layer gives `name`.
    pub fn value(&self, name: &str) -> Option<ConfigValue> {
        self.dynamic_source(name).map(|source| ConfigValue {
            value: self
                .per_broker
                .get(name)
                .or_else(|| self.cluster_default.get(name))
                .cloned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn message(configs: &[(&str, &str)], per_broker: bool) -> String {
        validate_dynamic_configs(&map(configs), per_broker)
            .unwrap_err()
            .to_string()
    }

    /// Kafka 4.4's answers to the same changes (compat/java's DynamicConfigs case).
    #[test]
    fn changes_are_checked_as_kafka_checks_them() {
        assert!(validate_dynamic_configs(&map(&[("log.retention.ms", "5000")]), false).is_ok());
        assert!(validate_dynamic_configs(&map(&[("foo.bar", "1")]), false).is_ok());
        assert!(validate_dynamic_configs(&map(&[("num.io.threads", "16")]), false).is_ok());
        // librdkafka's 0081 AlterConfigs sets this one on a broker.
        let kerberos = map(&[("sasl.kerberos.min.time.before.relogin", "58000")]);
        assert!(validate_dynamic_configs(&kerberos, true).is_ok());
        assert_eq!(
            message(&[("num.partitions", "3")], false),
            "Cannot update these configs dynamically: [num.partitions]"
        );
        assert_eq!(
            message(&[("log.retention.hours", "1")], true),
            "Cannot update these configs dynamically: [log.retention.hours]"
        );
        assert_eq!(
            message(&[("ssl.keystore.location", "/x")], true),
            "These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location]"
        );
        assert_eq!(
            message(
                &[("listener.name.plaintext.ssl.keystore.location", "/x")],
                false
            ),
            "Cannot update these configs at default cluster level, broker id must be specified: [listener.name.plaintext.ssl.keystore.location]"
        );
        assert_eq!(
            message(&[("log.retention.ms", "abc")], false),
            "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"
        );
        assert_eq!(
            message(&[("min.insync.replicas", "0")], false),
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
        );
        assert_eq!(
            message(&[("listeners", "PLAINTEXT://127.0.0.1:0")], false),
            "Cannot update these configs at default cluster level, broker id must be specified: [listeners]"
        );
        assert!(
            message(&[("listeners", "PLAINTEXT://127.0.0.1:0")], true)
                .starts_with("Sluice cannot apply")
        );
    }

    #[test]
    fn layers_apply_in_kafkas_order_with_its_synonyms() {
        let static_config = BrokerConfig::with_overrides(&[
            ("log.retention.hours", "2"),
            ("log.segment.bytes", "5000000"),
        ])
        .unwrap();
        // Static log.retention.hours: the topic default's chain starts at log.retention.ms,
        // which nothing sets, so it is empty (Kafka: retention.ms source DEFAULT_CONFIG).
        assert!(static_config.synonym_chain("log.retention.ms").is_empty());
        assert_eq!(
            static_config.synonym_chain("log.segment.bytes"),
            vec![
                (
                    "log.segment.bytes".into(),
                    Some("5000000".into()),
                    ConfigSource::StaticBroker
                ),
                (
                    "log.segment.bytes".into(),
                    Some("1073741824".into()),
                    ConfigSource::Default
                ),
            ]
        );
        let config = static_config
            .with_dynamic(DynamicLayers {
                per_broker: map(&[
                    ("log.retention.ms", "7000"),
                    ("log.segment.bytes", "2000000"),
                    ("sasl.kerberos.min.time.before.relogin", "58000"),
                ]),
                cluster_default: map(&[
                    ("log.retention.ms", "5000"),
                    ("message.max.bytes", "3000000"),
                    ("foo.bar", "1"),
                    ("background.threads", "4"),
                ]),
            })
            .unwrap();
        assert_eq!(
            config.synonym_chain("log.retention.ms"),
            vec![
                (
                    "log.retention.ms".into(),
                    Some("7000".into()),
                    ConfigSource::DynamicBroker
                ),
                (
                    "log.retention.ms".into(),
                    Some("5000".into()),
                    ConfigSource::DynamicDefault
                ),
                (
                    "log.retention.hours".into(),
                    Some("2".into()),
                    ConfigSource::StaticBroker
                ),
                (
                    "log.retention.hours".into(),
                    Some("168".into()),
                    ConfigSource::Default
                ),
            ]
        );
        let log = super::super::LogConfig::resolve(&config.topic_defaults, &BTreeMap::new());
        assert_eq!(log.retention_ms, 7000);
        assert_eq!(log.segment_bytes, 2_000_000);
        assert_eq!(log.max_message_bytes, 3_000_000);
        assert_eq!(
            config.topic_defaults["retention.ms"].source,
            ConfigSource::DynamicBroker
        );
        assert_eq!(
            config.topic_defaults["max.message.bytes"].source,
            ConfigSource::DynamicDefault
        );
        assert_eq!(
            config.values["message.max.bytes"].source,
            ConfigSource::DynamicDefault
        );
        // Back to static when the layers are emptied.
        let back = config.with_dynamic(DynamicLayers::default()).unwrap();
        let log = super::super::LogConfig::resolve(&back.topic_defaults, &BTreeMap::new());
        assert_eq!(log.retention_ms, 2 * 3_600_000);
        assert_eq!(log.segment_bytes, 5_000_000);
    }

    #[test]
    fn listener_synonyms() {
        assert_eq!(
            broker_synonyms("listener.name.sasl_ssl.plain.sasl.jaas.config"),
            vec![
                "listener.name.sasl_ssl.plain.sasl.jaas.config".to_string(),
                "sasl.jaas.config".to_string()
            ]
        );
        assert_eq!(
            broker_synonyms("log.retention.minutes").len(),
            3,
            "ms, minutes and hours"
        );
    }
}
