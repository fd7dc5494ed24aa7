//! One client connection: reads size-prefixed frames, enforcing `socket.request.max.bytes`
//! before allocating, and answers requests strictly in order (like Kafka, one request per
//! connection is processed at a time; pipelined requests queue in the socket buffer).
//! A clean EOF between frames ends the connection quietly; anything the protocol cannot
//! answer closes it with one log line. Record data a response leaves in segment files goes
//! from the page cache to the socket with `sendfile` on plain TCP; through TLS it is read in
//! chunks and encrypted (the buffered path: rustls must see the bytes).

use super::codec::{self, FrameError};
use crate::api::ApiContext;
use crate::api::frame::{FramePart, ResponseFrame};
use crate::storage::segment::FileSlice;
use bytes::{Bytes, BytesMut};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, Interest};
use tokio::net::TcpStream;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

/// Read buffer: enough for many small requests per syscall; a larger frame's body is read
/// past it straight into its own buffer. Each connection holds one for its life, so it is
/// what an idle connection costs: with 64 KiB, and the TLS state inline in every task,
/// 10,000 idle connections took 31 KiB each; now 18–22 (`bench/scale.sh`'s connections).
const READ_BUFFER: usize = 8 * 1024;

/// What a listener does with each request frame (without its size prefix): the response
/// frame, `None` for requests without one, or an error that closes the connection.
pub trait FrameHandler: Send {
    fn handle(
        &mut self,
        frame: Bytes,
    ) -> impl std::future::Future<Output = Result<Option<ResponseFrame>, FrameError>> + Send;

    /// The largest next frame, and the property that sets it, when tighter than
    /// `socket.request.max.bytes` (before authentication: `sasl.server.max.receive.size`).
    fn frame_limit(&self) -> Option<(usize, &'static str)> {
        None
    }

    /// Whether the connection ends once the last response is sent (a failed authentication).
    fn close_after_response(&self) -> bool {
        false
    }

    /// How long a quota throttles the connection after the last response: it is not read
    /// for that long (Kafka mutes the channel).
    fn take_throttle(&mut self) -> Option<Duration> {
        None
    }
}

impl FrameHandler for ApiContext {
    async fn handle(&mut self, frame: Bytes) -> Result<Option<ResponseFrame>, FrameError> {
        codec::handle_frame(self, frame).await
    }

    fn take_throttle(&mut self) -> Option<Duration> {
        ApiContext::take_throttle(self)
    }
}

/// A connection's byte stream: plain TCP, or TLS over it.
pub trait Transport: AsyncRead + AsyncWrite + Unpin + Send {
    /// Sends a range of a segment file.
    fn send_file(
        &mut self,
        slice: &FileSlice,
    ) -> impl std::future::Future<Output = io::Result<()>> + Send;
}

impl Transport for TcpStream {
    async fn send_file(&mut self, slice: &FileSlice) -> io::Result<()> {
        send_file(self, slice).await
    }
}

impl Transport for tokio_rustls::server::TlsStream<TcpStream> {
    async fn send_file(&mut self, slice: &FileSlice) -> io::Result<()> {
        copy_file(self, slice).await
    }
}

/// How much of a file one read of the buffered path takes.
const FILE_CHUNK: usize = 256 * 1024;

/// The buffered path: file range read in chunks on the blocking pool (a read may touch the
/// disk) and written through the stream.
async fn copy_file<W: AsyncWrite + Unpin>(stream: &mut W, slice: &FileSlice) -> io::Result<()> {
    let file = slice.shared_file();
    let mut position = slice.position();
    let end = position + slice.len() as u64;
    let mut buffer = Vec::with_capacity(FILE_CHUNK.min(slice.len()));
    while position < end {
        let want = ((end - position) as usize).min(FILE_CHUNK);
        let file = file.clone();
        let mut chunk = std::mem::take(&mut buffer);
        let read = tokio::task::spawn_blocking(move || {
            use std::os::unix::fs::FileExt;
            chunk.resize(want, 0);
            let read = file.read_at(&mut chunk, position);
            (chunk, read)
        })
        .await
        .map_err(|e| io::Error::other(format!("file read task failed: {e}")))?;
        let (chunk, read) = read;
        let read = read?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "segment file ended before the records being sent",
            ));
        }
        stream.write_all(&chunk[..read]).await?;
        position += read as u64;
        buffer = chunk;
    }
    Ok(())
}

