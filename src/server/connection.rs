//! One client connection: reads size-prefixed frames, enforcing `socket.request.max.bytes`
//! before allocating, and answers requests strictly in order (like Kafka, one request per
//! connection is processed at a time; pipelined requests queue in the socket buffer).
//! A clean EOF between frames ends the connection quietly; anything the protocol cannot
//! answer closes it with one log line. Record data a response leaves in segment files goes
//! from the page cache to the socket with `sendfile`.

use super::codec::{self, FrameError};
use crate::api::ApiContext;
use crate::api::frame::{FramePart, ResponseFrame};
use crate::storage::segment::FileSlice;
use bytes::{Bytes, BytesMut};
use std::io;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, Interest};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio_util::sync::CancellationToken;

/// Read buffer: enough for many small requests per syscall.
const READ_BUFFER: usize = 64 * 1024;

/// What a listener does with each request frame (without its size prefix): the response
/// frame, `None` for requests without one, or an error that closes the connection.
pub trait FrameHandler {
    fn handle(
        &self,
        frame: Bytes,
    ) -> impl std::future::Future<Output = Result<Option<ResponseFrame>, FrameError>> + Send;
}

impl FrameHandler for ApiContext {
    async fn handle(&self, frame: Bytes) -> Result<Option<ResponseFrame>, FrameError> {
        codec::handle_frame(self, frame).await
    }
}

pub async fn serve<H: FrameHandler>(
    stream: TcpStream,
    peer: SocketAddr,
    handler: H,
    max_request_bytes: usize,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
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
        match handler.handle(frame.freeze()).await {
            Ok(Some(response)) => {
                if let Err(e) = write_frame(&mut write_half, &response).await {
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        // Our side failed (a segment file cut short), not the client.
                        tracing::warn!(%peer, error = %e, "closing connection: response could not be sent whole");
                    } else {
                        tracing::debug!(%peer, error = %e, "connection write failed");
                    }
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

async fn write_frame(socket: &mut OwnedWriteHalf, frame: &ResponseFrame) -> io::Result<()> {
    for part in frame.parts() {
        match part {
            FramePart::Encoded(bytes) => socket.write_all(bytes).await?,
            FramePart::File(slice) => send_file(socket.as_ref(), slice).await?,
        }
    }
    Ok(())
}

/// Sends a file range with `sendfile(2)`: the kernel moves page-cache pages to the socket.
async fn send_file(socket: &TcpStream, slice: &FileSlice) -> io::Result<()> {
    let mut position = slice.position();
    let end = position + slice.len() as u64;
    while position < end {
        socket.writable().await?;
        let remaining = (end - position) as usize;
        let sent = socket.try_io(Interest::WRITABLE, || {
            rustix::fs::sendfile(socket, slice.file(), Some(&mut position), remaining)
                .map_err(io::Error::from)
        });
        match sent {
            // The frame's size promised these bytes: a file cut short since cannot keep
            // the promise, so the connection must end (the caller logs it).
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "segment file ended before the records being sent",
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn log_rejected(peer: SocketAddr, summary: Option<codec::RequestSummary>, error: &FrameError) {
    match summary {
        Some(s) => {
            tracing::warn!(%peer, api_key = s.api_key, version = s.version, correlation_id = s.correlation_id, "closing connection: {error}")
        }
        None => tracing::warn!(%peer, "closing connection: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Arc;
    use tokio::net::TcpListener;

    async fn socket_pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (server, client)
    }

    #[tokio::test]
    async fn file_parts_arrive_byte_for_byte_and_a_short_file_fails_the_send() {
        let mut file = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&data).unwrap();
        let file = Arc::new(file);
        let (server, mut client) = socket_pair().await;

        let slice = FileSlice::for_test(file.clone(), 1000, 250_000);
        let reader = tokio::spawn(async move {
            let mut received = vec![0u8; 250_000];
            client.read_exact(&mut received).await.unwrap();
            (client, received)
        });
        send_file(&server, &slice).await.unwrap();
        let (_client, received) = reader.await.unwrap();
        assert!(
            received == data[1000..251_000],
            "the bytes of the range, in order"
        );

        // A file shorter than the slice (truncated since the fetch found the range): the
        // send fails instead of sending anything else.
        let beyond = FileSlice::for_test(file, 290_000, 20_000);
        let error = send_file(&server, &beyond).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
    }
}
