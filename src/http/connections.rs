//! The HTTP listener's connections: accepted up to [`MAX_CONNECTIONS`] (more are closed at once,
//! with a warning at most every ten seconds), over TLS when the listener is SSL or SASL_SSL
//! (the handshake bounded in time), served as HTTP/1.1 by hyper with a time limit on reading a
//! request's head — so a client that sends half a request and stops holds one connection for
//! at most that long. Every request carries its [`Connection`].

use super::security::Connection;
use crate::auth::tls::TlsServer;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;

/// Connections served at once; the console of a few users and a Prometheus need a handful.
pub const MAX_CONNECTIONS: usize = 256;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Accepts and serves connections until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsServer>,
    app: Router,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut last_warning: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors or memory: others keep being served; try again shortly.
                if last_warning.is_none_or(|at| at.elapsed() > Duration::from_secs(10)) {
                    tracing::warn!(%error, "HTTP listener cannot accept a connection");
                    last_warning = Some(Instant::now());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if last_warning.is_none_or(|at| at.elapsed() > Duration::from_secs(10)) {
                tracing::warn!(%peer, "HTTP connection closed: {MAX_CONNECTIONS} connections are open already");
                last_warning = Some(Instant::now());
            }
            drop(stream);
            continue;
        };
        let tls = tls.clone();
        let app = app.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let _ = stream.set_nodelay(true);
            let (io, certificate_principal) = match tls {
                None => (Either::Left(stream), None),
                Some(tls) => {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.acceptor.accept(stream)).await;
                    let stream = match handshake {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(error)) => {
                            tracing::info!(%peer, %error, "HTTPS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::info!(%peer, "HTTPS handshake timed out");
                            return;
                        }
                    };
                    let certificates = stream.get_ref().1.peer_certificates();
                    let principal = match tls.principal(certificates) {
                        Ok(principal) => principal,
                        Err(reason) => {
                            tracing::info!(%peer, "HTTPS client certificate refused: {reason}");
                            return;
                        }
                    };
                    (Either::Right(stream), Some(principal))
                }
            };
            let connection = Connection {
                peer,
                certificate_principal,
            };
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    request.extensions_mut().insert(connection.clone());
                    tower::ServiceExt::oneshot(app.clone(), request.map(axum::body::Body::new))
                });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            let served = builder.serve_connection(TokioIo::new(io), service);
            tokio::pin!(served);
            tokio::select! {
                _ = served.as_mut() => {}
                _ = shutdown.cancelled() => {
                    served.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, served).await;
                }
            }
        });
    }
}
