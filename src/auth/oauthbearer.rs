//! SASL/OAUTHBEARER (KIP-255, RFC 7628) as Kafka's broker validates it. The client's one
//! message is `n,[a=authzid],` `\x01auth=Bearer <token>\x01` (extensions) `\x01`. Two
//! validators, chosen as in Kafka:
//! - Kafka's default, the unsecured JWS for development (`OAuthBearerUnsecuredJws`): a token
//!   whose header says `"alg":"none"`, checked for its principal claim (JAAS option
//!   `unsecuredValidatorPrincipalClaimName`, default `sub`), `exp` and `iat` within
//!   `unsecuredValidatorAllowableClockSkewMs`, and `unsecuredValidatorRequiredScope`;
//! - with `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class=
//!   org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler`
//!   (KIP-768), signed tokens checked with the `jsonwebtoken` crate against the keys of
//!   `sasl.oauthbearer.jwks.endpoint.url` (a `file:` URL: there is no HTTP client in the
//!   broker), `sasl.oauthbearer.expected.audience` / `.expected.issuer`, expiry with
//!   `sasl.oauthbearer.clock.skew.seconds`, the principal from `sasl.oauthbearer.sub.claim.name`.
//!
//! A bad token is answered, as RFC 7628 says, with a JSON challenge
//! (`{"status":"invalid_token"}`); the client's `\x01` that follows ends the exchange with
//! SASL_AUTHENTICATION_FAILED. The session lasts until the token expires.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Kafka's class name of the signed-token validator.
pub const VALIDATOR_CALLBACK_HANDLER: &str =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler";

/// How tokens are checked on one listener.
#[derive(Debug, Clone)]
pub enum Validator {
    Unsecured {
        principal_claim: String,
        scope_claim: String,
        required_scope: Vec<String>,
        clock_skew_ms: u64,
    },
    Signed(Box<SignedValidator>),
}

#[derive(Debug, Clone)]
pub struct SignedValidator {
    keys: super::jwks::JwksSource,
    audience: Vec<String>,
    issuer: Option<String>,
    principal_claim: String,
    clock_skew_seconds: u64,
}

/// A token that was accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub principal: String,
    /// Until the token expires.
    pub lifetime: Duration,
}

/// Why a token was refused (said in the log; the client is told `invalid_token`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Validator {
    /// Kafka's default validator with the JAAS options of the listener's login module.
    pub fn unsecured(option: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let clock_skew_ms = match option("unsecuredValidatorAllowableClockSkewMs") {
            Some(ms) => ms.trim().parse().map_err(|_| {
                "unsecuredValidatorAllowableClockSkewMs must be a number".to_string()
            })?,
            None => 0,
        };
        Ok(Self::Unsecured {
            principal_claim: option("unsecuredValidatorPrincipalClaimName")
                .unwrap_or_else(|| "sub".into()),
            scope_claim: option("unsecuredValidatorScopeClaimName")
                .unwrap_or_else(|| "scope".into()),
            required_scope: option("unsecuredValidatorRequiredScope")
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            clock_skew_ms,
        })
    }

    /// The KIP-768 validator over a JWKS (a file, or an endpoint kept fresh).
    pub fn signed(
        keys: super::jwks::JwksSource,
        audience: Vec<String>,
        issuer: Option<String>,
        principal_claim: String,
        clock_skew_seconds: u64,
    ) -> Result<Self, String> {
        Ok(Self::Signed(Box::new(SignedValidator {
            keys,
            audience,
            issuer,
            principal_claim,
            clock_skew_seconds,
        })))
    }

    /// Checks the client's message.
    pub fn validate(&self, message: &[u8]) -> Result<Accepted, Refused> {
        let (authzid, token) = parse_client_message(message)?;
        let accepted = match self {
            Self::Unsecured {
                principal_claim,
                scope_claim,
                required_scope,
                clock_skew_ms,
            } => unsecured(
                token,
                principal_claim,
                scope_claim,
                required_scope,
                *clock_skew_ms,
            )?,
            Self::Signed(signed) => signed.validate(token)?,
        };
        if let Some(authzid) = authzid
            && authzid != accepted.principal
        {
            return Err(Refused(format!(
                "authorization id {authzid} is not the token's principal"
            )));
        }
        Ok(accepted)
    }
}

