//! Share groups (KIP-932), split over three roles as Kafka splits them: the group
//! coordinator (membership and assignment, on the `__consumer_offsets` leader of the group),
//! the partition leader (the share-partitions of the partitions this broker leads: which
//! records each group has delivered, to whom, and how each delivery ended; share sessions),
//! and the share coordinator ([`store`], on the `__share_group_state` leader of each
//! share-partition's key), which the other two reach through the [`persister`] — the state
//! RPCs when it is on another broker.
//!
//! A share-partition's state changes only through a copy that is persisted (answered by the
//! share coordinator once its ISR has it) and then swapped in: a write that fails (a full
//! disk, a share coordinator that did not come back in time) leaves the state as it was, and
//! the acknowledgement is answered with the error. A partition leader loads a share-partition
//! from the share coordinator under its leader epoch; a new leader's read fences the old one.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the group coordinator's side: settings, membership and heartbeats; persisting state |
//! | `fetch.rs` | share sessions, ShareFetch and ShareAcknowledge (`SharePartitionManager`) |
//! | `offsets.rs` | Describe/Alter/DeleteShareGroupOffsets |
//! | `group.rs` | a share group's members and the `simple` assignor |
//! | `group_records.rs` | the share group coordinator's records in `__consumer_offsets` |
//! | `partition.rs` | one share-partition's state machine (`SharePartition`) |
//! | `session.rs` | the share session cache |
//! | `state.rs` | `__share_group_state` records (Kafka's ShareSnapshot key/value) |
//! | `store.rs` | the share coordinator: the states of the `__share_group_state` partitions led here |
//! | `persister.rs` | the way to a share-partition's share coordinator, here or on another broker |

mod fetch;
pub mod group;
pub mod group_records;
mod offsets;
pub mod partition;
pub mod persister;
pub mod session;
pub mod state;
pub mod store;

use crate::config::{BrokerConfig, ShareGroupDefaults, parse_iso_duration};
use crate::error::{GroupError, ShareError};
use crate::metadata::cache::MetadataCache;
use crate::replica::ReplicaManager;
use crate::types::now_ms;
use group::{Heartbeat, HeartbeatReply, MembershipError, ShareGroup, Topics};
use group_records::ShareGroupKey;
use partition::{Limits, SharePartition};
use persister::Persister;
use session::SessionCache;
use state::{Snapshot, StateKey};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use store::{ShareStateStore, StateOp};
use tokio::sync::Notify;
use tokio::time::{Duration, Instant};
use uuid::Uuid;

pub use fetch::{AckBatches, FetchSpec, ShareFetched, SharedTopicPartition};

pub const SHARE_STATE_TOPIC: &str = "__share_group_state";

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
                delivery_count_limit: int(
                    "share.delivery.count.limit",
                    i32::from(defaults.delivery_count_limit),
                )
                .clamp(2, i32::from(i16::MAX)) as i16,
                max_in_flight: int(
                    "share.partition.max.record.locks",
                    i32::try_from(defaults.max_record_locks).unwrap_or(i32::MAX),
                )
                .max(1) as usize,
                lock_duration: Duration::from_millis(int(
                    "share.record.lock.duration.ms",
                    defaults.record_lock_duration_ms,
                ) as u64),
                renew_enabled: get("share.renew.acknowledge.enable")
                    .is_none_or(|v| !v.eq_ignore_ascii_case("false")),
            },
        }
    }
}

/// A share-partition as its leader caches it: loaded from the share coordinator under the
/// partition's leader epoch, which its writes carry.
#[derive(Debug)]
struct CachedPartition {
    leader_epoch: i32,
    state: tokio::sync::Mutex<SharePartition>,
}

type SharedPartition = Arc<CachedPartition>;

