//! The server's side of SASL on one listener: which mechanisms it offers
//! (`sasl.enabled.mechanisms`), the PLAIN users of its JAAS config (Kafka's
//! `PlainLoginModule` with `user_<name>="<password>"` options), the session lifetime
//! (`connections.max.reauth.ms`, KIP-368), and one authentication exchange. SCRAM credentials
//! come from the cluster metadata through [`ScramCredentials`]. Every failure is one
//! [`SaslFailure`] whose message is what Kafka tells the client; it never holds a secret.

use super::principal::KafkaPrincipal;
use super::scram::{
    ScramCredential, ScramError, ScramLogin, ScramMechanism, ScramServer, ServerStep,
};
use crate::config::BrokerConfig;
use crate::config::jaas;
use std::collections::BTreeMap;
use std::time::Duration;
use subtle::ConstantTimeEq;
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    Plain,
    Scram(ScramMechanism),
    OAuthBearer,
}

impl Mechanism {
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::Scram(scram) => scram.name(),
            Self::OAuthBearer => "OAUTHBEARER",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PLAIN" => Some(Self::Plain),
            "OAUTHBEARER" => Some(Self::OAuthBearer),
            other => ScramMechanism::from_name(other).map(Self::Scram),
        }
    }

    /// The lower-case name Kafka's per-mechanism property prefixes use.
    fn prefix(self) -> String {
        self.name().to_ascii_lowercase()
    }
}

#[derive(Debug, Error)]
#[error("listener {listener}: {property}: {reason}")]
pub struct SaslConfigError {
    pub listener: String,
    pub property: String,
    pub reason: String,
}

/// Where SCRAM credentials are looked up (the metadata image; delegation tokens in the
/// token cache).
pub trait ScramCredentials {
    fn scram_credential(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential>;

    /// The credential of a live delegation token (`tokenauth=true`), if there is one.
    fn token_login(&self, _token_id: &str, _mechanism: ScramMechanism) -> Option<ScramLogin> {
        None
    }
}

/// A node's credentials: SCRAM users from the metadata image, delegation tokens from the
/// token cache.
pub struct NodeCredentials {
    pub image: std::sync::Arc<crate::metadata::image::MetadataImage>,
    pub tokens: Option<std::sync::Arc<super::delegation_token::TokenCache>>,
}

impl ScramCredentials for NodeCredentials {
    fn scram_credential(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        self.image.scram_credential(user, mechanism)
    }

