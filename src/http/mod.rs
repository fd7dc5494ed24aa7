//! The HTTP listener (`http.listener`, on by default on loopback): Prometheus metrics at
//! `/metrics`, on axum. A listener that was asked for must bind (the broker does not start
//! otherwise); the default one, when its port is taken, is skipped with a warning so a second
//! broker on the same machine still starts.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the listener, its routes, shutdown |
//! | `metrics/` | `/metrics` in Kafka's names |

pub mod metrics;

use crate::broker::Broker;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Why the HTTP listener could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot bind the HTTP listener (http.listener={address}): {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
}

/// A bound HTTP listener, not yet serving.
pub struct HttpListener {
    listener: tokio::net::TcpListener,
    local_addr: SocketAddr,
}

impl HttpListener {
    /// Binds `http.listener`; `Ok(None)` when it is off, or when the default one's port is
    /// taken (logged).
    pub async fn bind(broker: &Broker) -> Result<Option<Self>, HttpError> {
        let config = &broker.config().http;
        let Some((host, port)) = &config.listener else {
            return Ok(None);
        };
        let address = format!("{host}:{port}");
        match tokio::net::TcpListener::bind((host.as_str(), *port)).await {
            Ok(listener) => {
                let local_addr = listener.local_addr().map_err(|source| HttpError::Bind {
                    address: address.clone(),
                    source,
                })?;
                Ok(Some(Self {
                    listener,
                    local_addr,
                }))
            }
            Err(source) if !config.listener_explicit => {
                tracing::warn!(%address, error = %source, "HTTP listener (metrics, console) not started: its default address is taken; set http.listener to another address, or empty to turn it off");
                Ok(None)
            }
            Err(source) => Err(HttpError::Bind { address, source }),
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown`.
    pub async fn serve(self, broker: Arc<Broker>, shutdown: CancellationToken) {
        // Not "listening on": scripts and tests take that line for the Kafka listener.
        tracing::info!(
            "HTTP at http://{} (Prometheus metrics: /metrics)",
            self.local_addr
        );
        let app = Router::new()
            .route("/metrics", get(metrics_page))
            .with_state(broker);
        let served = axum::serve(self.listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "HTTP listener stopped");
        }
    }
}

async fn metrics_page(State(broker): State<Arc<Broker>>, headers: HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    let openmetrics = metrics::wants_openmetrics(accept);
    // Scraping reads every partition's log state: off the async workers.
    let rendered = tokio::task::spawn_blocking(move || metrics::render(&broker, openmetrics)).await;
    match rendered {
        Ok(Ok(body)) => {
            let content_type = if openmetrics {
                metrics::OPENMETRICS_CONTENT_TYPE
            } else {
                metrics::TEXT_CONTENT_TYPE
            };
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "metrics could not be rendered\n",
        )
            .into_response(),
    }
}
