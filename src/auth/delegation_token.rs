//! Delegation tokens (KIP-48) as Kafka keeps them: a token's hmac is HmacSHA512 of its id
//! under `delegation.token.secret.key` (the same key on every node, so every node derives it
//! and the metadata never holds it), and a client authenticates with SCRAM, the token id as
//! user name, the base64 hmac as password and the `tokenauth=true` extension. This node's
//! [`TokenCache`] keeps each live token's SCRAM credentials, made from the hmac as Kafka's
//! `DelegationTokenCache` makes them; the session's principal is the token's owner.

use super::principal::KafkaPrincipal;
use super::scram::{ScramCredential, ScramLogin, ScramMechanism, TokenLogin};
use crate::config::BrokerConfig;
use crate::metadata::records::DelegationTokenData;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

/// Kafka's defaults: a week of lifetime, a day until renewal, an hourly sweep.
const DEFAULT_MAX_LIFETIME_MS: i64 = 604_800_000;
const DEFAULT_EXPIRY_TIME_MS: i64 = 86_400_000;
const DEFAULT_EXPIRY_CHECK_INTERVAL_MS: i64 = 3_600_000;

/// SCRAM iterations of a token's credentials (Kafka: the mechanisms' minimum, 4096).
const TOKEN_ITERATIONS: i32 = 4096;

/// The `delegation.token.*` properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSettings {
    /// `delegation.token.secret.key`; unset or empty: delegation tokens are disabled.
    pub secret: Option<String>,
    pub max_lifetime_ms: i64,
    pub expiry_time_ms: i64,
    pub expiry_check_interval_ms: i64,
}

impl Default for TokenSettings {
    fn default() -> Self {
        Self {
            secret: None,
            max_lifetime_ms: DEFAULT_MAX_LIFETIME_MS,
            expiry_time_ms: DEFAULT_EXPIRY_TIME_MS,
            expiry_check_interval_ms: DEFAULT_EXPIRY_CHECK_INTERVAL_MS,
        }
    }
}

impl TokenSettings {
    pub fn from_config(config: &BrokerConfig) -> Self {
        let value = |name: &str| config.values.get(name).and_then(|v| v.value.clone());
        let millis = |name: &str, default: i64| {
            value(name)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .filter(|ms| *ms >= 1)
                .unwrap_or(default)
        };
        Self {
            secret: value("delegation.token.secret.key").filter(|s| !s.is_empty()),
            max_lifetime_ms: millis("delegation.token.max.lifetime.ms", DEFAULT_MAX_LIFETIME_MS),
            expiry_time_ms: millis("delegation.token.expiry.time.ms", DEFAULT_EXPIRY_TIME_MS),
            expiry_check_interval_ms: millis(
                "delegation.token.expiry.check.interval.ms",
                DEFAULT_EXPIRY_CHECK_INTERVAL_MS,
            ),
        }
    }

    pub fn enabled(&self) -> bool {
        self.secret.is_some()
    }

    /// The hmac of `token_id` (Kafka's `createHmac`); `None` while tokens are disabled.
    pub fn hmac(&self, token_id: &str) -> Option<Vec<u8>> {
        self.secret
            .as_deref()
            .map(|secret| token_hmac(secret, token_id))
    }

    /// The token of `tokens` whose hmac is `hmac` (Kafka's `tokenForHmac`).
    pub fn token_for_hmac<'a>(
        &self,
        tokens: &'a BTreeMap<String, DelegationTokenData>,
        hmac: &[u8],
    ) -> Option<&'a DelegationTokenData> {
        let secret = self.secret.as_deref()?;
        tokens.values().find(|token| {
            use subtle::ConstantTimeEq;
            bool::from(token_hmac(secret, &token.token_id).ct_eq(hmac))
        })
    }
}

/// HmacSHA512 of the token id's UTF-8 bytes under the secret's.
pub fn token_hmac(secret: &str, token_id: &str) -> Vec<u8> {
    ScramMechanism::Sha512.hmac(secret.as_bytes(), token_id.as_bytes())
}

/// What authenticating with one token needs.
#[derive(Debug, Clone)]
struct CachedToken {
    owner: KafkaPrincipal,
    expiry_timestamp_ms: i64,
    max_timestamp_ms: i64,
    /// By mechanism type id.
    credentials: HashMap<i8, ScramCredential>,
}

/// Each live token's SCRAM credentials on this node, rebuilt from the metadata image's
/// tokens whenever they change.
#[derive(Debug, Default)]
pub struct TokenCache {
    tokens: RwLock<HashMap<String, CachedToken>>,
}

