//! SASL on a connection, as Kafka's `SaslServerAuthenticator` runs it: before authentication
//! only ApiVersions and SaslHandshake are answered (anything else closes the connection);
//! after a v1 handshake the tokens come in SaslAuthenticate requests, after a v0 handshake as
//! raw size-prefixed frames; a failed authentication is answered with
//! SASL_AUTHENTICATION_FAILED after `connection.failed.authentication.delay.ms` and the
//! connection closed. Frames before authentication are bounded by
//! `sasl.server.max.receive.size`. With `connections.max.reauth.ms` a session expires: the
//! client re-authenticates (SaslHandshake + SaslAuthenticate on the same connection, same
//! mechanism and principal) or its next request after expiry closes the connection (KIP-368).

use super::codec::{self, FrameError};
use super::connection::FrameHandler;
use crate::api::frame::ResponseFrame;
use crate::api::{ApiContext, IntoFrame, sasl_authenticate, sasl_handshake};
use crate::auth::KafkaPrincipal;
use crate::auth::sasl::{Mechanism, SaslExchange, SaslListener, SaslStep};
use crate::error::code;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, RequestHeader, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Message};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// An authenticated session.
#[derive(Debug, Clone)]
struct Session {
    principal: KafkaPrincipal,
    mechanism: Mechanism,
    expires: Option<Instant>,
}

enum State {
    /// Nothing but ApiVersions and SaslHandshake yet.
    AwaitingHandshake,
    /// A mechanism was chosen; its tokens are expected. `raw` after a v0 handshake;
    /// `previous` while re-authenticating.
    Authenticating {
        exchange: Box<SaslExchange>,
        raw: bool,
        previous: Option<Session>,
    },
    Authenticated(Session),
}

/// What sits behind a secured connection (the API layer, or the controller listener's
/// frames): told who the connection is once it has proved it.
pub trait Authenticated: FrameHandler {
    /// The connection proved it is `principal` (with a delegation token: its owner).
    fn authenticated(&mut self, principal: KafkaPrincipal, token_authenticated: bool);
    /// Where SCRAM credentials (and delegation tokens) are looked up.
    fn credentials(&self) -> crate::auth::sasl::NodeCredentials;
    /// Where the SASL requests the gate answers itself are counted (Kafka's request metrics).
    fn request_stats(&self) -> Option<Arc<crate::stats::requests::RequestStats>> {
        None
    }
}

impl Authenticated for ApiContext {
    fn authenticated(&mut self, principal: KafkaPrincipal, token_authenticated: bool) {
        *self = self.with_principal(principal);
        self.token_authenticated = token_authenticated;
    }

    fn credentials(&self) -> crate::auth::sasl::NodeCredentials {
        crate::auth::sasl::NodeCredentials {
            image: self.broker.metadata().image(),
            tokens: Some(self.broker.token_cache().clone()),
        }
    }

    fn request_stats(&self) -> Option<Arc<crate::stats::requests::RequestStats>> {
        Some(self.broker.stats().requests.clone())
    }
}

/// The handler behind a SASL listener's connection, reached once the connection has
/// authenticated.
pub struct SaslGate<H = ApiContext> {
    inner: H,
    listener: Arc<SaslListener>,
    peer: SocketAddr,
    state: State,
    close: bool,
}

impl<H: Authenticated> SaslGate<H> {
    pub fn new(inner: H, listener: Arc<SaslListener>, peer: SocketAddr) -> Self {
        Self {
            inner,
            listener,
            peer,
            state: State::AwaitingHandshake,
            close: false,
        }
    }

    fn refuse(&self, reason: String) -> FrameError {
        FrameError::Authentication(reason)
    }

