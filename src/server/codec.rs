//! Request and response framing around the API layer: decodes the request header (whose
//! version depends on the API and version in the frame's first four bytes), dispatches, and
//! encodes the size-prefixed response with the right response header version.
//!
//! ```text
//! request frame  = size: i32 | api_key: i16 | api_version: i16 | correlation_id: i32 | client_id ... | body
//! response frame = size: i32 | correlation_id: i32 | [tagged fields (header v1)] | body
//! ```

use crate::api::frame::ResponseFrame;
use crate::api::{self, ApiContext, DispatchError, api_versions};
use crate::error::code;
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, Message};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FrameError {
    #[error("frame of {0} bytes is too short for a request header")]
    TooShort(usize),
    #[error("cannot decode request header of api key {api_key} v{version}: {reason}")]
    Header {
        api_key: i16,
        version: i16,
        reason: String,
    },
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    #[error("cannot encode response header: {0}")]
    Encode(String),
    /// The connection broke the authentication protocol, or failed to authenticate.
    #[error("{0}")]
    Authentication(String),
}

/// The identifying fields of a request, for logs.
#[derive(Debug, Clone, Copy)]
pub struct RequestSummary {
    pub api_key: i16,
    pub version: i16,
    pub correlation_id: i32,
}

/// Peeks api key, version and correlation id, which sit at fixed positions in every header.
pub fn summarize(frame: &[u8]) -> Result<RequestSummary, FrameError> {
    if frame.len() < 8 {
        return Err(FrameError::TooShort(frame.len()));
    }
    Ok(RequestSummary {
        api_key: i16::from_be_bytes([frame[0], frame[1]]),
        version: i16::from_be_bytes([frame[2], frame[3]]),
        correlation_id: i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]),
    })
}

/// Handles one request frame (without its size prefix). Returns the complete response frame,
/// or `None` when the request gets no response.
pub async fn handle_frame(
    ctx: &ApiContext,
    frame: Bytes,
) -> Result<Option<ResponseFrame>, FrameError> {
    let summary = summarize(&frame)?;
    let api = ApiKey::try_from(summary.api_key)
        .map_err(|_| DispatchError::UnknownApiKey(summary.api_key))?;
    let started = std::time::Instant::now();
    let handled = handle_api(ctx, summary, api, frame).await;
    if handled.is_ok() {
        let fetch_slots = (api == ApiKey::Fetch).then_some((
            api::request_names::FETCH_CONSUMER,
            api::request_names::FETCH_FOLLOWER,
        ));
        crate::stats::requests::handled(
            &ctx.broker.stats().requests,
            api as usize,
            fetch_slots,
            summary.version,
            started,
        );
    }
    handled
}

async fn handle_api(
    ctx: &ApiContext,
    summary: RequestSummary,
    api: ApiKey,
    frame: Bytes,
) -> Result<Option<ResponseFrame>, FrameError> {
    if api == ApiKey::ApiVersions
        && !(ApiVersionsRequest::VERSIONS.min..=ApiVersionsRequest::VERSIONS.max)
            .contains(&summary.version)
    {
        // Kafka answers an unknown ApiVersions version with a v0 response listing what it
        // supports, so the client can pick a version both sides know.
        let mut body = BytesMut::new();
        api_versions::response_for(ctx, code::UNSUPPORTED_VERSION)
            .encode(&mut body, 0)
            .map_err(|e| FrameError::Encode(e.to_string()))?;
        return frame_response(summary.correlation_id, 0, &body)
            .map(|frame| Some(ResponseFrame::from(frame)));
    }
    let request_bytes = frame.len();
    let mut body = frame;
    let header_version = api.request_header_version(summary.version);
    let header =
        RequestHeader::decode(&mut body, header_version).map_err(|e| FrameError::Header {
            api_key: summary.api_key,
            version: summary.version,
            reason: e.to_string(),
        })?;
    let ctx = ctx.for_client(header.client_id, request_bytes);
    let (version, correlation_id) = (summary.version, summary.correlation_id);
    if ctx.is_controller_listener() {
        return Ok(api::dispatch_controller(&ctx, api, version, correlation_id, body).await?);
    }
    Ok(api::dispatch(&ctx, api, version, correlation_id, body).await?)
}

fn frame_response(
    correlation_id: i32,
    header_version: i16,
    body: &[u8],
) -> Result<BytesMut, FrameError> {
    let header = ResponseHeader::default().with_correlation_id(correlation_id);
    let header_size = header
        .compute_size(header_version)
        .map_err(|e| FrameError::Encode(e.to_string()))?;
    let mut out = BytesMut::with_capacity(4 + header_size + body.len());
    out.put_i32((header_size + body.len()) as i32);
    header
        .encode(&mut out, header_version)
        .map_err(|e| FrameError::Encode(e.to_string()))?;
    out.put_slice(body);
    Ok(out)
}
