//! One client connection: reads size-prefixed frames, enforcing `socket.request.max.bytes`
//! before allocating, and answers requests strictly in order (like Kafka, one request per
//! connection is processed at a time; pipelined requests queue in the socket buffer).
//! A clean EOF between frames ends the connection quietly; anything the protocol cannot
//! answer closes it with one log line.

use super::codec::{self, FrameError};
use crate::api::ApiContext;
use bytes::BytesMut;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// Read buffer: enough for many small requests per syscall.
const READ_BUFFER: usize = 64 * 1024;

pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    ctx: ApiContext,
    max_request_bytes: usize,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let ctx = ctx.for_peer(peer);
    let (read_half, mut write_half) = stream.into_split();
    let mut reader = BufReader::with_capacity(READ_BUFFER, read_half);
    loop {
        let size = tokio::select! {
            size = reader.read_i32() => size,
            _ = shutdown.cancelled() => return,
        };
        let size = match size {
            Ok(size) => size,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "connection read failed");
                return;
            }
        };
        if size < 0 || size as usize > max_request_bytes {
            tracing::warn!(%peer, size, limit = max_request_bytes, "closing connection: request size is negative or exceeds socket.request.max.bytes");
            return;
        }
        // Read into spare capacity: no zero-filling of a buffer about to be overwritten.
        let mut frame = BytesMut::with_capacity(size as usize);
        let mut limited = (&mut reader).take(size as u64);
        while frame.len() < size as usize {
            let outcome = limited.read_buf(&mut frame).await;
            if let Err(e) = outcome.and_then(|n| {
                if n == 0 {
                    Err(std::io::ErrorKind::UnexpectedEof.into())
                } else {
                    Ok(())
                }
            }) {
                tracing::warn!(%peer, size, error = %e, "closing connection: request frame truncated");
                return;
            }
        }
        let summary = codec::summarize(&frame).ok();
        match codec::handle_frame(&ctx, frame.freeze()).await {
            Ok(Some(response)) => {
                if let Err(e) = write_half.write_all(&response).await {
                    tracing::debug!(%peer, error = %e, "connection write failed");
                    return;
                }
            }
            Ok(None) => {}
            Err(e) => {
                log_rejected(peer, summary, &e);
                return;
            }
        }
    }
}

fn log_rejected(peer: SocketAddr, summary: Option<codec::RequestSummary>, error: &FrameError) {
    match summary {
        Some(s) => {
            tracing::warn!(%peer, api_key = s.api_key, version = s.version, correlation_id = s.correlation_id, "closing connection: {error}")
        }
        None => tracing::warn!(%peer, "closing connection: {error}"),
    }
}
