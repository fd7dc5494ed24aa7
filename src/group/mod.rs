//! The group coordinator (Kafka's `GroupCoordinatorService` over `__consumer_offsets`): owns
//! every group of this broker, runs their timers (join deadlines, session expiry), writes group
//! metadata and committed offsets to `__consumer_offsets` with Kafka's record schemas, replays
//! that topic at startup, and expires offsets of empty groups (`offsets.retention.minutes`).
//!
//! Everything a group holds is in the log or derivable from it: state changes that matter after
//! a restart (assignments, committed offsets, deletions) are appended before they are
//! acknowledged. Records of one group are appended under that group's lock, so the log order
//! is the order of the changes.
//!
//! | file | owns |
//! |---|---|
//! | `classic.rs` | the classic protocol state machine and a group's offsets |
//! | `records.rs` | the `__consumer_offsets` key/value schemas and group placement |

pub mod classic;
pub mod consumer;
pub mod records;
pub mod topics;

use crate::error::GroupError;
use crate::metadata::cache::MetadataCache;
use crate::record::produced::CheckedBatch;
use crate::record::{self, NewRecord};
use crate::replica::ReplicaManager;
use crate::storage::StorageError;
use crate::types::{TopicPartition, now_ms};
use bytes::Bytes;
use classic::{
    ClassicGroup, CommittedOffset, Effects, GroupConfig, GroupState, JoinOutcome, JoinRequest,
    JoinResult, Offsets, SyncOutcome, SyncRequest, SyncResult,
};
use consumer::{
    Assignment, Change, ConsumerGroup, ConsumerGroupConfig, ConsumerMember, Heartbeat,
    HeartbeatResult, TopicsView,
};
use records::{GroupValue, OffsetValue, RecordKey};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::{Duration, Instant};

/// The internal topic holding group metadata and committed offsets.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// Settings of the coordinator beyond the per-group ones.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    pub group: GroupConfig,
    pub consumer: ConsumerGroupConfig,
    pub offsets_topic_partitions: i32,
    pub offsets_retention_ms: i64,
    pub offsets_retention_check_interval_ms: u64,
}

type SharedGroup = Arc<Mutex<ClassicGroup>>;

/// A listing entry (ListGroups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub group_id: String,
    pub protocol_type: String,
    pub state: &'static str,
    /// "classic" or "consumer" (KIP-848).
    pub group_type: &'static str,
}

/// A group as DescribeGroups reports it.
#[derive(Debug, Clone)]
pub struct GroupDescription {
    pub state: &'static str,
    pub protocol_type: String,
    pub protocol: String,
    pub members: Vec<MemberDescription>,
}

#[derive(Debug, Clone)]
pub struct MemberDescription {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub metadata: Bytes,
    pub assignment: Bytes,
}

/// One partition's committed offset for OffsetCommit.
#[derive(Debug, Clone)]
pub struct OffsetCommit {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
}

#[derive(Debug)]
pub struct GroupCoordinator {
    config: CoordinatorConfig,
    replicas: Arc<ReplicaManager>,
    groups: Mutex<HashMap<String, SharedGroup>>,
    /// KIP-848 groups. A group id lives in exactly one of the two maps.
    consumer_groups: Mutex<HashMap<String, SharedConsumerGroup>>,
    /// Topic names, ids and partition counts (assignments, regexes, record topic ids).
    topics: Arc<MetadataCache>,
    /// Members of groups loaded at startup, watched once the runtime starts the coordinator.
    loaded_members: Mutex<Vec<(String, String)>>,
    /// The runtime has started the coordinator: members loaded later are watched at once.
    started: std::sync::atomic::AtomicBool,
    /// Offsets partitions whose groups are being rebuilt from the log.
    loading: Mutex<std::collections::HashSet<i32>>,
    /// Offsets committed in transactions (TxnOffsetCommit), by producer id, until the
    /// transaction's marker reaches the group's partition.
    pending_txn: Mutex<HashMap<i64, Vec<PendingOffset>>>,
}

/// An offset committed in a transaction, not yet visible.
#[derive(Debug, Clone)]
struct PendingOffset {
    group: String,
    topic: String,
    partition: i32,
    value: CommittedOffset,
}

type SharedConsumerGroup = Arc<Mutex<ConsumerGroup>>;

fn lock_consumer(group: &SharedConsumerGroup) -> MutexGuard<'_, ConsumerGroup> {
    group.lock().unwrap_or_else(|p| p.into_inner())
}

fn lock_group(group: &SharedGroup) -> MutexGuard<'_, ClassicGroup> {
    group.lock().unwrap_or_else(|p| p.into_inner())
}

impl GroupCoordinator {
    pub fn new(
        config: CoordinatorConfig,
        replicas: Arc<ReplicaManager>,
        topics: Arc<MetadataCache>,
    ) -> Arc<Self> {
        Arc::new(Self {
            config,
            replicas,
            topics,
            groups: Mutex::new(HashMap::new()),
            consumer_groups: Mutex::new(HashMap::new()),
            loaded_members: Mutex::new(Vec::new()),
            started: std::sync::atomic::AtomicBool::new(false),
            loading: Mutex::new(Default::default()),
            pending_txn: Mutex::new(HashMap::new()),
        })
    }

    /// The `__consumer_offsets` partition that holds `group_id`'s state.
    pub fn partition_of(&self, group_id: &str) -> TopicPartition {
        TopicPartition::new(
            OFFSETS_TOPIC,
            records::partition_for(group_id, self.config.offsets_topic_partitions),
        )
    }

