//! The node: owns the configuration, the log manager, the replica manager, the group
//! coordinator and this broker's metadata cache, and runs three threads that tie it to the
//! cluster's metadata:
//!
//! - the controller: this node's voter of the controller quorum (see `controller/`);
//! - the lifecycle: imports a single node's pre-quorum topics once, registers the broker with
//!   the active controller, heartbeats, and at shutdown runs the controlled shutdown;
//! - the metadata publisher: applies each committed image (Kafka's `BrokerMetadataPublisher`):
//!   creates, leads, follows or deletes this broker's partitions, then makes the image the
//!   one the API layer answers from;
//!
//! and, as tasks on the runtime, a replica fetcher per leader it follows partitions of and the
//! ISR task (AlterPartition when followers fall behind or catch up).
//!
//! Topic administration is a command to the active controller (this node's, or another's
//! over the controller listener); it answers once this broker has applied the result, so a
//! client that created a topic can use it at once. A single node is a quorum of one; a
//! cluster is made of nodes that are all brokers and controllers (`process.roles`).
//!
//! `coordinators`: the group, transaction and share coordinators' internal topics, created on
//! first use.

mod acls;
mod coordinators;
mod credentials;

use crate::config::{BrokerConfig, LogConfig};
use crate::controller::control::{
    BrokerRegistrationRequest, ControlConfig, Election, HeartbeatRequest, ImportedTopic,
    TopicRequest,
};
use crate::controller::metadata_log::log_config as metadata_log_config;
use crate::controller::quorum::QuorumSettings;
use crate::controller::service::{
    self, ControllerHandle, ControllerOp, ControllerReply, ControllerSettings,
};
use crate::error::Error;
use crate::group::classic::GroupConfig;
use crate::group::consumer::ConsumerGroupConfig;
use crate::group::{CoordinatorConfig, GroupCoordinator, OFFSETS_TOPIC};
use crate::metadata::cache::{ImageSlot, MetadataCache, Taken};
use crate::metadata::image::{LocalChange, MetadataImage, local_changes};
use crate::metadata::records::{Endpoint, NO_LEADER};
use crate::metadata::{self, TopicInfo};
use crate::replica::fetch_session::FetchSessionCache;
use crate::replica::fetcher::{self, FetcherConfig, LeaderConnector};
use crate::replica::{Leadership, Partition, ReplicaManager};
use crate::storage::StorageError;
use crate::storage::manager::{Housekeeping, LogDirUsage, LogManager, lock};
use crate::txn::coordinator::{
    BoxFuture as TxnFuture, MarkerRequest, MarkerWriter, TRANSACTION_STATE_TOPIC,
    TransactionCoordinator, TxnCoordinatorConfig,
};
use crate::types::{TopicPartition, now_ms};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// How long a request waits for this broker to apply the metadata change it caused.
const APPLY_WAIT: Duration = Duration::from_secs(10);
/// How long startup waits for the broker to be registered and serving.
const READY_WAIT: Duration = Duration::from_secs(30);
/// Retry pause of the lifecycle's registration and heartbeats while fenced.
const LIFECYCLE_RETRY: Duration = Duration::from_millis(50);
/// Retry pause while the controller is not active yet (it becomes so within milliseconds
/// on a single node).
const CONTROLLER_WAIT: Duration = Duration::from_millis(2);
/// How long the first use of groups waits for a controller to create `__consumer_offsets`.
const GROUPS_TOPIC_WAIT: Duration = Duration::from_secs(2);
/// How long a command for the active controller is retried while there is none.
const CONTROLLER_REQUEST_WAIT: Duration = Duration::from_secs(30);
/// How long the controlled shutdown may take before the broker stops anyway.
const CONTROLLED_SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// The quorum's voter ids: `controller.quorum.voters`, or this node alone.
pub fn quorum_voters(config: &BrokerConfig) -> Vec<u64> {
    if config.cluster.voters.is_empty() {
        vec![config.node_id as u64]
    } else {
        config.cluster.voters.iter().map(|v| v.id as u64).collect()
    }
}

fn coordinator_config(config: &BrokerConfig) -> CoordinatorConfig {
    CoordinatorConfig {
        group: GroupConfig {
            min_session_timeout_ms: config.group_min_session_timeout_ms,
            max_session_timeout_ms: config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms: config.group_initial_rebalance_delay_ms,
            max_size: config.group_max_size,
            offset_metadata_max_bytes: config.offset_metadata_max_bytes,
        },
        consumer: ConsumerGroupConfig {
            session_timeout_ms: config.consumer_session_timeout_ms,
            heartbeat_interval_ms: config.consumer_heartbeat_interval_ms,
            assignors: config.consumer_assignors.clone(),
            max_size: config.consumer_max_size,
        },
        offsets_topic_partitions: config.offsets_topic_partitions,
        offsets_retention_ms: config.offsets_retention_ms,
        offsets_retention_check_interval_ms: config.offsets_retention_check_interval_ms,
    }
}

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

/// A partition's leadership as Metadata reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// `None` when no replica can lead.
    pub leader: Option<i32>,
    pub leader_epoch: i32,
    /// Preferred replica first.
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub offline: Vec<i32>,
}

/// ElectLeaders' election types (Kafka's `ElectionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionType {
    /// Make the first replica the leader (0).
    Preferred,
    /// Elect any live replica when no in-sync replica is left (1).
    Unclean,
}

