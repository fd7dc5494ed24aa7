//! The controller listener (`controller.listener.names`): where the quorum's voters send each
//! other Raft messages (see `controller::transport`), and where brokers send the active
//! controller their registration, heartbeats, ISR changes and forwarded topic administration
//! (the API layer's controller table). Frames go through the same connection loop as client
//! requests, secured as any listener (TLS, the SASL gate); with an authorizer, Raft messages
//! come only from a principal allowed CLUSTER_ACTION, as Kafka's quorum APIs.

use super::ListenerSecurity;
use super::codec::{self, FrameError};
use super::connection::{self, FrameHandler};
use super::session::Authenticated;
use crate::api::frame::ResponseFrame;
use crate::api::{ApiContext, DispatchError};
use crate::auth::KafkaPrincipal;
use crate::auth::sasl::NodeCredentials;
use crate::controller::service::ControllerHandle;
use crate::controller::transport;
use crate::metadata::image::MetadataImage;
use bytes::Bytes;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Hands Raft message frames to this node's controller, and the controller APIs to the API
/// layer (`api` is a context of the controller listener; without one, only Raft messages
/// are accepted).
#[derive(Debug, Clone)]
pub struct ControllerFrames {
    pub controller: ControllerHandle,
    pub node_id: u64,
    /// A static quorum's voters, the only nodes Raft messages are taken from; none for a
    /// dynamic quorum (KIP-853).
    pub voters: Option<Arc<[u64]>>,
    /// A dynamic quorum's addresses learned from the frames (see `transport::DynamicPeers`).
    pub learned: Option<crate::controller::observer::ControllerEndpoints>,
    pub api: Option<ApiContext>,
}

impl FrameHandler for ControllerFrames {
    async fn handle(&mut self, frame: Bytes) -> Result<Option<ResponseFrame>, FrameError> {
        if !transport::is_message_frame(&frame) {
            let summary = codec::summarize(&frame)?;
            return match &self.api {
                Some(api) => codec::handle_frame(api, frame).await,
                None => Err(DispatchError::UnknownApiKey(summary.api_key).into()),
            };
        }
        if let Some(api) = &self.api
            && !crate::api::authorize::is_cluster_member(api)
        {
            return Err(DispatchError::Refused(format!(
                "raft message from {}, who may not take part in the quorum (CLUSTER_ACTION on the cluster needed)",
                api.principal
            ))
            .into());
        }
        match transport::decode_message_frame(&frame, self.node_id, self.voters.as_deref()) {
            Ok((message, reply_to)) => {
                if let (Some(learned), Some(address)) = (&self.learned, reply_to) {
                    let sender = crate::controller::quorum::node_of(message.from);
                    let mut learned = learned.write().unwrap_or_else(|p| p.into_inner());
                    if learned.get(&sender) != Some(&address) {
                        learned.insert(sender, address);
                    }
                }
                self.controller.deliver(message)
            }
            // One bad message is not worth the connection: Raft copes with a lost one.
            Err(reason) => tracing::debug!(%reason, "dropped a raft message"),
        }
        Ok(None)
    }
}

impl Authenticated for ControllerFrames {
    fn authenticated(&mut self, principal: KafkaPrincipal, token_authenticated: bool) {
        if let Some(api) = &mut self.api {
            api.authenticated(principal, token_authenticated);
        }
    }

    fn credentials(&self) -> NodeCredentials {
        match &self.api {
            Some(api) => api.credentials(),
            None => NodeCredentials {
                image: Arc::new(MetadataImage::default()),
                tokens: None,
            },
        }
    }

    fn request_stats(&self) -> Option<Arc<crate::stats::requests::RequestStats>> {
        self.api.as_ref().and_then(|api| api.request_stats())
    }
}

