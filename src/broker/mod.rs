//! The node (Kafka's `BrokerServer`): owns the configuration, the log manager, the replica
//! manager, the group, transaction and share coordinators and this broker's metadata cache;
//! opens them in order, starts what ties them to the cluster, and shuts them down. Three
//! threads: this node's voter of the controller quorum (`controller/`), the lifecycle and the
//! metadata publisher; and, as tasks on the runtime, the replica fetchers, the ISR task, the
//! transaction timers and the log manager's housekeeping. A single node is a quorum of one.
//! In a cluster (`process.roles`) a node is a broker and a voter, a broker only (it follows
//! the quorum as an observer, `controller::observer`, instead of voting) or a controller only
//! (the server binds no client listener and the broker never registers, so it hosts nothing).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the struct, open, start, shutdown, accessors |
//! | `lifecycle.rs` | registration, heartbeats, controlled shutdown (`BrokerLifecycleManager`) |
//! | `controller_channel.rs` | requests to the active controller, here or on another node |
//! | `publisher.rs` | applying each committed metadata image, strays (`BrokerMetadataPublisher`) |
//! | `replication.rs` | replica fetchers and ISR updates (`ReplicaFetcherManager`, `AlterPartitionManager`) |
//! | `topics.rs` | topic and partition administration, partition state, log dirs |
//! | `txn.rs` | markers, KIP-890 verification, producer ids, transaction timers |
//! | `acls.rs`, `credentials.rs`, `quotas.rs` | ACLs, SCRAM credentials and client quotas through the controller |
//! | `features.rs` | feature levels (UpdateFeatures) through the controller |
//! | `tokens.rs` | delegation tokens through the controller, and the credentials of live ones |
//! | `coordinators.rs` | the coordinators' internal topics, created on first use |
//! | `dynamic.rs` | dynamic broker configs: changes sent to the controller, applied from the metadata |

mod acls;
mod controller_channel;
mod coordinators;
mod credentials;
mod dynamic;
mod features;
mod lifecycle;
mod publisher;
mod quotas;
mod replication;
#[cfg(test)]
mod tests;
mod tokens;
mod topics;
mod txn;

pub use controller_channel::ControllerForwarder;
pub use topics::{ElectionType, NewTopic, PartitionState};
use txn::{BrokerMarkers, BrokerVerifier};

use crate::config::{BrokerConfig, DynamicLayers, LogConfig};
use crate::controller::control::ControlConfig;
use crate::controller::metadata_log::log_config as metadata_log_config;
use crate::controller::observer::{ControllerEndpoints, ControllersToAsk, Observer};
use crate::controller::quorum::QuorumSettings;
use crate::controller::service::{self, ControllerHandle, ControllerSettings};
use crate::error::Error;
use crate::group::classic::GroupConfig;
use crate::group::consumer::ConsumerGroupConfig;
use crate::group::streams::StreamsGroupConfig;
use crate::group::{CoordinatorConfig, GroupCoordinator};
use crate::metadata::cache::{ImageSlot, MetadataCache};
use crate::metadata::image::MetadataImage;
use crate::metadata::records::{Endpoint, MetadataRecord};
use crate::metadata::{self, TopicInfo};
use crate::replica::ReplicaManager;
use crate::replica::fetcher::LeaderConnector;
use crate::storage::StorageError;
use crate::storage::manager::{Housekeeping, LogManager};
use crate::txn::coordinator::{MarkerWriter, TransactionCoordinator, TxnCoordinatorConfig};
use crate::types::now_ms;
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

/// The quorum's voter ids: `controller.quorum.voters`, or this node alone (a static quorum).
pub fn quorum_voters(config: &BrokerConfig) -> Vec<u64> {
    if config.cluster.voters.is_empty() {
        vec![config.node_id as u64]
    } else {
        config.cluster.voters.iter().map(|v| v.id as u64).collect()
    }
}