/// A topic to create, as CreateTopics (or auto-creation) asks for it. `-1` means "default".
#[derive(Debug, Clone)]
pub struct NewTopic {
    pub name: String,
    pub partitions: i32,
    pub replication_factor: i16,
    /// Explicit replica assignment: broker ids per partition, in partition order.
    pub assignments: Vec<Vec<i32>>,
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug)]
pub struct Broker {
    config: Arc<BrokerConfig>,
    cluster_id: Mutex<String>,
    logs: Arc<LogManager>,
    replicas: Arc<ReplicaManager>,
    groups: Arc<GroupCoordinator>,
    shares: Arc<crate::share::ShareCoordinator>,
    metadata: Arc<MetadataCache>,
    controller: ControllerHandle,
    /// Committed images from the controller, for the publisher.
    images: Arc<ImageSlot>,
    fetch_sessions: FetchSessionCache,
    /// This process's registration: a new one each start.
    incarnation: Uuid,
    /// The broker epoch the controller gave this registration; -1 before it.
    broker_epoch: AtomicI64,
    /// The current block of producer ids: (next, end exclusive).
    producer_ids: tokio::sync::Mutex<(i64, i64)>,
    /// Set when the broker stops: the lifecycle runs the controlled shutdown and exits.
    stopping: AtomicBool,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// A single node's topics from before the metadata log, imported before registering.
    legacy_topics: Mutex<Vec<Arc<TopicInfo>>>,
    /// Carries commands to another node's controller listener.
    forwarder: std::sync::OnceLock<Arc<dyn ControllerForwarder>>,
    /// Opens fetch connections to leaders, for the follower fetchers.
    leader_connector: std::sync::OnceLock<Arc<dyn LeaderConnector>>,
    /// The transaction coordinator (set right after the broker is built: it calls back).
    transactions: std::sync::OnceLock<Arc<TransactionCoordinator>>,
    /// Sends transaction markers to partitions other brokers lead (the API layer's).
    remote_markers: std::sync::OnceLock<Arc<dyn MarkerWriter>>,
    /// Transaction verification with coordinators on other brokers (KIP-890).
    remote_verifier: std::sync::OnceLock<Arc<dyn crate::txn::coordinator::RemoteVerifier>>,
    /// Leaders a fetcher task runs for.
    fetchers: Mutex<std::collections::HashSet<i32>>,
    /// Cancelled at shutdown: fetchers and the ISR task stop at once.
    tasks: tokio_util::sync::CancellationToken,
    /// The async runtime, for the lifecycle thread's requests to a remote controller.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
    /// Raft messages for the other voters, until the transport takes them.
    raft_outbound: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<raft::prelude::Message>>>,
    controller_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Broker {
    /// Opens the log directory: starts this node's controller (replaying the metadata log),
    /// loads the partition logs (recovering after an unclean stop) and the consumer groups,
    /// and starts applying metadata. [`Broker::start`] then registers the broker.
    pub fn open(config: BrokerConfig) -> Result<Arc<Self>, Error> {
        if !(config.cluster.broker_role && config.cluster.controller_role) {
            return Err(Error::InvalidConfig(
                "process.roles must be broker,controller: broker-only and controller-only nodes are not supported yet".into(),
            ));
        }
        std::fs::create_dir_all(&config.log_dir).map_err(StorageError::from)?;
        let stored_cluster_id = metadata::read_meta(&config.log_dir, config.node_id)?;
        if let (Some(stored), Some(wanted)) = (&stored_cluster_id, &config.cluster_id)
            && stored != wanted
        {
            return Err(StorageError::Corrupt(format!(
                "cluster.id {wanted} does not match {stored} stored in meta.properties"
            ))
            .into());
        }
        let bootstrap_cluster_id = stored_cluster_id
            .clone()
            .or_else(|| config.cluster_id.clone())
            .unwrap_or_else(metadata::generate_cluster_id);
        let images = Arc::new(ImageSlot::default());
        let settings = ControllerSettings {
            log_dir: config.log_dir.clone(),
            log_config: metadata_log_config(&config),
            quorum: QuorumSettings {
                node_id: config.node_id as u64,
                voters: quorum_voters(&config),
                election_ticks: 10,
                heartbeat_ticks: 1,
                snapshot_after_entries: 10_000,
            },
            tick: Duration::from_millis((config.cluster.election_timeout_ms / 10).clamp(10, 1000)),
            control: ControlConfig {
                own_node: config.node_id,
                broker_session_timeout_ms: config.cluster.broker_session_timeout_ms,
                default_partitions: config.num_partitions,
                default_replication_factor: config.default_replication_factor,
                unclean_leader_election: config
                    .topic_defaults
                    .get("unclean.leader.election.enable")
                    .and_then(|v| v.value.as_deref())
                    .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            },
            cluster_id: bootstrap_cluster_id.clone(),
            bootstrap: metadata::bootstrap::read(&config.log_dir)?,
        };
        // Raft messages for the other voters; the server's transport takes the receiver.
        let (outbound, raft_outbound) = tokio::sync::mpsc::unbounded_channel();
        let (controller, controller_thread) =
            service::start(settings, outbound, Some(images.clone())).map_err(|e| {
                StorageError::Corrupt(format!("cannot start the controller quorum: {e}"))
            })?;
        let replayed = controller.image().borrow().clone();
        let legacy = metadata::legacy_topics(&config.log_dir)?;

        let now = now_ms();
        let loading = std::time::Instant::now();
        // Logs of topics the metadata does not (yet) know load with the defaults; the first
        // image applied removes those this broker does not host.
        let (logs, reports) = LogManager::open(
            &config.log_dir,
            |topic| {
                let overrides = replayed
                    .topic(topic)
                    .map(|t| t.configs.clone())
                    .or_else(|| {
                        legacy
                            .iter()
                            .find(|t| &*t.name == topic)
                            .map(|t| t.configs.clone())
                    })
                    .unwrap_or_default();
                Some(LogConfig::resolve(&config.topic_defaults, &overrides))
            },
            now,
            config.recovery_threads,
        )?;
        let recovered: usize = reports.iter().map(|(_, r)| r.recovered_segments).sum();
        crate::limits::check_descriptor_budget(reports.iter().map(|(_, r)| r.segments).sum());
        tracing::info!(
            log_dir = %config.log_dir.display(),
            clean = logs.clean_startup(),
            logs = reports.len(),
            recovered_segments = recovered,
            elapsed_ms = loading.elapsed().as_millis() as u64,
            "loaded logs"
        );
        let metadata = Arc::new(MetadataCache::default());
        let replicas = Arc::new(ReplicaManager::new());
        let groups = GroupCoordinator::new(
            coordinator_config(&config),
            replicas.clone(),
            metadata.clone(),
        );
        let fetch_sessions = FetchSessionCache::new(config.fetch_session_cache_slots);
        let config = Arc::new(config);
        let shares =
            crate::share::ShareCoordinator::new(config.clone(), replicas.clone(), metadata.clone());
        let broker = Arc::new(Self {
            fetch_sessions,
            config,
            shares,
            cluster_id: Mutex::new(stored_cluster_id.unwrap_or(bootstrap_cluster_id)),
            logs: Arc::new(logs),
            replicas,
            groups,
            metadata,
            controller,
            images,
            incarnation: Uuid::new_v4(),
            broker_epoch: AtomicI64::new(-1),
            producer_ids: tokio::sync::Mutex::new((0, 0)),
            stopping: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
            legacy_topics: Mutex::new(Vec::new()),
            raft_outbound: Mutex::new(Some(raft_outbound)),
            forwarder: std::sync::OnceLock::new(),
            leader_connector: std::sync::OnceLock::new(),
            transactions: std::sync::OnceLock::new(),
            remote_markers: std::sync::OnceLock::new(),
            remote_verifier: std::sync::OnceLock::new(),
            fetchers: Mutex::new(Default::default()),
            tasks: tokio_util::sync::CancellationToken::new(),
            runtime: Mutex::new(None),
            controller_thread: Mutex::new(Some(controller_thread)),
        });
        let weak = Arc::downgrade(&broker);
        let ids = weak.clone();
        let transactions = TransactionCoordinator::new(
            TxnCoordinatorConfig {
                partitions: broker.config.transaction_state_partitions,
                max_timeout_ms: broker.config.transaction_max_timeout_ms,
                write_timeout: Duration::from_millis(
                    broker.config.cluster.replica_socket_timeout_ms,
                ),
                id_expiration_ms: broker.config.transactional_id_expiration_ms,
            },
            broker.replicas.clone(),
            Arc::new(BrokerMarkers { broker: weak }),
            Arc::new(move || {
                let broker = ids.upgrade();
                Box::pin(async move {
                    match broker {
                        Some(broker) => broker.allocate_producer_id().await.ok(),
                        None => None,
                    }
                })
            }),
        );
        let _ = broker.transactions.set(transactions);
        let publisher = {
            let broker = broker.clone();
            std::thread::Builder::new()
                .name("metadata-publisher".into())
                .spawn(move || broker.run_publisher())
                .map_err(StorageError::from)?
        };
        broker.threads().push(publisher);
        if !legacy.is_empty() && replayed.topics.is_empty() {
            *broker
                .legacy_topics
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = legacy;
        }
        Ok(broker)
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, Vec<std::thread::JoinHandle<()>>> {
        self.threads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Brings a single node's topics from before the metadata log into it (once).
    fn import_legacy(&self, legacy: &[Arc<TopicInfo>]) -> Result<(), Error> {
        let topics = legacy
            .iter()
            .map(|t| ImportedTopic {
                name: t.name.to_string(),
                id: t.id,
                partitions: t.partitions,
                configs: t.configs.clone(),
            })
            .collect();
        let next_producer_id = metadata::legacy_next_producer_id(&self.config.log_dir)?;
        let op = ControllerOp::ImportTopics {
            broker: self.config.node_id,
            topics,
            next_producer_id,
        };
        let deadline = std::time::Instant::now() + READY_WAIT;
        loop {
            match self.controller.call_blocking(op.clone()) {
                Ok(_) => break,
                Err(Error::NotController) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(CONTROLLER_WAIT);
                }
                Err(e) => return Err(e),
            }
        }
        metadata::retire_legacy_topics(&self.config.log_dir)?;
        tracing::info!(
            topics = legacy.len(),
            "imported the topics of this single node into the metadata log"
        );
        Ok(())
    }

    /// Registers the broker with the advertised `endpoints` (known once the listeners are
    /// bound), starts heartbeating, and waits until it serves: registered, unfenced, and
    /// the image that says so applied.
    pub fn start(self: &Arc<Self>, endpoints: Vec<Endpoint>) -> Result<(), Error> {
        *self.runtime.lock().unwrap_or_else(|p| p.into_inner()) =
            tokio::runtime::Handle::try_current().ok();
        let lifecycle = {
            let broker = self.clone();
            std::thread::Builder::new()
                .name("broker-lifecycle".into())
                .spawn(move || broker.run_lifecycle(endpoints))
                .map_err(StorageError::from)?
        };
        self.threads().push(lifecycle);
        if let Some(runtime) = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            runtime.spawn(self.clone().run_isr_updates());
            runtime.spawn(self.clone().run_transaction_timeouts());
        }
        let node = self.config.node_id;
        let incarnation = self.incarnation;
        // Serving: registered, unfenced, that image applied and the groups it gave this
        // broker to coordinate loaded.
        let ready = self.metadata.wait_blocking(READY_WAIT, |image| {
            image
                .brokers
                .get(&node)
                .is_some_and(|b| b.incarnation_id == incarnation && !b.fenced)
                && !self.groups.loading_anything()
        });
        if !ready {
            tracing::warn!("the broker is not registered and unfenced yet; serving anyway");
        }
        Ok(())
    }

    fn run_lifecycle(&self, endpoints: Vec<Endpoint>) {
        let legacy =
            std::mem::take(&mut *self.legacy_topics.lock().unwrap_or_else(|p| p.into_inner()));
        if !legacy.is_empty()
            && let Err(e) = self.import_legacy(&legacy)
        {
            // Registering anyway would delete the unimported logs as strays.
            tracing::error!(error = %e, "importing this node's earlier topics failed; not registering");
            return;
        }
        let node = self.config.node_id;
        // The cluster is the quorum's: its id comes from the metadata log (written once by
        // the first active controller), checked against this directory's meta.properties.
        let cluster_id = loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let committed = self.controller.image().borrow().cluster_id.clone();
            if let Some(cluster_id) = committed {
                break cluster_id;
            }
            std::thread::sleep(CONTROLLER_WAIT);
        };
        match metadata::read_meta(&self.config.log_dir, node) {
            Ok(Some(stored)) if stored != cluster_id => {
                tracing::error!(stored = %stored, quorum = %cluster_id, "this log directory belongs to another cluster; not registering");
                return;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "cannot read meta.properties; not registering");
                return;
            }
        }
        let request = BrokerRegistrationRequest {
            broker_id: node,
            cluster_id,
            incarnation_id: self.incarnation,
            endpoints,
            rack: self.config.cluster.rack.clone(),
        };
        let mut refusals = 0u64;
        let epoch = loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            match self.call_from_thread(ControllerOp::RegisterBroker(request.clone())) {
                Ok(ControllerReply::BrokerEpoch(epoch)) => break epoch,
                Ok(other) => tracing::error!(reply = ?other, "unexpected registration reply"),
                Err(Error::NotController) => {
                    std::thread::sleep(CONTROLLER_WAIT);
                    continue;
                }
                // A restarted broker waits out its old incarnation's session; said once.
                Err(e) if refusals == 0 => {
                    refusals += 1;
                    tracing::info!(error = %e, "broker registration refused; retrying");
                }
                Err(e) => {
                    refusals += 1;
                    tracing::debug!(error = %e, refusals, "broker registration refused again");
                }
            }
            std::thread::sleep(LIFECYCLE_RETRY);
        };
        self.broker_epoch.store(epoch, Ordering::SeqCst);
        tracing::info!(broker = node, epoch, "registered with the controller");
        // The publisher applies images from the registration on; heartbeats report them.
        self.images.offer(self.controller.image().borrow().clone());
        self.metadata
            .wait_blocking(APPLY_WAIT, |image| image.offset as i64 >= epoch);
        let interval = Duration::from_millis(self.config.cluster.broker_heartbeat_interval_ms);
        let mut fenced = true;
        while !self.stopping.load(Ordering::SeqCst) {
            let reply = self.heartbeat(epoch, false);
            if let Ok(reply) = reply {
                fenced = reply.is_fenced;
            }
            // While fenced, heartbeat often: unfencing is what startup waits for.
            let pause = if fenced { LIFECYCLE_RETRY } else { interval };
            let deadline = std::time::Instant::now() + pause;
            while std::time::Instant::now() < deadline && !self.stopping.load(Ordering::SeqCst) {
                std::thread::sleep(LIFECYCLE_RETRY.min(pause));
            }
        }
        // Controlled shutdown: leadership moves away before the broker stops.
        let deadline = std::time::Instant::now() + CONTROLLED_SHUTDOWN_WAIT;
        while std::time::Instant::now() < deadline {
            match self.heartbeat(epoch, true) {
                Ok(reply) if reply.should_shutdown => {
                    tracing::info!("controlled shutdown complete");
                    let offset = self.controller.image().borrow().offset;
                    self.images.offer(self.controller.image().borrow().clone());
                    self.metadata
                        .wait_blocking(APPLY_WAIT, |image| image.offset >= offset);
                    return;
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "controlled shutdown heartbeat failed"),
            }
            std::thread::sleep(LIFECYCLE_RETRY);
        }
        tracing::warn!("controlled shutdown did not complete in time; stopping anyway");
    }

    fn heartbeat(
        &self,
        epoch: i64,
        want_shutdown: bool,
    ) -> Result<crate::controller::control::HeartbeatReply, Error> {
        let request = HeartbeatRequest {
            broker_id: self.config.node_id,
            broker_epoch: epoch,
            metadata_offset: self.metadata.image().offset,
            want_fence: false,
            want_shutdown,
        };
        match self.call_from_thread(ControllerOp::Heartbeat(request))? {
            ControllerReply::Heartbeat(reply) => Ok(reply),
            other => Err(Error::InvalidRequest(format!(
                "unexpected heartbeat reply {other:?}"
            ))),
        }
    }

    fn run_publisher(self: &Arc<Self>) {
        let mut first = true;
        // An image that failed to apply (no descriptor for a new log, a full disk) is applied
        // again every half second until it succeeds or a newer one arrives.
        let mut failed: Option<Arc<MetadataImage>> = None;
        loop {
            let (image, retry) = match self.images.take(Duration::from_millis(500)) {
                Taken::Closed => return,
                Taken::Nothing => match failed.take() {
                    Some(image) => (image, true),
                    None => continue,
                },
                Taken::Image(image) => (image, false),
            };
            let epoch = self.broker_epoch.load(Ordering::SeqCst);
            // Only images from this broker's registration on: an older one may name this
            // broker leader of partitions it no longer leads.
            if epoch < 0 || (image.offset as i64) < epoch {
                continue;
            }
            if let Err(e) = self.apply_image(image.clone(), first) {
                if !retry {
                    tracing::error!(error = %e, "applying metadata failed; retrying");
                }
                failed = Some(image);
                continue;
            }
            self.sync_fetchers();
            first = false;
        }
    }

    /// Applies one committed image: this broker's partitions as it says, then makes it
    /// current. The first one also removes logs of partitions not assigned here.
    fn apply_image(&self, image: Arc<MetadataImage>, first: bool) -> Result<(), Error> {
        if let Some(cluster_id) = &image.cluster_id {
            let mut current = self.cluster_id.lock().unwrap_or_else(|p| p.into_inner());
            let stored = metadata::read_meta(&self.config.log_dir, self.config.node_id)?;
            match stored {
                Some(stored) if stored != *cluster_id => {
                    return Err(StorageError::Corrupt(format!(
                        "the controller quorum is cluster {cluster_id}, but this log directory belongs to {stored}"
                    ))
                    .into());
                }
                Some(_) => {}
                None => {
                    metadata::write_meta(&self.config.log_dir, self.config.node_id, cluster_id)?
                }
            }
            *current = cluster_id.clone();
        }
        let node = self.config.node_id;
        let old = if first {
            Arc::new(MetadataImage::default())
        } else {
            self.metadata.image()
        };
        let mut changes = local_changes(&old, &image, node);
        // Offsets partitions whose leadership here starts (true) or ends (false).
        let mut coordination: Vec<(i32, bool)> = Vec::new();
        // `__transaction_state` partitions whose leadership here starts or ends.
        let mut txn_coordination: Vec<(i32, bool)> = Vec::new();
        for change in &changes {
            let (topic, partition, leads_now) = match change {
                LocalChange::Lead {
                    topic, partition, ..
                } => (topic, *partition, true),
                LocalChange::Follow {
                    topic, partition, ..
                }
                | LocalChange::Remove { topic, partition } => (topic, *partition, false),
            };
            let led_before = old
                .partition(topic, partition)
                .is_some_and(|p| p.leader == node);
            if &**topic == TRANSACTION_STATE_TOPIC && leads_now != led_before {
                txn_coordination.push((partition, leads_now));
                if leads_now {
                    self.transaction_coordinator().begin_loading(partition);
                }
                continue;
            }
            if &**topic != OFFSETS_TOPIC {
                continue;
            }
            if leads_now != led_before {
                coordination.push((partition, leads_now));
                if leads_now {
                    // Requests for its groups wait until they are rebuilt below.
                    self.groups.begin_loading(partition);
                }
            }
        }
        // Removals first: a topic deleted and created again under its name reuses the path.
        changes.sort_by_key(|c| !matches!(c, LocalChange::Remove { .. }));
        for change in changes {
            match change {
                LocalChange::Remove { topic, partition } => {
                    let tp = TopicPartition::new(&topic, partition);
                    self.replicas.remove(&tp);
                    self.logs.delete(&tp)?;
                    tracing::info!(partition = %tp, "no longer a replica; log deleted");
                }
                LocalChange::Lead {
                    topic,
                    topic_id,
                    partition,
                    registration,
                }
                | LocalChange::Follow {
                    topic,
                    topic_id,
                    partition,
                    registration,
                } => {
                    let tp = TopicPartition::new(&topic, partition);
                    let hosted = match self.replicas.get(&tp) {
                        Ok(p) if p.topic_id() == topic_id => p,
                        _ => {
                            let configs = image
                                .topic(&topic)
                                .map(|t| t.configs.clone())
                                .unwrap_or_default();
                            let log = self.logs.get_or_create(
                                &tp,
                                self.log_config(&configs),
                                now_ms(),
                            )?;
                            self.replicas
                                .add(Partition::new(tp.clone(), topic_id, node, log))
                        }
                    };
                    hosted.set_lag_time_ms(self.config.cluster.replica_lag_time_max_ms);
                    hosted.set_leadership(Leadership {
                        leader: registration.leader,
                        leader_epoch: registration.leader_epoch,
                        partition_epoch: registration.partition_epoch,
                        replicas: registration.replicas.clone(),
                        isr: registration.isr.clone(),
                    });
                }
            }
        }
        // Config changes of topics hosted here.
        for (name, topic) in &image.topics {
            let before = old.topic(name).filter(|t| t.id == topic.id);
            if first || before.is_none_or(|b| b.configs == topic.configs) {
                continue;
            }
            let config = self.log_config(&topic.configs);
            for p in 0..topic.partitions.len() as i32 {
                if let Some(log) = self.logs.get(&TopicPartition::new(name, p)) {
                    lock(&log).set_config(config.clone());
                }
            }
        }
        if first {
            self.remove_strays(&image)?;
        }
        self.metadata.publish(image);
        // Groups refer to topics by id: replayed once the topics are known here.
        let (started, mut elected, mut records) = (std::time::Instant::now(), 0, 0);
        for (partition, leads) in coordination {
            if !leads {
                self.groups.resign(partition);
                continue;
            }
            let tp = TopicPartition::new(OFFSETS_TOPIC, partition);
            if let Some(log) = self.logs.get(&tp) {
                records += self.groups.elect(partition, &log)?;
                elected += 1;
            }
        }
        if elected > 0 {
            tracing::info!(partitions = elected, records, groups = self.groups.list_groups().len(), elapsed = ?started.elapsed(), "loaded consumer groups");
        }
        // Transactions found prepared are completed by tasks on the runtime, and this is the
        // metadata publisher's thread.
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let _in_runtime = runtime.as_ref().map(|r| r.enter());
        for (partition, leads) in txn_coordination {
            let transactions = self.transaction_coordinator();
            if !leads {
                transactions.resign(partition);
                continue;
            }
            let tp = TopicPartition::new(TRANSACTION_STATE_TOPIC, partition);
            if let Some(log) = self.logs.get(&tp) {
                let records = transactions.elect(partition, &log)?;
                tracing::debug!(
                    partition,
                    records,
                    "coordinating the transactional ids of {TRANSACTION_STATE_TOPIC} partition"
                );
            }
        }
        self.metadata.renotify();
        Ok(())
    }

    /// Deletes logs of partitions the metadata does not assign to this broker (a topic
    /// deleted while the broker was down, or a crash between creating logs and recording
    /// the topic).
    fn remove_strays(&self, image: &MetadataImage) -> Result<(), Error> {
        let node = self.config.node_id;
        for log in self.logs.all() {
            let tp = lock(&log).topic_partition().clone();
            let assigned = image
                .partition(&tp.topic, tp.partition)
                .is_some_and(|p| p.replicas.contains(&node));
            if !assigned {
                tracing::warn!(partition = %tp, "removing a stray log: the metadata does not assign it to this broker");
                self.replicas.remove(&tp);
                self.logs.delete(&tp)?;
            }
        }
        Ok(())
    }

    /// Waits until this broker has applied a change the controller answered for (it may
    /// have been committed elsewhere: the condition, not an offset, says when it is here).
    async fn await_visible(&self, visible: impl Fn(&MetadataImage) -> bool) {
        if !self.metadata.wait_until(visible, APPLY_WAIT).await {
            tracing::warn!("a metadata change was not applied here in time");
        }
    }

    /// Runs `op` on the active controller: this node's own when it is the active one, else
    /// over the controller listener of the voter leading the quorum. NOT_CONTROLLER (an
    /// election under way, a leader that just stepped down or died) is retried until
    /// [`CONTROLLER_REQUEST_WAIT`] passes.
    pub async fn call_active_controller(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        self.call_active_controller_within(op, CONTROLLER_REQUEST_WAIT)
            .await
    }

    async fn call_active_controller_within(
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
                self.forward_to(leader, &op).await
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

    /// Sends `op` to voter `leader`'s controller listener.
    async fn forward_to(&self, leader: u64, op: &ControllerOp) -> Result<ControllerReply, Error> {
        let Some(voter) = self
            .config
            .cluster
            .voters
            .iter()
            .find(|v| v.id as u64 == leader)
        else {
            return Err(Error::NotController);
        };
        let Some(forwarder) = self.forwarder.get() else {
            return Err(Error::NotController);
        };
        let address = format!("{}:{}", voter.host, voter.port);
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

    /// Installs what opens fetch connections to leaders (the server does, once).
    pub fn set_leader_connector(&self, connector: Arc<dyn LeaderConnector>) {
        let _ = self.leader_connector.set(connector);
    }

    /// Starts a fetcher for every leader this broker follows partitions of and has none.
    fn sync_fetchers(self: &Arc<Self>) {
        let Some(runtime) = self
            .runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return;
        };
        let Some(connector) = self.leader_connector.get().cloned() else {
            return;
        };
        let node = self.config.node_id;
        let leaders: std::collections::BTreeSet<i32> = self
            .replicas
            .all()
            .iter()
            .filter_map(|p| p.leadership())
            .filter(|l| l.leader != node && l.leader != NO_LEADER && l.replicas.contains(&node))
            .map(|l| l.leader)
            .collect();
        let mut running = self.fetchers.lock().unwrap_or_else(|p| p.into_inner());
        for leader in leaders {
            if !running.insert(leader) {
                continue;
            }
            let broker = self.clone();
            let connector = connector.clone();
            runtime.spawn(async move { broker.run_fetcher(leader, connector).await });
        }
    }

    async fn run_fetcher(self: Arc<Self>, leader: i32, connector: Arc<dyn LeaderConnector>) {
        let cluster = &self.config.cluster;
        let config = FetcherConfig {
            node_id: self.config.node_id,
            max_wait_ms: cluster.replica_fetch_wait_max_ms,
            min_bytes: cluster.replica_fetch_min_bytes,
            partition_max_bytes: cluster.replica_fetch_max_bytes,
            response_max_bytes: cluster.replica_fetch_response_max_bytes,
            backoff: Duration::from_millis(cluster.replica_fetch_backoff_ms.clamp(10, 10_000)),
        };
        tracing::info!(leader, "replica fetcher started");
        loop {
            let metadata = self.metadata.clone();
            let listener = cluster.inter_broker_listener.clone();
            let address_of = move |id: i32| {
                let image = metadata.image();
                let endpoint = image.brokers.get(&id)?.endpoint(&listener)?.clone();
                Some(format!("{}:{}", endpoint.host, endpoint.port))
            };
            fetcher::run(
                leader,
                self.replicas.clone(),
                connector.clone(),
                address_of,
                config,
                self.tasks.clone(),
            )
            .await;
            // Stopped: nothing to follow there any more (checked again under the lock, so
            // a partition that just arrived is not left without a fetcher).
            let mut running = self.fetchers.lock().unwrap_or_else(|p| p.into_inner());
            let still_followed = self.replicas.all().iter().any(|p| {
                p.leadership()
                    .is_some_and(|l| l.leader == leader && l.leader != self.config.node_id)
            });
            if !still_followed || self.tasks.is_cancelled() {
                running.remove(&leader);
                tracing::info!(leader, "replica fetcher stopped");
                return;
            }
        }
    }

    /// Keeps the ISR of the partitions this broker leads right: followers that fell behind
    /// for `replica.lag.time.max.ms` leave, caught-up ones join (AlterPartition to the
    /// active controller).
    async fn run_isr_updates(self: Arc<Self>) {
        let lag_ms = self.config.cluster.replica_lag_time_max_ms;
        let period = Duration::from_millis((lag_ms / 2).clamp(50, 5_000) as u64);
        let requests = Arc::new(Mutex::new(
            crate::replica::alter_partition::IsrRequests::default(),
        ));
        loop {
            tokio::select! {
                _ = tokio::time::sleep(period) => {}
                _ = self.replicas.isr_candidate() => {}
                _ = self.tasks.cancelled() => return,
            }
            let now = now_ms();
            let partitions = self.replicas.all();
            let lock_requests = || requests.lock().unwrap_or_else(|p| p.into_inner());
            lock_requests().retain(|tp| partitions.iter().any(|p| p.topic_partition() == tp));
            for partition in partitions {
                let Some((leadership, isr)) = partition.wanted_isr(now, lag_ms) else {
                    continue;
                };
                let tp = partition.topic_partition().clone();
                let epoch = leadership.partition_epoch;
                if !lock_requests().should_send(&tp, epoch, std::time::Instant::now()) {
                    continue;
                }
                tracing::info!(partition = %tp, from = ?leadership.isr, to = ?isr, "changing the ISR");
                let change = crate::controller::control::IsrChange {
                    broker_id: self.config.node_id,
                    broker_epoch: self.broker_epoch.load(Ordering::SeqCst),
                    topic_id: partition.topic_id(),
                    partition: tp.partition,
                    leader_epoch: leadership.leader_epoch,
                    partition_epoch: epoch,
                    new_isr: isr,
                };
                let (broker, requests) = (self.clone(), requests.clone());
                tokio::spawn(async move {
                    if let Err(e) = broker
                        .call_active_controller(ControllerOp::AlterPartition(change))
                        .await
                    {
                        let backoff = requests.lock().unwrap_or_else(|p| p.into_inner()).refused(
                            &tp,
                            epoch,
                            std::time::Instant::now(),
                        );
                        tracing::info!(partition = %tp, error = %e, ?backoff, "ISR change refused; retrying");
                        tokio::time::sleep(backoff).await;
                        broker.replicas.wake_isr_updates();
                    }
                });
            }
        }
    }

    /// Installs what carries commands to other nodes' controllers (the server does, once).
    pub fn set_forwarder(&self, forwarder: Arc<dyn ControllerForwarder>) {
        let _ = self.forwarder.set(forwarder);
    }

    /// [`Broker::call_active_controller`] from the lifecycle thread: in-process on a single
    /// voter, through the runtime otherwise.
    fn call_from_thread(&self, op: ControllerOp) -> Result<ControllerReply, Error> {
        if self.config.cluster.voters.len() <= 1 {
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

    /// Installs what sends transaction markers to other brokers (the server does, once).
    pub fn set_remote_markers(&self, writer: Arc<dyn MarkerWriter>) {
        let _ = self.remote_markers.set(writer);
    }

    pub fn set_remote_verifier(&self, verifier: Arc<dyn crate::txn::coordinator::RemoteVerifier>) {
        let _ = self.remote_verifier.set(verifier);
    }

    /// Appends a produced batch to `tp`, which this broker must lead; a transactional batch of
    /// a request naming its `transactional_id` is verified first when it would begin the
    /// producer's transaction on the partition ([`Self::verify_transaction_start`]), unless
    /// `transaction.partition.verification.enable` is off.
    pub async fn append_produced(
        &self,
        tp: &TopicPartition,
        records: bytes::Bytes,
        acks: i16,
        transactional_id: Option<&str>,
    ) -> Result<
        (
            Arc<crate::replica::Partition>,
            crate::storage::log::AppendInfo,
        ),
        Error,
    > {
        // Only the coordinators write their topics (Kafka: "Cannot append to internal topic").
        if crate::metadata::INTERNAL_TOPICS.contains(&tp.topic.as_ref()) {
            return Err(Error::InvalidTopic(format!(
                "Cannot append to internal topic {}",
                tp.topic
            )));
        }
        let partition = self.replicas.get(tp)?;
        let checked = partition.check_produced(records).await?;
        let records = checked.bytes();
        // Only requests of transactional producers are looked at (the batch header parsed).
        let transactional = transactional_id
            .filter(|_| {
                self.config.transaction_partition_verification
                    && partition.leader_epoch_if_leader().is_some()
            })
            .and_then(|id| {
                crate::record::BatchView::new(records)
                    .ok()
                    .filter(|batch| batch.is_transactional())
                    .map(|batch| (id, batch.producer_id(), batch.producer_epoch()))
            });
        let verified = match transactional {
            Some((id, producer_id, producer_epoch)) => self
                .verify_transaction_start(tp, id, producer_id, producer_epoch)
                .await?
                .map(|guard| (producer_id, guard)),
            None => None,
        };
        let info = partition.append_checked(&checked, acks, verified)?;
        Ok((partition, info))
    }

    /// KIP-890 (part 1), before a transactional batch of `producer_id` is appended to `tp`:
    /// when it would begin the producer's transaction there, the transaction's coordinator
    /// (here or on another broker) must confirm the partition was added to it. Returns the
    /// verification guard for [`crate::replica::Partition::append_verified`], `None` when the
    /// transaction is already open on the partition. This keeps a late or stray write (a
    /// retried batch arriving after its transaction ended) from opening a transaction no
    /// coordinator knows, which would hold the last stable offset back until it timed out.
    pub async fn verify_transaction_start(
        &self,
        tp: &TopicPartition,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
    ) -> Result<Option<u64>, Error> {
        let partition = self.replicas.get(tp)?;
        let Some(guard) = partition.start_transaction_verification(producer_id) else {
            return Ok(None);
        };
        use crate::error::CoordinatorError as C;
        use crate::error::TxnError as T;
        let coordinator = self.transaction_coordinator();
        let verified = match coordinator
            .verify_partitions(
                transactional_id,
                producer_id,
                producer_epoch,
                std::slice::from_ref(tp),
            )
            .await
        {
            Ok(verified) if verified.first() == Some(&true) => Ok(()),
            Ok(_) | Err(C::Txn(T::InvalidProducerIdMapping | T::InvalidTxnState(_))) => {
                Err(Error::NotInTransaction)
            }
            Err(C::Txn(T::ProducerFenced { .. })) => Err(Error::ProducerFencedByCoordinator),
            Err(C::NotCoordinator) => {
                let state_partition = coordinator.partition_of(transactional_id);
                match (
                    self.partition_state(&state_partition).leader,
                    self.remote_verifier.get(),
                ) {
                    (Some(leader), Some(verifier)) if leader != self.config.node_id => {
                        verifier
                            .verify(leader, transactional_id, producer_id, producer_epoch, tp)
                            .await
                    }
                    _ => Err(Error::TransactionNotVerified(
                        "no transaction coordinator is available".into(),
                    )),
                }
            }
            Err(e) => Err(Error::TransactionNotVerified(e.to_string())),
        };
        if verified.is_err() {
            partition.forget_verification(producer_id, guard);
        }
        verified.map(|()| Some(guard))
    }

    /// Writes a transaction marker to a partition this broker leads and waits until the ISR
    /// has it (markers are written with acks=all).
    pub async fn write_marker(
        &self,
        tp: &TopicPartition,
        marker: MarkerRequest,
    ) -> Result<(), Error> {
        let partition = self.replicas.get(tp)?;
        let info = partition.append_marker(
            marker.producer_id,
            marker.producer_epoch,
            crate::record::control::Marker {
                kind: if marker.commit {
                    crate::record::control::MarkerKind::Commit
                } else {
                    crate::record::control::MarkerKind::Abort
                },
                coordinator_epoch: marker.coordinator_epoch,
            },
        )?;
        crate::txn::crash_point("txn-marker-appended");
        if info.flush_due {
            partition.flush_to(info.last_offset + 1).await?;
        }
        partition
            .wait_for_replication(
                info.last_offset + 1,
                Duration::from_millis(self.config.cluster.replica_socket_timeout_ms),
            )
            .await?;
        // Offsets committed in the transaction become visible (or are dropped) with it.
        if &*tp.topic == OFFSETS_TOPIC {
            self.groups
                .complete_transaction(tp.partition, marker.producer_id, marker.commit);
        }
        Ok(())
    }

    /// Aborts transactions past their timeout every
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`, and forgets expired
    /// transactional ids every `transaction.remove.expired.transaction.cleanup.interval.ms`.
    async fn run_transaction_timeouts(self: Arc<Self>) {
        let mut aborts = tokio::time::interval(Duration::from_millis(
            self.config.transaction_abort_interval_ms,
        ));
        let mut expirations = tokio::time::interval(Duration::from_millis(
            self.config.transaction_remove_expired_interval_ms,
        ));
        // Both fire at once first; neither needs to run at startup.
        aborts.tick().await;
        expirations.tick().await;
        loop {
            tokio::select! {
                _ = aborts.tick() => {
                    self.transaction_coordinator().abort_timed_out().await;
                }
                _ = expirations.tick() => {
                    self.transaction_coordinator().remove_expired().await;
                }
                _ = self.tasks.cancelled() => return,
            }
        }
    }

    /// The coordinator without creating anything (startup tasks).
    pub fn group_coordinator(&self) -> &Arc<GroupCoordinator> {
        &self.groups
    }

    pub fn config(&self) -> &Arc<BrokerConfig> {
        &self.config
    }
    pub fn cluster_id(&self) -> String {
        self.cluster_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
    pub fn node_id(&self) -> i32 {
        self.config.node_id
    }
    /// The active controller's id, as Metadata and DescribeCluster report it.
    pub fn controller_id(&self) -> i32 {
        self.controller
            .status()
            .borrow()
            .leader
            .map_or(-1, |id| id as i32)
    }
    /// This node's controller (quorum voter).
    pub fn controller(&self) -> &ControllerHandle {
        &self.controller
    }
    /// The Raft messages this node's voter sends to the others (once, for the transport).
    pub fn take_raft_outbound(
        &self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<raft::prelude::Message>> {
        self.raft_outbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
    pub fn fetch_sessions(&self) -> &FetchSessionCache {
        &self.fetch_sessions
    }
    pub fn replicas(&self) -> &Arc<ReplicaManager> {
        &self.replicas
    }
    pub fn logs(&self) -> &LogManager {
        &self.logs
    }
    pub fn metadata(&self) -> &Arc<MetadataCache> {
        &self.metadata
    }
    pub fn topics(&self) -> Vec<Arc<TopicInfo>> {
        self.metadata.topics()
    }
    pub fn topic(&self, name: &str) -> Option<Arc<TopicInfo>> {
        self.metadata.topic(name)
    }
    pub fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicInfo>> {
        self.metadata.topic_by_id(id)
    }

    pub fn log_config(&self, overrides: &BTreeMap<String, String>) -> LogConfig {
        LogConfig::resolve(&self.config.topic_defaults, overrides)
    }

    /// Creates a topic (or only validates the request) through the active controller.
    pub async fn create_topic(
        &self,
        request: NewTopic,
        validate_only: bool,
    ) -> Result<Arc<TopicInfo>, Error> {
        self.create_topic_within(request, validate_only, CONTROLLER_REQUEST_WAIT)
            .await
    }

    /// [`Broker::create_topic`] waiting at most `wait` for an active controller.
    async fn create_topic_within(
        &self,
        request: NewTopic,
        validate_only: bool,
        wait: Duration,
    ) -> Result<Arc<TopicInfo>, Error> {
        let name = request.name.clone();
        let configs = request.configs.clone();
        let op = ControllerOp::CreateTopic {
            request: TopicRequest {
                name: request.name,
                partitions: request.partitions,
                replication_factor: request.replication_factor,
                assignments: request.assignments,
                configs: request.configs,
            },
            validate_only,
        };
        let reply = self.call_active_controller_within(op, wait).await?;
        let ControllerReply::TopicCreated {
            topic_id,
            partitions,
        } = reply
        else {
            return Err(Error::InvalidRequest(format!(
                "unexpected controller reply {reply:?}"
            )));
        };
        if validate_only {
            return Ok(Arc::new(TopicInfo {
                name: Arc::from(name.as_str()),
                id: topic_id,
                partitions,
                configs,
            }));
        }
        self.await_visible(|image| image.topic_by_id(topic_id).is_some())
            .await;
        tracing::info!(topic = %name, partitions, "created topic");
        self.metadata
            .topic(&name)
            .ok_or(Error::UnknownTopicOrPartition)
    }

    /// Creates `name` with all defaults, as Metadata auto-creation does. Already existing is
    /// success.
    pub async fn auto_create_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        let request = NewTopic {
            name: name.to_string(),
            partitions: -1,
            replication_factor: -1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        match self.create_topic(request, false).await {
            Err(Error::TopicAlreadyExists(_)) => {
                self.await_visible(|image| image.topic(name).is_some())
                    .await;
                self.metadata
                    .topic(name)
                    .ok_or(Error::UnknownTopicOrPartition)
            }
            other => other,
        }
    }

    /// Deletes a topic; every replica deletes its logs when it applies the change.
    pub async fn delete_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        if !self.config.delete_topic_enable {
            return Err(Error::TopicDeletionDisabled);
        }
        let info = self
            .metadata
            .topic(name)
            .ok_or(Error::UnknownTopicOrPartition)?;
        self.call_active_controller(ControllerOp::DeleteTopic(name.to_string()))
            .await?;
        self.await_visible(|image| image.topic_by_id(info.id).is_none())
            .await;
        tracing::info!(topic = %name, "deleted topic");
        Ok(info)
    }

    /// Grows a topic to `count` partitions.
    pub async fn create_partitions(
        &self,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let op = ControllerOp::CreatePartitions {
            name: name.to_string(),
            count,
            assignments: assignments.map(|a| a.to_vec()),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                image
                    .topic(name)
                    .is_some_and(|t| t.partitions.len() as i32 >= count)
            })
            .await;
        }
        Ok(())
    }

    /// Replaces a topic's config overrides with `configs` (validated).
    pub async fn set_topic_configs(
        &self,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let op = ControllerOp::SetTopicConfigs {
            name: name.to_string(),
            configs: configs.clone(),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| image.topic(name).is_some_and(|t| t.configs == configs))
                .await;
        }
        Ok(())
    }

    /// A group's dynamic configs (the GROUP config resource) become exactly `configs`.
    pub async fn set_group_configs(
        &self,
        group: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        crate::config::validate_group_configs(&self.config, &configs)
            .map_err(|e| Error::InvalidConfig(e.to_string()))?;
        let op = ControllerOp::SetGroupConfigs {
            group: group.to_string(),
            configs: configs.clone(),
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                image.group_configs.get(group).cloned().unwrap_or_default() == configs
            })
            .await;
        }
        Ok(())
    }

    /// ElectLeaders for one partition, decided by the active controller with Kafka's
    /// answers (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
    /// ELIGIBLE_LEADERS_NOT_AVAILABLE).
    pub async fn elect_leader(
        &self,
        tp: &TopicPartition,
        election: ElectionType,
    ) -> Result<(), Error> {
        let Some(registration) = self
            .metadata
            .image()
            .partition(&tp.topic, tp.partition)
            .cloned()
        else {
            return Err(Error::UnknownTopicOrPartition);
        };
        // A replica here whose log failed cannot lead; the controller does not know of
        // failed logs yet (gap: offline replicas are not reported to it), so this broker
        // answers for the partitions it alone could lead.
        let node = self.config.node_id;
        let local_failed = self
            .replicas
            .get(tp)
            .is_ok_and(|p| lock(p.log()).is_failed());
        if local_failed && registration.replicas == [node] {
            return Err(match election {
                ElectionType::Preferred => Error::PreferredLeaderNotAvailable,
                ElectionType::Unclean => Error::EligibleLeadersNotAvailable,
            });
        }
        let op = ControllerOp::ElectLeader {
            topic: tp.topic.to_string(),
            partition: tp.partition,
            election: match election {
                ElectionType::Preferred => Election::Preferred,
                ElectionType::Unclean => Election::Unclean,
            },
        };
        self.call_active_controller(op).await?;
        Ok(())
    }

    /// The replicas of a partition, preferred replica first.
    pub fn partition_replicas(&self, tp: &TopicPartition) -> Vec<i32> {
        self.metadata
            .image()
            .partition(&tp.topic, tp.partition)
            .map(|p| p.replicas.clone())
            .unwrap_or_default()
    }

    /// Who leads a partition and which replicas are in sync or offline, as Metadata reports
    /// it. A replica here whose log an I/O error took offline is offline, and cannot lead.
    pub fn partition_state(&self, tp: &TopicPartition) -> PartitionState {
        let image = self.metadata.image();
        let Some(registration) = image.partition(&tp.topic, tp.partition) else {
            return PartitionState {
                leader: None,
                leader_epoch: -1,
                replicas: Vec::new(),
                isr: Vec::new(),
                offline: Vec::new(),
            };
        };
        let node = self.config.node_id;
        let local_failed = self
            .replicas
            .get(tp)
            .is_ok_and(|p| lock(p.log()).is_failed());
        let offline = if local_failed { vec![node] } else { Vec::new() };
        let leader = registration
            .leader()
            .filter(|l| !(local_failed && *l == node))
            .filter(|l| *l != NO_LEADER);
        PartitionState {
            leader,
            leader_epoch: registration.leader_epoch,
            isr: if local_failed {
                registration
                    .isr
                    .iter()
                    .copied()
                    .filter(|r| *r != node)
                    .collect()
            } else {
                registration.isr.clone()
            },
            offline,
            replicas: registration.replicas.clone(),
        }
    }

    /// AlterPartitionReassignments for one partition (`None` cancels), validated as Kafka's
    /// controller does: a non-empty list of distinct registered brokers, and the same
    /// replication factor unless `allow_replication_factor_change`. Moving a replica to the
    /// brokers it is on completes at once, so no reassignment is ever left in progress and
    /// cancelling one answers NO_REASSIGNMENT_IN_PROGRESS.
    pub fn reassign_partition(
        &self,
        tp: &TopicPartition,
        target: Option<&[i32]>,
        allow_replication_factor_change: bool,
    ) -> Result<(), Error> {
        self.replicas.get(tp)?;
        let Some(target) = target else {
            return Err(Error::NoReassignmentInProgress);
        };
        if target.is_empty() {
            return Err(Error::InvalidReplicaAssignment(
                "the replica list is empty".into(),
            ));
        }
        let distinct: std::collections::BTreeSet<i32> = target.iter().copied().collect();
        if distinct.len() != target.len() {
            return Err(Error::InvalidReplicaAssignment(format!(
                "duplicate broker ids in {target:?}"
            )));
        }
        let image = self.metadata.image();
        if let Some(unknown) = target.iter().find(|id| !image.brokers.contains_key(id)) {
            return Err(Error::InvalidReplicaAssignment(format!(
                "broker {unknown} is not registered"
            )));
        }
        let current = self.partition_replicas(tp);
        if target.len() != current.len() && !allow_replication_factor_change {
            return Err(Error::InvalidReplicationFactor(format!(
                "the reassignment would change the replication factor from {} to {}",
                current.len(),
                target.len()
            )));
        }
        Ok(())
    }

    /// InitProducerId for an idempotent (non-transactional) producer: a fresh id, epoch 0,
    /// from a block the controller handed this broker.
    pub async fn allocate_producer_id(&self) -> Result<i64, Error> {
        let mut block = self.producer_ids.lock().await;
        if block.0 >= block.1 {
            let op = ControllerOp::AllocateProducerIds {
                broker: self.config.node_id,
                broker_epoch: self.broker_epoch.load(Ordering::SeqCst),
            };
            match self.call_active_controller(op).await? {
                ControllerReply::ProducerIds { first, count } => *block = (first, first + count),
                other => {
                    return Err(Error::InvalidRequest(format!(
                        "unexpected controller reply {other:?}"
                    )));
                }
            }
        }
        let id = block.0;
        block.0 += 1;
        Ok(id)
    }

    /// ListOffsets for one partition: Kafka's special timestamps (-1 latest, -2 earliest,
    /// -3 max timestamp, -4 earliest local, -5 latest tiered) or a time, answered by the
    /// leader (checking the client's current leader epoch). Returns (offset, timestamp,
    /// leader epoch), or (-1, -1, epoch) when no record is at or after the time.
    pub async fn list_offset(
        &self,
        tp: &TopicPartition,
        timestamp: i64,
        current_leader_epoch: i32,
        read_committed: bool,
    ) -> Result<(i64, i64, i32), Error> {
        let partition = self.replicas.get(tp)?;
        let leader_epoch = partition.check_leader_epoch(current_leader_epoch)?;
        let (offset, timestamp) = partition.list_offset(timestamp, read_committed).await?;
        Ok((offset, timestamp, leader_epoch))
    }

    /// DeleteRecords for one partition: -1 means the high watermark. Returns the new low
    /// watermark.
    pub fn delete_records(&self, tp: &TopicPartition, offset: i64) -> Result<i64, Error> {
        let partition = self.replicas.get(tp)?;
        partition.check_leader_epoch(-1)?;
        let mut log = lock(partition.log());
        let target = if offset == -1 {
            log.high_watermark()
        } else {
            offset
        };
        Ok(log.delete_records_before(target)?)
    }

    /// DescribeLogDirs: the log directory with its logs, optionally only the partitions in
    /// `wanted`.
    pub fn describe_log_dir(
        &self,
        wanted: Option<&std::collections::HashSet<TopicPartition>>,
    ) -> Result<LogDirUsage, Error> {
        let mut usage = self.logs.describe()?;
        if let Some(wanted) = wanted {
            usage.logs.retain(|l| wanted.contains(&l.topic_partition));
        }
        Ok(usage)
    }

    /// AlterReplicaLogDirs for one replica. Sluice keeps one log directory, so the only
    /// valid destination is the directory the replica is already in: a no-op, as in Kafka.
    /// Kafka's errors otherwise: LOG_DIR_NOT_FOUND for a directory that is not a log
    /// directory, REPLICA_NOT_AVAILABLE for a partition this broker does not host.
    pub fn alter_replica_log_dir(&self, tp: &TopicPartition, dir: &str) -> Result<(), Error> {
        let current = self.logs.absolute_dir()?;
        let requested = std::path::Path::new(dir).canonicalize().ok();
        if requested.as_deref() != Some(current.as_path()) {
            return Err(Error::LogDirNotFound(dir.to_string()));
        }
        let partition = self
            .replicas
            .get(tp)
            .map_err(|_| Error::ReplicaNotAvailable)?;
        if lock(partition.log()).is_failed() {
            return Err(StorageError::Offline.into());
        }
        Ok(())
    }

    /// Starts the log manager's background work (retention, compaction, producer-id expiry,
    /// `flush.ms` flushes, checkpoints) on its configured intervals, until `shutdown`.
    pub fn start_housekeeping(
        &self,
        tracker: &tokio_util::task::TaskTracker,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let config = &self.config;
        let every = |ms: u64| Duration::from_millis(ms.clamp(10, 24 * 3600 * 1000));
        let schedule = Housekeeping {
            retention_check: every(config.retention_check_interval_ms),
            flush_check: every(config.flush_scheduler_interval_ms.min(1000)),
            checkpoint: every(config.checkpoint_interval_ms),
            producer_id_expiration_ms: config.producer_id_expiration_ms,
        };
        self.logs.start_housekeeping(schedule, tracker, shutdown);
    }

    /// Controlled shutdown, then flushes everything, writes the clean-shutdown marker and
    /// stops the controller.
    pub fn shutdown(&self) -> Result<(), Error> {
        self.stopping.store(true, Ordering::SeqCst);
        self.tasks.cancel();
        let threads = std::mem::take(&mut *self.threads());
        // The lifecycle (controlled shutdown) first, while the publisher still applies.
        let (lifecycle, others): (Vec<_>, Vec<_>) = threads
            .into_iter()
            .partition(|t| t.thread().name() == Some("broker-lifecycle"));
        for thread in lifecycle {
            let _ = thread.join();
        }
        self.images.close();
        for thread in others {
            let _ = thread.join();
        }
        let result = self.logs.shutdown(now_ms());
        self.controller.shutdown();
        if let Some(thread) = self
            .controller_thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = thread.join();
        }
        result?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::TopicStore;
    use crate::storage::log::Log;

    fn config(dir: &std::path::Path) -> BrokerConfig {
        BrokerConfig::with_overrides(&[("log.dirs", &dir.display().to_string())]).unwrap()
    }

    fn endpoint() -> Vec<Endpoint> {
        vec![Endpoint {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 9092,
            security_protocol: 0,
        }]
    }

    fn end_offset(broker: &Broker, topic: &str, p: i32) -> i64 {
        let partition = broker
            .replicas()
            .get(&TopicPartition::new(topic, p))
            .unwrap();
        lock(partition.log()).log_end_offset()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_single_nodes_earlier_topics_are_imported_with_their_data() {
        let dir = tempfile::tempdir().unwrap();
        // The layout an earlier version left: topic files, logs, the producer id block.
        let store = TopicStore::open(dir.path()).unwrap();
        let id = Uuid::new_v4();
        let mut configs = BTreeMap::new();
        configs.insert("retention.ms".to_string(), "3600000".to_string());
        store
            .put(TopicInfo {
                name: Arc::from("old"),
                id,
                partitions: 2,
                configs,
            })
            .unwrap();
        let defaults = config(dir.path());
        let tp = TopicPartition::new("old", 1);
        let mut log = Log::create(
            &dir.path().join(tp.dir_name()),
            tp,
            LogConfig::resolve(&defaults.topic_defaults, &BTreeMap::new()),
            0,
        )
        .unwrap();
        log.append_as_leader(&crate::record::test_support::batch(0, 5, 1, 10), 0, 1)
            .unwrap();
        log.close(1).unwrap();
        drop(log);
        std::fs::write(
            dir.path().join(".sluice-metadata").join("producer-ids"),
            "next.block.start=7000\n",
        )
        .unwrap();

        let broker = Broker::open(config(dir.path())).unwrap();
        broker.start(endpoint()).unwrap();
        let topic = broker.topic("old").expect("imported");
        assert_eq!((topic.id, topic.partitions), (id, 2));
        assert_eq!(topic.configs["retention.ms"], "3600000");
        assert_eq!(end_offset(&broker, "old", 1), 5, "its data is served");
        assert_eq!(
            broker
                .partition_state(&TopicPartition::new("old", 1))
                .leader,
            Some(1)
        );
        assert!(broker.allocate_producer_id().await.unwrap() >= 7000);
        assert!(
            dir.path()
                .join(".sluice-metadata")
                .join("topics.imported")
                .is_dir()
        );
        broker.shutdown().unwrap();
        drop(broker);

        // Restarted: the topic comes from the metadata log, not from the files again.
        let broker = Broker::open(config(dir.path())).unwrap();
        broker.start(endpoint()).unwrap();
        assert_eq!(broker.topic("old").unwrap().id, id);
        assert_eq!(end_offset(&broker, "old", 1), 5);
        let state = broker.partition_state(&TopicPartition::new("old", 0));
        assert_eq!(state.leader, Some(1));
        assert!(
            state.leader_epoch > 0,
            "a new leader epoch after the restart"
        );
        broker.shutdown().unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn node_id_zero_is_a_node_like_any_other() {
        // Kafka's usual broker.id=0 (raft-rs reserves Raft id 0 for "nobody").
        let dir = tempfile::tempdir().unwrap();
        let config = BrokerConfig::with_overrides(&[
            ("log.dirs", &dir.path().display().to_string()),
            ("node.id", "0"),
        ])
        .unwrap();
        let broker = Broker::open(config).unwrap();
        broker.start(endpoint()).unwrap();
        let topic = NewTopic {
            name: "zero".into(),
            partitions: 1,
            replication_factor: 1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        broker.create_topic(topic, false).await.unwrap();
        let state = broker.partition_state(&TopicPartition::new("zero", 0));
        assert_eq!(state.leader, Some(0));
        assert_eq!(broker.controller_id(), 0);
        broker.shutdown().unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn topics_created_deleted_and_stray_logs_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let broker = Broker::open(config(dir.path())).unwrap();
        broker.start(endpoint()).unwrap();
        let new_topic = |name: &str| NewTopic {
            name: name.into(),
            partitions: 3,
            replication_factor: -1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        broker.create_topic(new_topic("kept"), false).await.unwrap();
        broker.create_topic(new_topic("gone"), false).await.unwrap();
        assert!(
            broker
                .replicas()
                .get(&TopicPartition::new("gone", 2))
                .is_ok()
        );
        broker.delete_topic("gone").await.unwrap();
        assert!(
            broker
                .replicas()
                .get(&TopicPartition::new("gone", 2))
                .is_err()
        );
        assert!(!dir.path().join("gone-2").exists());
        let partition = broker
            .replicas()
            .get(&TopicPartition::new("kept", 0))
            .unwrap();
        partition
            .append(&crate::record::test_support::batch(0, 3, 1, 10), 1)
            .unwrap();
        broker.shutdown().unwrap();
        drop(broker);
        // A log the metadata knows nothing of (a crash between files and metadata).
        std::fs::create_dir_all(dir.path().join("stray-0")).unwrap();

        let broker = Broker::open(config(dir.path())).unwrap();
        broker.start(endpoint()).unwrap();
        assert_eq!(end_offset(&broker, "kept", 0), 3);
        assert!(broker.topic("gone").is_none());
        assert!(!dir.path().join("stray-0").exists(), "stray log removed");
        assert!(matches!(
            broker.create_topic(new_topic("kept"), false).await,
            Err(Error::TopicAlreadyExists(_))
        ));
        broker.shutdown().unwrap();
    }
}

/// The transaction coordinator's way to the partitions of a transaction: markers for those
/// this broker leads are written here, the others go to their leaders through the API
/// layer's sender.
#[derive(Debug)]
struct BrokerMarkers {
    broker: std::sync::Weak<Broker>,
}

impl MarkerWriter for BrokerMarkers {
    fn write_markers<'a>(
        &'a self,
        marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> TxnFuture<'a, Vec<Result<(), Error>>> {
        Box::pin(async move {
            let Some(broker) = self.broker.upgrade() else {
                return partitions
                    .iter()
                    .map(|_| Err(Error::NotLeaderOrFollower))
                    .collect();
            };
            let node = broker.config.node_id;
            let mut results: Vec<Option<Result<(), Error>>> =
                partitions.iter().map(|_| None).collect();
            let mut remote = Vec::new();
            for (i, tp) in partitions.iter().enumerate() {
                match broker.partition_state(tp).leader {
                    Some(leader) if leader == node => {
                        results[i] = Some(broker.write_marker(tp, marker).await);
                    }
                    Some(_) => remote.push(i),
                    None if broker
                        .metadata
                        .image()
                        .partition(&tp.topic, tp.partition)
                        .is_none() =>
                    {
                        results[i] = Some(Err(Error::UnknownTopicOrPartition));
                    }
                    None => results[i] = Some(Err(Error::NotLeaderOrFollower)),
                }
            }
            if !remote.is_empty() {
                let targets: Vec<TopicPartition> =
                    remote.iter().map(|i| partitions[*i].clone()).collect();
                let answers = match broker.remote_markers.get() {
                    Some(sender) => sender.write_markers(marker, &targets).await,
                    None => targets
                        .iter()
                        .map(|_| Err(Error::NotLeaderOrFollower))
                        .collect(),
                };
                for (i, answer) in remote.into_iter().zip(answers) {
                    results[i] = Some(answer);
                }
            }
            results
                .into_iter()
                .map(|r| r.unwrap_or(Err(Error::NotLeaderOrFollower)))
                .collect()
        })
    }
}
