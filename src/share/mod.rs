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
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the share coordinator: settings, membership and heartbeats, loading and persisting state |
//! | `fetch.rs` | share sessions, ShareFetch and ShareAcknowledge (`SharePartitionManager`) |
//! | `offsets.rs` | Describe/Alter/DeleteShareGroupOffsets |
//! | `group.rs` | a share group's members and the `simple` assignor |
//! | `partition.rs` | one share-partition's state machine (`SharePartition`) |
//! | `session.rs` | the share session cache |
//! | `state.rs` | `__share_group_state` records (Kafka's ShareSnapshot key/value) |

mod fetch;
pub mod group;
mod offsets;
pub mod partition;
pub mod session;
pub mod state;

use crate::config::{BrokerConfig, ShareGroupDefaults, parse_iso_duration};
use crate::error::{GroupError, ShareError};
use crate::metadata::cache::MetadataCache;
use crate::record::NewRecord;
use crate::replica::ReplicaManager;
use crate::types::{TopicPartition, now_ms};
use bytes::Bytes;
use group::{Heartbeat, HeartbeatReply, MembershipError, ShareGroup, Topics};
use partition::{Limits, SharePartition};
use session::SessionCache;
use state::{Snapshot, StateKey};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
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

    // ---- offsets administration -----------------------------------------------------

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
