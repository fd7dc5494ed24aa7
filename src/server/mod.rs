//! The client-facing network layer: the listener (connection limit taken before `accept`,
//! backoff on accept errors, graceful shutdown that waits for in-flight requests), the
//! periodic storage tasks, and the per-connection loop in `connection.rs`.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | listeners, the accept loop, graceful shutdown |
//! | `connection.rs` | one connection: frames, request memory pool, idle timeout |
//! | `codec.rs` | request header decoding and response framing around the API layer |
//! | `session.rs` | SASL on a connection (`SaslServerAuthenticator`) |
//! | `quota.rs` | connection quotas |
//! | `connection_rate.rs` | connection creation rates (KIP-612) and their sensors |
//! | `controller_listener.rs` | the controller listener: Raft messages and controller APIs |
//! | `startup.rs` | topics created at startup, the readiness lines (Kafka's too) |

pub mod codec;
pub mod connection;
pub mod connection_rate;
pub mod controller_listener;
pub mod quota;
pub mod session;
pub mod startup;

use crate::api::ApiContext;
use crate::auth::sasl::SaslListener;
use crate::auth::tls::TlsServer;
use crate::auth::tls_reload::ListenerTls;
use crate::broker::{Broker, NewTopic};
use crate::config::{BrokerConfig, ListenerConfig, SecurityProtocol};
use crate::controller;
use crate::metadata::records::Endpoint;
use crate::net::secure::NodeSecurity;
use controller_listener::ControllerFrames;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// One bound client listener and what its clients are told about the cluster.
struct Bound {
    name: String,
    listener: TcpListener,
    local_addr: SocketAddr,
    ctx: ApiContext,
    security: ListenerSecurity,
}

/// How a listener's connections prove who they are.
#[derive(Clone)]
pub struct ListenerSecurity {
    protocol: SecurityProtocol,
    /// Replaceable by dynamic broker configs (the broker holds it too).
    tls: Option<Arc<ListenerTls>>,
    sasl: Option<Arc<SaslListener>>,
}

impl ListenerSecurity {
    /// PLAINTEXT: anyone who connects is `User:ANONYMOUS`.
    #[cfg(test)]
    pub(crate) fn plaintext() -> Self {
        Self {
            protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
        }
    }

    fn for_listener(config: &BrokerConfig, listener: &ListenerConfig) -> std::io::Result<Self> {
        let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
        let tls = if listener.protocol.uses_tls() {
            let server = TlsServer::for_listener(config, &listener.name)
                .map_err(|e| invalid(e.to_string()))?;
            Some(ListenerTls::new(&listener.name, server))
        } else {
            None
        };
        let sasl = if listener.protocol.uses_sasl() {
            Some(Arc::new(
                SaslListener::for_listener(config, &listener.name)
                    .map_err(|e| invalid(e.to_string()))?,
            ))
        } else {
            None
        };
        Ok(Self {
            protocol: listener.protocol,
            tls,
            sasl,
        })
    }
}

/// The bound listeners, ready to serve.
pub struct Server {
    broker: Arc<Broker>,
    listeners: Vec<Bound>,
    /// The controller listener, on a node with the controller role that configures one.
    controller_listener: Option<(TcpListener, ListenerSecurity)>,
    /// How this node's own connections to other nodes are secured.
    peers: NodeSecurity,
    /// Created once the broker has started, before it serves (`--create-topic`).
    startup_topics: Vec<NewTopic>,
    /// `http.listener`: metrics (and the console), when on.
    http: Option<crate::http::HttpListener>,
}

/// How long requests in flight at shutdown may take to finish before their connections are
/// closed under them.
const CONNECTION_DRAIN: Duration = Duration::from_secs(5);

/// The most the broker's own shutdown (controlled shutdown, flushing, checkpoints) may take,
/// whatever state the controller quorum is in.
const SHUTDOWN_BUDGET: Duration = Duration::from_secs(25);