/// What bounds the connections of a listener.
#[derive(Debug, Clone)]
pub struct Limits {
    /// `socket.request.max.bytes`: a larger frame closes the connection before anything is
    /// allocated for it.
    pub max_request_bytes: usize,
    /// `connections.max.idle.ms`: a connection that sends no request for this long is closed.
    pub idle_timeout: Option<Duration>,
    /// `queued.max.request.bytes`: request memory shared by the listener's connections.
    pub memory: Option<Arc<MemoryPool>>,
}

impl Limits {
    /// Only the frame size bound (the controller listener: its peers are the quorum).
    pub fn frames_only(max_request_bytes: usize) -> Self {
        Self {
            max_request_bytes,
            idle_timeout: None,
            memory: None,
        }
    }
}

/// Kafka's request memory pool: a frame's size is taken from it before its body is read and
/// given back once the request is answered. When too little is left, that connection stops
/// reading its socket (the client waits in TCP flow control) until memory returns. Like
/// Kafka's pool it is not first-come-first-served: a small request fits in what a large one
/// waiting for more leaves free.
#[derive(Debug)]
pub struct MemoryPool {
    bytes: Semaphore,
    returned: Notify,
    capacity: usize,
}

/// Memory taken from the pool, given back when dropped.
pub struct Reservation<'a> {
    permit: Option<tokio::sync::SemaphorePermit<'a>>,
    pool: &'a MemoryPool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        // The bytes go back first, then the waiters look.
        drop(self.permit.take());
        self.pool.returned.notify_waiters();
    }
}

impl MemoryPool {
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
        Self {
            bytes: Semaphore::new(capacity),
            returned: Notify::new(),
            capacity,
        }
    }

    /// Waits until `size` bytes (at most the capacity) are free and takes them.
    pub async fn take(&self, size: usize) -> Reservation<'_> {
        loop {
            let returned = self.returned.notified();
            tokio::pin!(returned);
            returned.as_mut().enable();
            if let Ok(permit) = self.bytes.try_acquire_many(size as u32) {
                return Reservation {
                    permit: Some(permit),
                    pool: self,
                };
            }
            // Registered before the try: a reservation dropped since has woken it already.
            returned.await;
        }
    }

    /// Bytes not taken by a request now.
    pub fn available(&self) -> usize {
        self.bytes.available_permits()
    }
}

impl crate::stats::sockets::MemoryGauge for MemoryPool {
    fn available(&self) -> u64 {
        self.bytes.available_permits() as u64
    }

    fn capacity(&self) -> u64 {
        self.capacity as u64
    }
}

/// How long the body of a frame may take when idle connections are never closed.
const FRAME_DEADLINE_WITHOUT_IDLE: Duration = Duration::from_secs(30);

impl Limits {
    /// The body of a frame must arrive within `connections.max.idle.ms` plus a second per
    /// MiB: a client that stops halfway (or trickles) does not hold its memory for ever.
    fn frame_deadline(&self, size: usize) -> Duration {
        self.idle_timeout.unwrap_or(FRAME_DEADLINE_WITHOUT_IDLE)
            + Duration::from_secs((size >> 20) as u64)
    }
}

