//! The share coordinator proper (Kafka's `ShareCoordinatorShard`): the persisted state of
//! every share-partition whose key falls on a `__share_group_state` partition this broker
//! leads. Partition leaders reach it through Read/Write/Initialize/Delete ShareGroupState and
//! ReadShareGroupStateSummary (RPCs 83–87, [`StateOp`]), locally or from another broker.
//!
//! Elected for a partition of `__share_group_state`, its snapshots are replayed into memory
//! (requests for its keys answer COORDINATOR_LOAD_IN_PROGRESS meanwhile); resigned, they are
//! dropped. Every change is one `ShareSnapshot` record, answered once the partition's ISR has
//! it (`acks=all`), so the next leader of the partition holds every state that was answered.
//!
//! Fencing as Kafka's: a write or read carrying an older leader epoch than the state's answers
//! FENCED_LEADER_EPOCH (a partition leader that was replaced), and a write of an older state
//! epoch FENCED_STATE_EPOCH (the state was initialized again by AlterShareGroupOffsets). A read
//! with a newer leader epoch records it, so the replaced leader's later writes are refused.
//!
//! One departure: Kafka's shard merges a write's batches into the state it holds, and keeps
//! `ShareUpdate` deltas between snapshots. Sluice's partition leaders always write the whole
//! state, which the shard takes as it is, as one snapshot (compaction keeps one per key).

use super::state::{Snapshot, StateKey};
use super::{SHARE_STATE_TOPIC, locked};
use crate::error::{GroupError, ShareError};
use crate::replica::ReplicaManager;
use crate::storage::manager::SharedLog;
use crate::types::{TopicPartition, now_ms};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a partition leader or the group coordinator asks of the share coordinator for one
/// share-partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateOp {
    /// ReadShareGroupState: the state, by the partition's leader at `leader_epoch`.
    Read { leader_epoch: i32 },
    /// WriteShareGroupState: the whole state (its state and leader epochs included).
    Write(Snapshot),
    /// InitializeShareGroupState: start over at `start_offset` with `state_epoch`.
    Initialize { state_epoch: i32, start_offset: i64 },
    /// DeleteShareGroupState.
    Delete,
    /// ReadShareGroupStateSummary: the state, without fencing anyone.
    Summary,
}

/// The answer to a [`StateOp`]: the state for reads (`None`: never initialized), nothing for
/// changes.
pub type StateReply = Option<Snapshot>;

#[derive(Debug, Default)]
struct Shard {
    states: HashMap<StateKey, Snapshot>,
}

type SharedShard = Arc<tokio::sync::Mutex<Shard>>;

#[derive(Debug)]
pub struct ShareStateStore {
    replicas: Arc<ReplicaManager>,
    /// `share.coordinator.state.topic.num.partitions`.
    partitions: i32,
    /// How long a state record waits for the ISR.
    write_timeout: Duration,
    shards: Mutex<HashMap<i32, SharedShard>>,
    loading: Mutex<HashSet<i32>>,
}

impl ShareStateStore {
    pub fn new(replicas: Arc<ReplicaManager>, partitions: i32, write_timeout: Duration) -> Self {
        Self {
            replicas,
            partitions,
            write_timeout,
            shards: Mutex::new(HashMap::new()),
            loading: Mutex::new(HashSet::new()),
        }
    }

    /// The partition of `__share_group_state` holding `key`'s state.
    pub fn shard_of(&self, key: &StateKey) -> i32 {
        self.shard_of_coordinator_key(&key.coordinator_key())
    }

    /// The partition of `__share_group_state` for a `group:topicId:partition` key.
    pub fn shard_of_coordinator_key(&self, key: &str) -> i32 {
        crate::record::schema::partition_for(key, self.partitions)
    }

    /// Marks `partition` as loading before this broker starts leading it.
    pub fn begin_loading(&self, partition: i32) {
        locked(&self.loading).insert(partition);
    }