    /// Whether this broker coordinates `group_id`: it leads the group's offsets partition.
    pub fn owns(&self, group_id: &str) -> bool {
        self.replicas
            .get(&self.partition_of(group_id))
            .is_ok_and(|p| p.leader_epoch_if_leader().is_some())
    }

    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    fn groups(&self) -> MutexGuard<'_, HashMap<String, SharedGroup>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn group(&self, group_id: &str) -> Option<SharedGroup> {
        self.groups().get(group_id).cloned()
    }

    fn consumer_groups(&self) -> MutexGuard<'_, HashMap<String, SharedConsumerGroup>> {
        self.consumer_groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn consumer_group(&self, group_id: &str) -> Option<SharedConsumerGroup> {
        self.consumer_groups().get(group_id).cloned()
    }

    fn group_or_create(&self, group_id: &str) -> SharedGroup {
        self.groups()
            .entry(group_id.to_string())
            .or_insert_with(|| Arc::new(Mutex::new(ClassicGroup::new(group_id, now_ms()))))
            .clone()
    }

    /// This broker now leads `partition` of `__consumer_offsets`: the groups stored there are
    /// rebuilt from its log and served from here (Kafka's coordinator election).
    pub fn elect(
        self: &Arc<Self>,
        partition: i32,
        log: &crate::storage::manager::SharedLog,
    ) -> Result<usize, StorageError> {
        // Anything left from an earlier term here is stale.
        self.resign(partition);
        self.begin_loading(partition);
        let loaded = self.load_shared(partition, log);
        self.loading_partitions().remove(&partition);
        let records = loaded?;
        let of_partition = |id: &str| {
            records::partition_for(id, self.config.offsets_topic_partitions) == partition
        };
        self.finish_loading_where(of_partition);
        if self.started.load(std::sync::atomic::Ordering::SeqCst) {
            self.watch_loaded(of_partition);
        }
        tracing::debug!(
            partition,
            records,
            "coordinating the groups of {OFFSETS_TOPIC} partition"
        );
        Ok(records)
    }

    fn loading_partitions(&self) -> MutexGuard<'_, std::collections::HashSet<i32>> {
        self.loading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks `partition` as loading: its groups answer COORDINATOR_LOAD_IN_PROGRESS until
    /// [`GroupCoordinator::elect`] has rebuilt them.
    pub fn begin_loading(&self, partition: i32) {
        self.loading_partitions().insert(partition);
    }

    /// Whether any partition's groups are being loaded.
    pub fn loading_anything(&self) -> bool {
        !self.loading_partitions().is_empty()
    }

    /// Whether `group_id`'s partition is being loaded.
    pub fn is_loading(&self, group_id: &str) -> bool {
        let partition = records::partition_for(group_id, self.config.offsets_topic_partitions);
        self.loading_partitions().contains(&partition)
    }

    /// This broker no longer leads `partition`: its groups are dropped here (their new
    /// coordinator rebuilds them from the log; members find it through NOT_COORDINATOR).
    pub fn resign(&self, partition: i32) {
        let of_partition = |id: &String| {
            records::partition_for(id, self.config.offsets_topic_partitions) == partition
        };
        self.groups().retain(|id, _| !of_partition(id));
        self.consumer_groups().retain(|id, _| !of_partition(id));
        for entries in self.pending_txn().values_mut() {
            entries.retain(|p| !of_partition(&p.group));
        }
        self.pending_txn().retain(|_, entries| !entries.is_empty());
    }

    /// Starts the session timers of loaded members: classic ones queued by loading, and the
    /// KIP-848 members of the groups `which` selects.
    fn watch_loaded(self: &Arc<Self>, which: impl Fn(&str) -> bool) {
        let loaded = std::mem::take(
            &mut *self
                .loaded_members
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for (group_id, member_id) in loaded {
            self.watch_member(group_id, member_id);
        }
        let consumer_groups: Vec<SharedConsumerGroup> = self
            .consumer_groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            let (group_id, members): (String, Vec<String>) =
                (g.id.clone(), g.members.keys().cloned().collect());
            for member_id in members {
                if g.watched.insert(member_id.clone()) {
                    self.watch_consumer_member(group_id.clone(), member_id);
                }
            }
        }
    }

    /// Starts the timers of members loaded from the log, and the offset expiry task.
    pub fn start(self: &Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        self.started
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.watch_loaded(|_| true);
        let this = self.clone();
        let period = Duration::from_millis(self.config.offsets_retention_check_interval_ms.max(10));
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(period);
            interval.tick().await;
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        this.expire_offsets(now_ms());
                    }
                    _ = shutdown.cancelled() => return,
                }
            }
        });
    }

    // ---- persistence -------------------------------------------------------------------

    /// Appends records for `group_id` to its `__consumer_offsets` partition.
    fn write(
        &self,
        group_id: &str,
        entries: &[(RecordKey, Option<Bytes>)],
    ) -> Result<(), GroupError> {
        self.write_as(group_id, entries, None)
    }

    /// [`GroupCoordinator::write`], in `producer`'s transaction (id, epoch) when given.
    fn write_as(
        &self,
        group_id: &str,
        entries: &[(RecordKey, Option<Bytes>)],
        producer: Option<(i64, i16)>,
    ) -> Result<(), GroupError> {
        if entries.is_empty() {
            return Ok(());
        }
        let partition = records::partition_for(group_id, self.config.offsets_topic_partitions);
        let tp = TopicPartition::new(OFFSETS_TOPIC, partition);
        let partition = self
            .replicas
            .get(&tp)
            .map_err(|_| GroupError::CoordinatorNotAvailable)?;
        let keys: Vec<Bytes> = entries.iter().map(|(k, _)| k.encode()).collect();
        let now = now_ms();
        let new_records: Vec<NewRecord<'_>> = keys
            .iter()
            .zip(entries)
            .map(|(key, (_, value))| NewRecord {
                key: Some(key),
                value: value.as_deref(),
                timestamp: now,
            })
            .collect();
        let mut batch = record::build_batch(&new_records);
        if let Some((producer_id, epoch)) = producer {
            record::make_transactional(&mut batch, producer_id, epoch);
        }
        CheckedBatch::built(batch)
            .map_err(crate::error::Error::from)
            .and_then(|batch| partition.append(&batch, -1))
            .map(|_| ())
            .map_err(|e| {
                tracing::error!(group = group_id, error = %e, "writing to {OFFSETS_TOPIC} failed");
                GroupError::CoordinatorNotAvailable
            })
    }

    fn persist_group(&self, group: &ClassicGroup) -> Result<(), GroupError> {
        let value = group.snapshot().encode();
        self.write(
            &group.id,
            &[(
                RecordKey::Group {
                    group: group.id.clone(),
                },
                Some(value),
            )],
        )
    }

    /// Rebuilds the groups and offsets stored in `partition` of `__consumer_offsets`, with
    /// the offsets of transactions its markers decided (and those still open as pending).
    pub fn load_shared(
        &self,
        partition: i32,
        log: &crate::storage::manager::SharedLog,
    ) -> Result<usize, StorageError> {
        use crate::storage::manager::Replayed;
        let mut records = 0;
        crate::storage::manager::replay_records(log, |replayed| {
            let (producer_id, transactional, key, value) = match replayed {
                Replayed::Marker {
                    producer_id,
                    commit,
                } => {
                    self.complete_transaction(partition, producer_id, commit);
                    return;
                }
                Replayed::Record {
                    producer_id,
                    transactional,
                    key: Some(key),
                    value,
                } => (producer_id, transactional, key, value),
                Replayed::Record { key: None, .. } => return,
            };
            match RecordKey::decode(key) {
                Ok(Some(RecordKey::Offset {
                    group,
                    topic,
                    partition,
                })) if transactional => match value.map(OffsetValue::decode) {
                    Some(Ok(v)) => {
                        self.pending_txn()
                            .entry(producer_id)
                            .or_default()
                            .push(PendingOffset {
                                group,
                                topic,
                                partition,
                                value: committed_from(v),
                            });
                        records += 1;
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "skipping unreadable transactional offset record")
                    }
                    None => {}
                },
                Ok(Some(key)) => {
                    self.replay(key, value);
                    records += 1;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "skipping unreadable {OFFSETS_TOPIC} record"),
            }
        })?;
        Ok(records)
    }

    fn pending_txn(&self) -> MutexGuard<'_, HashMap<i64, Vec<PendingOffset>>> {
        self.pending_txn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A transaction marker reached `partition` of `__consumer_offsets`: the offsets
    /// `producer_id` committed in it for that partition's groups become visible (commit) or
    /// are dropped (abort).
    pub fn complete_transaction(&self, partition: i32, producer_id: i64, commit: bool) {
        let partitions = self.config.offsets_topic_partitions;
        let decided: Vec<PendingOffset> = {
            let mut pending = self.pending_txn();
            let Some(entries) = pending.get_mut(&producer_id) else {
                return;
            };
            let (decided, kept): (Vec<_>, Vec<_>) = std::mem::take(entries)
                .into_iter()
                .partition(|p| records::partition_for(&p.group, partitions) == partition);
            *entries = kept;
            if entries.is_empty() {
                pending.remove(&producer_id);
            }
            decided
        };
        if !commit {
            return;
        }
        for offset in decided {
            let key = (offset.topic, offset.partition);
            if let Some(group) = self.consumer_group(&offset.group) {
                lock_consumer(&group).offsets.insert(key, offset.value);
            } else {
                let group = self.group_or_create(&offset.group);
                lock_group(&group).offsets.insert(key, offset.value);
            }
        }
    }

    /// Whether a transaction still open holds an offset of `group` for the partition
    /// (OffsetFetch with `require_stable` then answers UNSTABLE_OFFSET_COMMIT).
    pub fn has_pending_offset(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.pending_txn()
            .values()
            .flatten()
            .any(|p| p.group == group && p.topic == topic && p.partition == partition)
    }

    fn replay(&self, key: RecordKey, value: Option<&[u8]>) {
        if self.replay_consumer(&key, value) {
            return;
        }
        match key {
            RecordKey::Offset {
                group,
                topic,
                partition,
            } => match value.map(OffsetValue::decode) {
                None => {
                    if let Some(g) = self.group(&group) {
                        lock_group(&g).offsets.remove(&(topic, partition));
                    }
                }
                Some(Ok(v)) => {
                    let g = self.group_or_create(&group);
                    lock_group(&g)
                        .offsets
                        .insert((topic, partition), committed_from(v));
                }
                Some(Err(e)) => {
                    tracing::warn!(group, error = %e, "skipping unreadable offset record")
                }
            },
            RecordKey::Group { group } => match value.map(GroupValue::decode) {
                None => {
                    self.groups().remove(&group);
                }
                Some(Ok(v)) => {
                    let g = self.group_or_create(&group);
                    let mut g = lock_group(&g);
                    load_group_value(&mut g, v);
                }
                Some(Err(e)) => {
                    tracing::warn!(group, error = %e, "skipping unreadable group record")
                }
            },
            // KIP-848 records: handled by replay_consumer.
            _ => {}
        }
    }

    /// Replays KIP-848 records, and offsets of groups that are consumer groups. Returns false
    /// for records this does not own.
    fn replay_consumer(&self, key: &RecordKey, value: Option<&[u8]>) -> bool {
        let group_of = |group: &str| -> SharedConsumerGroup {
            let existing = self.consumer_group(group);
            existing.unwrap_or_else(|| {
                // A consumer group supersedes a classic one of the same id (its offsets move over).
                let offsets = self
                    .groups()
                    .remove(group)
                    .map(|g| std::mem::take(&mut lock_group(&g).offsets))
                    .unwrap_or_default();
                self.consumer_groups()
                    .entry(group.to_string())
                    .or_insert_with(|| {
                        Arc::new(Mutex::new(ConsumerGroup::new(group, offsets, now_ms())))
                    })
                    .clone()
            })
        };
        let assignment = |partitions: records::TopicIdPartitions| -> Assignment {
            partitions
                .into_iter()
                .filter_map(|(id, ps)| {
                    self.topics
                        .topic_name(id)
                        .map(|t| (t, ps.into_iter().collect()))
                })
                .collect()
        };
        let warn = |e: records::SchemaError| tracing::warn!(error = %e, "skipping unreadable {OFFSETS_TOPIC} record");
        match key {
            RecordKey::Offset {
                group,
                topic,
                partition,
            } => {
                let Some(g) = self.consumer_group(group) else {
                    return false;
                };
                let mut g = lock_consumer(&g);
                match value.map(OffsetValue::decode) {
                    None => {
                        g.offsets.remove(&(topic.clone(), *partition));
                    }
                    Some(Ok(v)) => {
                        g.offsets.insert(
                            (topic.clone(), *partition),
                            CommittedOffset {
                                offset: v.offset,
                                leader_epoch: v.leader_epoch,
                                metadata: v.metadata,
                                commit_timestamp: v.commit_timestamp,
                                expire_timestamp: v.expire_timestamp,
                            },
                        );
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::Group { .. } => return false,
            RecordKey::ConsumerGroup { group } => match value.map(records::decode_epoch_value) {
                None => {
                    self.consumer_groups().remove(group.as_str());
                }
                Some(Ok(epoch)) => {
                    lock_consumer(&group_of(group)).restore_epochs(Some(epoch), None)
                }
                Some(Err(e)) => warn(e),
            },
            RecordKey::TargetMetadata { group } => match value.map(records::decode_epoch_value) {
                None => {}
                Some(Ok(epoch)) => {
                    lock_consumer(&group_of(group)).restore_epochs(None, Some(epoch))
                }
                Some(Err(e)) => warn(e),
            },
            RecordKey::ConsumerMember { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::ConsumerMemberValue::decode) {
                    None => {
                        if let Some(m) = g.members.remove(member)
                            && let Some(instance) = m.instance_id
                        {
                            g.static_members.remove(&instance);
                        }
                    }
                    Some(Ok(v)) => {
                        let m = g
                            .members
                            .entry(member.clone())
                            .or_insert_with(|| ConsumerMember::restored(member, Instant::now()));
                        m.instance_id = v.instance_id.clone();
                        m.rack_id = v.rack_id;
                        m.client_id = v.client_id;
                        m.client_host = v.client_host;
                        m.subscribed_topic_names = v.subscribed_topic_names;
                        m.subscribed_topic_regex = v.subscribed_topic_regex;
                        m.rebalance_timeout_ms = v.rebalance_timeout_ms;
                        m.server_assignor = v.server_assignor;
                        if let Some(instance) = v.instance_id {
                            g.static_members.insert(instance, member.clone());
                        }
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::TargetMember { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::decode_target_member) {
                    None => {
                        g.target.remove(member);
                    }
                    Some(Ok(partitions)) => {
                        g.target.insert(member.clone(), assignment(partitions));
                    }
                    Some(Err(e)) => warn(e),
                }
            }
            RecordKey::CurrentAssignment { group, member } => {
                let g = group_of(group);
                let mut g = lock_consumer(&g);
                match value.map(records::CurrentAssignmentValue::decode) {
                    None => {}
                    Some(Ok(v)) => {
                        let m = g
                            .members
                            .entry(member.clone())
                            .or_insert_with(|| ConsumerMember::restored(member, Instant::now()));
                        m.member_epoch = v.member_epoch;
                        m.previous_member_epoch = v.previous_member_epoch;
                        m.set_state_code(v.state);
                        m.assigned = assignment(v.assigned);
                        m.pending_revocation = assignment(v.pending_revocation);
                    }
                    Some(Err(e)) => warn(e),
                }
            }
        }
        true
    }

    /// After replay: members of loaded groups get fresh session deadlines (they must heartbeat
    /// to stay), to be watched once the coordinator starts.
    pub fn finish_loading(&self) {
        self.finish_loading_where(|_| true);
    }

    /// [`GroupCoordinator::finish_loading`] for the groups whose id passes `which`.
    fn finish_loading_where(&self, which: impl Fn(&str) -> bool) {
        let groups: Vec<SharedGroup> = self
            .groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        let mut watch = Vec::new();
        for group in groups {
            let mut g = lock_group(&group);
            let now = Instant::now();
            let group_id = g.id.clone();
            for member in g.members.values_mut() {
                member.session_deadline =
                    now + Duration::from_millis(member.session_timeout_ms.max(0) as u64);
                watch.push((group_id.clone(), member.member_id.clone()));
            }
        }
        self.loaded_members
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(watch);
        let session = Duration::from_millis(self.config.consumer.session_timeout_ms.max(0) as u64);
        let consumer_groups: Vec<SharedConsumerGroup> = self
            .consumer_groups()
            .iter()
            .filter(|(id, _)| which(id))
            .map(|(_, g)| g.clone())
            .collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            let now = Instant::now();
            for member in g.members.values_mut() {
                member.session_deadline = now + session;
            }
            g.refresh_metadata_snapshot(self.topics.as_ref());
            g.changes.clear();
        }
    }

    // ---- effects and timers --------------------------------------------------------------

    /// Applies what a state change asked for. Called with the group locked (persistence must
    /// follow the state order); timers are spawned, never awaited here.
    fn apply(self: &Arc<Self>, group: &ClassicGroup, effects: Effects) {
        if effects.persist_group
            && let Err(e) = self.persist_group(group)
        {
            tracing::warn!(group = %group.id, error = %e, "could not persist group state");
        }
        if let Some((rebalance_id, deadline)) = effects.join_timer {
            self.arm_join_timer(group.id.clone(), rebalance_id, deadline);
        }
        for member_id in effects.watch_members {
            self.watch_member(group.id.clone(), member_id);
        }
    }

    fn arm_join_timer(self: &Arc<Self>, group_id: String, rebalance_id: u64, deadline: Instant) {
        let this = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            let Some(group) = this.group(&group_id) else {
                return;
            };
            let mut g = lock_group(&group);
            let effects =
                g.on_join_timer(rebalance_id, &this.config.group, Instant::now(), now_ms());
            this.apply(&g, effects);
        });
    }

    /// Evicts `member_id` when its session runs out (checked at its current deadline, which
    /// heartbeats keep moving), then stops.
    fn watch_member(self: &Arc<Self>, group_id: String, member_id: String) {
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                let deadline = {
                    let Some(group) = this.group(&group_id) else {
                        return;
                    };
                    let g = lock_group(&group);
                    match g.deadline_of(&member_id) {
                        Some(deadline) => deadline,
                        None => return,
                    }
                };
                tokio::time::sleep_until(deadline).await;
                let Some(group) = this.group(&group_id) else {
                    return;
                };
                let mut g = lock_group(&group);
                if let Some(effects) =
                    g.expire_member(&member_id, &this.config.group, Instant::now(), now_ms())
                {
                    this.apply(&g, effects);
                }
            }
        });
    }

    // ---- the KIP-848 consumer protocol -------------------------------------------------------

    /// ConsumerGroupHeartbeat. An empty classic group of the same id is converted (its offsets
    /// carry over); a classic group with members is not a consumer group.
    pub fn consumer_heartbeat(
        self: &Arc<Self>,
        group_id: &str,
        heartbeat: Heartbeat,
    ) -> Result<HeartbeatResult, GroupError> {
        if group_id.is_empty() {
            return Err(GroupError::InvalidGroupId);
        }
        let group = match self.consumer_group(group_id) {
            Some(group) => group,
            None => {
                if heartbeat.member_epoch != 0 {
                    return Err(GroupError::UnknownMemberId);
                }
                let offsets = self.take_classic_group(group_id)?;
                self.consumer_groups()
                    .entry(group_id.to_string())
                    .or_insert_with(|| {
                        Arc::new(Mutex::new(ConsumerGroup::new(group_id, offsets, now_ms())))
                    })
                    .clone()
            }
        };
        let mut g = lock_consumer(&group);
        let result = g.heartbeat(
            heartbeat,
            &self.config.consumer,
            self.topics.as_ref(),
            Instant::now(),
            now_ms(),
            || uuid::Uuid::new_v4().to_string(),
        );
        // Whatever changed is written before the member hears about it.
        self.persist_consumer(&mut g)?;
        let result = result?;
        if g.members.contains_key(&result.member_id) && g.watched.insert(result.member_id.clone()) {
            tracing::info!(group = group_id, member = %result.member_id, epoch = g.group_epoch, "consumer protocol member joined");
            self.watch_consumer_member(group_id.to_string(), result.member_id.clone());
        }
        Ok(result)
    }

    /// Removes an empty classic group for conversion, returning its offsets.
    fn take_classic_group(&self, group_id: &str) -> Result<Offsets, GroupError> {
        let Some(group) = self.group(group_id) else {
            return Ok(BTreeMap::new());
        };
        let mut g = lock_group(&group);
        if !g.is_empty() {
            return Err(GroupError::GroupIdNotFound);
        }
        self.write(
            group_id,
            &[(
                RecordKey::Group {
                    group: group_id.to_string(),
                },
                None,
            )],
        )?;
        g.state = GroupState::Dead;
        let offsets = std::mem::take(&mut g.offsets);
        drop(g);
        self.groups().remove(group_id);
        Ok(offsets)
    }

    /// Removes an empty consumer group for conversion to classic, returning its offsets;
    /// `Err` when it still has members.
    fn take_consumer_group(&self, group_id: &str) -> Result<Option<Offsets>, GroupError> {
        let Some(group) = self.consumer_group(group_id) else {
            return Ok(None);
        };
        let mut g = lock_consumer(&group);
        if !g.is_empty() {
            return Err(GroupError::InconsistentGroupProtocol);
        }
        self.write(group_id, &Self::consumer_group_tombstones(group_id))?;
        let offsets = std::mem::take(&mut g.offsets);
        drop(g);
        self.consumer_groups().remove(group_id);
        Ok(Some(offsets))
    }

    fn watch_consumer_member(self: &Arc<Self>, group_id: String, member_id: String) {
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                let deadline = {
                    let Some(group) = this.consumer_group(&group_id) else {
                        return;
                    };
                    let mut g = lock_consumer(&group);
                    match g.deadline_of(&member_id) {
                        Some(deadline) => deadline,
                        None => {
                            g.watched.remove(&member_id);
                            return;
                        }
                    }
                };
                tokio::time::sleep_until(deadline).await;
                let Some(group) = this.consumer_group(&group_id) else {
                    return;
                };
                lock_consumer(&group).expire(Instant::now(), now_ms());
            }
        });
    }

    /// Writes what changed in a consumer group (KIP-848 records). On failure the changes stay
    /// queued and are retried with the next write.
    fn persist_consumer(&self, g: &mut ConsumerGroup) -> Result<(), GroupError> {
        if g.changes.is_empty() {
            return Ok(());
        }
        let group = g.id.clone();
        let ids = |a: &Assignment| -> records::TopicIdPartitions {
            a.iter()
                .filter_map(|(t, ps)| {
                    self.topics
                        .topic_id(t)
                        .map(|id| (id, ps.iter().copied().collect()))
                })
                .collect()
        };
        let mut entries: Vec<(RecordKey, Option<Bytes>)> = Vec::new();
        for change in &g.changes {
            match change {
                Change::GroupEpoch => entries.push((
                    RecordKey::ConsumerGroup {
                        group: group.clone(),
                    },
                    Some(records::encode_epoch_value(g.group_epoch)),
                )),
                Change::Target => {
                    for (member, assignment) in &g.target {
                        entries.push((
                            RecordKey::TargetMember {
                                group: group.clone(),
                                member: member.clone(),
                            },
                            Some(records::encode_target_member(&ids(assignment))),
                        ));
                    }
                    entries.push((
                        RecordKey::TargetMetadata {
                            group: group.clone(),
                        },
                        Some(records::encode_epoch_value(g.assignment_epoch)),
                    ));
                }
                Change::Member(member) => {
                    if let Some(m) = g.members.get(member) {
                        entries.push((
                            RecordKey::ConsumerMember {
                                group: group.clone(),
                                member: member.clone(),
                            },
                            Some(m.metadata().encode()),
                        ));
                    }
                }
                Change::Assignment(member) => {
                    if let Some(m) = g.members.get(member) {
                        let value = records::CurrentAssignmentValue {
                            member_epoch: m.member_epoch,
                            previous_member_epoch: m.previous_member_epoch,
                            state: m.state_code(),
                            assigned: ids(&m.assigned),
                            pending_revocation: ids(&m.pending_revocation),
                        };
                        entries.push((
                            RecordKey::CurrentAssignment {
                                group: group.clone(),
                                member: member.clone(),
                            },
                            Some(value.encode()),
                        ));
                    }
                }
                Change::Removed(member) => {
                    for key in [
                        RecordKey::CurrentAssignment {
                            group: group.clone(),
                            member: member.clone(),
                        },
                        RecordKey::TargetMember {
                            group: group.clone(),
                            member: member.clone(),
                        },
                        RecordKey::ConsumerMember {
                            group: group.clone(),
                            member: member.clone(),
                        },
                    ] {
                        entries.push((key, None));
                    }
                }
            }
        }
        self.write(&group, &entries)?;
        g.changes.clear();
        Ok(())
    }

    /// Tombstones for a consumer group's own records (its members are gone already).
    fn consumer_group_tombstones(group: &str) -> Vec<(RecordKey, Option<Bytes>)> {
        vec![
            (
                RecordKey::TargetMetadata {
                    group: group.to_string(),
                },
                None,
            ),
            (
                RecordKey::ConsumerGroup {
                    group: group.to_string(),
                },
                None,
            ),
        ]
    }

    /// ConsumerGroupDescribe for one group.
    pub fn consumer_describe<T>(
        &self,
        group_id: &str,
        describe: impl FnOnce(&ConsumerGroup, &CoordinatorConfig) -> T,
    ) -> Option<T> {
        let group = self.consumer_group(group_id)?;
        let g = lock_consumer(&group);
        Some(describe(&g, &self.config))
    }

    // ---- the classic protocol --------------------------------------------------------------

    pub async fn join(self: &Arc<Self>, group_id: &str, request: JoinRequest) -> JoinResult {
        if group_id.is_empty() {
            return JoinResult::error(GroupError::InvalidGroupId, &request.member_id);
        }
        // An empty KIP-848 group converts to classic; one with members refuses classic joins.
        match self.take_consumer_group(group_id) {
            Err(error) => return JoinResult::error(error, &request.member_id),
            Ok(Some(offsets)) => {
                let group = self.group_or_create(group_id);
                lock_group(&group).offsets = offsets;
            }
            Ok(None) => {}
        }
        let group = match self.group(group_id) {
            Some(group) => group,
            None if request.member_id.is_empty() => self.group_or_create(group_id),
            None => return JoinResult::error(GroupError::UnknownMemberId, &request.member_id),
        };
        let client_id = request.client_id.clone();
        let outcome = {
            let mut g = lock_group(&group);
            let outcome = g.join(
                request,
                &self.config.group,
                Instant::now(),
                now_ms(),
                || format!("{client_id}-{}", uuid::Uuid::new_v4()),
            );
            match outcome {
                JoinOutcome::Respond(result, effects) => {
                    self.apply(&g, effects);
                    return result;
                }
                JoinOutcome::Wait(rx, effects) => {
                    self.apply(&g, effects);
                    rx
                }
            }
        };
        outcome
            .await
            .unwrap_or_else(|_| JoinResult::error(GroupError::CoordinatorNotAvailable, ""))
    }

    pub async fn sync(self: &Arc<Self>, group_id: &str, request: SyncRequest) -> SyncResult {
        if group_id.is_empty() {
            return SyncResult::error(GroupError::InvalidGroupId);
        }
        let Some(group) = self.group(group_id) else {
            return SyncResult::error(GroupError::UnknownMemberId);
        };
        let rx = {
            let mut g = lock_group(&group);
            match g.sync(request, Instant::now()) {
                SyncOutcome::Respond(result) => return result,
                SyncOutcome::Wait(rx) => rx,
                SyncOutcome::LeaderAssigned(rx, assignments) => {
                    let mut snapshot = g.snapshot();
                    for member in &mut snapshot.members {
                        member.assignment = assignments
                            .get(&member.member_id)
                            .cloned()
                            .unwrap_or_default();
                    }
                    let written = self.write(
                        group_id,
                        &[(
                            RecordKey::Group {
                                group: group_id.to_string(),
                            },
                            Some(snapshot.encode()),
                        )],
                    );
                    match written {
                        Ok(()) => g.complete_sync(assignments, now_ms()),
                        Err(error) => {
                            let effects =
                                g.fail_sync(error, &self.config.group, Instant::now(), now_ms());
                            self.apply(&g, effects);
                        }
                    }
                    rx
                }
            }
        };
        rx.await
            .unwrap_or_else(|_| SyncResult::error(GroupError::CoordinatorNotAvailable))
    }

    pub fn heartbeat(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), GroupError> {
        if group_id.is_empty() {
            return Err(GroupError::InvalidGroupId);
        }
        let group = self.group(group_id).ok_or(GroupError::UnknownMemberId)?;
        let mut g = lock_group(&group);
        g.heartbeat(member_id, instance, generation, Instant::now())
    }

    /// LeaveGroup: one result per member.
    pub fn leave(
        self: &Arc<Self>,
        group_id: &str,
        members: &[(String, Option<String>)],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        if group_id.is_empty() {
            return Err(GroupError::InvalidGroupId);
        }
        let group = self.group(group_id).ok_or(GroupError::UnknownMemberId)?;
        let mut g = lock_group(&group);
        let mut results = Vec::with_capacity(members.len());
        for (member_id, instance) in members {
            match g.leave(
                member_id,
                instance.as_deref(),
                &self.config.group,
                Instant::now(),
                now_ms(),
            ) {
                Ok(effects) => {
                    self.apply(&g, effects);
                    results.push(Ok(()));
                }
                Err(e) => results.push(Err(e)),
            }
        }
        Ok(results)
    }

    /// OffsetCommit: validated against the group (classic: generation and member; consumer
    /// protocol: member and member epoch), written, then applied. One result per offset.
    pub fn commit_offsets(
        &self,
        group_id: &str,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        if let Some(group) = self.consumer_group(group_id) {
            let mut g = lock_consumer(&group);
            g.validate_offset_commit(member_id, generation)?;
            return Ok(self.store_offsets(group_id, &mut g.offsets, expire_timestamp, offsets));
        }
        let group = match self.group(group_id) {
            Some(group) => group,
            // Commits from outside group management create a "simple" group.
            None if generation < 0 => self.group_or_create(group_id),
            None => return Err(GroupError::IllegalGeneration),
        };
        let mut g = lock_group(&group);
        g.validate_offset_commit(member_id, instance, generation, false)?;
        Ok(self.store_offsets(group_id, &mut g.offsets, expire_timestamp, offsets))
    }

    /// Writes the valid offsets of a commit and applies them to `store` once written.
    fn store_offsets(
        &self,
        group_id: &str,
        store: &mut Offsets,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> Vec<Result<(), GroupError>> {
        let (results, entries, accepted) = self.offset_records(group_id, expire_timestamp, offsets);
        if let Err(error) = self.write(group_id, &entries) {
            return results.into_iter().map(|r| r.and(Err(error))).collect();
        }
        store.extend(accepted);
        results
    }

    /// TxnOffsetCommit: offsets committed in `producer_id`'s transaction, written as part of
    /// it and visible once its commit marker reaches the group's partition. Checked against
    /// the group like OffsetCommit when a generation is given (v3+).
    #[allow(clippy::too_many_arguments)]
    pub fn txn_commit_offsets(
        &self,
        group_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
        offsets: &[OffsetCommit],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        if generation >= 0 {
            if let Some(group) = self.consumer_group(group_id) {
                lock_consumer(&group).validate_offset_commit(member_id, generation)?;
            } else if let Some(group) = self.group(group_id) {
                lock_group(&group).validate_offset_commit(member_id, instance, generation, true)?;
            }
        }
        let (results, entries, accepted) = self.offset_records(group_id, None, offsets);
        if let Err(error) = self.write_as(group_id, &entries, Some((producer_id, producer_epoch))) {
            return Ok(results.into_iter().map(|r| r.and(Err(error))).collect());
        }
        let mut pending = self.pending_txn();
        let entries = pending.entry(producer_id).or_default();
        for ((topic, partition), value) in accepted {
            entries.push(PendingOffset {
                group: group_id.to_string(),
                topic,
                partition,
                value,
            });
        }
        Ok(results)
    }

    /// The records of a commit's valid offsets, and what they will store.
    #[allow(clippy::type_complexity)]
    fn offset_records(
        &self,
        group_id: &str,
        expire_timestamp: Option<i64>,
        offsets: &[OffsetCommit],
    ) -> (
        Vec<Result<(), GroupError>>,
        Vec<(RecordKey, Option<Bytes>)>,
        Vec<((String, i32), CommittedOffset)>,
    ) {
        let now = now_ms();
        let mut results = Vec::with_capacity(offsets.len());
        let mut entries = Vec::new();
        let mut accepted = Vec::new();
        for commit in offsets {
            if commit.metadata.len() > self.config.group.offset_metadata_max_bytes {
                results.push(Err(GroupError::OffsetMetadataTooLarge));
                continue;
            }
            if self
                .replicas
                .get(&TopicPartition::new(&commit.topic, commit.partition))
                .is_err()
            {
                results.push(Err(GroupError::UnknownTopicOrPartition));
                continue;
            }
            let value = CommittedOffset {
                offset: commit.offset,
                leader_epoch: commit.leader_epoch,
                metadata: commit.metadata.clone(),
                commit_timestamp: now,
                expire_timestamp,
            };
            let record = OffsetValue {
                offset: value.offset,
                leader_epoch: value.leader_epoch,
                metadata: value.metadata.clone(),
                commit_timestamp: now,
                expire_timestamp,
            };
            entries.push((
                RecordKey::Offset {
                    group: group_id.to_string(),
                    topic: commit.topic.clone(),
                    partition: commit.partition,
                },
                Some(record.encode()),
            ));
            accepted.push(((commit.topic.clone(), commit.partition), value));
            results.push(Ok(()));
        }
        (results, entries, accepted)
    }

    /// OffsetFetch: `None` topics means every committed offset of the group.
    /// OffsetFetch: `None` topics means every committed offset of the group. A member id and
    /// epoch (OffsetFetch v9 from KIP-848 consumers) are checked against a consumer group.
    pub fn fetch_offsets(
        &self,
        group_id: &str,
        topics: Option<&[(String, Vec<i32>)]>,
        member: Option<(&str, i32)>,
    ) -> Result<Vec<(String, i32, Option<CommittedOffset>)>, GroupError> {
        let offsets = if let Some(group) = self.consumer_group(group_id) {
            let g = lock_consumer(&group);
            if let Some((member_id, epoch)) = member.filter(|(_, epoch)| *epoch >= 0) {
                g.validate_offset_commit(member_id, epoch)?;
            }
            g.offsets.clone()
        } else {
            self.group(group_id)
                .map(|g| lock_group(&g).offsets.clone())
                .unwrap_or_default()
        };
        Ok(match topics {
            None => offsets
                .into_iter()
                .map(|((t, p), o)| (t, p, Some(o)))
                .collect(),
            Some(topics) => topics
                .iter()
                .flat_map(|(topic, partitions)| partitions.iter().map(move |p| (topic.clone(), *p)))
                .map(|(topic, p)| {
                    let committed = offsets.get(&(topic.clone(), p)).cloned();
                    (topic, p, committed)
                })
                .collect(),
        })
    }

    pub fn list_groups(&self) -> Vec<GroupListing> {
        let groups: Vec<SharedGroup> = self.groups().values().cloned().collect();
        let mut out: Vec<GroupListing> = groups
            .iter()
            .map(|group| {
                let g = lock_group(group);
                GroupListing {
                    group_id: g.id.clone(),
                    protocol_type: g.protocol_type.clone().unwrap_or_default(),
                    state: g.state.name(),
                    group_type: "classic",
                }
            })
            .collect();
        let consumer_groups: Vec<SharedConsumerGroup> =
            self.consumer_groups().values().cloned().collect();
        out.extend(consumer_groups.iter().map(|group| {
            let g = lock_consumer(group);
            GroupListing {
                group_id: g.id.clone(),
                protocol_type: "consumer".into(),
                state: g.state_name(),
                group_type: "consumer",
            }
        }));
        out.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out
    }

    /// Whether a classic or consumer group of this id exists (share groups live elsewhere).
    pub fn has_group(&self, group_id: &str) -> bool {
        self.group(group_id).is_some() || self.consumer_group(group_id).is_some()
    }

    pub fn describe_group(&self, group_id: &str) -> Option<GroupDescription> {
        let group = self.group(group_id)?;
        let g = lock_group(&group);
        let stable = g.state == GroupState::Stable;
        let protocol = g.protocol_name.clone().unwrap_or_default();
        Some(GroupDescription {
            state: g.state.name(),
            protocol_type: g.protocol_type.clone().unwrap_or_default(),
            protocol: if stable {
                protocol.clone()
            } else {
                String::new()
            },
            members: g
                .members
                .values()
                .map(|m| MemberDescription {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    metadata: if stable {
                        m.protocols
                            .iter()
                            .find(|(n, _)| *n == protocol)
                            .map(|(_, b)| b.clone())
                            .unwrap_or_default()
                    } else {
                        Bytes::new()
                    },
                    assignment: if stable {
                        m.assignment.clone()
                    } else {
                        Bytes::new()
                    },
                })
                .collect(),
        })
    }

    /// DeleteGroups for one group: only an empty group can go; its offsets go with it.
    pub fn delete_group(&self, group_id: &str) -> Result<(), GroupError> {
        if let Some(group) = self.consumer_group(group_id) {
            let mut g = lock_consumer(&group);
            if !g.is_empty() {
                return Err(GroupError::NonEmptyGroup);
            }
            let entries: Vec<(RecordKey, Option<Bytes>)> =
                offset_tombstones(group_id, g.offsets.keys());
            self.write(group_id, &entries)?;
            g.offsets.clear();
            drop(g);
            self.consumer_groups().remove(group_id);
            return Ok(());
        }
        let group = self.group(group_id).ok_or(GroupError::GroupIdNotFound)?;
        let mut g = lock_group(&group);
        match g.state {
            GroupState::Dead => return Err(GroupError::GroupIdNotFound),
            GroupState::Empty => {}
            _ => return Err(GroupError::NonEmptyGroup),
        }
        let mut entries: Vec<(RecordKey, Option<Bytes>)> =
            offset_tombstones(group_id, g.offsets.keys());
        entries.push((
            RecordKey::Group {
                group: group_id.to_string(),
            },
            None,
        ));
        self.write(group_id, &entries)?;
        g.offsets.clear();
        g.state = GroupState::Dead;
        drop(g);
        self.groups().remove(group_id);
        Ok(())
    }

    /// OffsetDelete: removes committed offsets of partitions the group no longer consumes.
    pub fn delete_offsets(
        &self,
        group_id: &str,
        partitions: &[(String, i32)],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        let group = self.group(group_id).ok_or(GroupError::GroupIdNotFound)?;
        let mut g = lock_group(&group);
        if g.state == GroupState::Dead {
            return Err(GroupError::GroupIdNotFound);
        }
        let subscribed = if g.is_empty() {
            Vec::new()
        } else {
            match g.subscribed_topics() {
                Some(topics) => topics,
                None => return Err(GroupError::NonEmptyGroup),
            }
        };
        let mut results = Vec::with_capacity(partitions.len());
        let mut entries = Vec::new();
        for (topic, partition) in partitions {
            if subscribed.contains(topic) {
                results.push(Err(GroupError::GroupSubscribedToTopic));
            } else {
                if g.offsets.contains_key(&(topic.clone(), *partition)) {
                    entries.push((
                        RecordKey::Offset {
                            group: group_id.to_string(),
                            topic: topic.clone(),
                            partition: *partition,
                        },
                        None,
                    ));
                }
                results.push(Ok(()));
            }
        }
        self.write(group_id, &entries)?;
        for (key, _) in &entries {
            if let RecordKey::Offset {
                topic, partition, ..
            } = key
            {
                g.offsets.remove(&(topic.clone(), *partition));
            }
        }
        Ok(results)
    }

    /// Offset retention (Kafka 2.1+ semantics): offsets of a group that has been empty for
    /// `offsets.retention.minutes` expire (counted from when it became empty; for groups that
    /// never used group management, from the commit); an explicit expiry time wins. An empty
    /// group with no offsets left is deleted.
    pub fn expire_offsets(&self, now: i64) -> usize {
        let groups: Vec<SharedGroup> = self.groups().values().cloned().collect();
        let mut expired_total = 0;
        for group in groups {
            let mut g = lock_group(&group);
            if g.state != GroupState::Empty {
                continue;
            }
            let uses_group_management = g.protocol_type.is_some();
            let retention = self.config.offsets_retention_ms;
            let state_timestamp = g.state_timestamp;
            let expired: Vec<(String, i32)> = g
                .offsets
                .iter()
                .filter(|(_, o)| match o.expire_timestamp {
                    Some(expire) => now >= expire,
                    None => {
                        now - if uses_group_management {
                            state_timestamp
                        } else {
                            o.commit_timestamp
                        } >= retention
                    }
                })
                .map(|(k, _)| k.clone())
                .collect();
            let mut entries: Vec<(RecordKey, Option<Bytes>)> =
                offset_tombstones(&g.id, expired.iter());
            let remove_group = expired.len() == g.offsets.len();
            if remove_group {
                entries.push((
                    RecordKey::Group {
                        group: g.id.clone(),
                    },
                    None,
                ));
            }
            if entries.is_empty() {
                continue;
            }
            if let Err(e) = self.write(&g.id.clone(), &entries) {
                tracing::warn!(group = %g.id, error = %e, "could not expire offsets");
                continue;
            }
            expired_total += expired.len();
            for key in &expired {
                g.offsets.remove(key);
            }
            if remove_group {
                g.state = GroupState::Dead;
                let id = g.id.clone();
                drop(g);
                self.groups().remove(&id);
                tracing::info!(group = %id, "removed empty group after its offsets expired");
            }
        }
        let consumer_groups: Vec<SharedConsumerGroup> =
            self.consumer_groups().values().cloned().collect();
        for group in consumer_groups {
            let mut g = lock_consumer(&group);
            if !g.is_empty() {
                continue;
            }
            let since_empty = g.state_timestamp;
            let expired: Vec<(String, i32)> = g
                .offsets
                .iter()
                .filter(|(_, o)| {
                    o.expire_timestamp.map_or(
                        now - since_empty >= self.config.offsets_retention_ms,
                        |expire| now >= expire,
                    )
                })
                .map(|(k, _)| k.clone())
                .collect();
            let entries: Vec<(RecordKey, Option<Bytes>)> = offset_tombstones(&g.id, expired.iter());
            if entries.is_empty() || self.write(&g.id.clone(), &entries).is_err() {
                continue;
            }
            expired_total += expired.len();
            for key in &expired {
                g.offsets.remove(key);
            }
            if g.offsets.is_empty() {
                let id = g.id.clone();
                drop(g);
                self.consumer_groups().remove(&id);
            }
        }
        expired_total
    }
}

