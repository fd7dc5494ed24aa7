//! SaslAuthenticate (v0–2, KIP-152): one SASL token each way, wrapped in Kafka framing; v1
//! adds the session lifetime (KIP-368). On a SASL listener the connection answers it
//! (`server::session`) through [`response`]; what reaches the dispatch table came where no
//! exchange is under way and gets Kafka's ILLEGAL_SASL_STATE.

use super::{ApiContext, wire_str};
use crate::error::code;
use bytes::Bytes;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslAuthenticateResponse};

pub async fn handle(
    _ctx: &ApiContext,
    _request: SaslAuthenticateRequest,
    _version: i16,
) -> Option<SaslAuthenticateResponse> {
    Some(
        SaslAuthenticateResponse::default()
            .with_error_code(code::ILLEGAL_SASL_STATE)
            .with_error_message(Some(wire_str(
                "SaslAuthenticate request received after successful authentication",
            ))),
    )
}

/// A token back to the client, or (with `error_message`) SASL_AUTHENTICATION_FAILED.
pub fn response(
    token: Vec<u8>,
    error_message: Option<&str>,
    session_lifetime_ms: i64,
) -> SaslAuthenticateResponse {
    SaslAuthenticateResponse::default()
        .with_error_code(if error_message.is_some() {
            code::SASL_AUTHENTICATION_FAILED
        } else {
            code::NONE
        })
        .with_error_message(error_message.map(wire_str))
        .with_auth_bytes(Bytes::from(token))
        .with_session_lifetime_ms(session_lifetime_ms)
}
