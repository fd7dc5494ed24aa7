//! The node: owns the configuration, the cluster identity, the topic definitions, the log
//! manager and the replica manager, and performs topic administration (create, delete, add
//! partitions, alter configs) for a single node. The API layer talks to this and to the
//! replica manager only. In a cluster (issue 6) topic administration moves to the controller
//! quorum; this file then keeps only the broker-side wiring.

use crate::config::{BrokerConfig, LogConfig, validate_topic_overrides};
use crate::error::Error;
use crate::group::classic::GroupConfig;
use crate::group::consumer::ConsumerGroupConfig;
use crate::group::{CoordinatorConfig, GroupCoordinator, OFFSETS_TOPIC};
use crate::metadata::{
    ProducerIdAllocator, TopicInfo, TopicStore, load_or_create_meta, validate_topic_name,
};
use crate::replica::fetch_session::FetchSessionCache;
use crate::replica::{Partition, ReplicaManager};
use crate::storage::StorageError;
use crate::storage::manager::{LogDirUsage, LogManager, lock};
use crate::types::{TopicPartition, now_ms};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

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

/// A partition's leadership as Metadata reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// `None` when no replica can lead.
    pub leader: Option<i32>,
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
    cluster_id: String,
    topics: Arc<TopicStore>,
    logs: LogManager,
    replicas: Arc<ReplicaManager>,
    groups: Arc<GroupCoordinator>,
    producer_ids: ProducerIdAllocator,
    fetch_sessions: FetchSessionCache,
    /// Serialises topic administration so checks and changes happen atomically.
    admin: Mutex<()>,
}

impl Broker {
    /// Opens the log directory, loads topics and logs (recovering after an unclean stop).
    pub fn open(config: BrokerConfig) -> Result<Self, Error> {
        if !config.cluster.is_single_node() {
            // Until the controller quorum and replication are wired in, a node configured as
            // part of a larger cluster would silently run alone.
            return Err(Error::InvalidConfig(
                "this build runs single-node only: multi-voter quorums and broker-only or controller-only nodes are not finished yet".into(),
            ));
        }
        std::fs::create_dir_all(&config.log_dir).map_err(StorageError::from)?;
        let cluster_id = load_or_create_meta(
            &config.log_dir,
            config.node_id,
            config.cluster_id.as_deref(),
        )?;
        let topics = Arc::new(TopicStore::open(&config.log_dir)?);
        let now = now_ms();
        let loading = std::time::Instant::now();
        let (logs, reports) = LogManager::open(
            &config.log_dir,
            |topic| {
                topics
                    .get(topic)
                    .map(|t| LogConfig::resolve(&config.topic_defaults, &t.configs))
            },
            now,
            config.recovery_threads,
        )?;
        let recovered: usize = reports.iter().map(|(_, r)| r.recovered_segments).sum();
        tracing::info!(
            log_dir = %config.log_dir.display(),
            clean = logs.clean_startup(),
            logs = reports.len(),
            recovered_segments = recovered,
            elapsed_ms = loading.elapsed().as_millis() as u64,
            "loaded logs"
        );
        let replicas = Arc::new(ReplicaManager::new());
        let groups = GroupCoordinator::new(
            coordinator_config(&config),
            replicas.clone(),
            topics.clone(),
        );
        let producer_ids = ProducerIdAllocator::open(&config.log_dir)?;
        let fetch_sessions = FetchSessionCache::new(config.fetch_session_cache_slots);
        let broker = Self {
            fetch_sessions,
            config: Arc::new(config),
            cluster_id,
            topics,
            logs,
            replicas,
            groups,
            producer_ids,
            admin: Mutex::new(()),
        };
        for topic in broker.topics.list() {
            broker.host_partitions(&topic, 0)?;
        }
        broker.load_groups()?;
        Ok(broker)
    }

    /// Replays `__consumer_offsets`, if it exists, into the group coordinator.
    fn load_groups(&self) -> Result<(), Error> {
        let Some(topic) = self.topics.get(OFFSETS_TOPIC) else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        let mut records = 0;
        for p in 0..topic.partitions {
            let partition = self.replicas.get(&TopicPartition::new(OFFSETS_TOPIC, p))?;
            records += self.groups.load_partition(&lock(partition.log()))?;
        }
        self.groups.finish_loading();
        tracing::info!(records, groups = self.groups.list_groups().len(), elapsed = ?started.elapsed(), "loaded consumer groups");
        Ok(())
    }