impl Server {
    /// Binds every configured client listener (the controller listener too, for the quorum;
    /// it is not a client listener). Each advertises the `advertised.listeners` entry of the same name, as in
    /// Kafka, so clients on different networks each get an address they can reach; a port of 0
    /// advertises the port actually bound and an empty host this machine's name.
    pub async fn bind(broker: Arc<Broker>) -> std::io::Result<Self> {
        let config = broker.config().clone();
        let mut listeners = Vec::new();
        // One fetch session cache and authorizer for every client listener.
        let shared = ApiContext::new(broker.clone(), "", "", -1);
        let controller_listener_name = &config.cluster.controller_listener;
        for listener_config in config
            .listeners
            .iter()
            .filter(|l| &l.name != controller_listener_name)
        {
            let bind = listener_config.bind_address().map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
            })?;
            let listener = TcpListener::bind(bind).await?;
            let local_addr = listener.local_addr()?;
            let advertised = config
                .advertised_listeners
                .iter()
                .find(|l| l.name == listener_config.name)
                .unwrap_or(listener_config);
            let advertised_host = match advertised.host.as_str() {
                "" | "0.0.0.0" | "::" => host_name(),
                host => host.to_string(),
            };
            let advertised_port = if advertised.port == 0 {
                local_addr.port()
            } else {
                advertised.port
            } as i32;
            let ctx = shared.on_listener(&listener_config.name, &advertised_host, advertised_port);
            let security = ListenerSecurity::for_listener(&config, listener_config)?;
            if let Some(tls) = &security.tls {
                broker.register_tls_listener(tls.clone());
            }
            listeners.push(Bound {
                name: listener_config.name.clone(),
                listener,
                local_addr,
                ctx,
                security,
            });
        }
        // A controller-only node serves no clients: its one listener is the controller's.
        if listeners.is_empty() && config.cluster.broker_role {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no client listener configured",
            ));
        }
        let mut controller_listener = None;
        if config.cluster.controller_role
            && let Some(listener_config) = config
                .listeners
                .iter()
                .find(|l| &l.name == controller_listener_name)
        {
            let bind = listener_config.bind_address().map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
            })?;
            let listener = TcpListener::bind(bind).await?;
            tracing::info!(listener = %listener_config.name, "controller quorum listening on {}", listener.local_addr()?);
            let security = ListenerSecurity::for_listener(&config, listener_config)?;
            if let Some(tls) = &security.tls {
                broker.register_tls_listener(tls.clone());
            }
            controller_listener = Some((listener, security));
        }
        // KIP-858: a node whose every log directory failed, or the one holding the metadata
        // log, cannot go on; it halts as Kafka's broker does (`Exit.halt(1)`: no controlled
        // shutdown, whose writes would land on the failed disk), and a restart scans it again.
        broker.logs().on_fatal_dir_failure(Box::new(|reason| {
            tracing::error!("{reason}");
            std::process::exit(1);
        }));
        let peers = NodeSecurity::from_config(&config)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        broker.set_forwarder(Arc::new(crate::api::forwarder::Forwarder::new(
            config.node_id,
            peers.controller.clone(),
        )));
        broker.set_remote_markers(Arc::new(crate::api::write_txn_markers::MarkerSender::new(
            &broker,
            peers.inter_broker.clone(),
        )));
        broker
            .share_coordinator()
            .set_remote(Arc::new(crate::api::share_state::StateSender::new(
                &broker,
                peers.inter_broker.clone(),
            )));
        broker.set_remote_verifier(Arc::new(
            crate::api::add_partitions_to_txn::VerifySender::new(
                &broker,
                peers.inter_broker.clone(),
            ),
        ));
        broker.set_leader_connector(Arc::new(
            crate::api::follower_fetch::FollowerConnector::new(
                config.node_id,
                Duration::from_millis(config.cluster.replica_socket_timeout_ms),
                peers.inter_broker.clone(),
            ),
        ));
        let http = crate::http::HttpListener::bind(&broker)
            .await
            .map_err(|e| {
                let kind = match e {
                    crate::http::HttpError::Bind { .. } => std::io::ErrorKind::AddrInUse,
                    crate::http::HttpError::Security(_) => std::io::ErrorKind::InvalidInput,
                };
                std::io::Error::new(kind, e.to_string())
            })?;
        Ok(Self {
            broker,
            listeners,
            controller_listener,
            peers,
            startup_topics: Vec::new(),
            http,
        })
    }

    /// Topics to create once the broker has started, before the readiness lines; each that
    /// exists already is left as it is.
    pub fn create_at_startup(&mut self, topics: Vec<NewTopic>) {
        self.startup_topics = topics;
    }

    /// The address of the first client listener (a controller-only node has none).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listeners.first().map(|bound| bound.local_addr)
    }

    /// Joins the controller quorum, registers the broker and serves until `shutdown` is
    /// cancelled: then stops accepting, lets every connection
    /// finish its in-flight request (parked fetches answer at once), stops the background
    /// tasks and shuts the broker down (flush, checkpoints, clean-shutdown marker).
    pub async fn run(mut self, shutdown: CancellationToken) -> Result<(), crate::error::Error> {
        let tracker = TaskTracker::new();
        self.broker.start_housekeeping(&tracker, shutdown.clone());
        if let Some(http) = self.http.take() {
            tracker.spawn(http.serve(self.broker.clone(), shutdown.clone()));
        }
        let controller_listener = self.controller_listener.take();
        // The quorum keeps talking until the broker has shut down: its controlled shutdown
        // needs the active controller.
        let quorum_tracker = TaskTracker::new();
        let quorum_shutdown = CancellationToken::new();
        self.start_quorum_traffic(
            controller_listener,
            &quorum_tracker,
            quorum_shutdown.clone(),
        );
        if !self.broker.config().cluster.broker_role {
            return self
                .run_controller_only(shutdown, tracker, quorum_tracker, quorum_shutdown)
                .await;
        }
        // Registered with the addresses actually bound (a port of 0 is known only now), once
        // the quorum can be reached; clients connecting meanwhile wait in the backlog.
        let endpoints = self
            .listeners
            .iter()
            .map(|bound| Endpoint {
                name: bound.name.clone(),
                host: bound.ctx.advertised_host.to_string(),
                port: bound.ctx.advertised_port as u16,
                security_protocol: bound.security.protocol.id(),
            })
            .collect();
        let starting = self.broker.clone();
        let start = tokio::task::spawn_blocking(move || starting.start(endpoints));
        tokio::select! {
            started = start => started
                .map_err(|e| crate::error::Error::Internal(format!("start failed: {e}")))??,
            // A stop asked for during startup is not held up by it.
            () = shutdown.cancelled() => {}
        }
        self.broker.group_coordinator().start(shutdown.clone());
        self.broker.share_coordinator().start(shutdown.clone());
        startup::create_topics(&self.broker, &self.startup_topics).await?;
        let config = self.broker.config().clone();
        // One connection limit across all listeners; both limits follow dynamic changes
        // (the per-address one is read at each accept).
        let limit = quota::TotalQuota::new(config.max_connections);
        let per_ip = quota::PerIpQuota::new();
        {
            let limit = limit.clone();
            let mut changes = self.broker.watch_config();
            let shutdown = shutdown.clone();
            tracker.spawn(async move {
                loop {
                    tokio::select! {
                        changed = changes.changed() => if changed.is_err() { return },
                        () = shutdown.cancelled() => return,
                    }
                    let config = changes.borrow_and_update().clone();
                    limit.set_limit(config.max_connections);
                }
            });
        }
        let limits = connection::Limits {
            max_request_bytes: config.socket_request_max_bytes,
            idle_timeout: config.connections_max_idle,
            memory: config
                .queued_max_request_bytes
                .map(|bytes| Arc::new(connection::MemoryPool::new(bytes))),
        };
        if let Some(pool) = &limits.memory {
            self.broker.stats().sockets.set_memory_pool(pool.clone());
        }
        let rates = Arc::new(connection_rate::ConnectionRates::new(config.quota_windows));
        self.broker.stats().sockets.set_accept_gauge(rates.clone());
        // Kafka exempts the inter-broker listener from the broker-wide rate when there are
        // others, so that replication can always connect.
        let several = self.listeners.len() > 1;
        let mut accept_loops = Vec::new();
        for bound in self.listeners {
            tracing::info!(listener = %bound.name, "listening on {}", bound.local_addr);
            rates.add_listener(&bound.name);
            let quotas = Quotas {
                total: limit.clone(),
                per_ip: per_ip.clone(),
                rates: rates.clone(),
                exempt_from_broker_rate: several
                    && bound.name == config.cluster.inter_broker_listener,
            };
            let (shutdown, tracker) = (shutdown.clone(), tracker.clone());
            accept_loops.push(tokio::spawn(accept_loop(
                bound,
                quotas,
                shutdown,
                tracker,
                limits.clone(),
            )));
        }
        startup::announce_ready(&self.broker);
        for accept_loop in accept_loops {
            let _ = accept_loop.await;
        }
        self.broker.replicas().begin_shutdown();
        tracker.close();
        if tokio::time::timeout(CONNECTION_DRAIN, tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                connections = tracker.len(),
                "requests still in flight after {CONNECTION_DRAIN:?}; closing their connections"
            );
        }
        stop_node(self.broker.clone(), quorum_tracker, quorum_shutdown).await
    }
}