/// Where a dynamic quorum (KIP-853) starts: the voters `sluice format --standalone /
/// --initial-controllers` wrote among the bootstrap records; else this node alone when the
/// only bootstrap server is its own controller listener (Kafka's standalone quickstart, which
/// Sluice runs without a format step; the record naming it is added to `bootstrap`); else
/// none: the node joins a quorum that runs already and waits to be added.
fn dynamic_quorum_start(
    config: &BrokerConfig,
    bootstrap: &mut Vec<MetadataRecord>,
    cluster_id: &str,
) -> Result<Vec<u64>, StorageError> {
    let formatted: Vec<u64> = bootstrap
        .iter()
        .filter_map(|r| match r {
            MetadataRecord::QuorumVoter { node_id, .. } => Some(*node_id as u64),
            _ => None,
        })
        .collect();
    if !formatted.is_empty() {
        return Ok(formatted);
    }
    let listener = config
        .listeners
        .iter()
        .find(|l| l.name == config.cluster.controller_listener);
    let own = match (config.cluster.bootstrap_servers.as_slice(), listener) {
        ([(host, port)], Some(listener)) if *port == listener.port => {
            let local = ["localhost", "127.0.0.1", "::1", "0.0.0.0", ""];
            (host == &listener.host || local.contains(&host.as_str())).then_some((host, listener))
        }
        _ => None,
    };
    let Some((host, listener)) = own else {
        return Ok(Vec::new());
    };
    // The voter is known by its directory id from the start (as `format --standalone` would
    // have written it): `meta.properties` is written now if it is not there yet.
    let directory_id = match metadata::read_directory_id(&config.log_dir) {
        Some(id) => id,
        None => {
            let id = Uuid::new_v4();
            metadata::write_meta_with_directory(&config.log_dir, config.node_id, cluster_id, id)?;
            id
        }
    };
    bootstrap.push(MetadataRecord::QuorumVoter {
        node_id: config.node_id,
        directory_id,
        endpoints: vec![Endpoint {
            name: listener.name.clone(),
            host: host.clone(),
            port: listener.port,
            security_protocol: listener.protocol.id(),
        }],
    });
    Ok(vec![config.node_id as u64])
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
            assignment_interval_ms: config.consumer_assignment_interval_ms,
        },
        streams: StreamsGroupConfig {
            session_timeout_ms: config.streams.session_timeout_ms,
            heartbeat_interval_ms: config.streams.heartbeat_interval_ms,
            num_standby_replicas: config.streams.num_standby_replicas,
            initial_rebalance_delay_ms: config.streams.initial_rebalance_delay_ms,
            max_size: config.streams.max_size,
            acceptable_recovery_lag: config.streams.acceptable_recovery_lag,
            task_offset_interval_ms: config.streams.task_offset_interval_ms,
            rack_aware_assignment_tags: config.streams.rack_aware_assignment_tags.clone(),
        },
        offsets_topic_partitions: config.offsets_topic_partitions,
        offsets_retention_ms: config.offsets_retention_ms,
        offsets_retention_check_interval_ms: config.offsets_retention_check_interval_ms,
    }
}

/// `config` with the dynamic broker configs `image` holds for this node applied; when they
/// cannot be (a file the static config names is gone), the static config, with an error.
fn effective_config(config: &BrokerConfig, image: &MetadataImage) -> BrokerConfig {
    let layers = dynamic_layers(image, config.node_id);
    if layers == config.dynamic {
        return config.clone();
    }
    config.with_dynamic(layers).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot apply the dynamic broker configs; the static ones stay in effect");
        config.clone()
    })
}

/// The dynamic broker configs of node `node` in `image`: its own and the cluster defaults.
fn dynamic_layers(image: &MetadataImage, node: i32) -> DynamicLayers {
    DynamicLayers {
        per_broker: image
            .broker_configs
            .get(&node.to_string())
            .cloned()
            .unwrap_or_default(),
        cluster_default: image.broker_configs.get("").cloned().unwrap_or_default(),
    }
}

