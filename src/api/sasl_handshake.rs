//! SaslHandshake (v0–1): the client names the mechanism it will authenticate with. On a SASL
//! listener the connection answers it before any other request (`server::session`), through
//! [`response`]; what reaches the dispatch table came on a listener without SASL, or on a
//! connection past authentication that is not re-authenticating, and gets Kafka's
//! ILLEGAL_SASL_STATE.

use super::{ApiContext, wire_str};
use crate::error::code;
use kafka_protocol::messages::{SaslHandshakeRequest, SaslHandshakeResponse};

pub async fn handle(
    _ctx: &ApiContext,
    _request: SaslHandshakeRequest,
    _version: i16,
) -> Option<SaslHandshakeResponse> {
    Some(SaslHandshakeResponse::default().with_error_code(code::ILLEGAL_SASL_STATE))
}

/// The answer to a handshake on a SASL listener: the enabled mechanisms, and
/// UNSUPPORTED_SASL_MECHANISM when the one asked for is not among them.
pub fn response(error_code: i16, mechanisms: &[&str]) -> SaslHandshakeResponse {
    SaslHandshakeResponse::default()
        .with_error_code(error_code)
        .with_mechanisms(mechanisms.iter().map(|m| wire_str(m)).collect())
}
