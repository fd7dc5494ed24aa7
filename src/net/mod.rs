//! Client side of the protocol: framed requests to another node — the liveness probe used by
//! container health checks (`sluice probe`), and [`PeerConnection`], which every connection
//! this broker opens to another node's listener goes through (replication, forwarding,
//! transaction markers, Raft), secured as that listener requires ([`secure`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | `PeerConnection`: framed requests to another node; the liveness probe |
//! | `secure.rs` | this broker's own connections as a client of a listener's security protocol |

pub mod secure;

pub use secure::PeerSecurity;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ProbeError {
    #[error("cannot reach {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("I/O error talking to the broker: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed response: {0}")]
    Protocol(String),
    #[error("the broker answered ApiVersions with error code {0}")]
    Refused(i16),
}

/// Sends ApiVersions v3 and returns how many APIs the broker advertises.
pub fn probe(address: &str, timeout: Duration) -> Result<usize, ProbeError> {
    let target = address
        .to_socket_addrs()
        .map_err(|e| ProbeError::Connect(address.into(), e))?
        .next()
        .ok_or_else(|| ProbeError::Connect(address.into(), std::io::Error::other("no address")))?;
    let mut stream = TcpStream::connect_timeout(&target, timeout)
        .map_err(|e| ProbeError::Connect(address.into(), e))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let version = 3;
    let header = RequestHeader::default()
        .with_request_api_key(ApiKey::ApiVersions as i16)
        .with_request_api_version(version)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("sluice-probe")));
    let body = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("sluice-probe"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
    let mut frame = BytesMut::new();
    header
        .encode(&mut frame, ApiVersionsRequest::header_version(version))
        .map_err(|e| ProbeError::Protocol(e.to_string()))?;
    body.encode(&mut frame, version)
        .map_err(|e| ProbeError::Protocol(e.to_string()))?;
    stream.write_all(&(frame.len() as i32).to_be_bytes())?;
    stream.write_all(&frame)?;
    let mut size = [0u8; 4];
    stream.read_exact(&mut size)?;
    let size = i32::from_be_bytes(size);
    if !(0..=1 << 20).contains(&size) {
        return Err(ProbeError::Protocol(format!("response size {size}")));
    }
    let mut response = vec![0u8; size as usize];
    stream.read_exact(&mut response)?;
    let mut response = Bytes::from(response);
    ResponseHeader::decode(&mut response, ApiVersionsResponse::header_version(version))
        .map_err(|e| ProbeError::Protocol(e.to_string()))?;
    let body = ApiVersionsResponse::decode(&mut response, version)
        .map_err(|e| ProbeError::Protocol(e.to_string()))?;
    if body.error_code != 0 {
        return Err(ProbeError::Refused(body.error_code));
    }
    Ok(body.api_keys.len())
}

/// Errors of an inter-broker request.
#[derive(Debug, Error)]
pub enum RequestError {
    #[error("cannot reach {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("I/O error talking to {0}: {1}")]
    Io(String, std::io::Error),
    #[error("no answer from {0} within {1:?}")]
    Timeout(String, Duration),
    #[error("malformed exchange with {0}: {1}")]
    Protocol(String, String),
    #[error("authentication with {0} failed: {1}")]
    Authentication(String, String),
}

/// An async connection to another node, for requests made one at a time (controller RPCs):
/// a Kafka request frame out, its response frame back, matched by correlation id. On a SASL
/// listener it has authenticated before it is handed out, and re-authenticates on the same
/// connection before its session ends (KIP-368).
pub struct PeerConnection {
    address: String,
    stream: Box<dyn secure::PeerStream>,
    correlation_id: i32,
    client_id: StrBytes,
    security: PeerSecurity,
    /// When the SASL session should be renewed (before the server ends it).
    reauthenticate_at: Option<std::time::Instant>,
}

impl std::fmt::Debug for PeerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerConnection")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

/// Largest response a peer may send (controller responses are small).
const MAX_PEER_RESPONSE: i32 = 100 << 20;

impl PeerConnection {
    /// Connects to `address` (a listener whose security is `security`), within `timeout`
    /// for TCP, TLS and SASL together.
    pub async fn connect(
        address: &str,
        client_id: &str,
        timeout: Duration,
        security: &PeerSecurity,
    ) -> Result<Self, RequestError> {
        tokio::time::timeout(timeout, Self::open(address, client_id, security))
            .await
            .map_err(|_| RequestError::Timeout(address.into(), timeout))?
    }