    fn handshake(
        &mut self,
        frame: Bytes,
        previous: Option<Session>,
    ) -> Result<Option<ResponseFrame>, FrameError> {
        let (header, request) = decode::<SaslHandshakeRequest>(frame, ApiKey::SaslHandshake)?;
        let version = header.request_api_version;
        let names = self.listener.mechanism_names();
        let chosen = self.listener.mechanism(&request.mechanism);
        let chosen = match (&previous, chosen) {
            // Re-authentication keeps the mechanism and needs SaslAuthenticate.
            (Some(session), Some(m)) if m != session.mechanism || version == 0 => None,
            (_, chosen) => chosen,
        };
        let error = match chosen {
            Some(mechanism) => {
                self.state = State::Authenticating {
                    exchange: Box::new(SaslExchange::new(mechanism)),
                    raw: version == 0,
                    previous,
                };
                code::NONE
            }
            None => {
                tracing::info!(peer = %self.peer, mechanism = %request.mechanism, "closing connection: SASL mechanism not enabled on this listener");
                self.close = true;
                code::UNSUPPORTED_SASL_MECHANISM
            }
        };
        sasl_handshake::response(error, &names)
            .into_frame(ApiKey::SaslHandshake, version, header.correlation_id)
            .map(Some)
            .map_err(FrameError::from)
    }

    async fn authenticate(
        &mut self,
        token: Bytes,
        header: Option<RequestHeader>,
    ) -> Result<Option<ResponseFrame>, FrameError> {
        let State::Authenticating {
            exchange, previous, ..
        } = &mut self.state
        else {
            return Err(self.refuse("SASL token outside an authentication".into()));
        };
        let credentials = self.inner.credentials();
        let step = exchange.step(&token, &self.listener, &credentials);
        let mechanism = exchange.mechanism();
        let step = match (step, previous.as_ref()) {
            (Ok(SaslStep::Authenticated { principal, .. }), Some(previous))
                if principal != previous.principal =>
            {
                Err(crate::auth::sasl::SaslFailure(format!(
                    "Cannot change principals during re-authentication from {}: {principal}",
                    previous.principal
                )))
            }
            (step, _) => step,
        };
        let (token, lifetime_ms) = match step {
            Ok(SaslStep::Challenge(challenge)) => (challenge, 0),
            Ok(SaslStep::Authenticated {
                principal,
                response,
                session_lifetime,
                token_authenticated,
            }) => {
                tracing::debug!(peer = %self.peer, %principal, mechanism = mechanism.name(), token_authenticated, "authenticated");
                self.inner
                    .authenticated(principal.clone(), token_authenticated);
                self.state = State::Authenticated(Session {
                    principal,
                    mechanism,
                    expires: session_lifetime.map(|l| Instant::now() + l),
                });
                let lifetime_ms = session_lifetime.map_or(0, |l| l.as_millis() as i64);
                (response, lifetime_ms)
            }
            Err(failure) => {
                tracing::info!(peer = %self.peer, mechanism = mechanism.name(), "authentication failed: {failure}");
                tokio::time::sleep(self.listener.failed_authentication_delay).await;
                let Some(header) = header else {
                    // A v0 (raw token) exchange has no way to say why: it just ends.
                    return Err(self.refuse(format!("authentication failed: {failure}")));
                };
                self.close = true;
                return sasl_authenticate::response(Vec::new(), Some(&failure.0), 0)
                    .into_frame(
                        ApiKey::SaslAuthenticate,
                        header.request_api_version,
                        header.correlation_id,
                    )
                    .map(Some)
                    .map_err(FrameError::from);
            }
        };
        match header {
            Some(header) => sasl_authenticate::response(token, None, lifetime_ms)
                .into_frame(
                    ApiKey::SaslAuthenticate,
                    header.request_api_version,
                    header.correlation_id,
                )
                .map(Some)
                .map_err(FrameError::from),
            None => {
                let mut raw = BytesMut::with_capacity(4 + token.len());
                raw.put_i32(token.len() as i32);
                raw.put_slice(&token);
                Ok(Some(ResponseFrame::from(raw)))
            }
        }
    }
}

