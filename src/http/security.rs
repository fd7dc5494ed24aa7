//! Who a request on the HTTP listener is. `http.listener.security.protocol` secures it as a
//! Kafka listener of that protocol, with the settings of a listener named `HTTP`
//! (`listener.name.http.<property>`, else the broker-wide one): SSL serves HTTPS, and a client
//! certificate maps to its principal by `ssl.principal.mapping.rules`; SASL_PLAINTEXT and
//! SASL_SSL take the `Authorization` header — Basic credentials checked as the enabled PLAIN
//! and SCRAM mechanisms check passwords, a Bearer token as OAUTHBEARER checks it. Without
//! credentials a request is `User:ANONYMOUS` on PLAINTEXT and SSL (as on Kafka's listeners) and
//! refused with 401 on SASL ones. What a principal may then see is [`super::access`]'s.

use super::error::ApiError;
use crate::auth::KafkaPrincipal;
use crate::auth::sasl::{SaslConfigError, SaslListener, ScramCredentials};
use crate::auth::scram::ScramMechanism;
use crate::auth::tls::{TlsError, TlsServer};
use crate::config::{BrokerConfig, HTTP_LISTENER, SecurityProtocol};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why the HTTP listener's security settings are unusable.
#[derive(Debug, thiserror::Error)]
pub enum HttpSecurityError {
    #[error("HTTP listener: {0}")]
    Tls(#[from] TlsError),
    #[error("HTTP listener: {0}")]
    Sasl(#[from] SaslConfigError),
}

/// The connection a request came on, set by the connection loop on every request.
#[derive(Debug, Clone)]
pub struct Connection {
    pub peer: SocketAddr,
    /// The principal of the client certificate, on an SSL listener that got one.
    pub certificate_principal: Option<KafkaPrincipal>,
}

/// The principal a request acts as, and the host it came from (as ACLs name hosts).
#[derive(Debug, Clone)]
pub struct Identity {
    pub principal: KafkaPrincipal,
    pub host: String,
}

/// How long a checked password is trusted without checking it again: SCRAM's key derivation
/// costs thousands of HMACs, and the console asks every few seconds.
const VERIFIED_FOR: Duration = Duration::from_secs(300);
const MAX_VERIFIED: usize = 1024;

/// When credentials were checked, and the user's SCRAM keys they were checked against.
type Verified = (Instant, Vec<u8>);

/// The HTTP listener's security: its TLS side and the SASL mechanisms that check credentials.
pub struct HttpSecurity {
    protocol: SecurityProtocol,
    pub tls: Option<TlsServer>,
    sasl: Option<SaslListener>,
    /// Credentials checked lately, by an HMAC of user and password under a key of this
    /// process (never the password itself): when checked, and what they were checked against.
    verified: Mutex<HashMap<Vec<u8>, Verified>>,
    cache_key: Vec<u8>,
}

impl HttpSecurity {
    pub fn from_config(config: &BrokerConfig) -> Result<Self, HttpSecurityError> {
        let protocol = config.http.security_protocol;
        let tls = match protocol {
            SecurityProtocol::Ssl | SecurityProtocol::SaslSsl => {
                Some(TlsServer::for_listener(config, HTTP_LISTENER)?)
            }
            _ => None,
        };
        let sasl = match protocol {
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl => {
                Some(SaslListener::for_listener(config, HTTP_LISTENER)?)
            }
            _ => None,
        };
        // A key the cache's HMACs are made with; without randomness the cache stays unused.
        let cache_key = crate::auth::scram::random_bytes(32).unwrap_or_default();
        Ok(Self {
            protocol,
            tls,
            sasl,
            verified: Mutex::new(HashMap::new()),
            cache_key,
        })
    }

    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    pub fn protocol(&self) -> SecurityProtocol {
        self.protocol
    }

    /// The principal of a request, or why it is refused.
    pub fn authenticate(
        &self,
        connection: &Connection,
        headers: &HeaderMap,
        scram: &dyn ScramCredentials,
    ) -> Result<KafkaPrincipal, String> {
        let Some(sasl) = &self.sasl else {
            return Ok(connection
                .certificate_principal
                .clone()
                .unwrap_or_else(KafkaPrincipal::anonymous));
        };
        let Some(authorization) = headers.get(header::AUTHORIZATION) else {
            return Err("no credentials".into());
        };
        let authorization = authorization
            .to_str()
            .map_err(|_| "an unreadable Authorization header".to_string())?;
        let (scheme, credentials) = authorization
            .trim()
            .split_once(' ')
            .ok_or_else(|| "an Authorization header without credentials".to_string())?;
        let credentials = credentials.trim();
        if scheme.eq_ignore_ascii_case("basic") && sasl.checks_passwords() {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credentials)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| "Basic credentials that are not base64 of UTF-8".to_string())?;
            let (user, password) = decoded
                .split_once(':')
                .ok_or_else(|| "Basic credentials without a password".to_string())?;
            if user.is_empty() {
                return Err("Basic credentials without a user name".into());
            }
            if self.password_matches(sasl, user, password, scram) {
                return Ok(KafkaPrincipal::user(user));
            }
            return Err(format!("invalid user name or password (user {user})"));
        }
        if scheme.eq_ignore_ascii_case("bearer") && sasl.checks_bearer_tokens() {
            return sasl
                .bearer_principal(credentials)
                .map(|(principal, _)| KafkaPrincipal::user(principal))
                .map_err(|reason| format!("bearer token refused: {reason}"));
        }
        Err(format!(
            "the {scheme} scheme is not accepted here (enabled: {})",
            sasl.mechanism_names().join(", ")
        ))
    }

