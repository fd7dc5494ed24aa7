//! Share groups (KIP-932): the share group coordinator (membership and assignment), the
//! share-partitions of the partitions this broker leads (which records each group has
//! delivered, to whom, and how each delivery ended), share sessions, and the share
//! coordinator's persisted state in `__share_group_state`.
//!
//! Kafka splits this over three roles — the group coordinator (membership), the partition
//! leader (`SharePartitionManager`) and the share coordinator (state, reached through
//! Read/WriteShareGroupState). Here they meet in one node: share groups are offered only while
//! the cluster has one broker (see [`ShareCoordinator::offered`]), so the state of every
//! share-partition is written to a local `__share_group_state` partition, synchronously, before
//! an acknowledgement is answered. A cluster needs the state RPCs between brokers first.
//!
//! A share-partition's state changes only through a copy that is persisted and then swapped
//! in: a write that fails (a full disk) leaves the state as it was, and the acknowledgement is
//! answered with the error.

pub mod group;
pub mod partition;
pub mod session;
pub mod state;

use crate::config::{BrokerConfig, ShareGroupDefaults, parse_iso_duration};
use crate::error::{GroupError, ShareError};
use crate::metadata::cache::MetadataCache;
use crate::record::{BatchIter, NewRecord};
use crate::replica::{Partition, ReplicaManager};
use crate::storage::manager::lock;
use crate::types::{TopicPartition, now_ms};
use bytes::{Bytes, BytesMut};
use group::{Heartbeat, HeartbeatReply, MembershipError, ShareGroup, Topics};
use partition::{AckError, AcquiredRange, Limits, SharePartition};
use session::{SessionCache, SessionError, SessionUse};
use state::{Snapshot, StateKey};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::{Duration, Instant};
use uuid::Uuid;

pub const SHARE_STATE_TOPIC: &str = "__share_group_state";

/// Most bytes one share-partition contributes to one ShareFetch response.
const PARTITION_READ_BYTES: usize = 8 << 20;

/// Where a share group starts on a partition it has no state for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetReset {
    Latest,
    Earliest,
    /// The first record at or after now minus this.
    ByDuration(Duration),
}

/// A share group's effective settings: its group configs over the broker's defaults.
#[derive(Debug, Clone, Copy)]
pub struct ShareSettings {
    pub session_timeout: Duration,
    pub heartbeat_interval_ms: i32,
    pub offset_reset: OffsetReset,
    pub read_committed: bool,
    pub limits: Limits,
}

impl ShareSettings {
    pub fn resolve(
        defaults: &ShareGroupDefaults,
        overrides: Option<&BTreeMap<String, String>>,
    ) -> Self {
        let get = |name: &str| overrides.and_then(|o| o.get(name)).map(|v| v.trim());
        let int = |name: &str, default: i32| {
            get(name)
                .and_then(|v| v.parse::<i32>().ok())
                .filter(|v| *v > 0)
                .unwrap_or(default)
        };
        let offset_reset = match get("share.auto.offset.reset") {
            Some("earliest") => OffsetReset::Earliest,
            Some(other) => other
                .strip_prefix("by_duration:")
                .and_then(parse_iso_duration)
                .map_or(OffsetReset::Latest, OffsetReset::ByDuration),
            None => OffsetReset::Latest,
        };
        Self {
            session_timeout: Duration::from_millis(int(
                "share.session.timeout.ms",
                defaults.session_timeout_ms,
            ) as u64),
            heartbeat_interval_ms: int(
                "share.heartbeat.interval.ms",
                defaults.heartbeat_interval_ms,
            ),
            offset_reset,
            read_committed: get("share.isolation.level") == Some("read_committed"),
            limits: Limits {
                delivery_count_limit: defaults.delivery_count_limit,
                max_in_flight: defaults.max_record_locks,
                lock_duration: Duration::from_millis(int(
                    "share.record.lock.duration.ms",
                    defaults.record_lock_duration_ms,
                ) as u64),
            },
        }
    }
}

/// One partition of a ShareFetch, resolved by the API layer.
#[derive(Debug, Clone)]
pub struct SharedTopicPartition {
    pub topic_id: Uuid,
    pub tp: TopicPartition,
}

/// Acknowledgement batches for one partition: (first offset, last offset, types).
pub type AckBatches = Vec<(i64, i64, Vec<i8>)>;

