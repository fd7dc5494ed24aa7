//! The HTTP listener (`http.listener`, on by default on loopback): the web console at `/`,
//! Prometheus metrics at `/metrics` and the JSON API under `/api/v1`, on axum. A listener that was asked for must bind (the broker does not start
//! otherwise); the default one, when its port is taken, is skipped with a warning so a second
//! broker on the same machine still starts.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the listener, its routes, shutdown |
//! | `metrics/` | `/metrics` in Kafka's names |
//! | `api/` | the JSON API under `/api/v1`, with its OpenAPI description |
//! | `console/` | the web console: an embedded page over the JSON API |
//! | `throughput.rs` | messages and bytes per topic over the last minutes, for live charts |

pub mod api;
pub mod console;
pub mod metrics;
pub mod throughput;

use crate::broker::Broker;
use axum::Router;
use axum::extract::{FromRef, State};
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
        let throughput = Arc::new(throughput::Throughput::default());
        tokio::spawn(throughput.clone().run(broker.clone(), shutdown.clone()));
        // The console and the JSON API show topics, records and groups; with an authorizer
        // configured they would have to authenticate their users and honour the ACLs, which
        // is not built yet: until then they are refused rather than open to anyone.
        let authorizer =
            crate::auth::authorizer::Authorizer::from_config(broker.config()).is_some();
        let console = Router::new()
            .route("/", get(console::page))
            .route("/console/app.js", get(console::script))
            .route("/console/style.css", get(console::style))
            .route("/api/v1/throughput", get(throughput::series))
            .merge(api::routes())
            .route_layer(axum::middleware::from_fn(move |request, next: axum::middleware::Next| async move {
                if authorizer {
                    return api::ApiError::new(
                        StatusCode::FORBIDDEN,
                        "CLUSTER_AUTHORIZATION_FAILED",
                        "the console and JSON API are not served while an authorizer is configured (authentication on the HTTP listener is not built yet)",
                    )
                    .into_response();
                }
                next.run(request).await
            }));
        let app = Router::new()
            .route("/metrics", get(metrics_page))
            .merge(console)
            .with_state(HttpState { broker, throughput });
        let served = axum::serve(self.listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "HTTP listener stopped");
        }
    }
}

/// What the handlers read: the broker, and the throughput samples.
#[derive(Clone)]
pub struct HttpState {
    broker: Arc<Broker>,
    throughput: Arc<throughput::Throughput>,
}

impl FromRef<HttpState> for Arc<Broker> {
    fn from_ref(state: &HttpState) -> Self {
        state.broker.clone()
    }
}

impl FromRef<HttpState> for Arc<throughput::Throughput> {
    fn from_ref(state: &HttpState) -> Self {
        state.throughput.clone()
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
