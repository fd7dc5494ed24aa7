//! Tests of the controller event loop (`service.rs`), its voters routed in memory.

use super::*;
use crate::config::BrokerConfig;
use crate::controller::control::{BrokerRegistrationRequest, HeartbeatRequest, TopicRequest};
use crate::controller::metadata_log::log_config;
use crate::controller::quorum::node_of;
use crate::metadata::records::Endpoint;
use std::collections::HashMap;
use std::sync::Mutex;
use uuid::Uuid;

/// Voters whose messages are routed in memory; `cut` voters are unreachable.
struct TestQuorum {
    handles: Arc<Mutex<HashMap<u64, ControllerHandle>>>,
    cut: Arc<Mutex<Vec<u64>>>,
    threads: Vec<(u64, std::thread::JoinHandle<()>)>,
    _dirs: Vec<tempfile::TempDir>,
}

impl TestQuorum {
    async fn start(size: u64) -> Self {
        let handles: Arc<Mutex<HashMap<u64, ControllerHandle>>> = Arc::default();
        let cut: Arc<Mutex<Vec<u64>>> = Arc::default();
        let (outbound, mut routed) = tokio::sync::mpsc::unbounded_channel::<Message>();
        let mut threads = Vec::new();
        let mut dirs = Vec::new();
        let broker_config = BrokerConfig::with_overrides(&[]).unwrap();
        for id in 1..=size {
            let dir = tempfile::tempdir().unwrap();
            let settings = ControllerSettings {
                dir_failures: None,
                log_dir: dir.path().to_path_buf(),
                log_config: log_config(&broker_config),
                quorum: QuorumSettings {
                    node_id: id,
                    voters: (1..=size).collect(),
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
                cluster_id: format!("cluster-from-{id}"),
                bootstrap: Vec::new(),
            };
            let (handle, thread) = start(settings, outbound.clone(), None).unwrap();
            handles.lock().unwrap().insert(id, handle);
            threads.push((id, thread));
            dirs.push(dir);
        }
        let (router_handles, router_cut) = (handles.clone(), cut.clone());
        tokio::spawn(async move {
            while let Some(message) = routed.recv().await {
                let cut = router_cut.lock().unwrap().clone();
                let (from, to) = (node_of(message.from), node_of(message.to));
                if cut.contains(&from) || cut.contains(&to) {
                    continue;
                }
                if let Some(handle) = router_handles.lock().unwrap().get(&to) {
                    handle.deliver(message);
                }
            }
        });
        Self {
            handles,
            cut,
            threads,
            _dirs: dirs,
        }
    }

    fn handle(&self, id: u64) -> ControllerHandle {
        self.handles.lock().unwrap()[&id].clone()
    }

    /// Polls until one reachable voter is the active controller.
    async fn active(&self) -> u64 {
        for _ in 0..500 {
            let cut = self.cut.lock().unwrap().clone();
            let active: Vec<u64> = self
                .handles
                .lock()
                .unwrap()
                .iter()
                .filter(|(id, h)| !cut.contains(id) && h.status().borrow().active)
                .map(|(id, _)| *id)
                .collect();
            if active.len() == 1 {
                return active[0];
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no active controller");
    }

    /// Runs `op` on whichever voter is active, again on the next one if leadership moves
    /// meanwhile: a loaded machine can hold heartbeats past these tests' 100 ms election
    /// timeout, which brokers ride out the same way (`call_active_controller`). A topic
    /// that a lost answer had created already counts as created.
    async fn call_active(&self, op: ControllerOp) -> (u64, ControllerReply) {
        for _ in 0..100 {
            let id = self.active().await;
            match self.handle(id).call(op.clone()).await {
                Ok(reply) => return (id, reply),
                Err(Error::TopicAlreadyExists(_)) => return (id, ControllerReply::Done),
                Err(Error::NotController) => tokio::time::sleep(Duration::from_millis(20)).await,
                Err(e) => panic!("{op:?}: {e}"),
            }
        }
        panic!("no active controller answered {op:?}");
    }

    fn stop(&mut self, id: u64) {
        if let Some(handle) = self.handles.lock().unwrap().remove(&id) {
            handle.shutdown();
        }
        if let Some(at) = self.threads.iter().position(|(t, _)| *t == id) {
            let (_, thread) = self.threads.remove(at);
            thread.join().unwrap();
        }
    }
}

impl Drop for TestQuorum {
    fn drop(&mut self) {
        let ids: Vec<u64> = self.threads.iter().map(|(id, _)| *id).collect();
        for id in ids {
            self.stop(id);
        }
    }
}

fn topic(name: &str) -> ControllerOp {
    ControllerOp::CreateTopic {
        request: TopicRequest {
            name: name.into(),
            partitions: 2,
            replication_factor: 1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        },
        validate_only: false,
    }
}

fn registration(id: i32, cluster_id: &str) -> ControllerOp {
    ControllerOp::RegisterBroker(BrokerRegistrationRequest {
        broker_id: id,
        cluster_id: cluster_id.into(),
        incarnation_id: Uuid::new_v4(),
        endpoints: vec![Endpoint {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 9092,
            security_protocol: 0,
        }],
        rack: None,
        log_dirs: Vec::new(),
    })
}

async fn wait_for(
    mut image: watch::Receiver<Arc<MetadataImage>>,
    check: impl Fn(&MetadataImage) -> bool,
) {
    tokio::time::timeout(Duration::from_secs(10), image.wait_for(|i| check(i)))
        .await
        .expect("image never got there")
        .expect("controller stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_registers_and_a_topic_is_created_through_one_voter() {
    let quorum = TestQuorum::start(1).await;
    let id = quorum.active().await;
    let handle = quorum.handle(id);
    wait_for(handle.image(), |i| i.cluster_id.is_some()).await;
    let cluster_id = handle.image().borrow().cluster_id.clone().unwrap();
    assert_eq!(cluster_id, "cluster-from-1");
    let ControllerReply::BrokerEpoch(epoch) =
        handle.call(registration(1, &cluster_id)).await.unwrap()
    else {
        panic!("not an epoch");
    };
    let heartbeat = ControllerOp::Heartbeat(HeartbeatRequest {
        broker_id: 1,
        broker_epoch: epoch,
        metadata_offset: epoch as u64,
        want_fence: false,
        want_shutdown: false,
        offline_log_dirs: Vec::new(),
    });
    let ControllerReply::Heartbeat(reply) = handle.call(heartbeat).await.unwrap() else {
        panic!("not a heartbeat reply");
    };
    assert!(!reply.is_fenced);
    // Answered only once committed: the image already holds the topic.
    handle.call(topic("t")).await.unwrap();
    assert_eq!(
        handle.image().borrow().topic("t").unwrap().partitions.len(),
        2
    );
    assert!(matches!(
        handle.call(topic("t")).await,
        Err(Error::TopicAlreadyExists(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_active_controller_stops_another_takes_over_with_all_committed_metadata() {
    // Five voters: one stopped and one cut off still leave a majority.
    let mut quorum = TestQuorum::start(5).await;
    let handle = quorum.handle(quorum.active().await);
    wait_for(handle.image(), |i| i.cluster_id.is_some()).await;
    let cluster_id = handle.image().borrow().cluster_id.clone().unwrap();
    // One registration (one incarnation), sent again if leadership moves under it.
    let (_, ControllerReply::BrokerEpoch(epoch)) =
        quorum.call_active(registration(7, &cluster_id)).await
    else {
        panic!("not an epoch");
    };
    quorum
        .call_active(ControllerOp::Heartbeat(HeartbeatRequest {
            broker_id: 7,
            broker_epoch: epoch,
            metadata_offset: epoch as u64,
            want_fence: false,
            want_shutdown: false,
            offline_log_dirs: Vec::new(),
        }))
        .await;
    let (first, _) = quorum.call_active(topic("before")).await;
    // A follower refuses commands.
    let follower = (1..=5).find(|id| *id != first).unwrap();
    assert!(matches!(
        quorum.handle(follower).call(topic("x")).await,
        Err(Error::NotController)
    ));

    quorum.stop(first);
    let second = quorum.active().await;
    assert_ne!(second, first);
    let (second, _) = quorum.call_active(topic("after")).await;
    let handle = quorum.handle(second);
    let image = handle.image().borrow().clone();
    assert!(image.topic("before").is_some() && image.topic("after").is_some());
    assert_eq!(
        image.cluster_id.as_deref(),
        Some(cluster_id.as_str()),
        "written once"
    );
    assert!(image.brokers.contains_key(&7));

    // Cut the active controller off: the other side elects a new one; the cut one
    // stops being active (check-quorum) and its commands fail.
    quorum.cut.lock().unwrap().push(second);
    let third = quorum.active().await;
    assert_ne!(third, second);
    let (third, _) = quorum.call_active(topic("while-cut")).await;
    assert_ne!(third, second);
    let cut_handle = quorum.handle(second);
    tokio::time::timeout(
        Duration::from_secs(10),
        cut_handle.status().wait_for(|s| !s.active),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(cut_handle.call(topic("refused")).await.is_err());
    quorum.cut.lock().unwrap().clear();
    wait_for(cut_handle.image(), |i| i.topic("while-cut").is_some()).await;
}