    fn password_matches(
        &self,
        sasl: &SaslListener,
        user: &str,
        password: &str,
        scram: &dyn ScramCredentials,
    ) -> bool {
        // What the check depends on besides the password: the user's SCRAM credentials now.
        let mut against = Vec::new();
        for mechanism in [ScramMechanism::Sha256, ScramMechanism::Sha512] {
            if let Some(credential) = scram.scram_credential(user, mechanism) {
                against.extend_from_slice(&credential.stored_key);
            }
            against.push(0);
        }
        let key = (!self.cache_key.is_empty()).then(|| {
            let mut message = user.as_bytes().to_vec();
            message.push(0);
            message.extend_from_slice(password.as_bytes());
            ScramMechanism::Sha256.hmac(&self.cache_key, &message)
        });
        if let Some(key) = &key
            && let Ok(verified) = self.verified.lock()
            && let Some((at, checked_against)) = verified.get(key)
            && at.elapsed() < VERIFIED_FOR
            && *checked_against == against
        {
            return true;
        }
        if !sasl.password_matches(user, password, scram) {
            return false;
        }
        if let Some(key) = key
            && let Ok(mut verified) = self.verified.lock()
        {
            if verified.len() >= MAX_VERIFIED {
                verified.retain(|_, (at, _)| at.elapsed() < VERIFIED_FOR);
                if verified.len() >= MAX_VERIFIED {
                    verified.clear();
                }
            }
            verified.insert(key, (Instant::now(), against));
        }
        true
    }

