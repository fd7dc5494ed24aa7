//! Delegation tokens (KIP-48): created, renewed and expired through the active controller,
//! described from this broker's image; the publisher keeps the SCRAM credentials of the live
//! ones in the token cache, where SASL finds them.

use super::Broker;
use crate::auth::delegation_token::{TokenCache, TokenSettings};
use crate::controller::control::{CreatedToken, TokenRequest};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, TokenError};
use crate::metadata::records::DelegationTokenData;
use std::sync::Arc;

impl Broker {
    pub fn token_settings(&self) -> &TokenSettings {
        &self.token_settings
    }

    pub fn token_cache(&self) -> &Arc<TokenCache> {
        &self.token_cache
    }

    /// A new token; answered once this broker's image holds it, so the client may
    /// authenticate with it here at once.
    pub async fn create_delegation_token(
        &self,
        request: TokenRequest,
    ) -> Result<CreatedToken, Error> {
        self.tokens_enabled()?;
        let created = match self
            .call_active_controller(ControllerOp::CreateDelegationToken(request))
            .await?
        {
            ControllerReply::TokenCreated(created) => created,
            other => return Err(unexpected(other)),
        };
        let id = created.token.token_id.clone();
        self.await_visible(|image| image.delegation_tokens.contains_key(&id))
            .await;
        Ok(created)
    }

    /// Renews the token of `hmac`; its new expiry timestamp.
    pub async fn renew_delegation_token(
        &self,
        requester: String,
        hmac: Vec<u8>,
        period_ms: i64,
    ) -> Result<i64, Error> {
        let op = ControllerOp::RenewDelegationToken {
            requester,
            hmac: hmac.clone(),
            period_ms,
        };
        self.change_token_expiry(op, &hmac).await
    }

    /// Expires the token of `hmac` (a negative period: at once); its new expiry timestamp.
    pub async fn expire_delegation_token(
        &self,
        requester: String,
        hmac: Vec<u8>,
        period_ms: i64,
    ) -> Result<i64, Error> {
        let op = ControllerOp::ExpireDelegationToken {
            requester,
            hmac: hmac.clone(),
            period_ms,
        };
        self.change_token_expiry(op, &hmac).await
    }

    /// Has the active controller renew or expire the token of `hmac`; answers once this
    /// broker's image shows the new expiry (or the token gone).
    async fn change_token_expiry(&self, op: ControllerOp, hmac: &[u8]) -> Result<i64, Error> {
        self.tokens_enabled()?;
        let expiry = match self.call_active_controller(op).await? {
            ControllerReply::TokenExpiry(expiry) => expiry,
            other => return Err(unexpected(other)),
        };
        let settings = self.token_settings.clone();
        self.await_visible(|image| {
            settings
                .token_for_hmac(&image.delegation_tokens, hmac)
                .is_none_or(|t| t.expiry_timestamp_ms == expiry)
        })
        .await;
        Ok(expiry)
    }

    /// The tokens in this broker's metadata.
    pub fn delegation_tokens(&self) -> Vec<DelegationTokenData> {
        self.metadata
            .image()
            .delegation_tokens
            .values()
            .cloned()
            .collect()
    }

    fn tokens_enabled(&self) -> Result<(), Error> {
        if self.token_settings.enabled() {
            Ok(())
        } else {
            Err(TokenError::AuthDisabled.into())
        }
    }
}

fn unexpected(reply: ControllerReply) -> Error {
    Error::Internal(format!("unexpected controller reply {reply:?}"))
}