/// RFC 7628's client initial response: the GS2 header, then `auth=Bearer <token>` among
/// key/value pairs separated by `\x01`.
fn parse_client_message(message: &[u8]) -> Result<(Option<String>, &str), Refused> {
    let text = std::str::from_utf8(message).map_err(|_| Refused("message is not UTF-8".into()))?;
    let mut parts = text.split('\u{1}');
    let gs2 = parts.next().unwrap_or_default();
    let mut gs2_fields = gs2.split(',');
    if gs2_fields.next() != Some("n") {
        return Err(Refused(
            "invalid GS2 header (channel binding is not supported)".into(),
        ));
    }
    let authzid = match gs2_fields.next() {
        Some("") | None => None,
        Some(field) => Some(
            field
                .strip_prefix("a=")
                .ok_or_else(|| Refused("invalid authorization id".into()))?
                .to_string(),
        ),
    };
    let mut token = None;
    for pair in parts.filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| Refused("invalid key/value pair".into()))?;
        if key == "auth" {
            let (scheme, bearer) = value
                .split_once(' ')
                .ok_or_else(|| Refused("invalid auth value".into()))?;
            if !scheme.eq_ignore_ascii_case("bearer") {
                return Err(Refused("the auth scheme must be Bearer".into()));
            }
            token = Some(bearer.trim());
        }
    }
    let token = token.ok_or_else(|| Refused("no auth=Bearer token".into()))?;
    Ok((authzid, token))
}

fn claim_scopes(claims: &serde_json::Value, scope_claim: &str) -> Vec<String> {
    match claims.get(scope_claim) {
        Some(serde_json::Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Kafka's `OAuthBearerUnsecuredJws` checks.
fn unsecured(
    token: &str,
    principal_claim: &str,
    scope_claim: &str,
    required_scope: &[String],
    clock_skew_ms: u64,
) -> Result<Accepted, Refused> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refused("an unsecured JWS has three parts".into()));
    };
    if !signature.is_empty() {
        return Err(Refused("an unsecured JWS has an empty signature".into()));
    }
    let decode = |part: &str| -> Result<serde_json::Value, Refused> {
        let bytes = URL_SAFE_NO_PAD
            .decode(part.trim_end_matches('='))
            .map_err(|_| Refused("a JWS part is not base64url".into()))?;
        serde_json::from_slice(&bytes).map_err(|_| Refused("a JWS part is not JSON".into()))
    };
    let header = decode(header)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("none") {
        return Err(Refused(
            "an unsecured JWS must have \"alg\":\"none\"".into(),
        ));
    }
    let claims = decode(payload)?;
    let principal = claims
        .get(principal_claim)
        .and_then(|p| p.as_str())
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| Refused(format!("no principal claim '{principal_claim}'")))?
        .to_string();
    let seconds = |name: &str| claims.get(name).and_then(serde_json::Value::as_f64);
    let exp = seconds("exp").ok_or_else(|| Refused("no exp claim".into()))?;
    let now = now_ms();
    let exp_ms = (exp * 1000.0) as u64;
    if exp_ms + clock_skew_ms <= now {
        return Err(Refused("the token has expired".into()));
    }
    if let Some(iat) = seconds("iat")
        && (iat * 1000.0) as u64 > now + clock_skew_ms
    {
        return Err(Refused("the token was issued in the future".into()));
    }
    let scopes = claim_scopes(&claims, scope_claim);
    if let Some(missing) = required_scope.iter().find(|s| !scopes.contains(s)) {
        return Err(Refused(format!(
            "the token lacks the required scope {missing}"
        )));
    }
    Ok(Accepted {
        principal,
        lifetime: Duration::from_millis(exp_ms.saturating_sub(now)),
    })
}

