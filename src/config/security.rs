//! The security properties, with Kafka's names and defaults: listener security protocols
//! (`listener.security.protocol.map`), TLS (`ssl.*`), SASL (`sasl.*`, the JAAS configs of each
//! listener and mechanism) and re-authentication. Kafka's per-listener overrides
//! (`listener.name.<listener>.<property>` and, for a mechanism's JAAS config,
//! `listener.name.<listener>.<mechanism>.sasl.jaas.config`) are resolved here; `auth` turns the
//! resolved values into TLS and SASL configurations.

use super::{ConfigDef, ConfigError, ConfigType, Validator, invalid, validate_value};
use std::collections::BTreeMap;

/// Kafka's `SecurityProtocol`, with its ids (used in metadata endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecurityProtocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    pub const ALL: [SecurityProtocol; 4] = [
        SecurityProtocol::Plaintext,
        SecurityProtocol::Ssl,
        SecurityProtocol::SaslPlaintext,
        SecurityProtocol::SaslSsl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "PLAINTEXT",
            Self::Ssl => "SSL",
            Self::SaslPlaintext => "SASL_PLAINTEXT",
            Self::SaslSsl => "SASL_SSL",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn id(self) -> i16 {
        match self {
            Self::Plaintext => 0,
            Self::Ssl => 1,
            Self::SaslPlaintext => 2,
            Self::SaslSsl => 3,
        }
    }

    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// The one principal builder (Kafka's default; custom builders are Java classes).
pub const DEFAULT_PRINCIPAL_BUILDER: &str =
    "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder";