/// How long a share coordinator waits for the ISR to take a state record (Kafka's
/// `share.coordinator.write.timeout.ms` default).
const STATE_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

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
    store: Arc<ShareStateStore>,
    persister: Persister,
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
        let store = Arc::new(ShareStateStore::new(
            replicas.clone(),
            config.share.state_topic_partitions,
            STATE_WRITE_TIMEOUT,
        ));
        let persister = Persister::new(
            config.node_id,
            store.clone(),
            metadata.clone(),
            Duration::from_millis(config.cluster.broker_session_timeout_ms.max(0) as u64),
        );
        Arc::new(Self {
            config,
            replicas,
            metadata,
            groups: Mutex::new(HashMap::new()),
            partitions: Mutex::new(HashMap::new()),
            sessions: Mutex::new(sessions),
            released: Notify::new(),
            store,
            persister,
        })
    }

    /// The share coordinator of the `__share_group_state` partitions this broker leads.
    pub fn store(&self) -> &Arc<ShareStateStore> {
        &self.store
    }

    /// Sets the way to other brokers' share coordinators.
    pub fn set_remote(&self, remote: Arc<dyn persister::RemoteState>) {
        self.persister.set_remote(remote);
    }

    pub fn settings(&self, group_id: &str) -> ShareSettings {
        let image = self.metadata.image();
        ShareSettings::resolve(&self.config.share, image.group_configs.get(group_id))
    }

    pub fn is_share_group(&self, group_id: &str) -> bool {
        locked(&self.groups).contains_key(group_id)
    }

    // ---- membership ------------------------------------------------------------------

    pub async fn heartbeat(
        &self,
        group_id: &str,
        request: Heartbeat,
    ) -> Result<(HeartbeatReply, i32), ShareError> {
        let settings = self.settings(group_id);
        let image = self.metadata.image();
        let leaving = (request.member_epoch == -1).then(|| request.member_id.clone());
        let (reply, changed) = {
            let mut groups = locked(&self.groups);
            let created = !groups.contains_key(group_id);
            let group = groups
                .entry(group_id.to_string())
                .or_insert_with(|| ShareGroup::new(group_id));
            let before = (group.group_epoch, group.initialized.len());
            let reply = group
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
                })?;
            group.note_assigned();
            let changed = created || before != (group.group_epoch, group.initialized.len());
            (reply, changed)
        };
        if changed {
            self.write_group(group_id).await;
        }
        if let Some(member) = leaving {
            self.member_gone(group_id, &member).await;
        }
        Ok((reply, settings.heartbeat_interval_ms))
    }

    /// A member left or was fenced: what it holds in the share-partitions led here goes back
    /// to the group (elsewhere, its locks time out, as on Kafka).
    async fn member_gone(&self, group_id: &str, member: &str) {
        locked(&self.sessions).remove_member(group_id, member);
        let settings = self.settings(group_id);
        let held: Vec<(StateKey, SharedPartition)> = locked(&self.partitions)
            .iter()
            .filter(|(k, _)| k.group == group_id)
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        let mut any = false;
        for (key, partition) in held {
            let mut current = partition.state.lock().await;
            let mut next = current.clone();
            if next.release_member(member, &settings.limits) {
                any = true;
                // Only archived records change what is persisted; a failed write leaves the
                // records available in memory, which is what a restart would also give.
                if self.persist(&key, &partition, &next).await.is_err() {
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
    pub async fn expire(&self) {
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
            self.member_gone(&group, &member).await;
        }
        let all: Vec<(StateKey, SharedPartition)> = locked(&self.partitions)
            .iter()
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        let mut any = false;
        for (key, partition) in all {
            // A share-partition busy with a fetch or a write is looked at on the next tick.
            let Ok(mut current) = partition.state.try_lock() else {
                continue;
            };
            if current.next_lock_deadline().is_none_or(|d| d > now) {
                continue;
            }
            let settings = self.settings(&key.group);
            let mut next = current.clone();
            if next.expire_locks(now, &settings.limits) {
                any = true;
                if self.persist(&key, &partition, &next).await.is_err() {
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
                    _ = tick.tick() => this.expire().await,
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
    pub async fn delete_group(&self, group_id: &str) -> Result<(), ShareError> {
        self.delete_states(group_id, |_| true).await?;
        for key in [
            ShareGroupKey::StatePartitions(group_id.to_string()),
            ShareGroupKey::Metadata(group_id.to_string()),
        ] {
            self.append_group_record(&key, None).await?;
        }
        locked(&self.groups).remove(group_id);
        locked(&self.sessions).remove_group(group_id);
        Ok(())
    }

    // ---- the group coordinator's records ------------------------------------------------

    /// The `__consumer_offsets` partition coordinating `group_id`.
    fn offsets_partition_of(&self, group_id: &str) -> i32 {
        crate::record::schema::partition_for(group_id, self.config.offsets_topic_partitions)
    }

    /// Writes `group_id`'s epoch and share-partitions to `__consumer_offsets`. A failure is
    /// logged: members are kept in memory only, and a group whose records are missing is
    /// known again when its members next heartbeat.
    pub(super) async fn write_group(&self, group_id: &str) {
        let Some((epoch, initialized)) = locked(&self.groups)
            .get(group_id)
            .map(|g| (g.group_epoch, g.initialized.clone()))
        else {
            return;
        };
        let image = self.metadata.image();
        let names = |id: Uuid| {
            image
                .topic_by_id(id)
                .map(|t| t.name.to_string())
                .unwrap_or_default()
        };
        let records = [
            (
                ShareGroupKey::Metadata(group_id.to_string()),
                group_records::encode_metadata(epoch),
            ),
            (
                ShareGroupKey::StatePartitions(group_id.to_string()),
                group_records::encode_state_partitions(&initialized, names),
            ),
        ];
        for (key, value) in records {
            if let Err(e) = self.append_group_record(&key, Some(value)).await {
                tracing::warn!(group = group_id, error = %e, "share group record not written");
                return;
            }
        }
    }

    async fn append_group_record(
        &self,
        key: &ShareGroupKey,
        value: Option<bytes::Bytes>,
    ) -> Result<(), ShareError> {
        let tp = crate::types::TopicPartition::new(
            crate::metadata::OFFSETS_TOPIC,
            self.offsets_partition_of(key.group()),
        );
        append_replicated(
            &self.replicas,
            &tp,
            &key.encode(),
            value.as_deref(),
            STATE_WRITE_TIMEOUT,
        )
        .await
        .map_err(|e| match e {
            crate::error::Error::NotLeaderOrFollower => {
                ShareError::Group(GroupError::NotCoordinator)
            }
            _ => ShareError::Group(GroupError::CoordinatorNotAvailable),
        })
    }

    /// This broker now coordinates the groups of `__consumer_offsets` partition `partition`:
    /// its share groups are rebuilt from the log (their epochs and share-partitions; members
    /// join again).
    pub fn elect_groups(&self, partition: i32, log: &crate::storage::manager::SharedLog) {
        let mut epochs: HashMap<String, Option<i32>> = HashMap::new();
        let mut initialized: HashMap<String, Option<BTreeSet<(Uuid, i32)>>> = HashMap::new();
        let replayed = crate::storage::manager::replay_records(log, |replayed| {
            let crate::storage::manager::Replayed::Record {
                key: Some(key),
                value,
                ..
            } = replayed
            else {
                return;
            };
            let Ok(Some(key)) = ShareGroupKey::decode(key) else {
                return;
            };
            match key {
                ShareGroupKey::Metadata(group) => {
                    let epoch = value.map(group_records::decode_metadata);
                    match epoch {
                        Some(Err(e)) => {
                            tracing::warn!(group, error = %e, "skipping an unreadable share group record")
                        }
                        Some(Ok(epoch)) => {
                            epochs.insert(group, Some(epoch));
                        }
                        None => {
                            epochs.insert(group.clone(), None);
                            initialized.insert(group, None);
                        }
                    }
                }
                ShareGroupKey::StatePartitions(group) => {
                    match value.map(group_records::decode_state_partitions) {
                        Some(Err(e)) => {
                            tracing::warn!(group, error = %e, "skipping an unreadable share group record")
                        }
                        Some(Ok(partitions)) => {
                            initialized.insert(group, Some(partitions));
                        }
                        None => {
                            initialized.insert(group, None);
                        }
                    }
                }
            }
        });
        if let Err(e) = replayed {
            tracing::error!(partition, error = %e, "cannot replay share groups");
        }
        let mut groups = locked(&self.groups);
        groups.retain(|id, _| self.offsets_partition_of(id) != partition);
        for (id, epoch) in epochs {
            let Some(epoch) = epoch else { continue };
            let mut group = ShareGroup::new(&id);
            group.group_epoch = epoch;
            group.assignment_epoch = epoch;
            if let Some(Some(partitions)) = initialized.remove(&id) {
                group.initialized = partitions;
            }
            groups.insert(id, group);
        }
    }

    /// This broker no longer coordinates the groups of `partition`.
    pub fn resign_groups(&self, partition: i32) {
        locked(&self.groups).retain(|id, _| self.offsets_partition_of(id) != partition);
    }

    // ---- persistence ------------------------------------------------------------------

    /// Writes `next`, the state `cached` is about to take, to the share coordinator. When it
    /// answers that the state was fenced (another leader read it, or it was initialized
    /// again), the cached copy is dropped, to be loaded afresh by the next fetch.
    async fn persist(
        &self,
        key: &StateKey,
        cached: &SharedPartition,
        next: &SharePartition,
    ) -> Result<(), ShareError> {
        let (start_offset, batches) = next.snapshot();
        let snapshot = Snapshot {
            snapshot_epoch: 0,
            state_epoch: next.state_epoch,
            leader_epoch: cached.leader_epoch,
            start_offset,
            create_timestamp: next.created_ms,
            write_timestamp: now_ms(),
            batches,
        };
        let written = self.persister.call(key, StateOp::Write(snapshot)).await;
        if let Err(ShareError::FencedLeaderEpoch | ShareError::FencedStateEpoch) = written {
            self.forget(key, cached);
        }
        written.map(drop)
    }

    /// Drops `key`'s cached share-partition if it is still `cached`.
    fn forget(&self, key: &StateKey, cached: &SharedPartition) {
        let mut partitions = locked(&self.partitions);
        if partitions.get(key).is_some_and(|p| Arc::ptr_eq(p, cached)) {
            partitions.remove(key);
        }
    }
}

/// Appends one keyed record (`None`: a tombstone) to an internal partition this broker leads
/// and waits until its ISR has it.
async fn append_replicated(
    replicas: &ReplicaManager,
    tp: &crate::types::TopicPartition,
    key: &[u8],
    value: Option<&[u8]>,
    timeout: Duration,
) -> Result<(), crate::error::Error> {
    let partition = replicas
        .get(tp)
        .map_err(|_| crate::error::Error::NotLeaderOrFollower)?;
    let batch = crate::record::build_batch(&[crate::record::NewRecord {
        key: Some(key),
        value,
        timestamp: now_ms(),
    }]);
    let batch = crate::record::produced::CheckedBatch::built(batch)?;
    let info = partition.append(&batch, -1)?;
    partition.complete(&info, -1, timeout).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_groups_configs_set_its_share_partition_limits() {
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let defaults = ShareSettings::resolve(&broker.share, None);
        assert_eq!(
            (
                defaults.limits.delivery_count_limit,
                defaults.limits.max_in_flight,
                defaults.limits.renew_enabled
            ),
            (5, 2000, true)
        );
        let overrides: BTreeMap<String, String> = [
            ("share.delivery.count.limit", "2"),
            ("share.partition.max.record.locks", "150"),
            ("share.renew.acknowledge.enable", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let group = ShareSettings::resolve(&broker.share, Some(&overrides));
        assert_eq!(
            (
                group.limits.delivery_count_limit,
                group.limits.max_in_flight,
                group.limits.renew_enabled
            ),
            (2, 150, false)
        );
    }
}