pub async fn serve<S: Transport, H: FrameHandler>(
    stream: S,
    peer: SocketAddr,
    mut handler: H,
    limits: Limits,
    shutdown: CancellationToken,
) {
    let mut reader = BufReader::with_capacity(READ_BUFFER, stream);
    loop {
        let idle = async {
            match limits.idle_timeout {
                Some(timeout) => tokio::time::sleep(timeout).await,
                None => std::future::pending().await,
            }
        };
        let size = tokio::select! {
            size = reader.read_i32() => size,
            _ = shutdown.cancelled() => return,
            () = idle => {
                tracing::debug!(%peer, "closing connection: idle for connections.max.idle.ms");
                return;
            }
        };
        let size = match size {
            Ok(size) => size,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "connection read failed");
                return;
            }
        };
        let (max_request_bytes, limit_name) = match handler.frame_limit() {
            Some((limit, name)) if limit < limits.max_request_bytes => (limit, name),
            _ => (limits.max_request_bytes, "socket.request.max.bytes"),
        };
        if size < 0 || size as usize > max_request_bytes {
            tracing::warn!(%peer, size, limit = max_request_bytes, "closing connection: request size is negative or exceeds {limit_name}");
            return;
        }
        let size = size as usize;
        // The frame's memory first: while the pool is empty this socket is not read.
        let _memory = match &limits.memory {
            Some(pool) if size > pool.capacity => {
                tracing::warn!(%peer, size, limit = pool.capacity, "closing connection: request larger than queued.max.request.bytes");
                return;
            }
            Some(pool) => tokio::select! {
                taken = pool.take(size) => Some(taken),
                _ = shutdown.cancelled() => return,
            },
            None => None,
        };
        // Read into spare capacity: no zero-filling of a buffer about to be overwritten.
        let mut frame = BytesMut::with_capacity(size);
        let deadline = limits.frame_deadline(size);
        let read = tokio::time::timeout(deadline, async {
            let mut limited = (&mut reader).take(size as u64);
            while frame.len() < size {
                match limited.read_buf(&mut frame).await {
                    Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                    Ok(_) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
        match read.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(%peer, size, error = %e, "closing connection: request frame truncated");
                return;
            }
            Err(_) => {
                tracing::warn!(%peer, size, received = frame.len(), "closing connection: request frame did not arrive in {deadline:?}");
                return;
            }
        }
        let received = std::time::Instant::now();
        let summary = codec::summarize(&frame).ok();
        // Boxed: the largest API's state (4 KiB) would otherwise be part of every
        // connection's task for its whole life, idle or not.
        let handling = Box::pin(handler.handle(frame.freeze()));
        let (handled, report) = crate::stats::requests::in_request(handling).await;
        let sending = std::time::Instant::now();
        match handled {
            Ok(Some(response)) => {
                let written = write_frame(reader.get_mut(), &response).await;
                report.sent(received, sending);
                if let Err(e) = written {
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        // Our side failed (a segment file cut short), not the client.
                        tracing::warn!(%peer, error = %e, "closing connection: response could not be sent whole");
                    } else {
                        tracing::debug!(%peer, error = %e, "connection write failed");
                    }
                    return;
                }
            }
            Ok(None) => report.sent(received, sending),
            Err(e) => {
                log_rejected(peer, summary, &e);
                return;
            }
        }
        if handler.close_after_response() {
            let _ = reader.get_mut().shutdown().await;
            return;
        }
        if let Some(throttle) = handler.take_throttle() {
            // Muted: the next request is not read until the throttle time has passed.
            tokio::select! {
                () = tokio::time::sleep(throttle) => {}
                _ = shutdown.cancelled() => return,
            }
        }
    }
}

async fn write_frame<S: Transport>(socket: &mut S, frame: &ResponseFrame) -> io::Result<()> {
    for part in frame.parts() {
        match part {
            FramePart::Encoded(bytes) => socket.write_all(bytes).await?,
            FramePart::File(slice) => socket.send_file(slice).await?,
        }
    }
    // TLS holds written bytes in its session until flushed.
    socket.flush().await
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
    use tokio::net::TcpListener;

    async fn socket_pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (server, client)
    }

    /// Not first-come-first-served: a small request fits beside a large one that waits for
    /// more memory, and the large one gets it once memory returns.
    #[tokio::test]
    async fn the_memory_pool_lets_small_requests_past_a_waiting_large_one() {
        let pool = Arc::new(MemoryPool::new(100));
        let held = pool.take(60).await;
        let large = tokio::spawn({
            let pool = pool.clone();
            async move {
                let _taken = pool.take(80).await;
            }
        });
        tokio::task::yield_now().await;
        let small = tokio::time::timeout(Duration::from_secs(1), pool.take(30)).await;
        assert!(
            small.is_ok(),
            "a 30-byte request waited behind an 80-byte one"
        );
        drop(small);
        drop(held);
        tokio::time::timeout(Duration::from_secs(1), large)
            .await
            .expect("the large request got its memory")
            .unwrap();
        assert_eq!(pool.available(), 100);
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