/// Shuts the node down (controlled shutdown, flushes, the clean-shutdown marker) within
/// [`SHUTDOWN_BUDGET`], then ends the quorum's traffic, which the controlled shutdown needed.
async fn stop_node(
    broker: Arc<Broker>,
    quorum_tracker: TaskTracker,
    quorum_shutdown: CancellationToken,
) -> Result<(), crate::error::Error> {
    let stopped = tokio::time::timeout(
        SHUTDOWN_BUDGET,
        tokio::task::spawn_blocking(move || broker.shutdown()),
    )
    .await;
    quorum_shutdown.cancel();
    quorum_tracker.close();
    let _ = tokio::time::timeout(CONNECTION_DRAIN, quorum_tracker.wait()).await;
    match stopped {
        Ok(stopped) => stopped
            .map_err(|e| crate::error::Error::Internal(format!("shutdown task failed: {e}")))??,
        Err(_) => {
            // The next start recovers the logs, as after a crash.
            tracing::error!(
                "shutdown did not finish within {SHUTDOWN_BUDGET:?}; exiting without the clean-shutdown marker"
            );
            return Ok(());
        }
    }
    tracing::info!("shut down cleanly");
    Ok(())
}

impl Server {
    /// A controller-only node: the quorum and the controller listener (started by `run`),
    /// no registration as a broker and no client listener, until `shutdown`.
    async fn run_controller_only(
        self,
        shutdown: CancellationToken,
        tracker: TaskTracker,
        quorum_tracker: TaskTracker,
        quorum_shutdown: CancellationToken,
    ) -> Result<(), crate::error::Error> {
        startup::announce_controller_ready(&self.broker);
        shutdown.cancelled().await;
        tracker.close();
        let _ = tokio::time::timeout(CONNECTION_DRAIN, tracker.wait()).await;
        stop_node(self.broker.clone(), quorum_tracker, quorum_shutdown).await
    }

