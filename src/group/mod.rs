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
//! | `mod.rs` | the coordinator: its groups, the classic and KIP-848 requests, timers, writes |
//! | `offsets.rs` | committed offsets: commit, transactional commit, fetch, delete, expiry (`OffsetMetadataManager`) |
//! | `load.rs` | election, replay of `__consumer_offsets`, loading and resigning |
//! | `classic/` | the classic protocol state machine and a group's offsets |
//! | `consumer/` | the KIP-848 consumer group state machine and its assignors |
//! | `streams/` | KIP-1071 streams groups: topology, task assignment, their requests |
//! | `reconcile.rs` | what consumer and streams groups share: a member's step towards its target |
//! | `timers.rs` | join, session and revocation deadlines: the tasks that fence members |
//! | `records.rs` | the `__consumer_offsets` key/value schemas and group placement |
//! | `topics.rs` | what the coordinator sees of topics (`TopicsView` over the metadata) |

pub mod classic;
pub mod consumer;
mod load;
mod offsets;
pub mod reconcile;
pub mod records;
pub mod streams;
#[cfg(test)]
mod tests;
mod timers;
pub mod topics;

pub use offsets::{CommitBy, OffsetCommit};
use offsets::{PendingOffset, offset_tombstones};

use crate::error::GroupError;
use crate::metadata::cache::MetadataCache;
use crate::record::produced::CheckedBatch;
use crate::record::{self, NewRecord};
use crate::replica::ReplicaManager;
use crate::types::{TopicPartition, now_ms};
use bytes::Bytes;
use classic::{
    ClassicGroup, Effects, GroupConfig, GroupState, JoinOutcome, JoinRequest, JoinResult, Offsets,
    SyncOutcome, SyncRequest, SyncResult,
};
use consumer::{
    Assignment, Change, ConsumerGroup, ConsumerGroupConfig, Heartbeat, HeartbeatResult, TopicsView,
};
use records::RecordKey;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::{Duration, Instant};

/// The internal topic holding group metadata and committed offsets.
pub use crate::metadata::OFFSETS_TOPIC;

/// Settings of the coordinator beyond the per-group ones.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    pub group: GroupConfig,
    pub consumer: ConsumerGroupConfig,
    pub streams: streams::StreamsGroupConfig,
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