/// Tombstones deleting the committed offsets `keys` of `group`.
fn offset_tombstones<'a>(
    group: &str,
    keys: impl Iterator<Item = &'a (String, i32)>,
) -> Vec<(RecordKey, Option<Bytes>)> {
    keys.map(|(topic, partition)| {
        (
            RecordKey::Offset {
                group: group.to_string(),
                topic: topic.clone(),
                partition: *partition,
            },
            None,
        )
    })
    .collect()
}

/// Installs a replayed GroupMetadataValue into a group.
fn committed_from(v: OffsetValue) -> CommittedOffset {
    CommittedOffset {
        offset: v.offset,
        leader_epoch: v.leader_epoch,
        metadata: v.metadata,
        commit_timestamp: v.commit_timestamp,
        expire_timestamp: v.expire_timestamp,
    }
}

fn load_group_value(g: &mut ClassicGroup, v: GroupValue) {
    g.protocol_type = (!v.protocol_type.is_empty()).then_some(v.protocol_type);
    g.generation = v.generation;
    g.protocol_name = v.protocol;
    g.leader = v.leader;
    g.state_timestamp = v.current_state_timestamp;
    g.members.clear();
    g.static_members.clear();
    let protocol = g.protocol_name.clone().unwrap_or_default();
    for m in v.members {
        if let Some(instance) = &m.group_instance_id {
            g.static_members
                .insert(instance.clone(), m.member_id.clone());
        }
        g.members.insert(
            m.member_id.clone(),
            classic::Member {
                member_id: m.member_id,
                group_instance_id: m.group_instance_id,
                client_id: m.client_id,
                client_host: m.client_host,
                session_timeout_ms: m.session_timeout,
                rebalance_timeout_ms: if m.rebalance_timeout > 0 {
                    m.rebalance_timeout
                } else {
                    m.session_timeout
                },
                protocol_type: g.protocol_type.clone().unwrap_or_default(),
                protocols: vec![(protocol.clone(), m.subscription)],
                assignment: m.assignment,
                awaiting_join: None,
                awaiting_sync: None,
                session_deadline: Instant::now(),
            },
        );
    }
    g.state = if g.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BrokerConfig, LogConfig};
    use crate::replica::Partition;
    use crate::storage::log::Log;

    /// A coordinator over real `__consumer_offsets` logs (2 partitions) and one topic "t".
    fn coordinator(dir: &std::path::Path, retention_ms: i64) -> Arc<GroupCoordinator> {
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let log_config = LogConfig::resolve(&broker.topic_defaults, &Default::default());
        let replicas = Arc::new(ReplicaManager::new());
        let topics = Arc::new(MetadataCache::default());
        for (topic, partitions) in [(OFFSETS_TOPIC, 2), ("t", 1)] {
            for p in 0..partitions {
                let tp = TopicPartition::new(topic, p);
                let log = Log::create(&dir.join(tp.dir_name()), tp.clone(), log_config.clone(), 0)
                    .unwrap();
                replicas.add(Partition::leader_for_test(
                    tp,
                    uuid::Uuid::new_v4(),
                    Arc::new(Mutex::new(log)),
                ));
            }
        }
        let config = CoordinatorConfig {
            group: GroupConfig::default(),
            consumer: ConsumerGroupConfig::default(),
            offsets_topic_partitions: 2,
            offsets_retention_ms: retention_ms,
            offsets_retention_check_interval_ms: 1000,
        };
        GroupCoordinator::new(config, replicas, topics)
    }

    fn commit(c: &GroupCoordinator, group: &str, offset: i64, expire: Option<i64>) {
        let offsets = [OffsetCommit {
            topic: "t".into(),
            partition: 0,
            offset,
            leader_epoch: -1,
            metadata: String::new(),
        }];
        let results = c
            .commit_offsets(group, "", None, -1, expire, &offsets)
            .unwrap();
        assert_eq!(results, vec![Ok(())]);
    }

    fn committed(c: &GroupCoordinator, group: &str) -> Option<i64> {
        c.fetch_offsets(group, None, None)
            .unwrap()
            .first()
            .and_then(|(_, _, o)| o.as_ref().map(|o| o.offset))
    }

    #[test]
    fn offsets_of_empty_groups_expire_after_the_retention() {
        let dir = tempfile::tempdir().unwrap();
        let c = coordinator(dir.path(), 60_000);
        let now = now_ms();
        commit(&c, "simple", 5, None);
        commit(&c, "explicit", 7, Some(now + 1_000));
        assert_eq!(c.expire_offsets(now), 0, "nothing is old enough yet");
        assert_eq!(c.expire_offsets(now + 2_000), 1, "an explicit expiry wins");
        assert_eq!(committed(&c, "explicit"), None);
        assert_eq!(committed(&c, "simple"), Some(5));
        assert_eq!(
            c.expire_offsets(now + 61_000),
            1,
            "counted from the commit for a group without group management"
        );
        assert_eq!(committed(&c, "simple"), None);
        assert!(
            c.list_groups().is_empty(),
            "empty groups without offsets are removed"
        );
    }

    #[test]
    fn offsets_and_groups_are_replayed_from_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let c = coordinator(dir.path(), 60_000);
        commit(&c, "g1", 11, None);
        commit(&c, "g1", 12, None);
        commit(&c, "g2", 3, None);
        c.delete_group("g2").unwrap();
        // A second coordinator over the same partitions sees the same state.
        let replay = GroupCoordinator::new(c.config.clone(), c.replicas.clone(), c.topics.clone());
        for p in 0..2 {
            let partition = c
                .replicas
                .get(&TopicPartition::new(OFFSETS_TOPIC, p))
                .unwrap();
            replay.load_shared(p, partition.log()).unwrap();
        }
        replay.finish_loading();
        assert_eq!(committed(&replay, "g1"), Some(12));
        assert_eq!(
            committed(&replay, "g2"),
            None,
            "deletion tombstones are replayed too"
        );
    }
}
