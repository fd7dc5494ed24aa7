//! Client side of the protocol: framed requests to another broker. Today it holds the
//! liveness probe used by container health checks (`sluice probe`); inter-broker fetching
//! (issue 6) will live here too.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
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