impl SignedValidator {
    fn validate(&self, token: &str) -> Result<Accepted, Refused> {
        use jsonwebtoken::{Algorithm, DecodingKey, Validation};
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Refused(format!("unreadable token header: {e}")))?;
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(Refused(
                "symmetric (HS*) signatures are not accepted".into(),
            ));
        }
        let keys = self.keys.keys();
        let jwk = match &header.kid {
            Some(kid) => keys.find(kid),
            None => keys.keys.first(),
        }
        .ok_or_else(|| {
            // The endpoint may have rotated its keys since they were fetched.
            self.keys.unknown_key();
            Refused("no key of the JWKS matches the token's kid".into())
        })?;
        let key =
            DecodingKey::from_jwk(jwk).map_err(|e| Refused(format!("unusable JWKS key: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.clock_skew_seconds;
        if self.audience.is_empty() {
            validation.validate_aud = false;
        } else {
            validation.set_audience(&self.audience);
        }
        if let Some(issuer) = &self.issuer {
            validation.set_issuer(&[issuer]);
        }
        let data = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
            .map_err(|e| Refused(format!("token rejected: {e}")))?;
        let claims = data.claims;
        let principal = claims
            .get(&self.principal_claim)
            .and_then(|p| p.as_str())
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| Refused(format!("no principal claim '{}'", self.principal_claim)))?
            .to_string();
        let exp_ms = claims
            .get("exp")
            .and_then(serde_json::Value::as_f64)
            .map_or(0, |e| (e * 1000.0) as u64);
        Ok(Accepted {
            principal,
            lifetime: Duration::from_millis(exp_ms.saturating_sub(now_ms())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsecured_token(claims: serde_json::Value) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        format!("{header}.{payload}.")
    }

    fn message(token: &str) -> Vec<u8> {
        format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}").into_bytes()
    }

    fn now_s() -> f64 {
        now_ms() as f64 / 1000.0
    }

    #[test]
    fn unsecured_tokens_are_checked_as_kafkas_default_validator() {
        let validator = Validator::unsecured(|name| {
            (name == "unsecuredValidatorRequiredScope").then(|| "produce".to_string())
        })
        .unwrap();
        let good = unsecured_token(
            serde_json::json!({"sub": "alice", "iat": now_s(), "exp": now_s() + 60.0, "scope": "produce consume"}),
        );
        let accepted = validator.validate(&message(&good)).unwrap();
        assert_eq!(accepted.principal, "alice");
        assert!(accepted.lifetime <= Duration::from_secs(60));
        for bad in [
            serde_json::json!({"sub": "alice", "exp": now_s() - 10.0, "scope": "produce"}),
            serde_json::json!({"sub": "alice", "exp": now_s() + 60.0}),
            serde_json::json!({"exp": now_s() + 60.0, "scope": "produce"}),
            serde_json::json!({"sub": "alice", "scope": "produce"}),
            serde_json::json!({"sub": "alice", "iat": now_s() + 600.0, "exp": now_s() + 900.0, "scope": "produce"}),
        ] {
            assert!(
                validator
                    .validate(&message(&unsecured_token(bad.clone())))
                    .is_err(),
                "{bad}"
            );
        }
        let signed_header = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256"}"#),
            URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#)
        );
        assert!(validator.validate(&message(&signed_header)).is_err());
        for garbage in [
            &b"n,,"[..],
            b"y,,\x01auth=Bearer x\x01\x01",
            b"n,,\x01auth=Basic x\x01\x01",
            &[0xff],
        ] {
            assert!(validator.validate(garbage).is_err());
        }
        let with_authzid = format!("n,a=bob,\u{1}auth=Bearer {good}\u{1}\u{1}");
        assert!(validator.validate(with_authzid.as_bytes()).is_err());
    }

    #[test]
    fn signed_tokens_are_checked_against_the_jwks() {
        use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
        let key = rcgen::KeyPair::generate().unwrap();
        let encoding = EncodingKey::from_ec_pem(key.serialize_pem().as_bytes()).unwrap();
        let mut jwk =
            jsonwebtoken::jwk::Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some("k1".into());
        let jwks = serde_json::json!({ "keys": [jwk] }).to_string();
        let validator = Validator::signed(
            crate::auth::jwks::JwksSource::document(&jwks).unwrap(),
            vec!["kafka".into()],
            Some("https://issuer.example".into()),
            "sub".into(),
            30,
        )
        .unwrap();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        let token = |claims: serde_json::Value| encode(&header, &claims, &encoding).unwrap();
        let good = token(
            serde_json::json!({"sub": "carol", "aud": "kafka", "iss": "https://issuer.example", "exp": now_s() as u64 + 120}),
        );
        assert_eq!(
            validator.validate(&message(&good)).unwrap().principal,
            "carol"
        );
        for bad in [
            serde_json::json!({"sub": "carol", "aud": "other", "iss": "https://issuer.example", "exp": now_s() as u64 + 120}),
            serde_json::json!({"sub": "carol", "aud": "kafka", "iss": "https://evil.example", "exp": now_s() as u64 + 120}),
            serde_json::json!({"sub": "carol", "aud": "kafka", "iss": "https://issuer.example", "exp": now_s() as u64 - 600}),
        ] {
            assert!(
                validator.validate(&message(&token(bad.clone()))).is_err(),
                "{bad}"
            );
        }
        // Signed by another key: refused.
        let other = rcgen::KeyPair::generate().unwrap();
        let forged = encode(
            &header,
            &serde_json::json!({"sub": "carol", "aud": "kafka", "iss": "https://issuer.example", "exp": now_s() as u64 + 120}),
            &EncodingKey::from_ec_pem(other.serialize_pem().as_bytes()).unwrap(),
        )
        .unwrap();
        assert!(validator.validate(&message(&forged)).is_err());
    }
}