    /// This broker now leads `partition`: its states are replayed from the log.
    pub fn elect(&self, partition: i32, log: &SharedLog) -> usize {
        locked(&self.loading).insert(partition);
        let mut states: HashMap<StateKey, Snapshot> = HashMap::new();
        let replayed = crate::storage::manager::replay_records(log, |replayed| {
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
                        states.insert(key, snapshot);
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "skipping an unreadable {SHARE_STATE_TOPIC} record")
                    }
                    None => {
                        states.remove(&key);
                    }
                },
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "skipping an unreadable {SHARE_STATE_TOPIC} key")
                }
            }
        });
        let records = match replayed {
            Ok(n) => n,
            Err(e) => {
                // What was read is kept: a state it lacks is read as uninitialized, which
                // `share.auto.offset.reset` answers, rather than the partition going unserved.
                tracing::error!(partition, error = %e, "cannot replay share group state");
                0
            }
        };
        let count = states.len();
        locked(&self.shards).insert(
            partition,
            Arc::new(tokio::sync::Mutex::new(Shard { states })),
        );
        locked(&self.loading).remove(&partition);
        if records > 0 {
            tracing::info!(
                partition,
                records,
                share_partitions = count,
                "loaded share group state"
            );
        }
        records
    }

    /// This broker no longer leads `partition`: its states are dropped here.
    pub fn resign(&self, partition: i32) {
        locked(&self.shards).remove(&partition);
        locked(&self.loading).remove(&partition);
    }

    /// Applies `op` to `key`'s state, which must be on a partition this broker leads.
    pub async fn apply(&self, key: &StateKey, op: StateOp) -> Result<StateReply, ShareError> {
        let shard_id = self.shard_of(key);
        if locked(&self.loading).contains(&shard_id) {
            return Err(ShareError::Group(GroupError::CoordinatorLoadInProgress));
        }
        let shard = locked(&self.shards)
            .get(&shard_id)
            .cloned()
            .ok_or(ShareError::Group(GroupError::NotCoordinator))?;
        let mut shard = shard.lock().await;
        let current = shard.states.get(key);
        match op {
            StateOp::Summary => Ok(current.cloned()),
            StateOp::Read { leader_epoch } => {
                let Some(current) = current else {
                    return Ok(None);
                };
                if leader_epoch < current.leader_epoch {
                    return Err(ShareError::FencedLeaderEpoch);
                }
                if leader_epoch > current.leader_epoch {
                    // The new leader's epoch is recorded first: the one it replaced can no
                    // longer write over what it reads now.
                    let mut fenced = current.clone();
                    fenced.leader_epoch = leader_epoch;
                    fenced.write_timestamp = now_ms();
                    self.append(shard_id, key, Some(&fenced)).await?;
                    shard.states.insert(key.clone(), fenced);
                }
                Ok(shard.states.get(key).cloned())
            }
            StateOp::Write(mut snapshot) => {
                if let Some(current) = current {
                    if snapshot.leader_epoch < current.leader_epoch {
                        return Err(ShareError::FencedLeaderEpoch);
                    }
                    if snapshot.state_epoch < current.state_epoch {
                        return Err(ShareError::FencedStateEpoch);
                    }
                    snapshot.create_timestamp = current.create_timestamp;
                    snapshot.snapshot_epoch = current.snapshot_epoch + 1;
                }
                snapshot.write_timestamp = now_ms();
                self.append(shard_id, key, Some(&snapshot)).await?;
                shard.states.insert(key.clone(), snapshot);
                Ok(None)
            }
            StateOp::Initialize {
                state_epoch,
                start_offset,
            } => {
                if current.is_some_and(|c| state_epoch <= c.state_epoch) {
                    return Err(ShareError::FencedStateEpoch);
                }
                let now = now_ms();
                let snapshot = Snapshot {
                    snapshot_epoch: current.map_or(0, |c| c.snapshot_epoch + 1),
                    state_epoch,
                    // Whoever leads the partition keeps leading it; its cached state is
                    // fenced by the state epoch instead.
                    leader_epoch: current.map_or(-1, |c| c.leader_epoch),
                    start_offset,
                    create_timestamp: now,
                    write_timestamp: now,
                    batches: Vec::new(),
                };
                self.append(shard_id, key, Some(&snapshot)).await?;
                shard.states.insert(key.clone(), snapshot);
                Ok(None)
            }
            StateOp::Delete => {
                if current.is_some() {
                    self.append(shard_id, key, None).await?;
                    shard.states.remove(key);
                }
                Ok(None)
            }
        }
    }

    /// Writes `key`'s snapshot (`None`: a tombstone) and waits for the ISR.
    async fn append(
        &self,
        shard: i32,
        key: &StateKey,
        snapshot: Option<&Snapshot>,
    ) -> Result<(), ShareError> {
        let tp = TopicPartition::new(SHARE_STATE_TOPIC, shard);
        let value = snapshot.map(Snapshot::encode);
        super::append_replicated(
            &self.replicas,
            &tp,
            &key.encode(),
            value.as_deref(),
            self.write_timeout,
        )
        .await
        .map_err(|e| {
            tracing::warn!(group = key.group, error = %e, "writing to {SHARE_STATE_TOPIC} failed");
            match e {
                crate::error::Error::NotLeaderOrFollower => {
                    ShareError::Group(GroupError::NotCoordinator)
                }
                crate::error::Error::NotEnoughReplicas { .. }
                | crate::error::Error::NotEnoughReplicasAfterAppend { .. }
                | crate::error::Error::RequestTimedOut => {
                    ShareError::Group(GroupError::CoordinatorNotAvailable)
                }
                _ => ShareError::Storage,
            }
        })
    }
}