    fn token_login(&self, token_id: &str, mechanism: ScramMechanism) -> Option<ScramLogin> {
        self.tokens
            .as_ref()?
            .credential(token_id, mechanism, crate::types::now_ms())
    }
}

impl ScramCredentials for crate::metadata::image::MetadataImage {
    fn scram_credential(&self, user: &str, mechanism: ScramMechanism) -> Option<ScramCredential> {
        let record = self
            .scram_credentials
            .get(user)?
            .get(&mechanism.type_id())?;
        Some(ScramCredential {
            salt: record.salt.clone(),
            stored_key: record.stored_key.clone(),
            server_key: record.server_key.clone(),
            iterations: record.iterations,
        })
    }
}

/// A SASL listener's settings.
#[derive(Debug, Clone)]
pub struct SaslListener {
    pub mechanisms: Vec<Mechanism>,
    /// PLAIN users and their passwords.
    plain_users: BTreeMap<String, String>,
    /// `sasl.server.max.receive.size`: the largest frame before authentication.
    pub max_receive_size: usize,
    /// `connections.max.reauth.ms` of each mechanism (None: sessions do not expire).
    session_lifetimes: BTreeMap<&'static str, Duration>,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay: Duration,
    /// How OAUTHBEARER tokens are checked, when it is enabled.
    oauth: Option<super::oauthbearer::Validator>,
}

const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

impl SaslListener {
    pub fn for_listener(config: &BrokerConfig, listener: &str) -> Result<Self, SaslConfigError> {
        let error = |property: &str, reason: String| SaslConfigError {
            listener: listener.to_string(),
            property: property.to_string(),
            reason,
        };
        let enabled = config
            .listener_value(listener, "sasl.enabled.mechanisms")
            .unwrap_or_default();
        let mut mechanisms = Vec::new();
        for name in enabled.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let mechanism = Mechanism::from_name(name).ok_or_else(|| {
                error(
                    "sasl.enabled.mechanisms",
                    format!(
                        "{name} is not supported (supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)"
                    ),
                )
            })?;
            if !mechanisms.contains(&mechanism) {
                mechanisms.push(mechanism);
            }
        }
        if mechanisms.is_empty() {
            return Err(error(
                "sasl.enabled.mechanisms",
                "a SASL listener needs at least one mechanism".into(),
            ));
        }
        let mut plain_users = BTreeMap::new();
        if mechanisms.contains(&Mechanism::Plain) {
            let property = format!(
                "listener.name.{}.plain.sasl.jaas.config",
                listener.to_ascii_lowercase()
            );
            let text = config
                .listener_overrides
                .get(listener, "plain.sasl.jaas.config")
                .ok_or_else(|| {
                    error(
                        &property,
                        "PLAIN needs the listener's JAAS config with its users (user_<name>=\"<password>\")".into(),
                    )
                })?;
            let module = jaas::parse(text).map_err(|e| error(&property, e.to_string()))?;
            if module.class != PLAIN_LOGIN_MODULE {
                return Err(error(
                    &property,
                    format!("the login module must be {PLAIN_LOGIN_MODULE}"),
                ));
            }
            for (option, value) in &module.options {
                if let Some(user) = option.strip_prefix("user_") {
                    plain_users.insert(user.to_string(), value.clone());
                }
            }
        }
        let oauth = if mechanisms.contains(&Mechanism::OAuthBearer) {
            Some(
                oauth_validator(config, listener)
                    .map_err(|(property, reason)| error(&property, reason))?,
            )
        } else {
            None
        };
        let mut session_lifetimes = BTreeMap::new();
        for mechanism in &mechanisms {
            let value = config
                .listener_overrides
                .get(
                    listener,
                    &format!("{}.connections.max.reauth.ms", mechanism.prefix()),
                )
                .map(str::to_string)
                .or_else(|| config.listener_value(listener, "connections.max.reauth.ms"));
            let ms = value
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
            if ms > 0 {
                session_lifetimes.insert(mechanism.name(), Duration::from_millis(ms));
            }
        }
        let max_receive_size = config
            .listener_value(listener, "sasl.server.max.receive.size")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(524_288);
        let delay = config
            .listener_value(listener, "connection.failed.authentication.delay.ms")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(100);
        Ok(Self {
            mechanisms,
            plain_users,
            max_receive_size,
            session_lifetimes,
            failed_authentication_delay: Duration::from_millis(delay),
            oauth,
        })
    }

    /// The enabled mechanism of this name, if any.
    pub fn mechanism(&self, name: &str) -> Option<Mechanism> {
        Mechanism::from_name(name).filter(|m| self.mechanisms.contains(m))
    }

    pub fn mechanism_names(&self) -> Vec<&'static str> {
        self.mechanisms.iter().map(|m| m.name()).collect()
    }

    /// Whether the enabled mechanisms check user names and passwords (PLAIN, SCRAM).
    pub fn checks_passwords(&self) -> bool {
        self.mechanisms
            .iter()
            .any(|m| matches!(m, Mechanism::Plain | Mechanism::Scram(_)))
    }

    /// Whether OAUTHBEARER is enabled.
    pub fn checks_bearer_tokens(&self) -> bool {
        self.oauth.is_some()
    }

    /// Checks a password presented outside a SASL exchange (HTTP Basic on the HTTP listener):
    /// against PLAIN's users, then against the credential of each enabled SCRAM mechanism.
    pub fn password_matches(
        &self,
        user: &str,
        password: &str,
        scram: &dyn ScramCredentials,
    ) -> bool {
        self.mechanisms.iter().any(|mechanism| match mechanism {
            Mechanism::Plain => self.plain_password_matches(user, password),
            Mechanism::Scram(scram_mechanism) => scram
                .scram_credential(user, *scram_mechanism)
                .is_some_and(|c| c.matches_password(*scram_mechanism, password)),
            Mechanism::OAuthBearer => false,
        })
    }

    /// Checks a bearer token presented outside a SASL exchange (`Authorization: Bearer` on the
    /// HTTP listener) as OAUTHBEARER checks it: the principal and how long the token lives.
    pub fn bearer_principal(&self, token: &str) -> Result<(String, Duration), String> {
        let Some(validator) = &self.oauth else {
            return Err("OAUTHBEARER is not enabled".into());
        };
        // RFC 7628's client message around the token, as a SASL client would send it.
        let message = format!("n,,\x01auth=Bearer {token}\x01\x01");
        validator
            .validate(message.as_bytes())
            .map(|accepted| (accepted.principal, accepted.lifetime))
            .map_err(|refused| refused.0)
    }

    fn plain_password_matches(&self, user: &str, password: &str) -> bool {
        match self.plain_users.get(user) {
            Some(expected) => bool::from(expected.as_bytes().ct_eq(password.as_bytes())),
            None => false,
        }
    }
}