    /// The group coordinator, creating `__consumer_offsets` on first use (as Kafka does on the
    /// first FindCoordinator).
    pub fn groups(&self) -> Result<&Arc<GroupCoordinator>, Error> {
        if self.topics.get(OFFSETS_TOPIC).is_none() {
            let mut configs = BTreeMap::new();
            configs.insert("cleanup.policy".to_string(), "compact".to_string());
            configs.insert(
                "segment.bytes".to_string(),
                self.config.offsets_topic_segment_bytes.to_string(),
            );
            configs.insert("compression.type".to_string(), "producer".to_string());
            let request = NewTopic {
                name: OFFSETS_TOPIC.to_string(),
                partitions: self.config.offsets_topic_partitions,
                replication_factor: -1,
                assignments: Vec::new(),
                configs,
            };
            match self.create_topic(request, false) {
                Ok(_) | Err(Error::TopicAlreadyExists(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(&self.groups)
    }

    /// The coordinator without creating anything (startup tasks).
    pub fn group_coordinator(&self) -> &Arc<GroupCoordinator> {
        &self.groups
    }

    pub fn config(&self) -> &Arc<BrokerConfig> {
        &self.config
    }
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }
    pub fn node_id(&self) -> i32 {
        self.config.node_id
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
    pub fn topics(&self) -> Vec<Arc<TopicInfo>> {
        self.topics.list()
    }
    pub fn topic(&self, name: &str) -> Option<Arc<TopicInfo>> {
        self.topics.get(name)
    }
    pub fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicInfo>> {
        self.topics.get_by_id(id)
    }

    pub fn log_config(&self, overrides: &BTreeMap<String, String>) -> LogConfig {
        LogConfig::resolve(&self.config.topic_defaults, overrides)
    }

    /// Opens (creating when missing) the logs of partitions `from..topic.partitions`.
    /// Opens (creating when missing) the logs of partitions `from..topic.partitions`. On
    /// failure the partitions opened by this call are removed again, so a topic is never left
    /// half-created.
    fn host_partitions(&self, topic: &TopicInfo, from: i32) -> Result<(), Error> {
        let config = self.log_config(&topic.configs);
        for p in from..topic.partitions {
            let tp = TopicPartition::new(&topic.name, p);
            match self.logs.get_or_create(&tp, config.clone(), now_ms()) {
                Ok(log) => {
                    self.replicas.add(Partition::new(tp, topic.id, log));
                }
                Err(e) => {
                    tracing::error!(partition = %tp, error = %e, "cannot create log; rolling back");
                    self.unhost_partitions(&topic.name, from..p);
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }

    /// Stops hosting and deletes the logs of `partitions` (best effort: a failure is logged,
    /// and a leftover directory is removed as stray at the next start).
    fn unhost_partitions(&self, topic: &str, partitions: std::ops::Range<i32>) {
        for p in partitions {
            let tp = TopicPartition::new(topic, p);
            self.replicas.remove(&tp);
            if let Err(e) = self.logs.delete(&tp) {
                tracing::error!(partition = %tp, error = %e, "cannot delete log");
            }
        }
    }

    fn check_replication(&self, replication_factor: i32) -> Result<(), Error> {
        if replication_factor <= 0 {
            return Err(Error::InvalidReplicationFactor(
                "replication factor must be larger than 0".into(),
            ));
        }
        if replication_factor > 1 {
            return Err(Error::InvalidReplicationFactor(format!(
                "unable to replicate the partition {replication_factor} time(s): the target replication factor of {replication_factor} cannot be reached because only 1 broker(s) are registered"
            )));
        }
        Ok(())
    }

    fn check_assignments(&self, assignments: &[Vec<i32>]) -> Result<(), Error> {
        for (p, replicas) in assignments.iter().enumerate() {
            if replicas.is_empty() {
                return Err(Error::InvalidReplicaAssignment(format!(
                    "partition {p} has no replicas"
                )));
            }
            if let Some(unknown) = replicas.iter().find(|b| **b != self.config.node_id) {
                return Err(Error::InvalidReplicaAssignment(format!(
                    "broker {unknown} is not registered"
                )));
            }
            self.check_replication(replicas.len() as i32)?;
        }
        Ok(())
    }

    /// Creates a topic (or only validates the request).
    pub fn create_topic(
        &self,
        request: NewTopic,
        validate_only: bool,
    ) -> Result<Arc<TopicInfo>, Error> {
        validate_topic_name(&request.name).map_err(Error::InvalidTopic)?;
        let _admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        if self.topics.get(&request.name).is_some() {
            return Err(Error::TopicAlreadyExists(request.name));
        }
        let partitions = if request.assignments.is_empty() {
            let partitions = match request.partitions {
                -1 => self.config.num_partitions,
                n if n <= 0 => {
                    return Err(Error::InvalidPartitions(
                        "number of partitions must be larger than 0, or -1 to use the default"
                            .into(),
                    ));
                }
                n => n,
            };
            let replication = match request.replication_factor {
                -1 => self.config.default_replication_factor,
                n => n as i32,
            };
            self.check_replication(replication)?;
            partitions
        } else {
            if request.partitions != -1 || request.replication_factor != -1 {
                return Err(Error::InvalidRequest(
                    "both the number of partitions and replica assignments were given".into(),
                ));
            }
            self.check_assignments(&request.assignments)?;
            request.assignments.len() as i32
        };
        validate_topic_overrides(&request.configs)?;
        let info = TopicInfo {
            name: Arc::from(request.name.as_str()),
            id: Uuid::new_v4(),
            partitions,
            configs: request.configs,
        };
        if validate_only {
            return Ok(Arc::new(info));
        }
        // Logs first, then the definition: a crash in between leaves stray logs, which the
        // next startup removes.
        self.host_partitions(&info, 0)?;
        let partitions = info.partitions;
        let info = match self.topics.put(info) {
            Ok(info) => info,
            Err(e) => {
                self.unhost_partitions(&request.name, 0..partitions);
                return Err(e.into());
            }
        };
        tracing::info!(topic = %info.name, partitions = info.partitions, "created topic");
        Ok(info)
    }

    /// Creates `name` with all defaults, as Metadata auto-creation does. Already existing is
    /// success.
    pub fn auto_create_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        let request = NewTopic {
            name: name.to_string(),
            partitions: -1,
            replication_factor: -1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        match self.create_topic(request, false) {
            Err(Error::TopicAlreadyExists(_)) => {
                self.topics.get(name).ok_or(Error::UnknownTopicOrPartition)
            }
            other => other,
        }
    }

    /// Deletes a topic and removes its files.
    pub fn delete_topic(&self, name: &str) -> Result<Arc<TopicInfo>, Error> {
        if !self.config.delete_topic_enable {
            return Err(Error::TopicDeletionDisabled);
        }
        let _admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let info = self
            .topics
            .get(name)
            .ok_or(Error::UnknownTopicOrPartition)?;
        // Definition first, then logs: a crash in between leaves stray logs, removed at startup.
        self.topics.remove(name)?;
        for p in 0..info.partitions {
            let tp = TopicPartition::new(name, p);
            self.replicas.remove(&tp);
            self.logs.delete(&tp)?;
        }
        tracing::info!(topic = %name, "deleted topic");
        Ok(info)
    }

    /// Grows a topic to `count` partitions.
    pub fn create_partitions(
        &self,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let _admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let info = self
            .topics
            .get(name)
            .ok_or(Error::UnknownTopicOrPartition)?;
        if count < info.partitions {
            return Err(Error::InvalidPartitions(format!(
                "topic currently has {} partitions, which is higher than the requested {count}",
                info.partitions
            )));
        }
        if count == info.partitions {
            return Err(Error::InvalidPartitions(format!(
                "topic already has {} partitions",
                info.partitions
            )));
        }
        if let Some(assignments) = assignments {
            if assignments.len() as i32 != count - info.partitions {
                return Err(Error::InvalidReplicaAssignment(format!(
                    "increasing the number of partitions by {} but {} assignments provided",
                    count - info.partitions,
                    assignments.len()
                )));
            }
            self.check_assignments(assignments)?;
        }
        if validate_only {
            return Ok(());
        }
        let grown = TopicInfo {
            partitions: count,
            ..(*info).clone()
        };
        self.host_partitions(&grown, info.partitions)?;
        if let Err(e) = self.topics.put(grown) {
            self.unhost_partitions(name, info.partitions..count);
            return Err(e.into());
        }
        Ok(())
    }

    /// Replaces a topic's config overrides with `configs` (validated) and applies them to its
    /// logs.
    pub fn set_topic_configs(
        &self,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Error> {
        let _admin = self.admin.lock().unwrap_or_else(|p| p.into_inner());
        let info = self
            .topics
            .get(name)
            .ok_or(Error::UnknownTopicOrPartition)?;
        validate_topic_overrides(&configs)?;
        if validate_only {
            return Ok(());
        }
        let log_config = self.log_config(&configs);
        self.topics.put(TopicInfo {
            configs,
            ..(*info).clone()
        })?;
        for p in 0..info.partitions {
            if let Some(log) = self.logs.get(&TopicPartition::new(name, p)) {
                lock(&log).set_config(log_config.clone());
            }
        }
        Ok(())
    }

    /// ListOffsets for one partition: Kafka's special timestamps (-1 latest, -2 earliest,
    /// -3 max timestamp, -4 earliest local, -5 latest tiered) or a time. Returns
    /// (offset, timestamp), or (-1, -1) when no record is at or after the time.
    pub fn list_offset(&self, tp: &TopicPartition, timestamp: i64) -> Result<(i64, i64), Error> {
        let partition = self.replicas.get(tp)?;
        let log = lock(partition.log());
        Ok(match timestamp {
            -1 => (log.high_watermark(), -1),
            -2 | -4 => (log.log_start_offset(), -1),
            // Latest tiered offset: without tiered storage Kafka answers -1.
            -5 => (-1, -1),
            -3 => log.max_timestamp_record()?.unwrap_or((-1, -1)),
            t if t < 0 => {
                return Err(Error::InvalidRequest(format!(
                    "unknown special timestamp {t}"
                )));
            }
            t => log.offset_for_timestamp(t)?.unwrap_or((-1, -1)),
        })
    }

    /// DeleteRecords for one partition: -1 means the high watermark. Returns the new low
    /// watermark.
    pub fn delete_records(&self, tp: &TopicPartition, offset: i64) -> Result<i64, Error> {
        let partition = self.replicas.get(tp)?;
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

    // Partition leadership and replica placement. On a single node every partition has one
    // replica, on this broker, which is therefore its preferred replica and its leader while
    // its log is online. Issue 6 moves these decisions to the controller quorum.

    /// ElectLeaders for one partition, with Kafka's answers: ELECTION_NOT_NEEDED when the
    /// partition already has the leader the election would pick; when its only replica is
    /// offline nobody can lead (PREFERRED_LEADER_NOT_AVAILABLE, or
    /// ELIGIBLE_LEADERS_NOT_AVAILABLE for an unclean election).
    pub fn elect_leader(&self, tp: &TopicPartition, election: ElectionType) -> Result<(), Error> {
        self.replicas.get(tp)?;
        if self.partition_state(tp).leader.is_some() {
            return Err(Error::ElectionNotNeeded);
        }
        Err(match election {
            ElectionType::Preferred => Error::PreferredLeaderNotAvailable,
            ElectionType::Unclean => Error::EligibleLeadersNotAvailable,
        })
    }

    /// The replicas of a partition, preferred replica first.
    pub fn partition_replicas(&self, _tp: &TopicPartition) -> Vec<i32> {
        vec![self.config.node_id]
    }

    /// Who leads a partition and which replicas are in sync or offline, as Metadata reports
    /// it. A replica whose log an I/O error took offline cannot lead: with no other replica
    /// the partition has no leader (Kafka's LEADER_NOT_AVAILABLE).
    pub fn partition_state(&self, tp: &TopicPartition) -> PartitionState {
        let replicas = self.partition_replicas(tp);
        let online = self
            .replicas
            .get(tp)
            .is_ok_and(|p| !lock(p.log()).is_failed());
        if online {
            PartitionState {
                leader: replicas.first().copied(),
                isr: replicas.clone(),
                offline: Vec::new(),
                replicas,
            }
        } else {
            PartitionState {
                leader: None,
                isr: Vec::new(),
                offline: replicas.clone(),
                replicas,
            }
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
        if let Some(unknown) = target.iter().find(|&&id| id != self.config.node_id) {
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

    /// InitProducerId for an idempotent (non-transactional) producer: a fresh id, epoch 0.
    pub fn allocate_producer_id(&self) -> Result<i64, Error> {
        Ok(self.producer_ids.allocate()?)
    }

    /// Periodic work: retention, compaction, producer-id expiry.
    pub fn apply_retention(&self) -> usize {
        let now = now_ms();
        for log in self.logs.all() {
            lock(&log).expire_producers(now, self.config.producer_id_expiration_ms);
        }
        self.logs.apply_retention(now)
    }

    /// Periodic work: time-based flush.
    pub fn flush_due(&self) {
        self.logs.flush_due(now_ms());
    }

    /// Periodic work: checkpoints.
    pub fn checkpoint(&self) {
        if let Err(e) = self.logs.checkpoint() {
            tracing::error!(error = %e, "writing checkpoints failed");
        }
    }

    /// Flushes everything and writes the clean-shutdown marker.
    pub fn shutdown(&self) -> Result<(), Error> {
        self.logs.shutdown(now_ms())?;
        Ok(())
    }
}