    /// Serves the controller listener and sends this voter's Raft messages to the others.
    fn start_quorum_traffic(
        &self,
        listener: Option<(TcpListener, ListenerSecurity)>,
        tracker: &TaskTracker,
        shutdown: CancellationToken,
    ) {
        let config = self.broker.config().clone();
        let node = config.node_id as u64;
        let voters: Option<Arc<[u64]>> = (!config.cluster.is_dynamic_quorum())
            .then(|| crate::broker::quorum_voters(&config).into());
        let dynamic = config.cluster.is_dynamic_quorum();
        let learned: crate::controller::observer::ControllerEndpoints = Default::default();
        // Where this voter of a dynamic quorum is answered: its controller listener as
        // advertised (the port bound, when the configured one is 0).
        let mut reply_to = String::new();
        if let Some((listener, security)) = listener {
            if let Ok(bound) = listener.local_addr() {
                // Every controller node registers its listener (KIP-919).
                let own = vec![controller_endpoint(&config, bound.port())];
                tracker.spawn(
                    self.broker
                        .clone()
                        .keep_controller_registered(own, shutdown.clone()),
                );
            }
            if dynamic && let Ok(bound) = listener.local_addr() {
                reply_to = controller_address(&config, bound.port());
                // A voter restarted with another controller listener has the quorum record it.
                let own = controller_endpoint(&config, bound.port());
                tracker.spawn(
                    self.broker
                        .clone()
                        .keep_voter_endpoints_current(own, shutdown.clone()),
                );
            }
            let api = ApiContext::new(
                self.broker.clone(),
                &config.cluster.controller_listener,
                "",
                -1,
            );
            let frames = ControllerFrames {
                controller: self.broker.controller().clone(),
                node_id: node,
                voters,
                learned: dynamic.then(|| learned.clone()),
                api: Some(api),
            };
            tracker.spawn(controller_listener::serve(
                listener,
                frames,
                security,
                config.socket_request_max_bytes,
                shutdown.clone(),
                tracker.clone(),
            ));
        }
        let peers: std::collections::HashMap<u64, String> = config
            .cluster
            .voters
            .iter()
            .filter(|v| v.id as u64 != node)
            .map(|v| (v.id as u64, format!("{}:{}", v.host, v.port)))
            .collect();
        if let Some(observer) = self.broker.take_observer() {
            let source = crate::api::metadata_fetch::MetadataFetcher::new(
                config.node_id,
                Duration::from_millis(config.cluster.replica_socket_timeout_ms),
                self.peers.controller.clone(),
            );
            tracker.spawn(observer.run(Arc::new(source), shutdown.clone()));
        }
        if let Some(outbound) = self.broker.take_raft_outbound()
            && (!peers.is_empty() || dynamic)
        {
            controller::transport::spawn_outbound(
                node,
                peers,
                controller::transport::DynamicPeers {
                    listener: config.cluster.controller_listener.clone(),
                    learned,
                    reply_to,
                },
                outbound,
                self.broker.controller().clone(),
                shutdown,
                self.peers.controller.clone(),
            );
        }
    }
}