/// A failed authentication: the message the client is sent with SASL_AUTHENTICATION_FAILED.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct SaslFailure(pub String);

/// What one client token led to.
#[derive(Debug, PartialEq, Eq)]
pub enum SaslStep {
    /// Send this challenge; the exchange goes on.
    Challenge(Vec<u8>),
    /// Authenticated. `response` is the last server message (may be empty); the session
    /// lasts `session_lifetime`, if it is bounded.
    Authenticated {
        principal: KafkaPrincipal,
        response: Vec<u8>,
        session_lifetime: Option<Duration>,
        /// Authenticated with a delegation token (which may not ask for more tokens).
        token_authenticated: bool,
    },
}

enum ExchangeState {
    Plain,
    Scram(Box<ScramServer>),
    OAuthBearer,
    /// A token was refused and the client told so; its `\x01` ends the exchange.
    OAuthBearerRefused,
}

/// One authentication exchange with a mechanism the client picked in SaslHandshake.
pub struct SaslExchange {
    mechanism: Mechanism,
    state: ExchangeState,
}

impl SaslExchange {
    pub fn new(mechanism: Mechanism) -> Self {
        let state = match mechanism {
            Mechanism::Plain => ExchangeState::Plain,
            Mechanism::Scram(scram) => ExchangeState::Scram(Box::new(ScramServer::new(scram))),
            Mechanism::OAuthBearer => ExchangeState::OAuthBearer,
        };
        Self { mechanism, state }
    }

    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// Takes the client's next token.
    pub fn step(
        &mut self,
        token: &[u8],
        listener: &SaslListener,
        scram: &dyn ScramCredentials,
    ) -> Result<SaslStep, SaslFailure> {
        let lifetime = listener
            .session_lifetimes
            .get(self.mechanism.name())
            .copied();
        let generic = || {
            SaslFailure(format!(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
                self.mechanism.name()
            ))
        };
        match &mut self.state {
            ExchangeState::Plain => {
                let user = plain_step(token, listener)?;
                Ok(SaslStep::Authenticated {
                    principal: KafkaPrincipal::user(user),
                    response: Vec::new(),
                    session_lifetime: lifetime,
                    token_authenticated: false,
                })
            }
            ExchangeState::OAuthBearer => {
                let Some(validator) = &listener.oauth else {
                    return Err(generic());
                };
                match validator.validate(token) {
                    Ok(accepted) => Ok(SaslStep::Authenticated {
                        principal: KafkaPrincipal::user(accepted.principal),
                        response: Vec::new(),
                        // The token's expiry bounds the session (KIP-368).
                        session_lifetime: Some(
                            lifetime.map_or(accepted.lifetime, |l| l.min(accepted.lifetime)),
                        ),
                        token_authenticated: false,
                    }),
                    Err(refused) => {
                        tracing::info!("OAUTHBEARER token refused: {refused}");
                        self.state = ExchangeState::OAuthBearerRefused;
                        Ok(SaslStep::Challenge(INVALID_TOKEN.as_bytes().to_vec()))
                    }
                }
            }
            ExchangeState::OAuthBearerRefused => Err(SaslFailure(INVALID_TOKEN.into())),
            ExchangeState::Scram(server) => {
                let Mechanism::Scram(mechanism) = self.mechanism else {
                    return Err(generic());
                };
                let lookup = |user: &str, token_auth: bool| {
                    if token_auth {
                        scram.token_login(user, mechanism)
                    } else {
                        scram
                            .scram_credential(user, mechanism)
                            .map(ScramLogin::user)
                    }
                };
                match server.step(token, lookup) {
                    Ok(ServerStep::Challenge(challenge)) => Ok(SaslStep::Challenge(challenge)),
                    Ok(ServerStep::Authenticated {
                        user,
                        final_message,
                        token: None,
                    }) => Ok(SaslStep::Authenticated {
                        principal: KafkaPrincipal::user(user),
                        response: final_message,
                        session_lifetime: lifetime,
                        token_authenticated: false,
                    }),
                    // A delegation token: its owner, for no longer than the token lives
                    // (Kafka's credential lifetime, KIP-368).
                    Ok(ServerStep::Authenticated {
                        final_message,
                        token: Some(token),
                        ..
                    }) => {
                        let remaining_ms = token
                            .expiry_timestamp_ms
                            .saturating_sub(crate::types::now_ms())
                            .max(1);
                        let until_expiry = Duration::from_millis(remaining_ms as u64);
                        Ok(SaslStep::Authenticated {
                            principal: token.owner,
                            response: final_message,
                            session_lifetime: Some(
                                lifetime.map_or(until_expiry, |l| l.min(until_expiry)),
                            ),
                            token_authenticated: true,
                        })
                    }
                    Err(ScramError::Refused(reason)) => {
                        Err(SaslFailure(format!("Authentication failed: {reason}")))
                    }
                    Err(_) => Err(generic()),
                }
            }
        }
    }
}