#[derive(Debug)]
pub struct GroupCoordinator {
    config: CoordinatorConfig,
    replicas: Arc<ReplicaManager>,
    groups: Mutex<HashMap<String, SharedGroup>>,
    /// KIP-848 groups. A group id lives in exactly one of the two maps.
    consumer_groups: Mutex<HashMap<String, SharedConsumerGroup>>,
    /// KIP-1071 streams groups; a group id lives in one map only.
    streams_groups: Mutex<HashMap<String, streams::SharedStreamsGroup>>,
    /// Topic names, ids and partition counts (assignments, regexes, record topic ids).
    topics: Arc<MetadataCache>,
    /// Members of groups loaded at startup, watched once the runtime starts the coordinator.
    loaded_members: Mutex<Vec<(String, String)>>,
    /// Streams groups' records while their partition is replayed (built when it is done).
    streams_replay: Mutex<HashMap<String, streams::Replayed>>,
    /// The runtime has started the coordinator: members loaded later are watched at once.
    started: std::sync::atomic::AtomicBool,
    /// The runtime `start` ran on. Session and join timers are spawned on it: groups are
    /// loaded (and their members watched) by the metadata publisher's own thread too, which
    /// is no runtime thread.
    runtime: std::sync::OnceLock<tokio::runtime::Handle>,
    /// Offsets partitions whose groups are being rebuilt from the log.
    loading: Mutex<std::collections::HashSet<i32>>,
    /// Offsets committed in transactions (TxnOffsetCommit), by producer id, until the
    /// transaction's marker reaches the group's partition.
    pending_txn: Mutex<HashMap<i64, Vec<PendingOffset>>>,
    /// `group.consumer.assignment.interval.ms` in effect: a dynamic broker config, so the
    /// broker sets it again when the dynamic configs change.
    consumer_assignment_interval_ms: std::sync::atomic::AtomicI32,
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
        let consumer_assignment_interval_ms =
            std::sync::atomic::AtomicI32::new(config.consumer.assignment_interval_ms);
        Arc::new(Self {
            config,
            consumer_assignment_interval_ms,
            replicas,
            topics,
            groups: Mutex::new(HashMap::new()),
            consumer_groups: Mutex::new(HashMap::new()),
            streams_groups: Mutex::new(HashMap::new()),
            loaded_members: Mutex::new(Vec::new()),
            streams_replay: Mutex::new(HashMap::new()),
            started: std::sync::atomic::AtomicBool::new(false),
            runtime: std::sync::OnceLock::new(),
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

    /// The consumer group settings of `group_id`: the broker's, with the group's dynamic
    /// configs (the GROUP config resource) applied.
    pub fn consumer_config(&self, group_id: &str) -> ConsumerGroupConfig {
        let mut config = self.config.consumer.clone();
        let image = self.topics.image();
        let int = |name: &str| {
            let value = image.group_configs.get(group_id)?.get(name)?;
            value.trim().parse::<i32>().ok()
        };
        if let Some(ms) = int("consumer.session.timeout.ms") {
            config.session_timeout_ms = ms;
        }
        if let Some(ms) = int("consumer.heartbeat.interval.ms") {
            config.heartbeat_interval_ms = ms;
        }
        config.assignment_interval_ms =
            int("consumer.assignment.interval.ms").unwrap_or_else(|| {
                self.consumer_assignment_interval_ms
                    .load(std::sync::atomic::Ordering::Relaxed)
            });
        config
    }

    /// A new `group.consumer.assignment.interval.ms` (a dynamic broker config changed); a
    /// group's own `consumer.assignment.interval.ms` still comes first.
    pub fn set_consumer_assignment_interval(&self, ms: i32) {
        self.consumer_assignment_interval_ms
            .store(ms, std::sync::atomic::Ordering::Relaxed);
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

    /// Starts the timers of members loaded from the log, and the offset expiry task.
    pub fn start(self: &Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        let _ = self.runtime.set(tokio::runtime::Handle::current());
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
                if self.streams_group(group_id).is_some() {
                    return Err(GroupError::GroupIdNotFound);
                }
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
        let config = self.consumer_config(group_id);
        let mut g = lock_consumer(&group);
        let result = g.heartbeat(
            heartbeat,
            &config,
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
                Change::TargetMember(member) => {
                    if let Some(assignment) = g.target.get(member) {
                        entries.push((
                            RecordKey::TargetMember {
                                group: group.clone(),
                                member: member.clone(),
                            },
                            Some(records::encode_target_member(&ids(assignment))),
                        ));
                    }
                }
                Change::TargetEpoch => entries.push((
                    RecordKey::TargetMetadata {
                        group: group.clone(),
                    },
                    Some(records::encode_target_metadata(
                        g.assignment_epoch,
                        g.assignment_timestamp_ms,
                    )),
                )),
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
                            epochs: m
                                .assignment_epochs
                                .iter()
                                .filter_map(|((t, p), epoch)| {
                                    self.topics.topic_id(t).map(|id| ((id, *p), *epoch))
                                })
                                .collect(),
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
        if self.streams_group(group_id).is_some() {
            return JoinResult::error(GroupError::GroupIdNotFound, &request.member_id);
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
        out.extend(self.streams_listings());
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

    /// Whether a classic, consumer or streams group of this id exists (share groups live
    /// elsewhere).
    pub fn has_group(&self, group_id: &str) -> bool {
        self.group(group_id).is_some()
            || self.consumer_group(group_id).is_some()
            || self.streams_group(group_id).is_some()
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
        if let Some(result) = self.delete_streams_group(group_id) {
            return result;
        }
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
}