impl<H: Authenticated> SaslGate<H> {
    /// Counts a SASL request the gate answered itself, as the API layer counts the others.
    fn counted(
        &self,
        api: ApiKey,
        version: i16,
        started: Instant,
        answered: Result<Option<ResponseFrame>, FrameError>,
    ) -> Result<Option<ResponseFrame>, FrameError> {
        if answered.is_ok()
            && let Some(stats) = self.inner.request_stats()
        {
            crate::stats::requests::handled(&stats, api as usize, None, version, started);
        }
        answered
    }
}

impl<H: Authenticated> FrameHandler for SaslGate<H> {
    async fn handle(&mut self, frame: Bytes) -> Result<Option<ResponseFrame>, FrameError> {
        if let State::Authenticating { raw: true, .. } = self.state {
            return self.authenticate(frame, None).await;
        }
        let summary = codec::summarize(&frame)?;
        let api = ApiKey::try_from(summary.api_key).ok();
        match &self.state {
            State::Authenticated(session) => {
                if api == Some(ApiKey::SaslHandshake) {
                    let previous = Some(session.clone());
                    let started = Instant::now();
                    let answered = self.handshake(frame, previous);
                    return self.counted(ApiKey::SaslHandshake, summary.version, started, answered);
                }
                if session.expires.is_some_and(|at| Instant::now() >= at) {
                    return Err(self.refuse(
                        "its SASL session expired (connections.max.reauth.ms) without re-authentication"
                            .into(),
                    ));
                }
                self.inner.handle(frame).await
            }
            State::AwaitingHandshake => match api {
                Some(ApiKey::ApiVersions) => self.inner.handle(frame).await,
                Some(ApiKey::SaslHandshake) => {
                    let started = Instant::now();
                    let answered = self.handshake(frame, None);
                    self.counted(ApiKey::SaslHandshake, summary.version, started, answered)
                }
                _ => Err(self.refuse(format!(
                    "request (api key {}) before SASL authentication",
                    summary.api_key
                ))),
            },
            State::Authenticating { .. } => match api {
                Some(ApiKey::SaslAuthenticate) => {
                    let started = Instant::now();
                    let (header, request) =
                        decode::<SaslAuthenticateRequest>(frame, ApiKey::SaslAuthenticate)?;
                    let answered = self.authenticate(request.auth_bytes, Some(header)).await;
                    self.counted(ApiKey::SaslAuthenticate, summary.version, started, answered)
                }
                _ => Err(self.refuse(format!(
                    "request (api key {}) during SASL authentication",
                    summary.api_key
                ))),
            },
        }
    }

    fn frame_limit(&self) -> Option<(usize, &'static str)> {
        match self.state {
            State::Authenticated(_) => None,
            _ => Some((
                self.listener.max_receive_size,
                "sasl.server.max.receive.size",
            )),
        }
    }

    fn close_after_response(&self) -> bool {
        self.close
    }

    fn take_throttle(&mut self) -> Option<std::time::Duration> {
        self.inner.take_throttle()
    }
}

/// A request's header and body, decoded.
fn decode<R: Decodable + Message>(
    mut frame: Bytes,
    api: ApiKey,
) -> Result<(RequestHeader, R), FrameError> {
    let summary = codec::summarize(&frame)?;
    if !(R::VERSIONS.min..=R::VERSIONS.max).contains(&summary.version) {
        return Err(FrameError::Dispatch(
            crate::api::DispatchError::UnsupportedVersion {
                api,
                version: summary.version,
            },
        ));
    }
    let header = RequestHeader::decode(&mut frame, api.request_header_version(summary.version))
        .map_err(|e| FrameError::Header {
            api_key: summary.api_key,
            version: summary.version,
            reason: e.to_string(),
        })?;
    // A handshake's frame is bounded by `sasl.server.max.receive.size`; so is what it decodes to.
    let budget = frame.len().max(1024);
    let request = kafka_protocol::protocol::types::with_decode_budget(budget, || {
        R::decode(&mut frame, summary.version)
    })
    .map_err(|e| {
        FrameError::Dispatch(crate::api::DispatchError::Decode {
            api,
            version: summary.version,
            reason: e.to_string(),
        })
    })?;
    Ok((header, request))
}