    async fn open(
        address: &str,
        client_id: &str,
        security: &PeerSecurity,
    ) -> Result<Self, RequestError> {
        let tcp = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| RequestError::Connect(address.into(), e))?;
        let _ = tcp.set_nodelay(true);
        let stream = security.wrap(address, tcp).await?;
        let mut connection = Self {
            address: address.to_string(),
            stream,
            correlation_id: 0,
            client_id: StrBytes::from_string(client_id.to_string()),
            security: security.clone(),
            reauthenticate_at: None,
        };
        connection.authenticate().await?;
        Ok(connection)
    }

    /// SASL on a SASL listener (nothing otherwise): SaslHandshake v1, then the mechanism's
    /// tokens in SaslAuthenticate v2 requests.
    async fn authenticate(&mut self) -> Result<(), RequestError> {
        let Some(credentials) = self.security.sasl.clone() else {
            return Ok(());
        };
        let refused = |address: &str, reason: String| {
            RequestError::Authentication(address.to_string(), reason)
        };
        let handshake: SaslHandshakeResponse = self
            .exchange(
                ApiKey::SaslHandshake,
                1,
                &SaslHandshakeRequest::default()
                    .with_mechanism(StrBytes::from_static_str(credentials.mechanism().name())),
            )
            .await?;
        if handshake.error_code != 0 {
            return Err(refused(
                &self.address,
                format!(
                    "{} is not enabled there (error {}; enabled: {:?})",
                    credentials.mechanism().name(),
                    handshake.error_code,
                    handshake.mechanisms
                ),
            ));
        }
        let mut exchange = credentials
            .exchange()
            .map_err(|reason| refused(&self.address, reason))?;
        let mut token = Some(exchange.first());
        while let Some(sent) = token.take() {
            let response: SaslAuthenticateResponse = self
                .exchange(
                    ApiKey::SaslAuthenticate,
                    2,
                    &SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(sent)),
                )
                .await?;
            if response.error_code != 0 {
                return Err(refused(
                    &self.address,
                    format!(
                        "error {}: {}",
                        response.error_code,
                        response.error_message.as_deref().unwrap_or("")
                    ),
                ));
            }
            token = exchange
                .step(&response.auth_bytes)
                .map_err(|reason| refused(&self.address, reason))?;
            if token.is_none() && response.session_lifetime_ms > 0 {
                // As Kafka's clients: renew at 85% of the session.
                let renew = Duration::from_millis(response.session_lifetime_ms as u64 * 85 / 100);
                self.reauthenticate_at = Some(std::time::Instant::now() + renew);
            }
        }
        Ok(())
    }

    /// Whether the SASL session is about to end (a connection that only writes, as Raft's,
    /// is replaced then instead of re-authenticating).
    pub fn session_ending(&self) -> bool {
        self.reauthenticate_at
            .is_some_and(|at| std::time::Instant::now() >= at)
    }

    /// The authenticated stream, for frames that get no response (Raft messages).
    pub fn stream_mut(&mut self) -> &mut (dyn secure::PeerStream + 'static) {
        &mut *self.stream
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    /// Sends one request and waits for its response.
    pub async fn request<Req, Resp>(
        &mut self,
        api: ApiKey,
        version: i16,
        request: &Req,
        timeout: Duration,
    ) -> Result<Resp, RequestError>
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        tokio::time::timeout(timeout, async {
            if self.session_ending() {
                self.reauthenticate_at = None;
                self.authenticate().await?;
            }
            self.exchange(api, version, request).await
        })
        .await
        .map_err(|_| RequestError::Timeout(self.address.clone(), timeout))?
    }

    async fn exchange<Req, Resp>(
        &mut self,
        api: ApiKey,
        version: i16,
        request: &Req,
    ) -> Result<Resp, RequestError>
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let protocol =
            |e: anyhow::Error| RequestError::Protocol(self.address.clone(), e.to_string());
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation_id)
            .with_client_id(Some(self.client_id.clone()));
        let mut frame = BytesMut::new();
        frame.extend_from_slice(&[0; 4]);
        header
            .encode(&mut frame, Req::header_version(version))
            .map_err(protocol)?;
        request.encode(&mut frame, version).map_err(protocol)?;
        let size = (frame.len() - 4) as i32;
        frame[..4].copy_from_slice(&size.to_be_bytes());
        let io = |e: std::io::Error| RequestError::Io(self.address.clone(), e);
        self.stream.write_all(&frame).await.map_err(io)?;
        let size = self.stream.read_i32().await.map_err(io)?;
        if !(0..=MAX_PEER_RESPONSE).contains(&size) {
            return Err(RequestError::Protocol(
                self.address.clone(),
                format!("response size {size}"),
            ));
        }
        let mut body = vec![0u8; size as usize];
        self.stream.read_exact(&mut body).await.map_err(io)?;
        let mut body = Bytes::from(body);
        let protocol =
            |e: anyhow::Error| RequestError::Protocol(self.address.clone(), e.to_string());
        let header =
            ResponseHeader::decode(&mut body, Resp::header_version(version)).map_err(protocol)?;
        if header.correlation_id != self.correlation_id {
            return Err(RequestError::Protocol(
                self.address.clone(),
                format!(
                    "correlation id {} answered {}",
                    header.correlation_id, self.correlation_id
                ),
            ));
        }
        Resp::decode(&mut body, version).map_err(protocol)
    }
}