#[derive(Debug)]
pub struct Broker {
    /// The configuration the process started with: what dynamic configs never change
    /// (node id, listeners, directories, the quorum) is read from here.
    config: Arc<BrokerConfig>,
    /// The configuration in effect: `config` with the dynamic broker configs of the
    /// metadata applied (replaced by the publisher when they change).
    effective: tokio::sync::watch::Sender<Arc<BrokerConfig>>,
    /// `producer.id.expiration.ms` in effect, read by the housekeeping job.
    producer_id_expiration_ms: Arc<AtomicI64>,
    /// The TLS listeners (registered by the server), which dynamic configs may reconfigure.
    tls_listeners: Mutex<Vec<Arc<crate::auth::tls_reload::ListenerTls>>>,
    /// Requests and connections counted (`http::metrics` renders them).
    stats: crate::stats::BrokerStats,
    /// Client quotas, from the metadata, and what requests recorded against them.
    client_quotas: crate::auth::quota::ClientQuotas,
    /// `delegation.token.*`, and the SCRAM credentials of live delegation tokens.
    token_settings: crate::auth::delegation_token::TokenSettings,
    token_cache: Arc<crate::auth::delegation_token::TokenCache>,
    cluster_id: Mutex<String>,
    logs: Arc<LogManager>,
    replicas: Arc<ReplicaManager>,
    groups: Arc<GroupCoordinator>,
    shares: Arc<crate::share::ShareCoordinator>,
    metadata: Arc<MetadataCache>,
    controller: ControllerHandle,
    /// Committed images from the controller, for the publisher.
    images: Arc<ImageSlot>,
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
    /// The `directory.id` of each of `log.dirs`, in order, once the cluster is known.
    log_dir_ids: std::sync::OnceLock<Vec<Uuid>>,
    /// The metadata offset and log placement changes at which every replica's directory
    /// was last found reported: until either moves, there is nothing to look for.
    replica_dirs_reported: Mutex<Option<(u64, u64)>>,
    /// The async runtime, for the lifecycle thread's requests to a remote controller.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
    /// Raft messages for the other voters, until the transport takes them.
    raft_outbound: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<raft::prelude::Message>>>,
    /// A broker-only node's way of following the quorum, until the server starts it.
    observer: Mutex<Option<Observer>>,
    /// Where each voter's controller listener is, as far as this node knows.
    controller_endpoints: ControllerEndpoints,
    controller_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Broker {
    /// Opens the log directory: starts this node's controller (replaying the metadata log),
    /// loads the partition logs (recovering after an unclean stop) and the consumer groups,
    /// and starts applying metadata. [`Broker::start`] then registers the broker.
    pub fn open(config: BrokerConfig) -> Result<Arc<Self>, Error> {
        // Before any log opens its segments, the metadata log's included.
        crate::storage::open_files::configure(config.segment_open_files_max);
        crate::storage::index::configure(config.index_mapped_files_max);
        crate::storage::segment::configure_writeback(config.segment_writeback_bytes);
        // The log directories must all belong to one cluster (Kafka checks the same).
        let mut stored_cluster_id: Option<String> = None;
        for dir in &config.log_dirs {
            std::fs::create_dir_all(dir).map_err(StorageError::from)?;
            let Some(stored) = metadata::read_meta(dir, config.node_id)? else {
                continue;
            };
            if let Some(first) = &stored_cluster_id
                && *first != stored
            {
                return Err(StorageError::Corrupt(format!(
                    "log directory {} belongs to cluster {stored}, another to {first}",
                    dir.display()
                ))
                .into());
            }
            stored_cluster_id = Some(stored);
        }
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
        let mut bootstrap_records = metadata::bootstrap::read(&config.log_dir)?;
        let dynamic = config.cluster.is_dynamic_quorum();
        let voters = if dynamic {
            dynamic_quorum_start(&config, &mut bootstrap_records, &bootstrap_cluster_id)?
        } else {
            quorum_voters(&config)
        };
        // Directories that go offline, the metadata log's included: shared by the controller
        // and the log manager, so either can tell the node it cannot go on.
        let dir_failures = crate::storage::space::DirFailures::new(&config.log_dirs);
        let settings = ControllerSettings {
            dir_failures: Some(dir_failures.clone()),
            log_dir: config.log_dir.clone(),
            log_config: metadata_log_config(&config),
            quorum: QuorumSettings {
                node_id: config.node_id as u64,
                voters,
                dynamic,
                election_ticks: 10,
                heartbeat_ticks: 1,
                snapshot_after_entries: 10_000,
                snapshot_after_bytes: config.metadata_snapshot_after_bytes,
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
                tokens: crate::auth::delegation_token::TokenSettings::from_config(&config),
            },
            cluster_id: bootstrap_cluster_id.clone(),
            bootstrap: bootstrap_records,
        };
        // Where the voters listen: the configured ones, and on a broker-only node those the
        // quorum names to it.
        let controller_endpoints: ControllerEndpoints = Arc::new(std::sync::RwLock::new(
            config
                .cluster
                .voters
                .iter()
                .map(|v| (v.id as u64, format!("{}:{}", v.host, v.port)))
                .collect(),
        ));
        let (controller, controller_thread, raft_outbound, observer) = if config
            .cluster
            .controller_role
        {
            // Raft messages for the other voters; the server's transport takes the receiver.
            let (outbound, raft_outbound) = tokio::sync::mpsc::unbounded_channel();
            let (controller, thread) = service::start(settings, outbound, Some(images.clone()))
                .map_err(|e| {
                    StorageError::Corrupt(format!("cannot start the controller quorum: {e}"))
                })?;
            (controller, Some(thread), Some(raft_outbound), None)
        } else {
            // A broker-only node follows the quorum; the server starts its fetching.
            let bootstrap = config
                .cluster
                .bootstrap_servers
                .iter()
                .map(|(host, port)| format!("{host}:{port}"))
                .collect();
            let to_ask = ControllersToAsk {
                endpoints: controller_endpoints.clone(),
                bootstrap,
                controller_listener: config.cluster.controller_listener.clone(),
            };
            let (controller, observer) = Observer::open(
                &config.log_dir,
                config.node_id as u64,
                to_ask,
                Some(images.clone()),
            )
            .map_err(|e| StorageError::Corrupt(format!("cannot open the metadata copy: {e}")))?;
            (controller, None, None, Some(observer))
        };
        let replayed = controller.image().borrow().clone();
        let legacy = metadata::legacy_topics(&config.log_dir)?;
        // The dynamic broker configs the metadata holds apply from the start, as Kafka reads
        // them from its snapshot before loading logs.
        let effective = effective_config(&config, &replayed);

        let now = now_ms();
        let loading = std::time::Instant::now();
        // Logs of topics the metadata does not (yet) know load with the defaults; the first
        // image applied removes those this broker does not host.
        let (logs, reports) = LogManager::open_watched(
            &config.log_dirs,
            dir_failures,
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
                Some(LogConfig::resolve(&effective.topic_defaults, &overrides))
            },
            now,
            config.recovery_threads,
        )?;
        let recovered: usize = reports.iter().map(|(_, r)| r.recovered_segments).sum();
        crate::limits::report_descriptor_budget(
            reports.iter().map(|(_, r)| r.segments).sum(),
            crate::storage::open_files::global().stats().capacity,
            crate::storage::index::global().stats().capacity,
        );
        tracing::info!(
            log_dirs = %config.log_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(","),
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
        let config = Arc::new(config);
        let shares =
            crate::share::ShareCoordinator::new(config.clone(), replicas.clone(), metadata.clone());
        let broker = Arc::new(Self {
            stats: crate::stats::BrokerStats::default(),
            client_quotas: crate::auth::quota::ClientQuotas::new(
                config.quota_windows,
                config.controller_quota_windows,
            ),
            token_settings: crate::auth::delegation_token::TokenSettings::from_config(&config),
            token_cache: Arc::default(),
            config,
            producer_id_expiration_ms: Arc::new(AtomicI64::new(
                effective.producer_id_expiration_ms,
            )),
            tls_listeners: Mutex::new(Vec::new()),
            effective: tokio::sync::watch::Sender::new(Arc::new(effective)),
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
            raft_outbound: Mutex::new(raft_outbound),
            observer: Mutex::new(observer),
            controller_endpoints,
            forwarder: std::sync::OnceLock::new(),
            leader_connector: std::sync::OnceLock::new(),
            transactions: std::sync::OnceLock::new(),
            remote_markers: std::sync::OnceLock::new(),
            remote_verifier: std::sync::OnceLock::new(),
            fetchers: Mutex::new(Default::default()),
            tasks: tokio_util::sync::CancellationToken::new(),
            log_dir_ids: std::sync::OnceLock::new(),
            replica_dirs_reported: Mutex::default(),
            runtime: Mutex::new(None),
            controller_thread: Mutex::new(controller_thread),
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
            {
                let broker = Arc::downgrade(&broker);
                Arc::new(move || {
                    broker.upgrade().map_or(0, |b| {
                        b.metadata
                            .image()
                            .feature_level(crate::metadata::features::TRANSACTION_VERSION)
                    })
                })
            },
        );
        let _ = broker.transactions.set(transactions);
        broker
            .replicas
            .set_transaction_verifier(Arc::new(BrokerVerifier {
                broker: Arc::downgrade(&broker),
            }));
        broker
            .replicas
            .set_transaction_verification(broker.config().transaction_partition_verification);
        replication::configure_throttles(&broker.replicas, &broker.config());
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

    /// The coordinator without creating anything (startup tasks).
    pub fn group_coordinator(&self) -> &Arc<GroupCoordinator> {
        &self.groups
    }

    /// Requests and connections counted.
    pub fn stats(&self) -> &crate::stats::BrokerStats {
        &self.stats
    }

    pub fn client_quotas(&self) -> &crate::auth::quota::ClientQuotas {
        &self.client_quotas
    }

    /// The configuration in effect, dynamic broker configs included.
    pub fn config(&self) -> Arc<BrokerConfig> {
        self.effective.borrow().clone()
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
    /// A broker-only node's metadata observer (once, for the server to run).
    pub fn take_observer(&self) -> Option<Observer> {
        self.observer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
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

    /// A topic's log settings: its overrides over the broker's defaults in effect.
    pub fn log_config(&self, overrides: &BTreeMap<String, String>) -> LogConfig {
        LogConfig::resolve(&self.config().topic_defaults, overrides)
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
            producer_id_expiration_ms: self.producer_id_expiration_ms.clone(),
        };
        self.logs.start_housekeeping(schedule, tracker, shutdown);
        // Moves between log directories a stop cut short go on (or start over).
        for interrupted in self.logs.take_interrupted_moves() {
            use crate::storage::manager::{InterruptedMove, MoveStatus};
            let pace = replication::move_pace(&self.replicas);
            match interrupted {
                InterruptedMove::Resumed(tp) => {
                    self.logs.start_moving(tp, self.tasks.clone(), pace)
                }
                InterruptedMove::Restart(tp, index) => match self.logs.move_replica(&tp, index) {
                    Ok(MoveStatus::Started) => self.logs.start_moving(tp, self.tasks.clone(), pace),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(partition = %tp, error = %e, "restarting a move between log directories failed");
                    }
                },
            }
        }
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