/// This node's controller listener as others reach it: advertised, else as configured
/// (`localhost` for an empty or wildcard host), at `port`.
fn controller_address(config: &crate::config::BrokerConfig, port: u16) -> String {
    let endpoint = controller_endpoint(config, port);
    let host = &endpoint.host;
    if host.contains(':') {
        format!("[{host}]:{}", endpoint.port)
    } else {
        format!("{host}:{}", endpoint.port)
    }
}

/// This node's controller listener as advertised: `port` is the one bound, used when the
/// configured one is 0; an unnamed or wildcard host is `localhost`.
fn controller_endpoint(config: &crate::config::BrokerConfig, port: u16) -> Endpoint {
    let name = &config.cluster.controller_listener;
    let listener = config
        .advertised_listeners
        .iter()
        .chain(config.listeners.iter())
        .find(|l| &l.name == name);
    let host = match listener.map(|l| l.host.as_str()) {
        Some(host) if !host.is_empty() && host != "0.0.0.0" && host != "::" => host,
        _ => "localhost",
    };
    Endpoint {
        name: name.clone(),
        host: host.to_string(),
        port: listener.map(|l| l.port).filter(|p| *p != 0).unwrap_or(port),
        security_protocol: listener.map_or(0, |l| l.protocol.id()),
    }
}

