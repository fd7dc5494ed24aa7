//! The way to the active controller (Kafka's `NodeToControllerChannelManager`): this node's
//! own controller when it is the active one, else the voter leading the quorum over its
//! controller listener ([`ControllerForwarder`], which the API layer implements);
//! NOT_CONTROLLER (an election under way) is retried for a while, and a command waiting on a
//! leader that the quorum has since replaced goes to the new one. A voter of a dynamic quorum
//! also keeps its own entry current through it (UpdateRaftVoter).

use super::{Broker, CONTROLLER_REQUEST_WAIT, LIFECYCLE_RETRY};
use crate::controller::control::ControllerRegistrationRequest;
use crate::controller::ops::NewVoter;
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::Error;
use crate::metadata::records::Endpoint;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Sends a command to another node's controller listener and reads the answer. The API
/// layer implements it (it speaks the wire protocol; the broker does not) and the server
/// installs it.
pub trait ControllerForwarder: Send + Sync + std::fmt::Debug {
    fn forward<'a>(
        &'a self,
        address: &'a str,
        op: &'a ControllerOp,
        timeout: Duration,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<ControllerReply, Error>> + Send + 'a>>;
}

impl Broker {
    /// Runs `op` on the active controller: this node's own when it is the active one, else
    /// over the controller listener of the voter leading the quorum. NOT_CONTROLLER (an
    /// election under way, a leader that just stepped down or died) is retried until
    /// [`CONTROLLER_REQUEST_WAIT`] passes.
    pub async fn call_active_controller(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        self.call_active_controller_within(op, CONTROLLER_REQUEST_WAIT)
            .await
    }