/// Accepts quorum connections until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    frames: ControllerFrames,
    security: ListenerSecurity,
    max_request_bytes: usize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.cancelled() => return,
        };
        match accepted {
            Ok((stream, peer)) => {
                let (frames, shutdown) = (frames.clone(), shutdown.clone());
                let mut frames = frames;
                if let Some(api) = &mut frames.api {
                    *api = api.for_peer(peer);
                }
                let security = security.clone();
                tracker.spawn(async move {
                    let limits = connection::Limits::frames_only(max_request_bytes);
                    super::serve_client(stream, peer, frames, security, limits, shutdown).await;
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed on the controller listener");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BrokerConfig;
    use crate::controller::control::{ControlConfig, TopicRequest};
    use crate::controller::metadata_log::log_config;
    use crate::controller::quorum::QuorumSettings;
    use crate::controller::service::{self, ControllerOp, ControllerSettings};
    use std::collections::{BTreeMap, HashMap};
    use std::time::Duration;

    struct Voter {
        handle: ControllerHandle,
        thread: Option<std::thread::JoinHandle<()>>,
        shutdown: CancellationToken,
        _dir: tempfile::TempDir,
    }

    impl Voter {
        fn stop(&mut self) {
            self.shutdown.cancel();
            self.handle.shutdown();
            if let Some(thread) = self.thread.take() {
                thread.join().unwrap();
            }
        }
    }

    impl Drop for Voter {
        fn drop(&mut self) {
            self.stop();
        }
    }

    async fn start_voters(count: u64) -> Vec<Voter> {
        let mut listeners = Vec::new();
        for _ in 0..count {
            listeners.push(TcpListener::bind("127.0.0.1:0").await.unwrap());
        }
        let addresses: HashMap<u64, String> = listeners
            .iter()
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l.local_addr().unwrap().to_string()))
            .collect();
        let voter_ids: Arc<[u64]> = (1..=count).collect::<Vec<_>>().into();
        let broker_config = BrokerConfig::with_overrides(&[]).unwrap();
        let mut voters = Vec::new();
        for (i, listener) in listeners.into_iter().enumerate() {
            let id = i as u64 + 1;
            let dir = tempfile::tempdir().unwrap();
            let settings = ControllerSettings {
                dir_failures: None,
                log_dir: dir.path().to_path_buf(),
                log_config: log_config(&broker_config),
                quorum: QuorumSettings {
                    node_id: id,
                    voters: voter_ids.to_vec(),
                    dynamic: false,
                    election_ticks: 10,
                    heartbeat_ticks: 2,
                    snapshot_after_entries: 1000,
                    snapshot_after_bytes: u64::MAX,
                },
                tick: Duration::from_millis(10),
                control: ControlConfig {
                    own_node: id as i32,
                    broker_session_timeout_ms: 60_000,
                    default_partitions: 1,
                    default_replication_factor: 1,
                    unclean_leader_election: false,
                    tokens: crate::auth::delegation_token::TokenSettings::default(),
                },
                cluster_id: "over-tcp".into(),
                bootstrap: Vec::new(),
            };
            let (outbound, messages) = tokio::sync::mpsc::unbounded_channel();
            let (handle, thread) = service::start(settings, outbound, None).unwrap();
            let shutdown = CancellationToken::new();
            let peers = addresses
                .iter()
                .filter(|(peer, _)| **peer != id)
                .map(|(peer, address)| (*peer, address.clone()))
                .collect();
            transport::spawn_outbound(
                id,
                peers,
                transport::DynamicPeers {
                    listener: "CONTROLLER".into(),
                    learned: Default::default(),
                    reply_to: String::new(),
                },
                messages,
                handle.clone(),
                shutdown.clone(),
                crate::net::PeerSecurity::plaintext(),
            );
            let frames = ControllerFrames {
                controller: handle.clone(),
                node_id: id,
                voters: Some(voter_ids.clone()),
                learned: None,
                api: None,
            };
            tokio::spawn(serve(
                listener,
                frames,
                ListenerSecurity::plaintext(),
                1 << 20,
                shutdown.clone(),
                TaskTracker::new(),
            ));
            voters.push(Voter {
                handle,
                thread: Some(thread),
                shutdown,
                _dir: dir,
            });
        }
        voters
    }

    async fn active(voters: &[Voter]) -> usize {
        for _ in 0..1000 {
            let active: Vec<usize> = voters
                .iter()
                .enumerate()
                .filter(|(_, v)| v.thread.is_some() && v.handle.status().borrow().active)
                .map(|(i, _)| i)
                .collect();
            if active.len() == 1 {
                return active[0];
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no active controller");
    }

    /// `op` answered by the active controller: leadership may still move right after an
    /// election (on a loaded machine), so NOT_CONTROLLER is retried on the new leader.
    async fn call_active(
        voters: &[Voter],
        op: impl Fn() -> ControllerOp,
    ) -> Result<crate::controller::service::ControllerReply, crate::error::Error> {
        for _ in 0..100 {
            let leader = active(voters).await;
            match voters[leader].handle.call(op()).await {
                Err(crate::error::Error::NotController) => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                other => return other,
            }
        }
        panic!("no controller kept its leadership long enough to answer");
    }

    fn topic(name: &str) -> ControllerOp {
        ControllerOp::SetTopicConfigs {
            name: name.into(),
            configs: BTreeMap::new(),
            validate_only: true,
        }
    }

    #[tokio::test]
    async fn anything_but_a_raft_message_closes_the_connection() {
        let voters = start_voters(1).await;
        let mut frames = ControllerFrames {
            controller: voters[0].handle.clone(),
            node_id: 1,
            voters: Some(vec![1].into()),
            learned: None,
            api: None,
        };
        for frame in [
            &[][..],
            &[0x00][..],
            &[0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff][..],
        ] {
            assert!(frames.handle(Bytes::copy_from_slice(frame)).await.is_err());
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn three_voters_form_a_quorum_over_tcp_and_survive_losing_the_leader() {
        let mut voters = start_voters(3).await;
        active(&voters).await;
        let cluster_id = |v: &Voter| v.handle.image().borrow().cluster_id.clone();
        // The cluster id is written once, by the first leader, and reaches every voter.
        for voter in &voters {
            let mut image = voter.handle.image();
            tokio::time::timeout(
                Duration::from_secs(10),
                image.wait_for(|i| i.cluster_id.is_some()),
            )
            .await
            .unwrap()
            .unwrap();
        }
        assert_eq!(cluster_id(&voters[0]), cluster_id(&voters[2]));
        // Topic commands need a registered broker for placement; an unknown topic's config
        // change is refused by the active controller alone, without touching the log.
        assert!(matches!(
            call_active(&voters, || topic("missing")).await,
            Err(crate::error::Error::UnknownTopicOrPartition)
        ));
        let create = || ControllerOp::CreateTopic {
            request: TopicRequest {
                name: "t".into(),
                partitions: 1,
                replication_factor: 1,
                assignments: vec![vec![7]],
                configs: BTreeMap::new(),
            },
            validate_only: false,
        };
        // Broker 7 is not registered: refused, as Kafka's controller does.
        assert!(call_active(&voters, create).await.is_err());

        let first = active(&voters).await;
        voters[first].stop();
        let second = active(&voters).await;
        assert_ne!(second, first);
        let offset_before = voters[second].handle.image().borrow().offset;
        let register =
            ControllerOp::RegisterBroker(crate::controller::control::BrokerRegistrationRequest {
                broker_id: 5,
                cluster_id: cluster_id(&voters[second]).unwrap(),
                incarnation_id: uuid::Uuid::new_v4(),
                endpoints: Vec::new(),
                rack: None,
                log_dirs: Vec::new(),
            });
        voters[second].handle.call(register).await.unwrap();
        // Committed by the two voters left, and applied by both.
        for voter in voters.iter().filter(|v| v.thread.is_some()) {
            let mut image = voter.handle.image();
            tokio::time::timeout(
                Duration::from_secs(10),
                image.wait_for(|i| i.offset > offset_before && i.brokers.contains_key(&5)),
            )
            .await
            .unwrap()
            .unwrap();
        }
    }
}