/// Accepts connections on one listener until shutdown. The connection permit is taken before
/// `accept`, so a full broker leaves new connections in the kernel's backlog.
async fn accept_loop(
    bound: Bound,
    quotas: Quotas,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    limits: connection::Limits,
) {
    let mut backoff = Duration::from_millis(10);
    let connections = bound.ctx.broker.stats().sockets.listener(&bound.name);
    loop {
        let (full, waiting) = (quotas.total.is_full(), Instant::now());
        let permit = tokio::select! {
            slot = quotas.total.acquire() => slot,
            _ = shutdown.cancelled() => return,
        };
        if full {
            quotas.rates.blocked(&bound.name, waiting.elapsed());
        }
        let accepted = tokio::select! {
            accepted = bound.listener.accept() => accepted,
            _ = shutdown.cancelled() => return,
        };
        match accepted {
            Ok((stream, peer)) => {
                backoff = Duration::from_millis(10);
                let broker = &bound.ctx.broker;
                let throttle = quotas
                    .rates
                    .record(&bound.name, rate_limits(&bound, &quotas));
                if !throttle.is_zero() {
                    // Kafka's acceptor blocks: this connection and those behind it wait.
                    tokio::select! {
                        () = tokio::time::sleep(throttle) => {}
                        _ = shutdown.cancelled() => return,
                    }
                    quotas.rates.blocked(&bound.name, throttle);
                }
                if let Some(delay) = broker.client_quotas().connection_throttle(peer.ip()) {
                    quotas
                        .rates
                        .ip_throttled(&bound.name, quotas.exempt_from_broker_rate, delay);
                    // Kafka's connection-rate throttle: held unread for the throttle time,
                    // then closed, so a client reconnecting in a loop slows down.
                    tracing::info!(%peer, delay_ms = delay.as_millis() as u64, "closing connection: connection_creation_rate exceeded for its address");
                    drop(permit);
                    let shutdown = shutdown.clone();
                    tracker.spawn(async move {
                        tokio::select! {
                            () = tokio::time::sleep(delay) => {}
                            _ = shutdown.cancelled() => {}
                        }
                        drop(stream);
                    });
                    continue;
                }
                let per_ip_limit = {
                    let config = broker.config();
                    config
                        .max_connections_per_ip_overrides
                        .get(&peer.ip())
                        .copied()
                        .unwrap_or(config.max_connections_per_ip)
                };
                let Some(slot) = quotas.per_ip.admit(peer.ip(), per_ip_limit) else {
                    tracing::info!(%peer, "closing connection: max.connections.per.ip reached for its address");
                    continue;
                };
                let (ctx, shutdown) = (bound.ctx.for_peer(peer), shutdown.clone());
                let limits = limits.clone();
                let security = bound.security.clone();
                let open = connections.connection();
                tracker.spawn(async move {
                    serve_client(stream, peer, ctx, security, limits, shutdown).await;
                    drop((permit, slot, open));
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed; backing off");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

/// How long a TLS handshake may take when idle connections are never closed.
const HANDSHAKE_DEADLINE_WITHOUT_IDLE: Duration = Duration::from_secs(30);

/// One connection: the TLS handshake (bounded by `connections.max.idle.ms`) on a TLS
/// listener, then the request loop, behind the SASL gate on a SASL listener.
pub(crate) async fn serve_client<H: session::Authenticated>(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    ctx: H,
    security: ListenerSecurity,
    limits: connection::Limits,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    match security.tls.as_ref().map(|t| t.current()) {
        None => serve_authenticated(stream, peer, ctx, security.sasl, limits, shutdown).await,
        // Boxed: inline, the handshake's and the TLS stream's state would make every
        // connection's task as large as a TLS one (12 KiB where plaintext needs 5).
        Some(tls) => {
            Box::pin(serve_tls(
                stream, peer, ctx, tls, security, limits, shutdown,
            ))
            .await
        }
    }
}

async fn serve_tls<H: session::Authenticated>(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    mut ctx: H,
    tls: TlsServer,
    security: ListenerSecurity,
    limits: connection::Limits,
    shutdown: CancellationToken,
) {
    let deadline = limits
        .idle_timeout
        .unwrap_or(HANDSHAKE_DEADLINE_WITHOUT_IDLE);
    let handshake = tokio::select! {
        handshake = tokio::time::timeout(deadline, tls.acceptor.accept(stream)) => handshake,
        _ = shutdown.cancelled() => return,
    };
    let stream = match handshake {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::info!(%peer, error = %e, "closing connection: TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::info!(%peer, "closing connection: TLS handshake did not finish in {deadline:?}");
            return;
        }
    };
    // On SSL the certificate says who the client is; on SASL_SSL, SASL does.
    if security.sasl.is_none() {
        match tls.principal(stream.get_ref().1.peer_certificates()) {
            Ok(principal) => ctx.authenticated(principal, false),
            Err(reason) => {
                tracing::info!(%peer, "closing connection: {reason}");
                return;
            }
        }
    }
    serve_authenticated(stream, peer, ctx, security.sasl, limits, shutdown).await
}

async fn serve_authenticated<S: connection::Transport, H: session::Authenticated>(
    stream: S,
    peer: SocketAddr,
    ctx: H,
    sasl: Option<Arc<SaslListener>>,
    limits: connection::Limits,
    shutdown: CancellationToken,
) {
    match sasl {
        Some(sasl) => {
            let gate = session::SaslGate::new(ctx, sasl, peer);
            connection::serve(stream, peer, gate, limits, shutdown).await
        }
        None => connection::serve(stream, peer, ctx, limits, shutdown).await,
    }
}

/// The connection limits every listener shares.
struct Quotas {
    /// `max.connections`.
    total: Arc<quota::TotalQuota>,
    per_ip: Arc<quota::PerIpQuota>,
    /// `max.connection.creation.rate`, broker-wide and the listener's own.
    rates: Arc<connection_rate::ConnectionRates>,
    exempt_from_broker_rate: bool,
}

/// The connection rate limits of `bound`'s listener in the configuration in effect: the
/// listener's own `max.connection.creation.rate`, else the broker's (as Kafka's
/// `valuesWithPrefixOverride` reads it).
fn rate_limits(bound: &Bound, quotas: &Quotas) -> connection_rate::RateLimits {
    let config = bound.ctx.broker.config();
    let listener = config
        .listener_value(&bound.name, "max.connection.creation.rate")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(f64::from(i32::MAX));
    connection_rate::RateLimits {
        broker: (!quotas.exempt_from_broker_rate)
            .then_some(f64::from(config.max_connection_creation_rate)),
        listener,
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