/// The answer for one partition of a ShareFetch.
#[derive(Debug)]
pub struct ShareFetched {
    pub topic_id: Uuid,
    pub partition: i32,
    pub error: Option<ShareError>,
    /// Whole batches holding the acquired records (others' records may be among them).
    pub records: Option<Bytes>,
    pub acquired: Vec<AcquiredRange>,
}

/// What a member asks of ShareFetch.
#[derive(Debug, Clone)]
pub struct FetchSpec {
    pub group: String,
    pub member: String,
    pub max_wait: Duration,
    pub max_bytes: usize,
    pub max_records: usize,
    /// KIP-1206's record-limit acquire mode: never more than `max_records`.
    pub record_limit: bool,
}

type SharedPartition = Arc<Mutex<SharePartition>>;

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A share group as DescribeGroups-style answers need it.
#[derive(Debug, Clone)]
pub struct ShareGroupView {
    pub group_id: String,
    pub state: &'static str,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub members: Vec<group::ShareMember>,
}

pub struct ShareCoordinator {
    config: Arc<BrokerConfig>,
    replicas: Arc<ReplicaManager>,
    metadata: Arc<MetadataCache>,
    groups: Mutex<HashMap<String, ShareGroup>>,
    partitions: Mutex<HashMap<StateKey, SharedPartition>>,
    sessions: Mutex<SessionCache>,
    /// Woken when records become available again (released, lock timed out, reset).
    released: Notify,
    loaded: Mutex<bool>,
}

impl std::fmt::Debug for ShareCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShareCoordinator").finish_non_exhaustive()
    }
}

struct ImageTopics<'a>(&'a crate::metadata::image::MetadataImage);

impl Topics for ImageTopics<'_> {
    fn topic(&self, name: &str) -> Option<(Uuid, i32)> {
        self.0
            .topic(name)
            .map(|t| (t.id, t.partitions.len() as i32))
    }
}

impl ShareCoordinator {
    pub fn new(
        config: Arc<BrokerConfig>,
        replicas: Arc<ReplicaManager>,
        metadata: Arc<MetadataCache>,
    ) -> Arc<Self> {
        let sessions = SessionCache::new(config.share.max_sessions);
        Arc::new(Self {
            config,
            replicas,
            metadata,
            groups: Mutex::new(HashMap::new()),
            partitions: Mutex::new(HashMap::new()),
            sessions: Mutex::new(sessions),
            released: Notify::new(),
            loaded: Mutex::new(false),
        })
    }

    /// Whether share groups are offered (ApiVersions lists their APIs): while this is the
    /// cluster's only broker, since their state is kept on the node that serves them.
    pub fn offered(&self) -> bool {
        self.metadata.image().brokers.len() <= 1
    }

    pub fn settings(&self, group_id: &str) -> ShareSettings {
        let image = self.metadata.image();
        ShareSettings::resolve(&self.config.share, image.group_configs.get(group_id))
    }