impl TokenCache {
    /// Takes the image's tokens: credentials are made for new tokens (two PBKDF2 runs each),
    /// kept for known ones, dropped for removed ones.
    pub fn update(&self, settings: &TokenSettings, tokens: &BTreeMap<String, DelegationTokenData>) {
        let Some(secret) = settings.secret.as_deref() else {
            self.write().clear();
            return;
        };
        let mut cache = self.write();
        cache.retain(|id, _| tokens.contains_key(id));
        for (id, token) in tokens {
            if let Some(cached) = cache.get_mut(id) {
                cached.expiry_timestamp_ms = token.expiry_timestamp_ms;
                cached.max_timestamp_ms = token.max_timestamp_ms;
                continue;
            }
            let Some(owner) = KafkaPrincipal::parse(&token.owner) else {
                continue;
            };
            let password = BASE64.encode(token_hmac(secret, id));
            let mut credentials = HashMap::new();
            for mechanism in ScramMechanism::ALL {
                match ScramCredential::from_password(mechanism, &password, TOKEN_ITERATIONS) {
                    Ok(credential) => {
                        credentials.insert(mechanism.type_id(), credential);
                    }
                    Err(e) => tracing::warn!(error = %e, "no credential for a delegation token"),
                }
            }
            cache.insert(
                id.clone(),
                CachedToken {
                    owner,
                    expiry_timestamp_ms: token.expiry_timestamp_ms,
                    max_timestamp_ms: token.max_timestamp_ms,
                    credentials,
                },
            );
        }
    }

    /// The credential to check a `tokenauth` exchange of `token_id` against: none for an
    /// unknown token, or one past its expiry at `now_ms` (not yet swept by the controller).
    pub fn credential(
        &self,
        token_id: &str,
        mechanism: ScramMechanism,
        now_ms: i64,
    ) -> Option<ScramLogin> {
        let cache = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        let token = cache.get(token_id)?;
        if token.expiry_timestamp_ms < now_ms || token.max_timestamp_ms < now_ms {
            return None;
        }
        Some(ScramLogin {
            credential: token.credentials.get(&mechanism.type_id())?.clone(),
            token: Some(TokenLogin {
                owner: token.owner.clone(),
                expiry_timestamp_ms: token.expiry_timestamp_ms,
            }),
        })
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, CachedToken>> {
        self.tokens.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(id: &str, expiry: i64) -> DelegationTokenData {
        DelegationTokenData {
            token_id: id.into(),
            owner: "User:alice".into(),
            requester: "User:alice".into(),
            renewers: vec![],
            issue_timestamp_ms: 0,
            max_timestamp_ms: 10_000,
            expiry_timestamp_ms: expiry,
        }
    }

    #[test]
    fn the_hmac_is_hmac_sha512_of_the_id_under_the_secret() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let hmac = token_hmac("Jefe", "what do ya want for nothing?");
        assert_eq!(
            hex(&hmac),
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn tokens_are_found_by_hmac_and_authenticate_until_they_expire() {
        let settings = TokenSettings {
            secret: Some("s3cret".into()),
            ..TokenSettings::default()
        };
        let tokens: BTreeMap<String, DelegationTokenData> = [
            ("a".to_string(), token("a", 5_000)),
            ("b".to_string(), token("b", 5_000)),
        ]
        .into();
        let hmac = settings.hmac("b").unwrap();
        assert_eq!(
            settings.token_for_hmac(&tokens, &hmac).unwrap().token_id,
            "b"
        );
        assert!(settings.token_for_hmac(&tokens, b"nope").is_none());

        let cache = TokenCache::default();
        cache.update(&settings, &tokens);
        let found = cache
            .credential("b", ScramMechanism::Sha512, 1_000)
            .unwrap();
        assert_eq!(found.token.unwrap().owner, KafkaPrincipal::user("alice"));
        assert!(
            found
                .credential
                .matches_password(ScramMechanism::Sha512, &BASE64.encode(&hmac))
        );
        assert!(
            cache
                .credential("b", ScramMechanism::Sha512, 6_000)
                .is_none()
        );
        cache.update(&settings, &[("a".to_string(), token("a", 5_000))].into());
        assert!(
            cache
                .credential("b", ScramMechanism::Sha256, 1_000)
                .is_none()
        );
        assert!(
            cache
                .credential("a", ScramMechanism::Sha256, 1_000)
                .is_some()
        );
        cache.update(&TokenSettings::default(), &tokens);
        assert!(
            cache
                .credential("a", ScramMechanism::Sha256, 1_000)
                .is_none()
        );
    }
}