/// Security properties. Those marked per-listener may also be set for one listener with the
/// `listener.name.<listener>.` prefix.
#[rustfmt::skip]
pub static SECURITY_CONFIGS: &[ConfigDef] = &[
    def!("security.inter.broker.protocol", String, Some("PLAINTEXT"), Validator::OneOf(&["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]), None, "Security protocol between brokers when inter.broker.listener.name is not set: the first broker listener of this protocol."),
    def!("java.security.auth.login.config", String, None, Validator::Any, None, "A static JAAS file (Kafka's JVM system property, also read from -Djava.security.auth.login.config= in KAFKA_OPTS): the <listener>.KafkaServer or KafkaServer section's login modules stand for the listener.name.<listener>.<mechanism>.sasl.jaas.config properties not set."),
    def!("sasl.enabled.mechanisms", List, Some("GSSAPI"), Validator::Any, None, "SASL mechanisms a SASL listener offers: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (Kafka's default GSSAPI is not supported). Per listener."),
    def!("sasl.mechanism.inter.broker.protocol", String, Some("GSSAPI"), Validator::Any, None, "SASL mechanism between brokers."),
    def!("sasl.mechanism.controller.protocol", String, Some("GSSAPI"), Validator::Any, None, "SASL mechanism on the controller listener."),
    def!("sasl.server.max.receive.size", Int, Some("524288"), Validator::AtLeast(1), None, "Largest request accepted before a connection has authenticated. Per listener."),
    def!("connections.max.reauth.ms", Long, Some("0"), Validator::AtLeast(0), None, "Lifetime of an authenticated SASL session (KIP-368); the client re-authenticates before it ends, or is disconnected. 0: no limit. Per listener and mechanism."),
    def!("connection.failed.authentication.delay.ms", Int, Some("100"), Validator::AtLeast(0), None, "Delay before a failed authentication's answer and close."),
    def!("principal.builder.class", String, Some(DEFAULT_PRINCIPAL_BUILDER), Validator::OneOf(&[DEFAULT_PRINCIPAL_BUILDER]), None, "Builds the principal of a connection; only Kafka's default is supported. Per listener."),
    def!("authorizer.class.name", String, Some(""), Validator::OneOf(&["", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"]), None, "The authorizer: Kafka's StandardAuthorizer (ACLs in the cluster metadata), or empty for none."),
    def!("super.users", String, Some(""), Validator::Any, None, "Principals the authorizer lets do anything, separated by ';' (User:admin;User:broker)."),
    def!("allow.everyone.if.no.acl.found", Boolean, Some("false"), Validator::Any, None, "Whether a resource without any ACL is open to everyone."),
    def!("delegation.token.secret.key", Password, None, Validator::Any, None, "Secret key to generate and verify delegation tokens (KIP-48); the same on every node. Unset or empty: delegation tokens are disabled."),
    def!("delegation.token.max.lifetime.ms", Long, Some("604800000"), Validator::AtLeast(1), None, "The longest a delegation token may live, renewals included."),
    def!("delegation.token.expiry.time.ms", Long, Some("86400000"), Validator::AtLeast(1), None, "How long a delegation token lives until it is renewed (the longest renewal period)."),
    def!("delegation.token.expiry.check.interval.ms", Long, Some("3600000"), Validator::AtLeast(1), None, "How often the active controller removes expired delegation tokens."),
    def!("sasl.oauthbearer.jwks.endpoint.url", String, None, Validator::Any, None, "The JWKS whose keys sign OAUTHBEARER tokens, for OAuthBearerValidatorCallbackHandler: a file: URL, or an https: (http:) endpoint fetched at startup and kept fresh. Per listener."),
    def!("sasl.oauthbearer.jwks.endpoint.refresh.ms", Long, Some("3600000"), Validator::AtLeast(1), None, "How often the JWKS endpoint is fetched again. Per listener."),
    def!("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Long, Some("100"), Validator::AtLeast(1), None, "The least time between JWKS fetches when a token names an unknown key id, and the first wait after a failed fetch. Per listener."),
    def!("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Long, Some("10000"), Validator::AtLeast(1), None, "The longest wait between failed JWKS fetches. Per listener."),
    def!("sasl.oauthbearer.expected.audience", List, None, Validator::Any, None, "Audiences a signed OAUTHBEARER token must name (aud). Per listener."),
    def!("sasl.oauthbearer.expected.issuer", String, None, Validator::Any, None, "Issuer a signed OAUTHBEARER token must name (iss). Per listener."),
    def!("sasl.oauthbearer.sub.claim.name", String, Some("sub"), Validator::Any, None, "Claim of a signed OAUTHBEARER token holding the principal. Per listener."),
    def!("sasl.oauthbearer.clock.skew.seconds", Int, Some("30"), Validator::AtLeast(0), None, "Clock skew allowed when checking a signed token's times. Per listener."),
    def!("ssl.keystore.type", String, Some("JKS"), Validator::OneOf(&["JKS", "PKCS12", "PEM"]), None, "Keystore format: PKCS12 or PEM; a JKS-typed keystore is read when it is PKCS12 (keytool's format since Java 9). Per listener."),
    def!("ssl.keystore.location", String, None, Validator::Any, None, "Keystore file: PKCS12, or PEM holding the private key and the certificate chain. Per listener."),
    def!("ssl.keystore.password", Password, None, Validator::Any, None, "Password of the keystore file. Per listener."),
    def!("ssl.key.password", Password, None, Validator::Any, None, "Password of the private key (an encrypted PKCS#8 PEM key). Per listener."),
    def!("ssl.keystore.certificate.chain", Password, None, Validator::Any, None, "The certificate chain in PEM, inline (ssl.keystore.type=PEM). Per listener."),
    def!("ssl.keystore.key", Password, None, Validator::Any, None, "The private key in PEM, inline (ssl.keystore.type=PEM). Per listener."),
    def!("ssl.truststore.type", String, Some("JKS"), Validator::OneOf(&["JKS", "PKCS12", "PEM"]), None, "Truststore format: PKCS12 or PEM. Per listener."),
    def!("ssl.truststore.location", String, None, Validator::Any, None, "Truststore file: the CA certificates client certificates (and, for this broker's own connections, other brokers) are checked against. Per listener."),
    def!("ssl.truststore.password", Password, None, Validator::Any, None, "Password of the truststore file. Per listener."),
    def!("ssl.truststore.certificates", Password, None, Validator::Any, None, "Trusted certificates in PEM, inline (ssl.truststore.type=PEM). Per listener."),
    def!("ssl.client.auth", String, Some("none"), Validator::OneOf(&["required", "requested", "none"]), None, "Whether TLS clients must (required) or may (requested) present a certificate. Per listener."),
    def!("ssl.enabled.protocols", List, Some("TLSv1.2,TLSv1.3"), Validator::Any, None, "TLS versions accepted: TLSv1.2 and TLSv1.3 (older ones are not offered). Per listener."),
    def!("ssl.protocol", String, Some("TLSv1.3"), Validator::OneOf(&["TLSv1.2", "TLSv1.3", "TLS"]), None, "The TLS version this broker's own connections start with. Per listener."),
    def!("ssl.cipher.suites", List, Some(""), Validator::Any, None, "Cipher suites by IANA name; empty: all rustls offers. Per listener."),
    def!("ssl.endpoint.identification.algorithm", String, Some("https"), Validator::Any, None, "https: this broker's own TLS connections check the peer's host name; empty: they do not. Per listener."),
    def!("ssl.principal.mapping.rules", String, Some("DEFAULT"), Validator::Any, None, "Rules mapping a client certificate's subject to a principal name (RULE:pattern/replacement/[LU], DEFAULT). Per listener."),
    def!("ssl.allow.dn.changes", Boolean, Some("false"), Validator::Any, None, "Whether a dynamic keystore change may change the certificate's subject. Per listener."),
    def!("ssl.allow.san.changes", Boolean, Some("false"), Validator::Any, None, "Whether a dynamic keystore change may drop subject alternative names of the certificate. Per listener."),
];

/// Properties of the `listener.name.<listener>.` form: these and `<mechanism>.sasl.jaas.config`
/// / `<mechanism>.connections.max.reauth.ms`.
const PER_LISTENER: &[&str] = &[
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.enabled.mechanisms",
    "sasl.server.max.receive.size",
    "connections.max.reauth.ms",
    "principal.builder.class",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "ssl.principal.mapping.rules",
    "ssl.allow.dn.changes",
    "ssl.allow.san.changes",
];

/// What a JAAS config per listener and mechanism looks like (Kafka's lower-case mechanism
/// names in the prefix).
const MECHANISM_PREFIXES: &[&str] = &[
    "plain",
    "scram-sha-256",
    "scram-sha-512",
    "oauthbearer",
    "gssapi",
];

const JAAS_DEF: ConfigDef = def!(
    "sasl.jaas.config",
    Password,
    None,
    Validator::Any,
    None,
    "JAAS login module of one listener and mechanism."
);

const CALLBACK_HANDLER_DEF: ConfigDef = def!(
    "sasl.server.callback.handler.class",
    String,
    None,
    Validator::OneOf(&[
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
    ]),
    None,
    "The server callback handler of one listener and mechanism: Kafka's OAuthBearerValidatorCallbackHandler (signed OAUTHBEARER tokens)."
);

/// The prefixed (`listener.name.`) security properties that were set, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListenerOverrides {
    /// Full property name -> value.
    values: BTreeMap<String, String>,
}

impl ListenerOverrides {
    /// Takes the `listener.name.` properties out of `props`, checking each names a property
    /// that may be set per listener and has a valid value.
    pub fn take_from(props: &mut BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let names: Vec<String> = props
            .keys()
            .filter(|k| k.starts_with("listener.name."))
            .cloned()
            .collect();
        let mut values = BTreeMap::new();
        for name in names {
            let Some(value) = props.remove(&name) else {
                continue;
            };
            let def = per_listener_def(&name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
            validate_value(def, &value).map_err(|e| match e {
                ConfigError::Invalid { reason, .. } => ConfigError::Invalid {
                    name: name.clone(),
                    value: if def.kind == ConfigType::Password {
                        "[hidden]".into()
                    } else {
                        value.clone()
                    },
                    reason,
                },
                other => other,
            })?;
            values.insert(name, value.trim().to_string());
        }
        Ok(Self { values })
    }

    /// Fills the `<mechanism>.sasl.jaas.config` of `listeners` that are not set from a static
    /// JAAS file, as Kafka's JaasContext falls back: the `<listener>.KafkaServer` section,
    /// else `KafkaServer`; each module stands for the mechanisms of its class.
    pub fn add_static_jaas<'a>(
        &mut self,
        sections: &BTreeMap<String, Vec<crate::config::jaas::JaasModule>>,
        listeners: impl Iterator<Item = &'a str>,
    ) {
        for listener in listeners {
            let listener = listener.to_ascii_lowercase();
            let Some(modules) = sections
                .get(&format!("{listener}.KafkaServer"))
                .or_else(|| sections.get("KafkaServer"))
            else {
                continue;
            };
            for module in modules {
                let mechanisms: &[&str] = match module.class.rsplit('.').next() {
                    Some("PlainLoginModule") => &["plain"],
                    Some("ScramLoginModule") => &["scram-sha-256", "scram-sha-512"],
                    Some("OAuthBearerLoginModule") => &["oauthbearer"],
                    _ => &[],
                };
                for mechanism in mechanisms {
                    self.values
                        .entry(format!(
                            "listener.name.{listener}.{mechanism}.sasl.jaas.config"
                        ))
                        .or_insert_with(|| module.to_config());
                }
            }
        }
    }

    /// The listener's own value of `property`, if set.
    pub fn get(&self, listener: &str, property: &str) -> Option<&str> {
        self.values
            .get(&format!(
                "listener.name.{}.{property}",
                listener.to_ascii_lowercase()
            ))
            .map(String::as_str)
    }
}

/// The definition a `listener.name.<listener>.<rest>` property is checked against.
pub(super) fn per_listener_def(name: &str) -> Option<&'static ConfigDef> {
    let rest = name.strip_prefix("listener.name.")?;
    let (_listener, property) = rest.split_once('.')?;
    // Broker configs a listener may set for itself (Kafka's listener-level connection quota).
    if property == "max.connection.creation.rate" {
        return super::broker_config_def(property);
    }
    if let Some(def) = PER_LISTENER
        .iter()
        .find(|p| **p == property)
        .and_then(|p| security_config_def(p))
    {
        return Some(def);
    }
    let (mechanism, property) = property.split_once('.')?;
    if !MECHANISM_PREFIXES.contains(&mechanism) {
        return None;
    }
    match property {
        "sasl.jaas.config" => Some(&JAAS_DEF),
        "sasl.server.callback.handler.class" => Some(&CALLBACK_HANDLER_DEF),
        "connections.max.reauth.ms" => security_config_def(property),
        _ => None,
    }
}

pub fn security_config_def(name: &str) -> Option<&'static ConfigDef> {
    SECURITY_CONFIGS.iter().find(|d| d.name == name)
}

/// Parses `listener.security.protocol.map` into listener name -> protocol.
pub fn parse_protocol_map(text: &str) -> Result<BTreeMap<String, SecurityProtocol>, ConfigError> {
    let mut map = BTreeMap::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (listener, protocol) = entry.split_once(':').ok_or_else(|| {
            invalid(
                "listener.security.protocol.map",
                entry,
                "expected NAME:PROTOCOL",
            )
        })?;
        let protocol = SecurityProtocol::from_name(protocol.trim()).ok_or_else(|| {
            invalid(
                "listener.security.protocol.map",
                entry,
                "the protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
            )
        })?;
        map.insert(listener.trim().to_string(), protocol);
    }
    Ok(map)
}

/// The static JAAS file a Kafka start script passes the JVM in `KAFKA_OPTS`
/// (`-Djava.security.auth.login.config=PATH`), if any.
pub fn jaas_file_from_kafka_opts(opts: &str) -> Option<String> {
    opts.split_whitespace()
        .filter_map(|option| option.strip_prefix("-Djava.security.auth.login.config="))
        .map(|path| path.trim_matches('"').to_string())
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_jaas_file_stands_for_unset_listener_jaas_configs() {
        assert_eq!(
            jaas_file_from_kafka_opts(
                "-Xmx1G -Djava.security.auth.login.config=/etc/kafka/jaas.conf"
            ),
            Some("/etc/kafka/jaas.conf".to_string())
        );
        assert_eq!(jaas_file_from_kafka_opts("-Xmx1G"), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jaas.conf");
        std::fs::write(
            &path,
            r#"KafkaServer {
                org.apache.kafka.common.security.plain.PlainLoginModule required
                username="admin" password="admin-secret" user_admin="admin-secret";
                org.apache.kafka.common.security.scram.ScramLoginModule required
                username="admin" password="admin-secret";
            };
            internal.KafkaServer {
                org.apache.kafka.common.security.plain.PlainLoginModule required user_x="y";
            };"#,
        )
        .unwrap();
        let path_text = path.display().to_string();
        let config = crate::config::BrokerConfig::with_overrides(&[
            (
                "listeners",
                "SASL_PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,OWN://127.0.0.1:0",
            ),
            (
                "listener.security.protocol.map",
                "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT,OWN:SASL_PLAINTEXT",
            ),
            ("java.security.auth.login.config", &path_text),
            (
                "listener.name.own.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_own="o";"#,
            ),
        ])
        .unwrap();
        let module = |listener: &str, mechanism: &str| {
            let text = config
                .listener_overrides
                .get(listener, &format!("{mechanism}.sasl.jaas.config"))
                .unwrap();
            crate::config::jaas::parse(text).unwrap()
        };
        assert_eq!(
            module("SASL_PLAINTEXT", "plain").option("user_admin"),
            Some("admin-secret")
        );
        assert_eq!(
            module("SASL_PLAINTEXT", "scram-sha-512").option("username"),
            Some("admin")
        );
        // The listener's own section, then the listener's own property, come first.
        assert_eq!(module("INTERNAL", "plain").option("user_x"), Some("y"));
        assert!(
            config
                .listener_overrides
                .get("INTERNAL", "scram-sha-256.sasl.jaas.config")
                .is_none()
        );
        assert_eq!(module("OWN", "plain").option("user_own"), Some("o"));
        // A missing or malformed file is a config error.
        for bad in ["/nonexistent/jaas.conf", dir.path().to_str().unwrap()] {
            assert!(
                crate::config::BrokerConfig::with_overrides(&[(
                    "java.security.auth.login.config",
                    bad
                )])
                .is_err()
            );
        }
    }

    #[test]
    fn prefixed_properties_are_checked_and_resolved_per_listener() {
        let mut props: BTreeMap<String, String> = [
            ("listener.name.sasl_ssl.ssl.client.auth", "required"),
            (
                "listener.name.sasl_ssl.plain.sasl.jaas.config",
                "M required;",
            ),
            (
                "listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms",
                "1000",
            ),
            ("num.partitions", "3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let overrides = ListenerOverrides::take_from(&mut props).unwrap();
        assert_eq!(props.len(), 1, "only the unprefixed property is left");
        assert_eq!(
            overrides.get("SASL_SSL", "ssl.client.auth"),
            Some("required")
        );
        assert_eq!(
            overrides.get("SASL_SSL", "plain.sasl.jaas.config"),
            Some("M required;")
        );
        assert_eq!(overrides.get("PLAINTEXT", "ssl.client.auth"), None);

        for (name, value) in [
            ("listener.name.x.ssl.client.auth", "sometimes"),
            ("listener.name.x.num.partitions", "3"),
            ("listener.name.x.digest-md5.sasl.jaas.config", "M required;"),
            ("listener.name.x.plain.ssl.client.auth", "none"),
        ] {
            let mut props = BTreeMap::from([(name.to_string(), value.to_string())]);
            assert!(ListenerOverrides::take_from(&mut props).is_err(), "{name}");
        }
        let mut secret = BTreeMap::from([(
            "listener.name.x.connections.max.reauth.ms".to_string(),
            "-5".to_string(),
        )]);
        assert!(ListenerOverrides::take_from(&mut secret).is_err());
    }

    /// The example file of the README loads (its certificates are read at bind time).
    #[test]
    fn the_secure_node_example_is_valid() {
        let text = include_str!("../../config/secure-node.properties");
        let props = super::super::parse_properties(text).unwrap();
        let config = super::super::BrokerConfig::from_properties(&props).unwrap();
        let protocols: Vec<SecurityProtocol> =
            config.listeners.iter().map(|l| l.protocol).collect();
        assert_eq!(
            protocols,
            [
                SecurityProtocol::Ssl,
                SecurityProtocol::SaslPlaintext,
                SecurityProtocol::SaslSsl,
                SecurityProtocol::Ssl
            ]
        );
        assert_eq!(
            config.listener_value("MTLS", "ssl.client.auth").as_deref(),
            Some("required")
        );
        assert_eq!(
            config.listener_value("SSL", "ssl.client.auth").as_deref(),
            Some("none")
        );
    }

    /// The secured cluster example loads, and its own connections' client side is complete
    /// (the certificates themselves are read at bind time).
    #[test]
    fn the_secure_cluster_example_is_valid() {
        let text = include_str!("../../config/secure-cluster-node-1.properties");
        let props = super::super::parse_properties(text).unwrap();
        let config = super::super::BrokerConfig::from_properties(&props).unwrap();
        assert!(!config.cluster.is_single_node());
        assert_eq!(config.protocol_of("BROKER"), SecurityProtocol::SaslSsl);
        assert_eq!(config.protocol_of("CONTROLLER"), SecurityProtocol::SaslSsl);
        for (listener, property) in [
            ("BROKER", "sasl.mechanism.inter.broker.protocol"),
            ("CONTROLLER", "sasl.mechanism.controller.protocol"),
        ] {
            let credentials = crate::auth::sasl_client::ClientCredentials::for_listener(
                &config, listener, property,
            )
            .unwrap();
            assert_eq!(credentials.mechanism().name(), "PLAIN");
        }
    }

    #[test]
    fn the_protocol_map_names_kafkas_protocols() {
        let map =
            parse_protocol_map("INTERNAL:SASL_SSL, EXTERNAL:SSL,CONTROLLER:PLAINTEXT").unwrap();
        assert_eq!(map["INTERNAL"], SecurityProtocol::SaslSsl);
        assert_eq!(map["EXTERNAL"], SecurityProtocol::Ssl);
        assert!(parse_protocol_map("X:TLS").is_err());
        assert!(parse_protocol_map("X").is_err());
    }
}