    /// Rebuilds the state of every share-partition from the local `__share_group_state`
    /// partitions, once (the first use after start: the topic exists by then).
    pub fn load(&self) {
        let mut loaded = locked(&self.loaded);
        if *loaded {
            return;
        }
        let mut restored: HashMap<StateKey, Snapshot> = HashMap::new();
        let mut records = 0usize;
        for p in 0..self.config.share.state_topic_partitions {
            let tp = TopicPartition::new(SHARE_STATE_TOPIC, p);
            let Ok(partition) = self.replicas.get(&tp) else {
                continue;
            };
            let replayed = crate::storage::manager::replay_records(partition.log(), |replayed| {
                let crate::storage::manager::Replayed::Record {
                    key: Some(key),
                    value,
                    ..
                } = replayed
                else {
                    return;
                };
                match StateKey::decode(key) {
                    Ok(Some(key)) => match value.map(Snapshot::decode) {
                        Some(Ok(snapshot)) => {
                            restored.insert(key, snapshot);
                        }
                        Some(Err(e)) => {
                            tracing::warn!(error = %e, "skipping an unreadable {SHARE_STATE_TOPIC} record")
                        }
                        None => {
                            restored.remove(&key);
                        }
                    },
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "skipping an unreadable {SHARE_STATE_TOPIC} key")
                    }
                }
            });
            match replayed {
                Ok(n) => records += n,
                Err(e) => {
                    tracing::error!(partition = %tp, error = %e, "cannot replay share group state")
                }
            }
        }
        let mut partitions = locked(&self.partitions);
        let mut groups = locked(&self.groups);
        for (key, snapshot) in restored {
            groups
                .entry(key.group.clone())
                .or_insert_with(|| ShareGroup::new(&key.group));
            let mut restored = SharePartition::restore(
                snapshot.start_offset,
                snapshot.state_epoch,
                &snapshot.batches,
                self.config.share.max_record_locks,
            );
            restored.created_ms = snapshot.create_timestamp;
            partitions.insert(key, Arc::new(Mutex::new(restored)));
        }
        if records > 0 {
            tracing::info!(
                records,
                share_partitions = partitions.len(),
                "loaded share group state"
            );
        }
        *loaded = true;
    }

    pub fn is_share_group(&self, group_id: &str) -> bool {
        locked(&self.groups).contains_key(group_id)
    }

    // ---- membership ------------------------------------------------------------------

    pub fn heartbeat(
        &self,
        group_id: &str,
        request: Heartbeat,
    ) -> Result<(HeartbeatReply, i32), ShareError> {
        let settings = self.settings(group_id);
        let image = self.metadata.image();
        let leaving = (request.member_epoch == -1).then(|| request.member_id.clone());
        let reply = {
            let mut groups = locked(&self.groups);
            let group = groups
                .entry(group_id.to_string())
                .or_insert_with(|| ShareGroup::new(group_id));
            group
                .heartbeat(
                    request,
                    &ImageTopics(&image),
                    settings.session_timeout,
                    self.config.share.max_size,
                    Instant::now(),
                )
                .map_err(|e| {
                    ShareError::Group(match e {
                        MembershipError::UnknownMemberId => GroupError::UnknownMemberId,
                        MembershipError::FencedMemberEpoch => GroupError::FencedMemberEpoch,
                        MembershipError::InvalidRequest => GroupError::InvalidRequest,
                        MembershipError::GroupMaxSizeReached => GroupError::GroupMaxSizeReached,
                    })
                })?
        };
        if let Some(member) = leaving {
            self.member_gone(group_id, &member);
        }
        Ok((reply, settings.heartbeat_interval_ms))
    }

    /// A member left or was fenced: what it holds goes back to the group.
    fn member_gone(&self, group_id: &str, member: &str) {
        locked(&self.sessions).remove_member(group_id, member);
        let settings = self.settings(group_id);
        let held: Vec<(StateKey, SharedPartition)> = locked(&self.partitions)
            .iter()
            .filter(|(k, _)| k.group == group_id)
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        let mut any = false;
        for (key, partition) in held {
            let mut current = locked(&partition);
            let mut next = current.clone();
            if next.release_member(member, &settings.limits) {
                any = true;
                // Only archived records change what is persisted; a failed write leaves the
                // records available in memory, which is what a restart would also give.
                if self.persist(&key, &next).is_err() {
                    tracing::warn!(
                        group = group_id,
                        "share state not written after a member left"
                    );
                }
                *current = next;
            }
        }
        if any {
            self.released.notify_waiters();
        }
    }

    /// Removes members whose session ran out and releases locks that timed out.
    pub fn expire(&self) {
        let now = Instant::now();
        let gone: Vec<(String, String)> = {
            let mut groups = locked(&self.groups);
            groups
                .iter_mut()
                .flat_map(|(id, g)| g.expire(now).into_iter().map(|m| (id.clone(), m)))
                .collect()
        };
        for (group, member) in gone {
            tracing::info!(
                group,
                member,
                "share group member removed: session timed out"
            );
            self.member_gone(&group, &member);
        }
        let all: Vec<(StateKey, SharedPartition)> = locked(&self.partitions)
            .iter()
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        let mut any = false;
        for (key, partition) in all {
            let mut current = locked(&partition);
            if current.next_lock_deadline().is_none_or(|d| d > now) {
                continue;
            }
            let settings = self.settings(&key.group);
            let mut next = current.clone();
            if next.expire_locks(now, &settings.limits) {
                any = true;
                if self.persist(&key, &next).is_err() {
                    tracing::warn!(
                        group = key.group,
                        "share state not written after locks timed out"
                    );
                }
                *current = next;
            }
        }
        if any {
            self.released.notify_waiters();
        }
    }

    /// Runs [`ShareCoordinator::expire`] until `shutdown`.
    pub fn start(self: &Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        let this = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => this.expire(),
                }
            }
        });
    }

    pub fn list_groups(&self) -> Vec<(String, &'static str)> {
        locked(&self.groups)
            .values()
            .map(|g| (g.id.clone(), g.state_name()))
            .collect()
    }

    pub fn describe(&self, group_id: &str) -> Option<ShareGroupView> {
        let groups = locked(&self.groups);
        let group = groups.get(group_id)?;
        Some(ShareGroupView {
            group_id: group.id.clone(),
            state: group.state_name(),
            group_epoch: group.group_epoch,
            assignment_epoch: group.assignment_epoch,
            members: group.members.values().cloned().collect(),
        })
    }

    /// DeleteGroups of a share group: only an empty one; its state goes with it.
    pub fn delete_group(&self, group_id: &str) -> Result<(), ShareError> {
        self.delete_states(group_id, |_| true)?;
        locked(&self.groups).remove(group_id);
        locked(&self.sessions).remove_group(group_id);
        Ok(())
    }

    // ---- share-partitions --------------------------------------------------------------

    /// The share-partition of `group` on `tp`, initialized by `share.auto.offset.reset` when
    /// the group has no state for it yet.
    async fn share_partition(
        &self,
        group: &str,
        topic_id: Uuid,
        replica: &Arc<Partition>,
        settings: &ShareSettings,
    ) -> Result<SharedPartition, ShareError> {
        let key = StateKey {
            group: group.to_string(),
            topic_id,
            partition: replica.topic_partition().partition,
        };
        if let Some(existing) = locked(&self.partitions).get(&key) {
            return Ok(existing.clone());
        }
        let start = match settings.offset_reset {
            OffsetReset::Latest => replica.offsets().high_watermark,
            OffsetReset::Earliest => replica.offsets().log_start_offset,
            OffsetReset::ByDuration(ago) => {
                let at = now_ms() - ago.as_millis().min(i64::MAX as u128) as i64;
                match replica.list_offset(at.max(0), false).await {
                    Ok((offset, _)) if offset >= 0 => offset,
                    _ => replica.offsets().high_watermark,
                }
            }
        };
        let mut partitions = locked(&self.partitions);
        Ok(partitions
            .entry(key)
            .or_insert_with(|| {
                let mut created = SharePartition::new(start, 0);
                created.created_ms = now_ms();
                Arc::new(Mutex::new(created))
            })
            .clone())
    }

    fn leader_of(&self, tp: &TopicPartition) -> Result<Arc<Partition>, ShareError> {
        let replica = self
            .replicas
            .get(tp)
            .map_err(|_| ShareError::Group(GroupError::UnknownTopicOrPartition))?;
        if replica.leader_epoch_if_leader().is_none() {
            return Err(ShareError::NotLeaderOrFollower);
        }
        Ok(replica)
    }

    /// Applies acknowledgements of `member` to one share-partition, persisting the result
    /// before it takes effect.
    pub fn acknowledge_partition(
        &self,
        group: &str,
        member: &str,
        target: &SharedTopicPartition,
        batches: &AckBatches,
    ) -> Result<(), ShareError> {
        let key = StateKey {
            group: group.to_string(),
            topic_id: target.topic_id,
            partition: target.tp.partition,
        };
        self.leader_of(&target.tp)?;
        let partition = locked(&self.partitions)
            .get(&key)
            .cloned()
            .ok_or(ShareError::InvalidRecordState)?;
        let settings = self.settings(group);
        let now = Instant::now();
        let mut current = locked(&partition);
        let mut next = current.clone();
        next.expire_locks(now, &settings.limits);
        let mut releases = false;
        for (first, last, types) in batches {
            next.acknowledge(member, *first, *last, types, now, &settings.limits)
                .map_err(|e| match e {
                    AckError::InvalidRecordState => ShareError::InvalidRecordState,
                    AckError::InvalidRequest => ShareError::Group(GroupError::InvalidRequest),
                })?;
            releases |= types.contains(&(partition::AckType::Release as i8));
        }
        self.persist(&key, &next)?;
        *current = next;
        drop(current);
        if releases {
            self.released.notify_waiters();
        }
        Ok(())
    }

    /// Opens, continues or closes a share session for a ShareFetch; on close, what the member
    /// held in the session's partitions is released.
    pub fn fetch_session(
        &self,
        group: &str,
        member: &str,
        epoch: i32,
        added: &[(Uuid, i32)],
        forgotten: &[(Uuid, i32)],
    ) -> Result<SessionUse, ShareError> {
        let used = locked(&self.sessions)
            .fetch(group, member, epoch, added, forgotten)
            .map_err(session_error)?;
        if let SessionUse::Closed(partitions) = &used {
            self.release_in(group, member, partitions);
        }
        Ok(used)
    }

    /// The session step of a ShareAcknowledge.
    pub fn acknowledge_session(
        &self,
        group: &str,
        member: &str,
        epoch: i32,
    ) -> Result<SessionUse, ShareError> {
        locked(&self.sessions)
            .acknowledge(group, member, epoch)
            .map_err(session_error)
    }

    /// Releases what `member` holds in `partitions` (its session closed).
    pub fn release_in(&self, group: &str, member: &str, partitions: &BTreeSet<(Uuid, i32)>) {
        let settings = self.settings(group);
        let mut any = false;
        for &(topic_id, partition) in partitions {
            let key = StateKey {
                group: group.to_string(),
                topic_id,
                partition,
            };
            let Some(shared) = locked(&self.partitions).get(&key).cloned() else {
                continue;
            };
            let mut current = locked(&shared);
            let mut next = current.clone();
            if next.release_member(member, &settings.limits) {
                any = true;
                if self.persist(&key, &next).is_err() {
                    tracing::warn!(group, "share state not written after a session closed");
                }
                *current = next;
            }
        }
        if any {
            self.released.notify_waiters();
        }
    }

    /// Acquires records for `spec.member` from `partitions`, waiting up to `max_wait` for
    /// any (new records, released records, timed-out locks).
    pub async fn fetch(
        &self,
        spec: &FetchSpec,
        partitions: &[SharedTopicPartition],
    ) -> Vec<ShareFetched> {
        let settings = self.settings(&spec.group);
        let deadline = Instant::now() + spec.max_wait;
        loop {
            let appended = Arc::new(Notify::new());
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            let (answers, next_lock) = self
                .fetch_once(spec, partitions, &settings, &appended)
                .await;
            let now = Instant::now();
            if !answers.is_empty() || now >= deadline || partitions.is_empty() {
                return answers;
            }
            let wake = next_lock.map_or(deadline, |l| l.min(deadline));
            tokio::select! {
                _ = appended.notified() => {}
                _ = &mut released => {}
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// One pass over the partitions: what could be acquired, and the earliest lock deadline.
    async fn fetch_once(
        &self,
        spec: &FetchSpec,
        partitions: &[SharedTopicPartition],
        settings: &ShareSettings,
        appended: &Arc<Notify>,
    ) -> (Vec<ShareFetched>, Option<Instant>) {
        let mut answers = Vec::new();
        let mut next_lock: Option<Instant> = None;
        let (mut bytes_total, mut records_total) = (0usize, 0usize);
        for target in partitions {
            let failed = |error: ShareError| ShareFetched {
                topic_id: target.topic_id,
                partition: target.tp.partition,
                error: Some(error),
                records: None,
                acquired: Vec::new(),
            };
            let replica = match self.leader_of(&target.tp) {
                Ok(r) => r,
                Err(e) => {
                    answers.push(failed(e));
                    continue;
                }
            };
            replica.register(appended);
            if records_total >= spec.max_records || bytes_total >= spec.max_bytes {
                continue;
            }
            let shared = match self
                .share_partition(&spec.group, target.topic_id, &replica, settings)
                .await
            {
                Ok(p) => p,
                Err(e) => {
                    answers.push(failed(e));
                    continue;
                }
            };
            let offsets = replica.offsets();
            let from = {
                let mut current = locked(&shared);
                current.skip_to_log_start(offsets.log_start_offset);
                current.expire_locks(Instant::now(), &settings.limits);
                if let Some(d) = current.next_lock_deadline() {
                    next_lock = Some(next_lock.map_or(d, |n| n.min(d)));
                }
                current.next_fetch_offset(&settings.limits)
            };
            let Some(from) = from else { continue };
            let limit = if settings.read_committed {
                offsets.last_stable_offset
            } else {
                offsets.high_watermark
            };
            if from >= limit {
                continue;
            }
            let budget = (spec.max_bytes - bytes_total).min(PARTITION_READ_BYTES);
            let read = {
                let log = lock(replica.log());
                log.read(from, budget, limit, true).map(|read| {
                    read.map(|r| {
                        let aborted = if settings.read_committed {
                            log.aborted_transactions(from, r.next_offset)
                        } else {
                            Vec::new()
                        };
                        (r.records, aborted)
                    })
                })
            };
            let (slice, aborted) = match read {
                Ok(Some(found)) => found,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(partition = %target.tp, error = %e, "share fetch cannot read the log");
                    answers.push(failed(ShareError::Storage));
                    continue;
                }
            };
            let bytes = match slice.read() {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(partition = %target.tp, error = %e, "share fetch cannot read the log");
                    answers.push(failed(ShareError::Storage));
                    continue;
                }
            };
            // (first, last, delivered?) of each batch, and where it sits in `bytes`.
            let mut batches = Vec::new();
            let mut spans = Vec::new();
            let mut iter = BatchIter::new(&bytes);
            let mut at = 0usize;
            for batch in iter.by_ref() {
                let Ok(batch) = batch else { break };
                let (first, last) = (batch.base_offset(), batch.last_offset());
                let aborted_batch = batch.is_transactional()
                    && aborted.iter().any(|t| {
                        t.producer_id == batch.producer_id()
                            && t.first_offset <= first
                            && last <= t.last_offset
                    });
                batches.push((first, last, !batch.is_control() && !aborted_batch));
                spans.push((first, last, at, at + batch.size()));
                at += batch.size();
            }
            let acquired = locked(&shared).acquire_limited(
                from,
                &batches,
                &spec.member,
                Instant::now(),
                partition::RecordLimit {
                    max: spec.max_records - records_total,
                    exact: spec.record_limit,
                },
                &settings.limits,
            );
            if acquired.is_empty() {
                continue;
            }
            let mut kept = BytesMut::new();
            for (first, last, start, end) in spans {
                if acquired
                    .iter()
                    .any(|r| r.first_offset <= last && first <= r.last_offset)
                {
                    kept.extend_from_slice(&bytes[start..end]);
                }
            }
            records_total += acquired
                .iter()
                .map(|r| (r.last_offset - r.first_offset + 1) as usize)
                .sum::<usize>();
            bytes_total += kept.len();
            answers.push(ShareFetched {
                topic_id: target.topic_id,
                partition: target.tp.partition,
                error: None,
                records: Some(kept.freeze()),
                acquired,
            });
        }
        (answers, next_lock)
    }

    // ---- offsets administration -----------------------------------------------------

    /// The start offset and lag (KIP-1226; -1 when unknown) of each share-partition of the
    /// group (-1, -1 for none), for the partitions asked or, with `None`, every one it has
    /// state for.
    pub fn start_offsets(
        &self,
        group_id: &str,
        wanted: Option<Vec<(Uuid, i32)>>,
    ) -> Result<Vec<(Uuid, i32, i64, i64)>, ShareError> {
        if !self.is_share_group(group_id) {
            return Err(ShareError::Group(GroupError::GroupIdNotFound));
        }
        let image = self.metadata.image();
        let partitions = locked(&self.partitions);
        let of = |key: &StateKey| -> (i64, i64) {
            let Some(shared) = partitions.get(key) else {
                return (-1, -1);
            };
            let state = locked(shared);
            let start = state.start_offset();
            let high_watermark = image
                .topic_by_id(key.topic_id)
                .and_then(|t| {
                    self.replicas
                        .get(&TopicPartition::new(&t.name, key.partition))
                        .ok()
                })
                .map(|r| r.offsets().high_watermark);
            let lag = high_watermark.map_or(-1, |hw| {
                (hw - start - state.delivery_complete_count()).max(0)
            });
            (start, lag)
        };
        let key = |topic_id: Uuid, partition: i32| StateKey {
            group: group_id.to_string(),
            topic_id,
            partition,
        };
        Ok(match wanted {
            Some(list) => list
                .into_iter()
                .map(|(t, p)| {
                    let (start, lag) = of(&key(t, p));
                    (t, p, start, lag)
                })
                .collect(),
            None => {
                // The state of a topic deleted since is not listed.
                let mut all: Vec<(Uuid, i32, i64, i64)> = partitions
                    .keys()
                    .filter(|k| k.group == group_id && image.topic_by_id(k.topic_id).is_some())
                    .map(|k| {
                        let (start, lag) = of(k);
                        (k.topic_id, k.partition, start, lag)
                    })
                    .collect();
                all.sort();
                all
            }
        })
    }

    /// AlterShareGroupOffsets: the group (created if new) must have no members; each
    /// share-partition starts over at the offset given, with a new state epoch.
    pub fn alter_start_offset(
        &self,
        group_id: &str,
        topic_id: Uuid,
        partition: i32,
        offset: i64,
    ) -> Result<(), ShareError> {
        {
            let mut groups = locked(&self.groups);
            let group = groups
                .entry(group_id.to_string())
                .or_insert_with(|| ShareGroup::new(group_id));
            if !group.members.is_empty() {
                return Err(ShareError::Group(GroupError::NonEmptyGroup));
            }
        }
        let key = StateKey {
            group: group_id.to_string(),
            topic_id,
            partition,
        };
        let existing = locked(&self.partitions).get(&key).cloned();
        let epoch = existing.as_ref().map_or(0, |p| locked(p).state_epoch + 1);
        let mut next = SharePartition::new(offset, epoch);
        next.created_ms = now_ms();
        self.persist(&key, &next)?;
        match existing {
            Some(shared) => *locked(&shared) = next,
            None => {
                locked(&self.partitions).insert(key, Arc::new(Mutex::new(next)));
            }
        }
        self.released.notify_waiters();
        Ok(())
    }

    /// DeleteShareGroupOffsets: forgets the group's state on every partition of `topic_id`.
    pub fn delete_topic_state(&self, group_id: &str, topic_id: Uuid) -> Result<(), ShareError> {
        self.delete_states(group_id, |key| key.topic_id == topic_id)
    }

    /// Deletes the state of an existing, empty group's share-partitions that `which` picks.
    fn delete_states(
        &self,
        group_id: &str,
        which: impl Fn(&StateKey) -> bool,
    ) -> Result<(), ShareError> {
        {
            let groups = locked(&self.groups);
            let group = groups
                .get(group_id)
                .ok_or(ShareError::Group(GroupError::GroupIdNotFound))?;
            if !group.members.is_empty() {
                return Err(ShareError::Group(GroupError::NonEmptyGroup));
            }
        }
        let keys: Vec<StateKey> = locked(&self.partitions)
            .keys()
            .filter(|k| k.group == group_id && which(k))
            .cloned()
            .collect();
        for key in &keys {
            self.write(key, None)?;
            locked(&self.partitions).remove(key);
        }
        Ok(())
    }

    // ---- persistence ------------------------------------------------------------------

    fn persist(&self, key: &StateKey, partition: &SharePartition) -> Result<(), ShareError> {
        let (start_offset, batches) = partition.snapshot();
        let snapshot = Snapshot {
            snapshot_epoch: 0,
            state_epoch: partition.state_epoch,
            leader_epoch: 0,
            start_offset,
            create_timestamp: partition.created_ms,
            write_timestamp: now_ms(),
            batches,
        };
        self.write(key, Some(snapshot.encode()))
    }

    fn write(&self, key: &StateKey, value: Option<Bytes>) -> Result<(), ShareError> {
        let shard = crate::record::schema::partition_for(
            &key.coordinator_key(),
            self.config.share.state_topic_partitions,
        );
        let tp = TopicPartition::new(SHARE_STATE_TOPIC, shard);
        let partition = self
            .replicas
            .get(&tp)
            .map_err(|_| ShareError::Group(GroupError::CoordinatorNotAvailable))?;
        let encoded_key = key.encode();
        let batch = crate::record::build_batch(&[NewRecord {
            key: Some(&encoded_key),
            value: value.as_deref(),
            timestamp: now_ms(),
        }]);
        crate::record::produced::CheckedBatch::built(batch)
            .map_err(crate::error::Error::from)
            .and_then(|batch| partition.append(&batch, -1))
            .map(|_| ())
            .map_err(|e| {
                tracing::error!(group = key.group, error = %e, "writing to {SHARE_STATE_TOPIC} failed");
                ShareError::Storage
            })
    }
}

fn session_error(e: SessionError) -> ShareError {
    match e {
        SessionError::NotFound => ShareError::ShareSessionNotFound,
        SessionError::InvalidEpoch => ShareError::InvalidShareSessionEpoch,
        SessionError::LimitReached => ShareError::ShareSessionLimitReached,
    }
}