    pub(super) async fn call_active_controller_within(
        &self,
        op: ControllerOp,
        wait: Duration,
    ) -> Result<ControllerReply, Error> {
        let deadline = tokio::time::Instant::now() + wait;
        let node = self.config.node_id as u64;
        loop {
            let status = *self.controller.status().borrow();
            let outcome = if status.active {
                self.controller.call(op.clone()).await
            } else if let Some(leader) = status.leader.filter(|l| *l != node) {
                // A leader cut off from the network may leave a forwarded command without an
                // answer until the socket timeout; once the quorum has moved on, the command
                // goes to the new leader instead (Kafka's channel manager resends to a new
                // controller too). A command the old leader could not commit is refused there.
                let mut status_changes = self.controller.status();
                let moved_on = async move {
                    let moved = |s: &crate::controller::service::QuorumStatus| {
                        s.active || s.leader != Some(leader)
                    };
                    if status_changes.wait_for(moved).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                };
                tokio::select! {
                    outcome = self.forward_to(leader, &op) => outcome,
                    () = moved_on => Err(Error::NotController),
                }
            } else {
                Err(Error::NotController)
            };
            match outcome {
                Err(Error::NotController) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(LIFECYCLE_RETRY).await;
                }
                other => return other,
            }
        }
    }

    /// The quorum's voters and their controller listeners (host, port): those of
    /// `controller.quorum.voters`, or a dynamic quorum's as the image names them (KIP-853).
    /// Empty for the unconfigured single node.
    pub fn voter_endpoints(&self) -> Vec<(i32, String, u16)> {
        if !self.config.cluster.voters.is_empty() {
            return self
                .config
                .cluster
                .voters
                .iter()
                .map(|v| (v.id, v.host.clone(), v.port))
                .collect();
        }
        let image = self.controller.image().borrow().clone();
        let listener = &self.config.cluster.controller_listener;
        image
            .quorum_voters
            .iter()
            .filter_map(|(id, voter)| {
                let endpoint = voter.endpoint(listener)?;
                Some((*id, endpoint.host.clone(), endpoint.port))
            })
            .collect()
    }

    /// The controllers DescribeCluster lists on the controller listener (KIP-919): every
    /// registered controller at its endpoint on `listener`, and the voters not registered
    /// (yet) at their voter addresses, by node id.
    pub fn described_controllers(&self, listener: &str) -> Vec<(i32, String, u16)> {
        let mut controllers: std::collections::BTreeMap<i32, (String, u16)> = self
            .voter_endpoints()
            .into_iter()
            .map(|(id, host, port)| (id, (host, port)))
            .collect();
        let image = self.controller.image().borrow().clone();
        for (id, registration) in &image.controllers {
            if let Some(endpoint) = registration.endpoints.iter().find(|e| e.name == listener) {
                controllers.insert(*id, (endpoint.host.clone(), endpoint.port));
            }
        }
        controllers
            .into_iter()
            .map(|(id, (host, port))| (id, host, port))
            .collect()
    }

    /// Where voter `node`'s controller listener is: configured, named by the quorum, or in
    /// the image of a dynamic quorum.
    pub fn voter_address(&self, node: u64) -> Option<String> {
        let known = self
            .controller_endpoints
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&node)
            .cloned();
        known.or_else(|| {
            self.voter_endpoints()
                .into_iter()
                .find(|(id, ..)| *id as u64 == node)
                .map(|(_, host, port)| format!("{host}:{port}"))
        })
    }

    /// Sends `op` to voter `leader`'s controller listener.
    async fn forward_to(&self, leader: u64, op: &ControllerOp) -> Result<ControllerReply, Error> {
        let Some(address) = self.voter_address(leader) else {
            return Err(Error::NotController);
        };
        let Some(forwarder) = self.forwarder.get() else {
            return Err(Error::NotController);
        };
        let cluster = &self.config.cluster;
        let mut timeout = cluster.replica_socket_timeout_ms;
        if matches!(
            op,
            ControllerOp::Heartbeat(_) | ControllerOp::RegisterBroker(_)
        ) {
            // A heartbeat lost to an unreachable controller must not hold the next one past
            // the session.
            timeout = timeout.min((cluster.broker_session_timeout_ms / 2).max(1_000) as u64);
        }
        forwarder
            .forward(&address, op, Duration::from_millis(timeout))
            .await
    }

    /// Keeps this voter's entry in a dynamic quorum current (KIP-853's UpdateRaftVoter): while
    /// the metadata names it at another controller listener than `own` (it restarted with a
    /// new one), the active controller is asked to record `own`. Ends once they match, when
    /// this node is another incarnation than the voter named (another directory id), or at
    /// `shutdown`. A node not (yet) a voter waits to become one.
    pub async fn keep_voter_endpoints_current(
        self: Arc<Self>,
        own: Endpoint,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let node = self.config.node_id;
        let Some(directory_id) = crate::metadata::read_directory_id(&self.config.log_dir) else {
            return;
        };
        let mut images = self.controller.image();
        loop {
            let voter = images.borrow_and_update().quorum_voters.get(&node).cloned();
            if let Some(voter) = voter {
                let recorded = voter.endpoint(&own.name);
                if voter.directory_id != directory_id
                    || recorded.is_some_and(|e| e.host == own.host && e.port == own.port)
                {
                    return;
                }
                let op = ControllerOp::UpdateVoter(NewVoter {
                    node,
                    directory_id,
                    endpoints: vec![own.clone()],
                    timeout_ms: 0,
                });
                match self.call_active_controller(op).await {
                    Ok(_) => tracing::info!(
                        host = %own.host,
                        port = own.port,
                        "the controller quorum records this controller's new listener"
                    ),
                    Err(e) => {
                        tracing::debug!(error = %e, "updating this voter's listener; retrying")
                    }
                }
            }
            tokio::select! {
                _ = images.changed() => {}
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    /// Keeps this controller node registered (KIP-919), as Kafka's
    /// `ControllerRegistrationManager` does: while the metadata lacks a registration of this
    /// process (`incarnation_id`) at `own`, the active controller is asked to record one —
    /// at start, and again after an UnregisterController while the node still runs. Ends at
    /// `shutdown`.
    pub async fn keep_controller_registered(
        self: Arc<Self>,
        own: Vec<Endpoint>,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let node = self.config.node_id;
        let incarnation_id = uuid::Uuid::new_v4();
        let mut images = self.controller.image();
        // Whether this node's image has shown the registration, and when the active
        // controller last accepted one that the image does not show yet (it soon will).
        let mut seen = false;
        let mut accepted: Option<tokio::time::Instant> = None;
        loop {
            let registered = images
                .borrow_and_update()
                .controllers
                .get(&node)
                .is_some_and(|c| c.incarnation_id == incarnation_id && c.endpoints == own);
            if registered {
                if !seen {
                    tracing::info!(%incarnation_id, "this controller is registered");
                }
                seen = true;
                accepted = None;
            } else if accepted.is_none_or(|at| at.elapsed() > Duration::from_secs(5)) {
                if seen {
                    tracing::info!("this controller's registration was removed; registering again");
                    seen = false;
                }
                let op = ControllerOp::RegisterController(ControllerRegistrationRequest {
                    controller_id: node,
                    incarnation_id,
                    endpoints: own.clone(),
                });
                match self.call_active_controller(op).await {
                    Ok(_) => accepted = Some(tokio::time::Instant::now()),
                    Err(e) => tracing::debug!(error = %e, "registering this controller; retrying"),
                }
            }
            tokio::select! {
                _ = images.changed() => {}
                () = tokio::time::sleep(LIFECYCLE_RETRY * 10), if !registered => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    /// Installs what carries commands to other nodes' controllers (the server does, once).
    pub fn set_forwarder(&self, forwarder: Arc<dyn ControllerForwarder>) {
        let _ = self.forwarder.set(forwarder);
    }

    /// [`Broker::call_active_controller`] from the lifecycle thread: in-process on a single
    /// voter, through the runtime otherwise.
    pub(super) fn call_from_thread(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        let cluster = &self.config.cluster;
        if cluster.controller_role && cluster.voters.len() <= 1 && !cluster.is_dynamic_quorum() {
            return self.controller.call_blocking(op);
        }
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        // Stopping: a cluster going down as a whole has no quorum left for long, so each
        // controlled-shutdown heartbeat gets a short wait rather than the usual one.
        let wait = if self.stopping.load(Ordering::SeqCst) {
            LIFECYCLE_RETRY * 10
        } else {
            CONTROLLER_REQUEST_WAIT
        };
        match runtime {
            Some(runtime) => runtime.block_on(self.call_active_controller_within(op, wait)),
            None => Err(Error::NotController),
        }
    }
}