    /// The `WWW-Authenticate` challenges of a refusal.
    fn challenges(&self) -> Vec<HeaderValue> {
        let mut challenges = Vec::new();
        if let Some(sasl) = &self.sasl {
            if sasl.checks_passwords() {
                challenges.push(HeaderValue::from_static(
                    r#"Basic realm="Sluice", charset="UTF-8""#,
                ));
            }
            if sasl.checks_bearer_tokens() {
                challenges.push(HeaderValue::from_static(r#"Bearer realm="Sluice""#));
            }
        }
        challenges
    }

    fn failed_authentication_delay(&self) -> Duration {
        self.sasl
            .as_ref()
            .map_or(Duration::ZERO, |s| s.failed_authentication_delay)
    }
}

/// Authenticates every request: the handlers get its [`Identity`], or the client a 401 (after
/// `connection.failed.authentication.delay.ms`, as a Kafka listener delays its answer).
pub async fn authenticate(
    State(state): State<super::HttpState>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(connection) = request.extensions().get::<Connection>().cloned() else {
        return ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "UNKNOWN_SERVER_ERROR",
            "request without its connection",
        )
        .into_response();
    };
    let image = state.broker.metadata().image();
    let security = &state.security;
    match security.authenticate(&connection, request.headers(), image.as_ref()) {
        Ok(principal) => {
            request.extensions_mut().insert(Identity {
                principal,
                host: connection.peer.ip().to_string(),
            });
            next.run(request).await
        }
        Err(reason) => {
            let sent_credentials = request.headers().contains_key(header::AUTHORIZATION);
            if sent_credentials {
                tracing::info!(peer = %connection.peer, "HTTP authentication failed: {reason}");
                tokio::time::sleep(security.failed_authentication_delay()).await;
            }
            let mut response = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "SASL_AUTHENTICATION_FAILED",
                format!("authentication failed: {reason}"),
            )
            .into_response();
            for challenge in security.challenges() {
                response
                    .headers_mut()
                    .append(header::WWW_AUTHENTICATE, challenge);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::scram::ScramCredential;

    struct Users(Vec<(String, ScramCredential)>);

    impl ScramCredentials for Users {
        fn scram_credential(
            &self,
            user: &str,
            mechanism: ScramMechanism,
        ) -> Option<ScramCredential> {
            (mechanism == ScramMechanism::Sha256)
                .then(|| {
                    self.0
                        .iter()
                        .find(|(u, _)| u == user)
                        .map(|(_, c)| c.clone())
                })
                .flatten()
        }
    }

    fn security(overrides: &[(&str, &str)]) -> HttpSecurity {
        let config = BrokerConfig::with_overrides(overrides).unwrap();
        HttpSecurity::from_config(&config).unwrap()
    }

    fn connection() -> Connection {
        Connection {
            peer: "127.0.0.1:5000".parse().unwrap(),
            certificate_principal: None,
        }
    }

    fn basic(user: &str, password: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Basic {encoded}")).unwrap(),
        );
        headers
    }

    #[test]
    fn plaintext_is_anonymous_and_sasl_checks_plain_and_scram_passwords() {
        let open = security(&[]);
        assert_eq!(
            open.authenticate(&connection(), &HeaderMap::new(), &Users(vec![])),
            Ok(KafkaPrincipal::anonymous())
        );
        let sasl = security(&[
            ("http.listener.security.protocol", "SASL_PLAINTEXT"),
            (
                "listener.name.http.sasl.enabled.mechanisms",
                "PLAIN,SCRAM-SHA-256",
            ),
            (
                "listener.name.http.plain.sasl.jaas.config",
                r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";"#,
            ),
        ]);
        let users = Users(vec![(
            "bob".into(),
            ScramCredential::from_password(ScramMechanism::Sha256, "bob-secret", 4096).unwrap(),
        )]);
        assert!(
            sasl.authenticate(&connection(), &HeaderMap::new(), &users)
                .is_err()
        );
        assert_eq!(
            sasl.authenticate(&connection(), &basic("alice", "alice-secret"), &users),
            Ok(KafkaPrincipal::user("alice"))
        );
        for _ in 0..2 {
            // The second time from the cache of checked passwords.
            assert_eq!(
                sasl.authenticate(&connection(), &basic("bob", "bob-secret"), &users),
                Ok(KafkaPrincipal::user("bob"))
            );
        }
        assert!(
            sasl.authenticate(&connection(), &basic("bob", "wrong"), &users)
                .is_err()
        );
        assert!(
            sasl.authenticate(&connection(), &basic("alice", "bob-secret"), &users)
                .is_err()
        );
        // A changed SCRAM credential is checked again, not taken from the cache.
        let changed = Users(vec![(
            "bob".into(),
            ScramCredential::from_password(ScramMechanism::Sha256, "new-secret", 4096).unwrap(),
        )]);
        assert!(
            sasl.authenticate(&connection(), &basic("bob", "bob-secret"), &changed)
                .is_err()
        );
        let mut garbage = HeaderMap::new();
        garbage.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic !!!"));
        assert!(sasl.authenticate(&connection(), &garbage, &users).is_err());
        assert_eq!(sasl.challenges().len(), 1);
    }

    #[test]
    fn a_sasl_listener_without_users_is_a_config_error() {
        let config = BrokerConfig::with_overrides(&[
            ("http.listener.security.protocol", "SASL_PLAINTEXT"),
            ("listener.name.http.sasl.enabled.mechanisms", "PLAIN"),
        ])
        .unwrap();
        assert!(HttpSecurity::from_config(&config).is_err());
        assert!(
            BrokerConfig::with_overrides(&[("http.listener.security.protocol", "HTTPS")]).is_err()
        );
    }
}