/// RFC 7628's error challenge, which Kafka also sends as the failure's message.
const INVALID_TOKEN: &str = r#"{"status":"invalid_token"}"#;

const OAUTH_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

/// The OAUTHBEARER validator of a listener: Kafka's unsecured default, or the signed-token
/// validator its callback handler property names. Errors name the property.
fn oauth_validator(
    config: &BrokerConfig,
    listener: &str,
) -> Result<super::oauthbearer::Validator, (String, String)> {
    use super::oauthbearer::{VALIDATOR_CALLBACK_HANDLER, Validator};
    let prefix = format!(
        "listener.name.{}.oauthbearer.",
        listener.to_ascii_lowercase()
    );
    let jaas_property = format!("{prefix}sasl.jaas.config");
    let text = config
        .listener_overrides
        .get(listener, "oauthbearer.sasl.jaas.config")
        .ok_or_else(|| {
            (
                jaas_property.clone(),
                format!("OAUTHBEARER needs the listener's JAAS config ({OAUTH_LOGIN_MODULE})"),
            )
        })?;
    let module = jaas::parse(text).map_err(|e| (jaas_property.clone(), e.to_string()))?;
    if module.class != OAUTH_LOGIN_MODULE {
        return Err((
            jaas_property,
            format!("the login module must be {OAUTH_LOGIN_MODULE}"),
        ));
    }
    let handler = config
        .listener_overrides
        .get(listener, "oauthbearer.sasl.server.callback.handler.class");
    match handler {
        None => Validator::unsecured(|name| module.option(name).map(str::to_string))
            .map_err(|reason| (jaas_property, reason)),
        Some(VALIDATOR_CALLBACK_HANDLER) => {
            let value = |name: &str| {
                config
                    .listener_value(listener, name)
                    .filter(|v| !v.trim().is_empty())
            };
            let url_property = "sasl.oauthbearer.jwks.endpoint.url".to_string();
            let url = value("sasl.oauthbearer.jwks.endpoint.url").ok_or_else(|| {
                (
                    url_property.clone(),
                    "the validator needs the JWKS".to_string(),
                )
            })?;
            let ms = |name: &str, default: u64| {
                Duration::from_millis(
                    value(name)
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(default)
                        .max(1),
                )
            };
            // Kafka reads the endpoint's TLS settings from the login module's options.
            let trusted_pem = match module.option("ssl.truststore.location") {
                Some(path) => Some(std::fs::read(path).map_err(|e| {
                    (
                        jaas_property.clone(),
                        format!("ssl.truststore.location: cannot read {path}: {e}"),
                    )
                })?),
                None => module
                    .option("ssl.truststore.certificates")
                    .map(|pem| pem.as_bytes().to_vec()),
            };
            let settings = super::jwks::EndpointSettings {
                refresh: ms("sasl.oauthbearer.jwks.endpoint.refresh.ms", 3_600_000),
                backoff: ms("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", 100),
                max_backoff: ms(
                    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
                    10_000,
                ),
                trusted_pem,
            };
            let keys = super::jwks::JwksSource::from_url(&url, settings)
                .map_err(|reason| (url_property.clone(), reason))?;
            Validator::signed(
                keys,
                value("sasl.oauthbearer.expected.audience")
                    .map(|a| a.split(',').map(|s| s.trim().to_string()).collect())
                    .unwrap_or_default(),
                value("sasl.oauthbearer.expected.issuer"),
                value("sasl.oauthbearer.sub.claim.name").unwrap_or_else(|| "sub".into()),
                value("sasl.oauthbearer.clock.skew.seconds")
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(30),
            )
            .map_err(|reason| (url_property, reason))
        }
        Some(other) => Err((
            format!("{prefix}sasl.server.callback.handler.class"),
            format!("{other} is not supported (only {VALIDATOR_CALLBACK_HANDLER})"),
        )),
    }
}

