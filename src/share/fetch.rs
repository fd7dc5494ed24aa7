//! The partition leader's side of share groups (Kafka's `SharePartitionManager`): share
//! sessions, ShareFetch (acknowledgements applied first, then whole batches acquired up to
//! `max_records`, long-polling until records are available, released or their locks time
//! out) and ShareAcknowledge, each state change persisted before it is answered.

use super::partition::{AckError, AcquiredRange, SharePartition};
use super::session::{SessionError, SessionUse};
use super::state::{Snapshot, StateKey};
use super::store::StateOp;
use super::{
    CachedPartition, OffsetReset, ShareCoordinator, ShareSettings, SharedPartition, locked,
    partition,
};
use crate::error::{GroupError, ShareError};
use crate::record::BatchIter;
use crate::replica::Partition;
use crate::storage::manager::lock;
use crate::types::{TopicPartition, now_ms};
use bytes::{Bytes, BytesMut};
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::time::{Duration, Instant};
use uuid::Uuid;

/// Most bytes one share-partition contributes to one ShareFetch response.
const PARTITION_READ_BYTES: usize = 8 << 20;

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

impl ShareCoordinator {
    /// The share-partition of `group` on `tp` as this leader caches it: loaded from the share
    /// coordinator under the current leader epoch, or initialized by `share.auto.offset.reset`
    /// when the group has no state for it yet.
    async fn share_partition(
        &self,
        group: &str,
        topic_id: Uuid,
        replica: &Arc<Partition>,
        settings: &ShareSettings,
    ) -> Result<SharedPartition, ShareError> {
        let leader_epoch = replica
            .leader_epoch_if_leader()
            .ok_or(ShareError::NotLeaderOrFollower)?;
        let key = StateKey {
            group: group.to_string(),
            topic_id,
            partition: replica.topic_partition().partition,
        };
        if let Some(existing) = locked(&self.partitions).get(&key)
            && existing.leader_epoch == leader_epoch
        {
            return Ok(existing.clone());
        }
        let stored = self
            .persister
            .call(&key, StateOp::Read { leader_epoch })
            .await?
            .filter(|s| s.start_offset >= 0);
        let loaded = match stored {
            Some(snapshot) => {
                let mut restored = SharePartition::restore(
                    snapshot.start_offset,
                    snapshot.state_epoch,
                    &snapshot.batches,
                    self.config.share.max_record_locks,
                );
                restored.created_ms = snapshot.create_timestamp;
                restored
            }
            None => {
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
                let mut created = SharePartition::new(start, 0);
                created.created_ms = now_ms();
                // Recorded at once, as Kafka's group coordinator initializes the state when
                // it assigns the partition: the start offset is the group's from now on.
                let snapshot = Snapshot {
                    snapshot_epoch: 0,
                    state_epoch: 0,
                    leader_epoch,
                    start_offset: start,
                    create_timestamp: created.created_ms,
                    write_timestamp: created.created_ms,
                    batches: Vec::new(),
                };
                self.persister.call(&key, StateOp::Write(snapshot)).await?;
                created
            }
        };
        let mut partitions = locked(&self.partitions);
        // Loaded meanwhile by another fetch under this epoch: that copy may hold locks.
        if let Some(existing) = partitions.get(&key)
            && existing.leader_epoch == leader_epoch
        {
            return Ok(existing.clone());
        }
        let cached = Arc::new(CachedPartition {
            leader_epoch,
            state: tokio::sync::Mutex::new(loaded),
        });
        partitions.insert(key, cached.clone());
        Ok(cached)
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
    pub async fn acknowledge_partition(
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
        let replica = self.leader_of(&target.tp)?;
        // Records acquired under another leader epoch were acquired from another leader.
        let partition = locked(&self.partitions)
            .get(&key)
            .filter(|p| Some(p.leader_epoch) == replica.leader_epoch_if_leader())
            .cloned()
            .ok_or(ShareError::InvalidRecordState)?;
        let settings = self.settings(group);
        let now = Instant::now();
        let mut current = partition.state.lock().await;
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
        self.persist(&key, &partition, &next).await?;
        *current = next;
        drop(current);
        if releases {
            self.released.notify_waiters();
        }
        Ok(())
    }

    /// Opens, continues or closes a share session for a ShareFetch; on close, what the member
    /// held in the session's partitions is released.
    pub async fn fetch_session(
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
        match &used {
            SessionUse::Closed(partitions) => self.release_in(group, member, partitions).await,
            // A new session reads the state again where nothing is locked now: it may have
            // been given a new start offset (AlterShareGroupOffsets) meanwhile.
            SessionUse::Open(_) if epoch == 0 => self.refresh_idle(group, added),
            SessionUse::Open(_) => {}
        }
        Ok(used)
    }

    /// Drops the cached share-partitions of `group` among `partitions` that hold no locks.
    fn refresh_idle(&self, group: &str, partitions: &[(Uuid, i32)]) {
        let mut cached = locked(&self.partitions);
        for &(topic_id, partition) in partitions {
            let key = StateKey {
                group: group.to_string(),
                topic_id,
                partition,
            };
            let idle = cached
                .get(&key)
                .and_then(|p| p.state.try_lock().ok().map(|s| !s.holds_acquired()))
                .unwrap_or(false);
            if idle {
                cached.remove(&key);
            }
        }
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
    pub async fn release_in(&self, group: &str, member: &str, partitions: &BTreeSet<(Uuid, i32)>) {
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
            let mut current = shared.state.lock().await;
            let mut next = current.clone();
            if next.release_member(member, &settings.limits) {
                any = true;
                if self.persist(&key, &shared, &next).await.is_err() {
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
            // The long-poll is time spent waiting on others, not handling (request metrics
            // and request quotas count it so).
            crate::stats::requests::remote(async {
                tokio::select! {
                    _ = appended.notified() => {}
                    _ = &mut released => {}
                    _ = tokio::time::sleep_until(wake) => {}
                }
            })
            .await;
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
                let mut current = shared.state.lock().await;
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
            let acquired = shared.state.lock().await.acquire_limited(
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
}

fn session_error(e: SessionError) -> ShareError {
    match e {
        SessionError::NotFound => ShareError::ShareSessionNotFound,
        SessionError::InvalidEpoch => ShareError::InvalidShareSessionEpoch,
        SessionError::LimitReached => ShareError::ShareSessionLimitReached,
    }
}
