//! Delegation tokens (KRaft's `DelegationTokenControlManager`): create, renew and expire
//! decided on the active controller with Kafka's lifetimes and answers, and the periodic
//! sweep of expired tokens. Who may ask (the connection, CREATE_TOKENS on another owner) is
//! checked by the broker the client asked; the requester comes with the operation.

use super::{Changes, ClusterControl, Outcome};
use crate::error::{Error, TokenError};
use crate::metadata::records::{DelegationTokenData, MetadataRecord};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A token just created, with its hmac (the client's password for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedToken {
    pub token: DelegationTokenData,
    pub hmac: Vec<u8>,
}

/// CreateDelegationToken as the controller receives it: principals as `Type:name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    pub owner: String,
    pub requester: String,
    pub renewers: Vec<String>,
    /// The lifetime asked for; 0 or less: `delegation.token.max.lifetime.ms`.
    pub max_lifetime_ms: i64,
}

impl ClusterControl {
    /// A new token: its maximum lifetime is the smaller of the one asked for and
    /// `delegation.token.max.lifetime.ms`, it expires `delegation.token.expiry.time.ms` from
    /// now unless renewed.
    pub fn create_delegation_token(
        &mut self,
        offset: u64,
        now_ms: i64,
        request: &TokenRequest,
    ) -> Result<Outcome<CreatedToken>, Error> {
        let settings = &self.config.tokens;
        if !settings.enabled() {
            return Err(TokenError::AuthDisabled.into());
        }
        if request.renewers.iter().any(|r| !r.starts_with("User:")) {
            return Err(TokenError::InvalidPrincipalType.into());
        }
        let mut max_lifetime = settings.max_lifetime_ms;
        if request.max_lifetime_ms > 0 {
            max_lifetime = max_lifetime.min(request.max_lifetime_ms);
        }
        let max_timestamp_ms = now_ms.saturating_add(max_lifetime);
        let expiry_timestamp_ms =
            max_timestamp_ms.min(now_ms.saturating_add(settings.expiry_time_ms));
        // Kafka's `Uuid.randomUuid().toString()`: 16 random bytes, URL-safe base64.
        let token_id = URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes());
        let hmac = settings
            .hmac(&token_id)
            .ok_or(Error::Token(TokenError::AuthDisabled))?;
        let token = DelegationTokenData {
            token_id,
            owner: request.owner.clone(),
            requester: request.requester.clone(),
            renewers: request.renewers.clone(),
            issue_timestamp_ms: now_ms,
            max_timestamp_ms,
            expiry_timestamp_ms,
        };
        let mut changes = Changes::new(&self.image);
        changes.push(vec![MetadataRecord::DelegationToken {
            token: token.clone(),
        }])?;
        Ok(self.finish(offset, changes, CreatedToken { token, hmac }))
    }

    /// Renews the token of `hmac` for `renew_period_ms` (0 or less: the default expiry
    /// time; never past its maximum lifetime). Returns the new expiry timestamp.
    pub fn renew_delegation_token(
        &mut self,
        offset: u64,
        now_ms: i64,
        requester: &str,
        hmac: &[u8],
        renew_period_ms: i64,
    ) -> Result<Outcome<i64>, Error> {
        let token = self.token_for(hmac)?;
        if token.expired(now_ms) {
            return Err(TokenError::Expired.into());
        }
        if !token.may_renew(requester) {
            return Err(TokenError::OwnerMismatch.into());
        }
        let mut renew_lifetime = self.config.tokens.expiry_time_ms;
        if renew_period_ms > 0 {
            renew_lifetime = renew_lifetime.min(renew_period_ms);
        }
        let expiry = token
            .max_timestamp_ms
            .min(now_ms.saturating_add(renew_lifetime));
        self.set_expiry(offset, token, expiry)
    }

    /// Expires the token of `hmac` after `expiry_period_ms` (never past its maximum
    /// lifetime), or at once for a negative period. Returns the new expiry timestamp.
    pub fn expire_delegation_token(
        &mut self,
        offset: u64,
        now_ms: i64,
        requester: &str,
        hmac: &[u8],
        expiry_period_ms: i64,
    ) -> Result<Outcome<i64>, Error> {
        let token = self.token_for(hmac)?;
        if !token.may_renew(requester) {
            return Err(TokenError::OwnerMismatch.into());
        }
        if expiry_period_ms < 0 {
            let mut changes = Changes::new(&self.image);
            changes.push(vec![MetadataRecord::RemoveDelegationToken {
                token_id: token.token_id,
            }])?;
            return Ok(self.finish(offset, changes, now_ms));
        }
        if token.expired(now_ms) {
            return Err(TokenError::Expired.into());
        }
        let expiry = token
            .max_timestamp_ms
            .min(now_ms.saturating_add(expiry_period_ms));
        self.set_expiry(offset, token, expiry)
    }

    /// Removes every token past its expiry or maximum lifetime at `now_ms`.
    pub fn sweep_expired_tokens(&mut self, offset: u64, now_ms: i64) -> Result<Outcome<()>, Error> {
        let mut changes = Changes::new(&self.image);
        let expired: Vec<&DelegationTokenData> = self
            .image
            .delegation_tokens
            .values()
            .filter(|t| t.expired(now_ms))
            .collect();
        let mut records = Vec::with_capacity(expired.len());
        for token in expired {
            tracing::info!(token_id = %token.token_id, owner = %token.owner, "delegation token expired");
            records.push(MetadataRecord::RemoveDelegationToken {
                token_id: token.token_id.clone(),
            });
        }
        if !records.is_empty() {
            changes.push(records)?;
        }
        Ok(self.finish(offset, changes, ()))
    }

    /// The token whose hmac is `hmac` (DELEGATION_TOKEN_NOT_FOUND otherwise; disabled
    /// without a secret key).
    fn token_for(&self, hmac: &[u8]) -> Result<DelegationTokenData, Error> {
        let settings = &self.config.tokens;
        if !settings.enabled() {
            return Err(TokenError::AuthDisabled.into());
        }
        settings
            .token_for_hmac(&self.image.delegation_tokens, hmac)
            .cloned()
            .ok_or(Error::Token(TokenError::NotFound))
    }

    fn set_expiry(
        &mut self,
        offset: u64,
        mut token: DelegationTokenData,
        expiry_timestamp_ms: i64,
    ) -> Result<Outcome<i64>, Error> {
        token.expiry_timestamp_ms = expiry_timestamp_ms;
        let mut changes = Changes::new(&self.image);
        changes.push(vec![MetadataRecord::DelegationToken { token }])?;
        Ok(self.finish(offset, changes, expiry_timestamp_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::delegation_token::TokenSettings;
    use crate::controller::control::{ClusterControl, ControlConfig};
    use crate::metadata::image::MetadataImage;

    fn control(secret: Option<&str>) -> ClusterControl {
        let config = ControlConfig {
            own_node: 1,
            broker_session_timeout_ms: 9_000,
            default_partitions: 1,
            default_replication_factor: 1,
            unclean_leader_election: false,
            tokens: TokenSettings {
                secret: secret.map(str::to_string),
                max_lifetime_ms: 10_000,
                expiry_time_ms: 4_000,
                expiry_check_interval_ms: 1_000,
            },
        };
        ClusterControl::activate(config, MetadataImage::default(), 0)
    }

    fn request(owner: &str, renewers: &[&str], lifetime: i64) -> TokenRequest {
        TokenRequest {
            owner: owner.into(),
            requester: "User:admin".into(),
            renewers: renewers.iter().map(|r| r.to_string()).collect(),
            max_lifetime_ms: lifetime,
        }
    }

    #[test]
    fn tokens_live_renew_and_expire_as_on_kafka() {
        let mut c = control(Some("secret"));
        let created = c
            .create_delegation_token(1, 1_000, &request("User:alice", &["User:bob"], 0))
            .unwrap()
            .reply;
        let token = &created.token;
        assert_eq!(token.token_id.len(), 22);
        assert_eq!(
            (token.issue_timestamp_ms, token.max_timestamp_ms),
            (1_000, 11_000)
        );
        assert_eq!(token.expiry_timestamp_ms, 5_000);
        assert_eq!(created.hmac.len(), 64);
        let hmac = created.hmac.clone();

        // A shorter lifetime asked for wins; renewers must be users.
        let short = c
            .create_delegation_token(2, 1_000, &request("User:alice", &[], 2_000))
            .unwrap()
            .reply;
        assert_eq!(short.token.max_timestamp_ms, 3_000);
        assert_eq!(short.token.expiry_timestamp_ms, 3_000);
        assert!(matches!(
            c.create_delegation_token(3, 1_000, &request("User:alice", &["Group:x"], 0)),
            Err(Error::Token(TokenError::InvalidPrincipalType))
        ));

        // The owner and the renewers renew, up to the maximum lifetime; others may not.
        assert!(matches!(
            c.renew_delegation_token(4, 2_000, "User:eve", &hmac, 1_000),
            Err(Error::Token(TokenError::OwnerMismatch))
        ));
        let renewed = c
            .renew_delegation_token(4, 2_000, "User:bob", &hmac, 1_000)
            .unwrap();
        assert_eq!(renewed.reply, 3_000);
        // No period: the default expiry time (4 s here).
        let renewed = c
            .renew_delegation_token(5, 2_500, "User:alice", &hmac, -1)
            .unwrap();
        assert_eq!(renewed.reply, 6_500);
        // Never past the maximum lifetime.
        let renewed = c
            .renew_delegation_token(5, 9_000 - 4_000, "User:alice", &hmac, 0)
            .unwrap();
        assert_eq!(renewed.reply, 9_000);
        let renewed = c
            .renew_delegation_token(5, 8_000, "User:alice", &hmac, 0)
            .unwrap();
        assert_eq!(renewed.reply, 11_000);
        assert!(matches!(
            c.renew_delegation_token(6, 8_000, "User:alice", b"unknown", 1),
            Err(Error::Token(TokenError::NotFound))
        ));

        // Expire with a period moves the expiry; a negative one removes the token.
        let expired = c
            .expire_delegation_token(6, 8_000, "User:alice", &hmac, 100)
            .unwrap();
        assert_eq!(expired.reply, 8_100);
        assert!(matches!(
            c.renew_delegation_token(7, 8_200, "User:alice", &hmac, 1),
            Err(Error::Token(TokenError::Expired))
        ));
        let removed = c
            .expire_delegation_token(7, 8_200, "User:alice", &hmac, -1)
            .unwrap();
        assert_eq!(removed.reply, 8_200);
        assert!(!c.image().delegation_tokens.contains_key(&token.token_id));

        // The sweep removes the short token once it is past its expiry.
        assert!(c.sweep_expired_tokens(8, 2_500).unwrap().records.is_empty());
        let swept = c.sweep_expired_tokens(8, 3_001).unwrap();
        assert_eq!(swept.records.len(), 1);
        assert!(c.image().delegation_tokens.is_empty());
    }

    #[test]
    fn without_a_secret_key_tokens_are_disabled() {
        let mut c = control(None);
        assert!(matches!(
            c.create_delegation_token(1, 0, &request("User:alice", &[], 0)),
            Err(Error::Token(TokenError::AuthDisabled))
        ));
        assert!(matches!(
            c.renew_delegation_token(1, 0, "User:alice", b"x", 0),
            Err(Error::Token(TokenError::AuthDisabled))
        ));
    }
}