/// RFC 4616: `[authzid] NUL authcid NUL passwd`, with Kafka's `PlainSaslServer` messages.
fn plain_step(token: &[u8], listener: &SaslListener) -> Result<String, SaslFailure> {
    let text = std::str::from_utf8(token).map_err(|_| {
        SaslFailure(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN".into(),
        )
    })?;
    let parts: Vec<&str> = text.split('\0').collect();
    let [authzid, user, password] = parts[..] else {
        return Err(SaslFailure(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN".into(),
        ));
    };
    if user.is_empty() {
        return Err(SaslFailure(
            "Authentication failed: username not specified".into(),
        ));
    }
    if password.is_empty() {
        return Err(SaslFailure(
            "Authentication failed: password not specified".into(),
        ));
    }
    if !listener.plain_password_matches(user, password) {
        return Err(SaslFailure(
            "Authentication failed: Invalid username or password".into(),
        ));
    }
    if !authzid.is_empty() && authzid != user {
        return Err(SaslFailure(
            "Authentication failed: Client requested an authorization id that is different from username".into(),
        ));
    }
    Ok(user.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoScram;
    impl ScramCredentials for NoScram {
        fn scram_credential(&self, _: &str, _: ScramMechanism) -> Option<ScramCredential> {
            None
        }
    }

    fn listener(props: &[(&str, &str)]) -> Result<SaslListener, SaslConfigError> {
        let config = BrokerConfig::with_overrides(props).unwrap();
        SaslListener::for_listener(&config, "SASL_PLAINTEXT")
    }

    const JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";"#;

    #[test]
    fn plain_checks_the_users_of_the_listeners_jaas_config() {
        let sasl = listener(&[
            ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
            ("listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS),
            (
                "listener.name.sasl_plaintext.plain.connections.max.reauth.ms",
                "5000",
            ),
        ])
        .unwrap();
        assert_eq!(sasl.mechanism_names(), ["PLAIN", "SCRAM-SHA-256"]);
        assert_eq!(sasl.mechanism("SCRAM-SHA-512"), None);
        let step = |token: &[u8]| SaslExchange::new(Mechanism::Plain).step(token, &sasl, &NoScram);
        assert_eq!(
            step(b"\0alice\0alice-secret"),
            Ok(SaslStep::Authenticated {
                principal: KafkaPrincipal::user("alice"),
                response: Vec::new(),
                session_lifetime: Some(Duration::from_millis(5000)),
                token_authenticated: false,
            })
        );
        assert!(step(b"alice\0alice\0alice-secret").is_ok());
        for (token, message) in [
            (
                &b"\0alice\0wrong"[..],
                "Authentication failed: Invalid username or password",
            ),
            (
                b"\0nobody\0x",
                "Authentication failed: Invalid username or password",
            ),
            (b"\0\0x", "Authentication failed: username not specified"),
            (
                b"\0alice\0",
                "Authentication failed: password not specified",
            ),
            (
                b"admin\0alice\0alice-secret",
                "Authentication failed: Client requested an authorization id that is different from username",
            ),
            (
                b"garbage",
                "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN",
            ),
        ] {
            assert_eq!(step(token), Err(SaslFailure(message.into())));
        }
    }

    #[test]
    fn unsupported_or_unconfigured_mechanisms_are_config_errors() {
        assert!(listener(&[]).unwrap_err().to_string().contains("GSSAPI"));
        assert!(listener(&[("sasl.enabled.mechanisms", "PLAIN")]).is_err());
        let wrong_module = listener(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            (
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.example.Other required user_a=\"b\";",
            ),
        ]);
        assert!(wrong_module.is_err());
        assert!(listener(&[("sasl.enabled.mechanisms", "SCRAM-SHA-512")]).is_ok());
    }
}
