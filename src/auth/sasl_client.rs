//! The client side of SASL, for this broker's own connections to another node's SASL listener
//! (replication, forwarding, transaction markers, Raft): the mechanism Kafka names with
//! `sasl.mechanism.inter.broker.protocol` or `sasl.mechanism.controller.protocol`, and the
//! credentials Kafka's login modules read from that listener's
//! `listener.name.<listener>.<mechanism>.sasl.jaas.config` — `username` / `password` for
//! PLAIN and SCRAM, `unsecuredLoginStringClaim_sub` (and the other `unsecuredLogin*` options)
//! for OAUTHBEARER's unsecured tokens. One [`ClientExchange`] produces the tokens of one
//! authentication.

use super::sasl::{Mechanism, SaslConfigError};
use super::scram::ScramClient;
use crate::config::BrokerConfig;
use crate::config::jaas;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::collections::BTreeMap;

/// What this broker authenticates with on one listener.
#[derive(Clone)]
pub struct ClientCredentials {
    mechanism: Mechanism,
    options: BTreeMap<String, String>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The options hold passwords.
        f.debug_struct("ClientCredentials")
            .field("mechanism", &self.mechanism.name())
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// The credentials for connecting to `listener` with the mechanism `mechanism_property`
    /// names.
    pub fn for_listener(
        config: &BrokerConfig,
        listener: &str,
        mechanism_property: &str,
    ) -> Result<Self, SaslConfigError> {
        let error = |property: &str, reason: String| SaslConfigError {
            listener: listener.to_string(),
            property: property.to_string(),
            reason,
        };
        let name = config
            .listener_value(listener, mechanism_property)
            .unwrap_or_else(|| "GSSAPI".into());
        let mechanism = Mechanism::from_name(name.trim()).ok_or_else(|| {
            error(
                mechanism_property,
                format!(
                    "{name} is not supported for this broker's own connections: set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"
                ),
            )
        })?;
        let prefix = mechanism.name().to_ascii_lowercase();
        let property = format!(
            "listener.name.{}.{prefix}.sasl.jaas.config",
            listener.to_ascii_lowercase()
        );
        let text = config
            .listener_overrides
            .get(listener, &format!("{prefix}.sasl.jaas.config"))
            .ok_or_else(|| {
                error(
                    &property,
                    format!(
                        "this broker connects to other nodes with {} and reads its credentials here",
                        mechanism.name()
                    ),
                )
            })?;
        let module = jaas::parse(text).map_err(|e| error(&property, e.to_string()))?;
        if mechanism != Mechanism::OAuthBearer {
            for option in ["username", "password"] {
                if module.option(option).is_none() {
                    return Err(error(
                        &property,
                        format!(
                            "the login module needs {option}=\"...\" for this broker's own connections"
                        ),
                    ));
                }
            }
        }
        Ok(Self {
            mechanism,
            options: module.options,
        })
    }

    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// A fresh authentication.
    pub fn exchange(&self) -> Result<ClientExchange, String> {
        let option = |name: &str| self.options.get(name).cloned().unwrap_or_default();
        Ok(match self.mechanism {
            Mechanism::Plain => ClientExchange::Single(
                format!("\0{}\0{}", option("username"), option("password")).into_bytes(),
            ),
            Mechanism::Scram(scram) => ClientExchange::Scram(Box::new(
                ScramClient::new(scram, &option("username"), &option("password"))
                    .map_err(|e| e.to_string())?,
            )),
            Mechanism::OAuthBearer => {
                let token = unsecured_token(&self.options, now_seconds())?;
                ClientExchange::Single(
                    format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}").into_bytes(),
                )
            }
        })
    }
}

/// The tokens of one authentication.
pub enum ClientExchange {
    /// One message, answered by an empty token on success (PLAIN, OAUTHBEARER).
    Single(Vec<u8>),
    Scram(Box<ScramClient>),
}

impl ClientExchange {
    /// The first token.
    pub fn first(&mut self) -> Vec<u8> {
        match self {
            Self::Single(message) => std::mem::take(message),
            Self::Scram(scram) => scram.first(),
        }
    }

    /// The answer to the server's token: the next token, or `None` when authentication is
    /// complete on the client's side too.
    pub fn step(&mut self, server_token: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match self {
            Self::Single(_) if server_token.is_empty() => Ok(None),
            Self::Single(_) => Err(format!(
                "unexpected challenge: {}",
                String::from_utf8_lossy(server_token)
            )),
            Self::Scram(scram) => scram.step(server_token).map_err(|e| e.to_string()),
        }
    }
}

fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// An unsecured JWS as Kafka's `OAuthBearerUnsecuredLoginCallbackHandler` makes it:
/// `{"alg":"none"}`, claims from `unsecuredLoginStringClaim_<name>` /
/// `unsecuredLoginNumberClaim_<name>` / `unsecuredLoginListClaim_<name>` (the first character
/// of a list is its separator), `iat` now and `exp` `unsecuredLoginLifetimeSeconds` (3600)
/// later; the principal claim (`unsecuredLoginPrincipalClaimName`, `sub`) is required.
fn unsecured_token(options: &BTreeMap<String, String>, now: u64) -> Result<String, String> {
    let mut claims = serde_json::Map::new();
    for (option, value) in options {
        if let Some(name) = option.strip_prefix("unsecuredLoginStringClaim_") {
            claims.insert(name.into(), serde_json::Value::String(value.clone()));
        } else if let Some(name) = option.strip_prefix("unsecuredLoginNumberClaim_") {
            let number: serde_json::Number = value
                .trim()
                .parse()
                .map_err(|_| format!("{option} is not a number"))?;
            claims.insert(name.into(), serde_json::Value::Number(number));
        } else if let Some(name) = option.strip_prefix("unsecuredLoginListClaim_") {
            let mut chars = value.chars();
            let items = match chars.next() {
                Some(separator) => chars
                    .as_str()
                    .split(separator)
                    .filter(|s| !s.is_empty())
                    .map(|s| serde_json::Value::String(s.to_string()))
                    .collect(),
                None => Vec::new(),
            };
            claims.insert(name.into(), serde_json::Value::Array(items));
        }
    }
    let principal_claim = options
        .get("unsecuredLoginPrincipalClaimName")
        .map_or("sub", String::as_str);
    if !claims.contains_key(principal_claim) {
        return Err(format!(
            "OAUTHBEARER needs unsecuredLoginStringClaim_{principal_claim} in the JAAS config for this broker's own connections"
        ));
    }
    let lifetime: u64 = match options.get("unsecuredLoginLifetimeSeconds") {
        Some(seconds) => seconds
            .trim()
            .parse()
            .map_err(|_| "unsecuredLoginLifetimeSeconds is not a number".to_string())?,
        None => 3600,
    };
    claims.insert("iat".into(), now.into());
    claims.insert("exp".into(), (now + lifetime).into());
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::Value::Object(claims).to_string());
    Ok(format!("{header}.{payload}."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::oauthbearer::Validator;

    fn credentials(overrides: &[(&str, &str)]) -> Result<ClientCredentials, SaslConfigError> {
        let config = BrokerConfig::with_overrides(overrides).unwrap();
        ClientCredentials::for_listener(&config, "BROKER", "sasl.mechanism.inter.broker.protocol")
    }

    #[test]
    fn credentials_come_from_the_listeners_jaas_config() {
        let plain = credentials(&[
            ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
            (
                "listener.name.broker.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s3cret" user_admin="s3cret";"#,
            ),
        ])
        .unwrap();
        let mut exchange = plain.exchange().unwrap();
        assert_eq!(exchange.first(), b"\0admin\0s3cret");
        assert_eq!(exchange.step(b"").unwrap(), None);
        assert!(!format!("{plain:?}").contains("s3cret"));

        // Kafka's default mechanism, GSSAPI, is refused with what to set instead.
        let gssapi = credentials(&[]).unwrap_err();
        assert!(gssapi.to_string().contains("set PLAIN"), "{gssapi}");
        let missing =
            credentials(&[("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256")]).unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("listener.name.broker.scram-sha-256.sasl.jaas.config"),
            "{missing}"
        );
        let no_password = credentials(&[
            ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
            (
                "listener.name.broker.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin";"#,
            ),
        ])
        .unwrap_err();
        assert!(
            no_password.to_string().contains("password"),
            "{no_password}"
        );
    }

    #[test]
    fn unsecured_tokens_pass_kafkas_unsecured_validator() {
        let options: BTreeMap<String, String> = [
            ("unsecuredLoginStringClaim_sub", "broker-1"),
            ("unsecuredLoginListClaim_scope", ",a,b"),
            ("unsecuredLoginNumberClaim_n", "7"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let token = unsecured_token(&options, now_seconds()).unwrap();
        let message = format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}");
        let validator = Validator::unsecured(|name| {
            (name == "unsecuredValidatorRequiredScope").then(|| "b".to_string())
        })
        .unwrap();
        let accepted = validator.validate(message.as_bytes()).unwrap();
        assert_eq!(accepted.principal, "broker-1");
        assert!(unsecured_token(&BTreeMap::new(), 0).is_err());
    }
}
