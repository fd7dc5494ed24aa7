//! The HTTP listener (`http.listener`, on by default on loopback): the web console at `/`,
//! Prometheus metrics at `/metrics` and the JSON API under `/api/v1`, on axum. A listener that
//! was asked for must bind (the broker does not start otherwise); the default one, when its
//! port is taken, is skipped with a warning so a second broker on the same machine still
//! starts. It is secured as a Kafka listener (`http.listener.security.protocol`), and with an
//! authorizer every view shows only what its principal may describe; `/metrics` then needs
//! DESCRIBE on the cluster.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the listener, its routes, shutdown |
//! | `connections.rs` | accepting connections: TLS, limits, hyper |
//! | `security.rs` | who a request is: TLS certificates, Basic and Bearer credentials |
//! | `access.rs` | what a request may see and do: the ACLs |
//! | `error.rs` | the error body every refusal answers with |
//! | `metrics/` | `/metrics` in Kafka's names |
//! | `api/` | the JSON API under `/api/v1`, with its OpenAPI description |
//! | `console/` | the web console: an embedded page over the JSON API |
//! | `throughput.rs` | messages and bytes per topic over the last minutes, for live charts |

pub mod access;
pub mod api;
pub mod connections;
pub mod console;
pub mod error;
pub mod metrics;
pub mod security;
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
    #[error(transparent)]
    Security(#[from] security::HttpSecurityError),
}

/// A bound HTTP listener, not yet serving.
pub struct HttpListener {
    listener: tokio::net::TcpListener,
    local_addr: SocketAddr,
    security: Arc<security::HttpSecurity>,
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
        let security = Arc::new(security::HttpSecurity::from_config(&broker.config())?);
        match tokio::net::TcpListener::bind((host.as_str(), *port)).await {
            Ok(listener) => {
                let local_addr = listener.local_addr().map_err(|source| HttpError::Bind {
                    address: address.clone(),
                    source,
                })?;
                Ok(Some(Self {
                    listener,
                    local_addr,
                    security,
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
            "HTTP at {}://{} (console: /, Prometheus metrics: /metrics, JSON API: /api/v1; {})",
            self.security.scheme(),
            self.local_addr,
            self.security.protocol().name()
        );
        let throughput = Arc::new(throughput::Throughput::default());
        tokio::spawn(throughput.clone().run(broker.clone(), shutdown.clone()));
        let authorizer =
            crate::auth::authorizer::Authorizer::from_config(&broker.config()).map(Arc::new);
        let tls = self.security.tls.clone();
        let state = HttpState {
            broker,
            throughput,
            security: self.security,
            authorizer,
        };
        let app = Router::new()
            .route("/metrics", get(metrics_page))
            .route("/", get(console::page))
            .route("/console/app.js", get(console::script))
            .route("/console/style.css", get(console::style))
            .route("/api/v1/throughput", get(throughput::series))
            .merge(api::routes())
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                security::authenticate,
            ))
            .with_state(state);
        connections::serve(self.listener, tls, app, shutdown).await;
    }
}

/// What the handlers read: the broker, and the throughput samples.
#[derive(Clone)]
pub struct HttpState {
    broker: Arc<Broker>,
    throughput: Arc<throughput::Throughput>,
    security: Arc<security::HttpSecurity>,
    /// The authorizer `authorizer.class.name` configures, if any.
    authorizer: Option<Arc<crate::auth::authorizer::Authorizer>>,
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

async fn metrics_page(
    State(broker): State<Arc<Broker>>,
    access: access::Access,
    headers: HeaderMap,
) -> Response {
    // Every topic's and group's name is in there: as much as describing the cluster.
    if let Err(refused) = access.require_cluster(crate::auth::acl::AclOperation::Describe) {
        return refused.into_response();
    }
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
