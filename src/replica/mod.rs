//! Partitions this broker hosts and the two hot paths over them: append (with acks) and fetch
//! (with the `min_bytes`/`max_wait_ms` long-poll). Kafka's `ReplicaManager` + `Partition` +
//! the delayed-fetch purgatory. A leader tracks its followers' progress (from their fetches),
//! keeps the high watermark at the smallest log end in the ISR, knows which followers should
//! leave or join the ISR, and holds acks=all appends until the ISR has them; `fetcher.rs` is
//! the follower side.
//!
//! Departure: for the `min.insync.replicas` check of an acks=all append, the leader counts
//! only ISR members caught up within `replica.lag.time.max.ms`, not the ISR as last
//! committed: with combined nodes, losing two of three also loses the controller quorum, and
//! the ISR could then never shrink in the metadata (Kafka would time the writes out).
//!
//! Long-poll: a waiting fetch registers one `Notify` with every partition it reads; each
//! append wakes the registered waiters, which re-read and either answer or wait again until
//! their deadline. No timer polls for data.

pub mod alter_partition;
pub mod fetch_session;
pub mod fetcher;
pub mod list_offsets;
pub mod produce;

use crate::error::Error;
use crate::record;
use crate::storage::log::AppendInfo;
use crate::storage::manager::{SharedLog, lock};
use crate::storage::segment::{FileSlice, SegmentRead};
pub use crate::storage::txn_index::AbortedTxn;
use crate::types::{TopicPartition, now_ms};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

/// One producer's state on a partition (DescribeProducers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveProducer {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub last_timestamp: i64,
    pub coordinator_epoch: i32,
    /// -1 when no transaction is open.
    pub current_txn_start_offset: i64,
}

/// This broker's part in a partition as the metadata image describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leadership {
    /// The leader's broker id, or -1 when no replica can lead.
    pub leader: i32,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// Preferred replica first.
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
}

/// What the leader knows of one follower (Kafka's `Replica` state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowerProgress {
    /// The follower's log end offset (its last fetch offset); -1 before its first fetch.
    pub log_end_offset: i64,
    /// When the follower last had everything the leader had (Kafka's `lastCaughtUpTimeMs`).
    pub last_caught_up_ms: i64,
    last_fetch_ms: i64,
    /// The leader's log end offset when the follower last fetched.
    last_fetch_leader_end: i64,
}

#[derive(Debug)]
pub struct Partition {
    tp: TopicPartition,
    topic_id: Uuid,
    /// This broker.
    node_id: i32,
    log: SharedLog,
    /// `None` until the metadata says who leads.
    leadership: RwLock<Option<Leadership>>,
    /// While leading: each follower's progress.
    followers: Mutex<HashMap<i32, FollowerProgress>>,
    /// The high watermark, for acks=all appends waiting for replication.
    committed: tokio::sync::watch::Sender<i64>,
    /// `replica.lag.time.max.ms`: a follower not caught up for this long does not count
    /// toward `min.insync.replicas`, even before the controller has shrunk the ISR.
    lag_time_ms: std::sync::atomic::AtomicI64,
    /// Fetches waiting for data here. Weak: a finished fetch leaves only a dead pointer,
    /// pruned on the next registration or append.
    waiters: Mutex<Vec<Weak<Notify>>>,
    /// One fsync at a time per log; appenders queued here share the next one (group commit).
    /// A tokio mutex because it is held across the awaited fsync.
    flush_turn: tokio::sync::Mutex<()>,
    /// KIP-890 verification guards: per producer id, the guard of the latest verification of
    /// a batch that would begin a transaction here. A marker for the producer clears it, so a
    /// batch verified before its transaction was ended cannot start one after it.
    verifications: Mutex<HashMap<i64, u64>>,
    next_guard: std::sync::atomic::AtomicU64,
}

impl Partition {
    pub fn new(tp: TopicPartition, topic_id: Uuid, node_id: i32, log: SharedLog) -> Self {
        Self {
            tp,
            topic_id,
            node_id,
            log,
            leadership: RwLock::new(None),
            followers: Mutex::new(HashMap::new()),
            committed: tokio::sync::watch::channel(0).0,
            lag_time_ms: std::sync::atomic::AtomicI64::new(30_000),
            waiters: Mutex::new(Vec::new()),
            flush_turn: tokio::sync::Mutex::new(()),
            verifications: Mutex::new(HashMap::new()),
            next_guard: std::sync::atomic::AtomicU64::new(1),
        }
    }

    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }
    pub fn topic_id(&self) -> Uuid {
        self.topic_id
    }
    pub fn log(&self) -> &SharedLog {
        &self.log
    }

    /// A partition this broker (node 1) leads alone, for tests of what sits above.
    #[cfg(test)]
    pub fn leader_for_test(tp: TopicPartition, topic_id: Uuid, log: SharedLog) -> Self {
        let partition = Self::new(tp, topic_id, 1, log);
        partition.set_leadership(Leadership {
            leader: 1,
            leader_epoch: 0,
            partition_epoch: 0,
            replicas: vec![1],
            isr: vec![1],
        });
        partition
    }

    /// Sets `replica.lag.time.max.ms` for this partition.
    pub fn set_lag_time_ms(&self, lag_ms: i64) {
        self.lag_time_ms.store(lag_ms, Ordering::Relaxed);
    }

    /// ISR members this leader knows to be in sync: itself, and followers caught up within
    /// the lag time. When the controller cannot be reached to shrink the ISR (two of three
    /// combined nodes gone take the quorum with them), acks=all is still refused rather than
    /// accepted without the replicas `min.insync.replicas` asks for.
    fn live_isr_size(&self, leadership: &Leadership) -> i32 {
        let lag = self.lag_time_ms.load(Ordering::Relaxed);
        let now = now_ms();
        let followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
        leadership
            .isr
            .iter()
            .filter(|r| {
                **r == self.node_id
                    || followers
                        .get(r)
                        .is_some_and(|f| now - f.last_caught_up_ms <= lag)
            })
            .count() as i32
    }

    pub fn leadership(&self) -> Option<Leadership> {
        self.leadership
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The leader epoch while this broker leads the partition.
    pub fn leader_epoch_if_leader(&self) -> Option<i32> {
        self.leadership
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|l| l.leader == self.node_id)
            .map(|l| l.leader_epoch)
    }

    /// Takes the partition's new state from the metadata: leader or follower, its epoch,
    /// replicas and ISR. A log with other replicas has its high watermark set by
    /// replication; one without commits what it writes.
    pub fn set_leadership(&self, leadership: Leadership) {
        lock(&self.log).set_replicated(leadership.replicas.len() > 1);
        let previous = self
            .leadership
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace(leadership.clone());
        if leadership.leader == self.node_id {
            let new_term = previous.as_ref().is_none_or(|p| {
                p.leader != self.node_id || p.leader_epoch != leadership.leader_epoch
            });
            let now = now_ms();
            let mut followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
            if new_term {
                // A new leader knows nothing of its followers yet; those in sync count as
                // caught up now (Kafka's reset on becoming leader).
                followers.clear();
            }
            followers.retain(|id, _| leadership.replicas.contains(id));
            for replica in leadership.replicas.iter().filter(|r| **r != self.node_id) {
                followers.entry(*replica).or_insert(FollowerProgress {
                    log_end_offset: -1,
                    last_caught_up_ms: if leadership.isr.contains(replica) {
                        now
                    } else {
                        0
                    },
                    last_fetch_ms: 0,
                    last_fetch_leader_end: -1,
                });
            }
            drop(followers);
            self.maybe_increment_high_watermark();
        } else {
            self.followers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
        }
        // Waiting fetches and appends re-check: they may have to answer
        // NOT_LEADER_OR_FOLLOWER now.
        self.wake_waiters();
        self.committed.send_modify(|_| {});
    }

    /// The leader's high watermark: the smallest log end offset in the ISR (Kafka's
    /// `maybeIncrementLeaderHW`). It only moves forward while this broker leads.
    fn maybe_increment_high_watermark(&self) {
        let Some(leadership) = self.leadership() else {
            return;
        };
        if leadership.leader != self.node_id {
            return;
        }
        let advanced = {
            let followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
            let mut log = lock(&self.log);
            let mut low = log.log_end_offset();
            for member in leadership.isr.iter().filter(|r| **r != self.node_id) {
                match followers.get(member) {
                    Some(f) if f.log_end_offset >= 0 => low = low.min(f.log_end_offset),
                    // A member not heard from since this leader took over holds it back.
                    _ => low = low.min(log.high_watermark()),
                }
            }
            if low > log.high_watermark() {
                log.set_high_watermark(low);
                Some(log.high_watermark())
            } else {
                None
            }
        };
        if let Some(high_watermark) = advanced {
            self.committed.send_replace(high_watermark);
            self.wake_waiters();
        }
    }

    /// A follower fetched from `fetch_offset` (its log end): records its progress (Kafka's
    /// `updateFollowerFetchState`) and moves the high watermark. Returns whether the follower
    /// is out of the ISR but has caught up to the high watermark (to be added back).
    pub fn record_follower_fetch(&self, follower: i32, fetch_offset: i64) -> Result<bool, Error> {
        let now = now_ms();
        let leader_end = lock(&self.log).log_end_offset();
        {
            let mut followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
            let progress = followers
                .get_mut(&follower)
                .ok_or(Error::NotLeaderOrFollower)?;
            if fetch_offset >= leader_end {
                progress.last_caught_up_ms = now;
            } else if fetch_offset >= progress.last_fetch_leader_end {
                progress.last_caught_up_ms = progress.last_caught_up_ms.max(progress.last_fetch_ms);
            }
            progress.log_end_offset = fetch_offset;
            progress.last_fetch_ms = now;
            progress.last_fetch_leader_end = leader_end;
        }
        self.maybe_increment_high_watermark();
        let leadership = self.leadership().ok_or(Error::NotLeaderOrFollower)?;
        let high_watermark = lock(&self.log).high_watermark();
        Ok(!leadership.isr.contains(&follower) && fetch_offset >= high_watermark)
    }

    /// The ISR this leader should have: members that fell behind for `lag_ms` leave, and
    /// followers caught up to the high watermark join (Kafka's `maybeShrinkIsr` /
    /// `maybeExpandIsr`). `None` when nothing would change.
    pub fn wanted_isr(&self, now_ms: i64, lag_ms: i64) -> Option<(Leadership, Vec<i32>)> {
        let leadership = self.leadership()?;
        if leadership.leader != self.node_id {
            return None;
        }
        let high_watermark = lock(&self.log).high_watermark();
        let followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
        let mut isr: Vec<i32> = leadership
            .replicas
            .iter()
            .copied()
            .filter(|r| {
                if *r == self.node_id {
                    return true;
                }
                let Some(f) = followers.get(r) else {
                    return false;
                };
                if leadership.isr.contains(r) {
                    now_ms - f.last_caught_up_ms <= lag_ms
                } else {
                    f.log_end_offset >= high_watermark && f.log_end_offset >= 0
                }
            })
            .collect();
        isr.dedup();
        (isr != leadership.isr).then_some((leadership, isr))
    }

    /// Waits until everything below `offset` is replicated to the ISR (acks=all), then
    /// checks the ISR still meets `min.insync.replicas`.
    pub async fn wait_for_replication(&self, offset: i64, timeout: Duration) -> Result<(), Error> {
        if !lock(&self.log).is_replicated() {
            return Ok(());
        }
        let mut committed = self.committed.subscribe();
        let reached = tokio::time::timeout(
            timeout,
            committed.wait_for(|_| {
                lock(&self.log).high_watermark() >= offset
                    || self.leader_epoch_if_leader().is_none()
            }),
        )
        .await;
        if reached.is_err() {
            return Err(Error::RequestTimedOut);
        }
        let leadership = self.leadership().ok_or(Error::NotLeaderOrFollower)?;
        if leadership.leader != self.node_id {
            return Err(Error::NotLeaderOrFollower);
        }
        let required = lock(&self.log).config().min_insync_replicas;
        if (leadership.isr.len() as i32) < required {
            return Err(Error::NotEnoughReplicasAfterAppend {
                isr: leadership.isr.len() as i32,
                required,
            });
        }
        Ok(())
    }

    /// Progress of each follower (tests, DescribeQuorum-style diagnostics).
    pub fn follower_progress(&self) -> HashMap<i32, FollowerProgress> {
        self.followers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Kafka's check of a request's current leader epoch against this leader's: -1 skips
    /// it; an older one is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
    pub fn check_leader_epoch(&self, requested: i32) -> Result<i32, Error> {
        let current = self
            .leader_epoch_if_leader()
            .ok_or(Error::NotLeaderOrFollower)?;
        match requested {
            -1 => Ok(current),
            r if r < current => Err(Error::FencedLeaderEpoch { got: r, current }),
            r if r > current => Err(Error::UnknownLeaderEpoch(r)),
            _ => Ok(current),
        }
    }

    /// OffsetForLeaderEpoch on the leader (Kafka's `lastOffsetForLeaderEpoch`): after the
    /// request's current leader epoch is checked, the largest epoch at or below `epoch` and
    /// where it ends in this log; (-1, -1) when the log knows no such epoch.
    pub fn end_offset_for_epoch(
        &self,
        current_leader_epoch: i32,
        epoch: i32,
    ) -> Result<(i32, i64), Error> {
        self.check_leader_epoch(current_leader_epoch)?;
        Ok(lock(&self.log).end_offset_for_epoch(epoch))
    }

    pub(crate) fn register(&self, waiter: &Arc<Notify>) {
        let mut waiters = self.waiters.lock().unwrap_or_else(|p| p.into_inner());
        waiters.retain(|w| w.strong_count() > 0);
        // A fetch naming the partition many times registers once: the list stays as long as
        // the fetches waiting, not as the partitions they name (a 1,000,000-partition fetch
        // of four partitions was quadratic here: 60 s).
        if !waiters
            .iter()
            .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(waiter)))
        {
            waiters.push(Arc::downgrade(waiter));
        }
    }

    fn wake_waiters(&self) {
        let waiters = std::mem::take(&mut *self.waiters.lock().unwrap_or_else(|p| p.into_inner()));
        for waiter in waiters.iter().filter_map(Weak::upgrade) {
            waiter.notify_one();
        }
    }

    /// Validates and appends the records of one produce partition.
    /// KIP-890: a verification guard if a transactional batch of `producer_id` would begin a
    /// transaction here (its coordinator must confirm the partition is in it), `None` if the
    /// producer's transaction is already open on this partition.
    pub fn start_transaction_verification(&self, producer_id: i64) -> Option<u64> {
        let log = lock(&self.log);
        if log
            .producer_state()
            .entry(producer_id)
            .is_some_and(|e| e.txn_first_offset.is_some())
        {
            return None;
        }
        let guard = self.next_guard.fetch_add(1, Ordering::Relaxed);
        self.verifications
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(producer_id, guard);
        Some(guard)
    }

    /// Drops `guard` if it is still `producer_id`'s (its verification was refused).
    pub fn forget_verification(&self, producer_id: i64, guard: u64) {
        let mut verifications = self.verifications.lock().unwrap_or_else(|p| p.into_inner());
        if verifications.get(&producer_id) == Some(&guard) {
            verifications.remove(&producer_id);
        }
    }

    /// Drops `producer_id`'s verification guard (used, or ended by a marker); returns it.
    pub fn take_verification(&self, producer_id: i64) -> Option<u64> {
        self.verifications
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&producer_id)
    }

    pub fn append(&self, records: &[u8], acks: i16) -> Result<AppendInfo, Error> {
        self.append_verified(records, acks, None)
    }

    /// Appends a produced batch; `verified` (producer id, guard) for a transactional batch its
    /// coordinator confirmed: unless the producer's transaction is open here already, the
    /// guard must still be the producer's (no marker ended the transaction meanwhile).
    pub fn append_verified(
        &self,
        records: &[u8],
        acks: i16,
        verified: Option<(i64, u64)>,
    ) -> Result<AppendInfo, Error> {
        self.append_inner(records, acks, verified, None)
    }

    /// Appends a client's batch that [`Partition::check_produced`] validated record by record;
    /// its header gets the true maximum timestamp the check found.
    pub fn append_checked(
        &self,
        batch: &produce::CheckedBatch,
        acks: i16,
        verified: Option<(i64, u64)>,
    ) -> Result<AppendInfo, Error> {
        self.append_inner(batch.bytes(), acks, verified, Some(batch.max_timestamp()))
    }

    /// `max_timestamp` is set for a batch checked already; others get the header checks here.
    fn append_inner(
        &self,
        records: &[u8],
        acks: i16,
        verified: Option<(i64, u64)>,
        max_timestamp: Option<i64>,
    ) -> Result<AppendInfo, Error> {
        let leadership = match self.leadership() {
            Some(l) if l.leader == self.node_id => l,
            _ => return Err(Error::NotLeaderOrFollower),
        };
        let leader_epoch = leadership.leader_epoch;
        let isr_size = if acks == -1 {
            self.live_isr_size(&leadership)
        } else {
            leadership.isr.len() as i32
        };
        let info = {
            let mut log = lock(&self.log);
            let config = log.config();
            if max_timestamp.is_none() {
                record::validate_produced(records, config.max_message_bytes)?;
            }
            if acks == -1 && config.min_insync_replicas > isr_size {
                return Err(Error::NotEnoughReplicas {
                    isr: isr_size,
                    required: config.min_insync_replicas,
                });
            }
            if let Some((producer_id, guard)) = verified {
                let open = log
                    .producer_state()
                    .entry(producer_id)
                    .is_some_and(|e| e.txn_first_offset.is_some());
                // Used once: after this append the open transaction is what counts.
                let current = self.take_verification(producer_id);
                if !open && current != Some(guard) {
                    return Err(Error::NotInTransaction);
                }
            }
            log.append_validated(records, leader_epoch, now_ms(), max_timestamp)?
        };
        // With only this replica in sync, the write is committed at once.
        self.maybe_increment_high_watermark();
        self.wake_waiters();
        Ok(info)
    }

    /// The producers active on this partition, as its leader knows them (DescribeProducers).
    pub fn active_producers(&self) -> Result<Vec<ActiveProducer>, Error> {
        self.leader_epoch_if_leader()
            .ok_or(Error::NotLeaderOrFollower)?;
        let log = lock(&self.log);
        let mut producers: Vec<ActiveProducer> = log
            .producer_state()
            .producers()
            .map(|(producer_id, entry)| ActiveProducer {
                producer_id,
                producer_epoch: entry.epoch,
                last_sequence: entry.last_sequence(),
                last_timestamp: entry.last_timestamp,
                coordinator_epoch: entry.coordinator_epoch,
                current_txn_start_offset: entry.txn_first_offset.unwrap_or(-1),
            })
            .collect();
        producers.sort_by_key(|p| p.producer_id);
        Ok(producers)
    }

    /// Writes a transaction marker as leader (WriteTxnMarkers). Like acks=all data, the
    /// caller then waits for replication before answering.
    pub fn append_marker(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        marker: crate::record::control::Marker,
    ) -> Result<AppendInfo, Error> {
        let leader_epoch = self
            .leader_epoch_if_leader()
            .ok_or(Error::NotLeaderOrFollower)?;
        let info = {
            let mut log = lock(&self.log);
            let info =
                log.append_marker(producer_id, producer_epoch, marker, leader_epoch, now_ms())?;
            // Under the log lock: a verified append either precedes the marker or sees this.
            self.take_verification(producer_id);
            info
        };
        self.maybe_increment_high_watermark();
        self.wake_waiters();
        Ok(info)
    }

    /// Waits until everything below `offset` is fsynced. Whoever holds the turn syncs all
    /// that was appended so far; those queued behind usually find their data already covered.
    pub async fn flush_to(&self, offset: i64) -> Result<(), Error> {
        let _turn = self.flush_turn.lock().await;
        let job = {
            let mut log = lock(&self.log);
            if log.recovery_point() >= offset {
                return Ok(());
            }
            log.prepare_flush(now_ms())?
        };
        let Some(job) = job else {
            return Ok(());
        };
        let (job, synced) = tokio::task::spawn_blocking(move || {
            let synced = job.sync();
            (job, synced)
        })
        .await
        .map_err(|e| {
            Error::Storage(crate::storage::StorageError::Io(std::io::Error::other(
                e.to_string(),
            )))
        })?;
        lock(&self.log).complete_flush(&job, synced)?;
        Ok(())
    }

    /// Offsets a fetch response reports alongside the data.
    pub fn offsets(&self) -> PartitionOffsets {
        let log = lock(&self.log);
        PartitionOffsets {
            log_start_offset: log.log_start_offset(),
            high_watermark: log.high_watermark(),
            last_stable_offset: log.last_stable_offset(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionOffsets {
    pub log_start_offset: i64,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
}

/// One partition of a fetch request.
#[derive(Debug, Clone)]
pub struct FetchRequestPartition {
    pub tp: TopicPartition,
    /// The consumer's view of the leader epoch (-1: not checked).
    pub current_leader_epoch: i32,
    /// A follower's broker id; -1 for consumers.
    pub replica_id: i32,
    /// A follower's latest epoch (-1: none), to detect a log diverging from the leader's.
    pub last_fetched_epoch: i32,
    pub fetch_offset: i64,
    pub partition_max_bytes: usize,
    /// A consumer reading only committed transactions: up to the last stable offset.
    pub read_committed: bool,
}

/// The answer for one partition.
#[derive(Debug)]
pub struct FetchedPartition {
    /// Where the batches are; the caller copies or sends them after the log's lock is gone.
    pub result: Result<Option<FileSlice>, Error>,
    pub offsets: Option<PartitionOffsets>,
    /// For a follower whose log diverged: the epoch and offset to truncate to.
    pub diverging_epoch: Option<(i32, i64)>,
    /// For read_committed: the transactions aborted within the records returned.
    pub aborted: Vec<AbortedTxn>,
}

impl FetchedPartition {
    /// An answer that is only an error.
    pub fn failed(error: Error) -> Self {
        Self {
            result: Err(error),
            offsets: None,
            diverging_epoch: None,
            aborted: Vec::new(),
        }
    }
}

/// Limits of one fetch request.
#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    pub min_bytes: usize,
    pub max_bytes: usize,
    pub max_wait: Duration,
}

#[derive(Debug, Default)]
pub struct ReplicaManager {
    partitions: RwLock<HashMap<TopicPartition, Arc<Partition>>>,
    /// Woken when a follower out of the ISR catches up: the ISR task adds it back.
    isr_candidates: Notify,
    /// Set at shutdown: waiting fetches answer with what they have instead of waiting on.
    closing: AtomicBool,
}

impl ReplicaManager {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&self, partition: Partition) -> Arc<Partition> {
        let partition = Arc::new(partition);
        self.partitions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(partition.tp.clone(), partition.clone());
        partition
    }

    /// Ends every long-poll now (graceful shutdown: in-flight fetches answer at once).
    pub fn begin_shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let partitions: Vec<Arc<Partition>> = self
            .partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for partition in partitions {
            partition.wake_waiters();
        }
    }

    pub fn remove(&self, tp: &TopicPartition) -> Option<Arc<Partition>> {
        let removed = self
            .partitions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        if let Some(partition) = &removed {
            // Waiting fetches re-check and find the partition gone.
            partition.wake_waiters();
        }
        removed
    }

    /// Waits until a follower out of the ISR has caught up (or the caller's timer fires).
    pub async fn isr_candidate(&self) {
        self.isr_candidates.notified().await;
    }

    /// Wakes the leader's ISR loop (a refused change's backoff ran out).
    pub fn wake_isr_updates(&self) {
        self.isr_candidates.notify_one();
    }

    /// The partitions this broker hosts.
    pub fn all(&self) -> Vec<Arc<Partition>> {
        self.partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub fn get(&self, tp: &TopicPartition) -> Result<Arc<Partition>, Error> {
        self.partitions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tp)
            .cloned()
            .ok_or(Error::UnknownTopicOrPartition)
    }

    /// Reads every requested partition once; returns the results and the bytes gathered.
    fn read_once(
        &self,
        requests: &[FetchRequestPartition],
        limits: FetchLimits,
        waiter: Option<&Arc<Notify>>,
    ) -> (Vec<FetchedPartition>, usize, bool) {
        let mut total = 0usize;
        let mut any_error = false;
        let mut out = Vec::with_capacity(requests.len());
        for request in requests {
            let partition = match self.get(&request.tp) {
                Ok(p) => p,
                Err(e) => {
                    any_error = true;
                    out.push(FetchedPartition::failed(e));
                    continue;
                }
            };
            if let Some(waiter) = waiter {
                partition.register(waiter);
            }
            if let Err(e) = partition.check_leader_epoch(request.current_leader_epoch) {
                any_error = true;
                out.push(FetchedPartition::failed(e));
                continue;
            }
            let follower = request.replica_id >= 0;
            if follower {
                match partition.record_follower_fetch(request.replica_id, request.fetch_offset) {
                    Ok(caught_up) => {
                        if caught_up {
                            self.isr_candidates.notify_one();
                        }
                    }
                    Err(e) => {
                        any_error = true;
                        out.push(FetchedPartition::failed(e));
                        continue;
                    }
                }
            }
            let log = lock(&partition.log);
            // Kafka's divergence check: the follower's last epoch ends earlier here (or is
            // unknown), so its log has a tail this leader never had.
            if follower && request.last_fetched_epoch >= 0 {
                let (epoch, end) = log.end_offset_for_epoch(request.last_fetched_epoch);
                if epoch < request.last_fetched_epoch || end < request.fetch_offset {
                    let offsets = PartitionOffsets {
                        log_start_offset: log.log_start_offset(),
                        high_watermark: log.high_watermark(),
                        last_stable_offset: log.last_stable_offset(),
                    };
                    out.push(FetchedPartition {
                        result: Ok(None),
                        offsets: Some(offsets),
                        diverging_epoch: Some((epoch, end)),
                        aborted: Vec::new(),
                    });
                    any_error = true;
                    continue;
                }
            }
            let offsets = PartitionOffsets {
                log_start_offset: log.log_start_offset(),
                high_watermark: log.high_watermark(),
                last_stable_offset: log.last_stable_offset(),
            };
            let remaining = limits.max_bytes.saturating_sub(total);
            let budget = request.partition_max_bytes.min(remaining);
            // Kafka returns the first batch of the first non-empty partition even when it
            // exceeds the limits, so a consumer can always make progress.
            let min_one = total == 0;
            let mut aborted = Vec::new();
            let result = if budget == 0 && !min_one {
                Ok(None)
            } else {
                // Followers read up to the log end; consumers only what is committed, and
                // read_committed ones only below the first open transaction.
                let limit = if follower {
                    log.log_end_offset()
                } else if request.read_committed {
                    offsets.last_stable_offset
                } else {
                    offsets.high_watermark
                };
                log.read(request.fetch_offset, budget, limit, min_one)
                    .map(|read| {
                        read.map(
                            |SegmentRead {
                                 records,
                                 next_offset,
                             }| {
                                if request.read_committed {
                                    aborted =
                                        log.aborted_transactions(request.fetch_offset, next_offset);
                                }
                                records
                            },
                        )
                    })
                    .map_err(Error::from)
            };
            drop(log);
            match &result {
                Ok(Some(records)) => total += records.len(),
                Ok(None) => {}
                Err(_) => any_error = true,
            }
            out.push(FetchedPartition {
                result,
                offsets: Some(offsets),
                diverging_epoch: None,
                aborted,
            });
        }
        (out, total, any_error)
    }

    /// Reads the partitions, waiting up to `max_wait` for `min_bytes` to be available.
    /// Answers at once on any error, as Kafka's delayed fetch does.
    pub async fn fetch(
        &self,
        requests: &[FetchRequestPartition],
        limits: FetchLimits,
    ) -> Vec<FetchedPartition> {
        let deadline = tokio::time::Instant::now() + limits.max_wait;
        loop {
            let waiter = Arc::new(Notify::new());
            let (results, total, any_error) = self.read_once(requests, limits, Some(&waiter));
            if total >= limits.min_bytes
                || any_error
                || requests.is_empty()
                || tokio::time::Instant::now() >= deadline
                || self.closing.load(Ordering::SeqCst)
            {
                return results;
            }
            tracing::debug!(
                partitions = requests.len(),
                bytes = total,
                "fetch parked until data arrives or max_wait_ms passes"
            );
            if tokio::time::timeout_at(deadline, waiter.notified())
                .await
                .is_err()
            {
                return self.read_once(requests, limits, None).0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BrokerConfig, LogConfig};
    use crate::record::test_support::batch;
    use crate::storage::log::Log;

    #[test]
    fn a_verified_batch_cannot_begin_a_transaction_ended_after_its_verification() {
        use crate::record::control::{Marker, MarkerKind};
        let dir = tempfile::tempdir().unwrap();
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let config = LogConfig::resolve(&broker.topic_defaults, &Default::default());
        let tp = TopicPartition::new("t", 0);
        let log = Log::create(dir.path(), tp.clone(), config, 0).unwrap();
        let partition = Partition::leader_for_test(tp, Uuid::new_v4(), Arc::new(Mutex::new(log)));
        let first = crate::record::test_support::transactional(2, 7, 0);
        let guard = partition.start_transaction_verification(7).unwrap();
        partition
            .append_verified(&first, -1, Some((7, guard)))
            .unwrap();
        assert_eq!(
            partition.start_transaction_verification(7),
            None,
            "open here: later batches need no verification"
        );

        let stale = partition.start_transaction_verification(8).unwrap();
        let abort = Marker {
            kind: MarkerKind::Abort,
            coordinator_epoch: 0,
        };
        // The coordinator ends producer 8's transaction after verifying its batch.
        partition.append_marker(8, 0, abort).unwrap();
        let late = crate::record::test_support::transactional(1, 8, 0);
        assert!(matches!(
            partition.append_verified(&late, -1, Some((8, stale))),
            Err(Error::NotInTransaction)
        ));
        let fresh = partition.start_transaction_verification(8).unwrap();
        assert!(
            partition
                .append_verified(&late, -1, Some((8, fresh)))
                .is_ok()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_appenders_share_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let overrides = [("flush.messages".to_string(), "1".to_string())]
            .into_iter()
            .collect();
        let config = LogConfig::resolve(&broker.topic_defaults, &overrides);
        let tp = TopicPartition::new("t", 0);
        let log = Log::create(dir.path(), tp.clone(), config, 0).unwrap();
        let partition = Arc::new(Partition::leader_for_test(
            tp,
            Uuid::new_v4(),
            Arc::new(Mutex::new(log)),
        ));
        let (writers, per_writer) = (8, 50);
        let mut tasks = Vec::new();
        for _ in 0..writers {
            let partition = partition.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..per_writer {
                    let info = partition.append(&batch(0, 1, 1, 100), 1).unwrap();
                    assert!(
                        info.flush_due,
                        "flush.messages=1: every append must be made durable"
                    );
                    partition.flush_to(info.last_offset + 1).await.unwrap();
                    assert!(
                        lock(partition.log()).recovery_point() > info.last_offset,
                        "acknowledged only once durable"
                    );
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let log = lock(partition.log());
        let appends = (writers * per_writer) as u64;
        assert_eq!(log.recovery_point(), appends as i64);
        eprintln!(
            "{appends} durable appends took {} fsyncs",
            log.flush_count()
        );
        assert!(
            log.flush_count() < appends,
            "group commit: {} fsyncs for {appends} appends",
            log.flush_count()
        );
    }

    /// Node 1 leading a partition on nodes 1, 2 and 3 with `isr` in sync.
    fn leading(leader_epoch: i32, partition_epoch: i32, isr: &[i32]) -> Leadership {
        Leadership {
            leader: 1,
            leader_epoch,
            partition_epoch,
            replicas: vec![1, 2, 3],
            isr: isr.to_vec(),
        }
    }

    fn replicated(dir: &std::path::Path) -> Arc<Partition> {
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let overrides = [("min.insync.replicas".to_string(), "2".to_string())]
            .into_iter()
            .collect();
        let config = LogConfig::resolve(&broker.topic_defaults, &overrides);
        let tp = TopicPartition::new("r", 0);
        let log = Log::create(dir, tp.clone(), config, 0).unwrap();
        let partition = Arc::new(Partition::new(
            tp,
            Uuid::new_v4(),
            1,
            Arc::new(Mutex::new(log)),
        ));
        partition.set_leadership(leading(4, 0, &[1, 2, 3]));
        partition
    }

    #[test]
    fn offset_for_leader_epoch_answers_from_the_epoch_cache_after_the_epoch_check() {
        let dir = tempfile::tempdir().unwrap();
        let partition = replicated(dir.path());
        partition.append(&batch(0, 5, 1, 10), 1).unwrap();
        // The partition was led in epoch 4; a new term begins at offset 5.
        partition.set_leadership(leading(6, 1, &[1, 2, 3]));
        partition.append(&batch(0, 3, 1, 10), 1).unwrap();
        assert_eq!(partition.end_offset_for_epoch(-1, 4).unwrap(), (4, 5));
        assert_eq!(partition.end_offset_for_epoch(6, 5).unwrap(), (4, 5));
        assert_eq!(partition.end_offset_for_epoch(6, 6).unwrap(), (6, 8));
        assert_eq!(partition.end_offset_for_epoch(-1, 9).unwrap(), (-1, -1));
        assert!(matches!(
            partition.end_offset_for_epoch(5, 4),
            Err(Error::FencedLeaderEpoch { .. })
        ));
        assert!(matches!(
            partition.end_offset_for_epoch(7, 4),
            Err(Error::UnknownLeaderEpoch(7))
        ));
        partition.set_leadership(Leadership {
            leader: 2,
            leader_epoch: 7,
            partition_epoch: 2,
            replicas: vec![1, 2, 3],
            isr: vec![1, 2, 3],
        });
        assert!(matches!(
            partition.end_offset_for_epoch(-1, 4),
            Err(Error::NotLeaderOrFollower)
        ));
    }

    #[tokio::test]
    async fn the_high_watermark_is_the_smallest_log_end_in_the_isr() {
        let dir = tempfile::tempdir().unwrap();
        let partition = replicated(dir.path());
        let info = partition.append(&batch(0, 10, 1, 10), -1).unwrap();
        let hw = || lock(partition.log()).high_watermark();
        assert_eq!(hw(), 0, "nothing is committed before the followers have it");
        assert!(matches!(
            partition
                .wait_for_replication(info.last_offset + 1, Duration::from_millis(20))
                .await,
            Err(Error::RequestTimedOut)
        ));
        assert!(!partition.record_follower_fetch(2, 10).unwrap());
        assert_eq!(hw(), 0, "follower 3 has not fetched yet");
        partition.record_follower_fetch(3, 4).unwrap();
        assert_eq!(hw(), 4);
        partition.record_follower_fetch(3, 10).unwrap();
        assert_eq!(hw(), 10);
        partition
            .wait_for_replication(info.last_offset + 1, Duration::from_secs(1))
            .await
            .unwrap();
        assert!(
            partition.record_follower_fetch(9, 0).is_err(),
            "not a replica"
        );
    }

    #[tokio::test]
    async fn laggards_leave_the_isr_and_caught_up_followers_join_it() {
        let dir = tempfile::tempdir().unwrap();
        let partition = replicated(dir.path());
        partition.append(&batch(0, 10, 1, 10), 1).unwrap();
        partition.record_follower_fetch(3, 3).unwrap();
        // Follower 2 catches up a little later than follower 3 was last caught up.
        std::thread::sleep(Duration::from_millis(5));
        partition.record_follower_fetch(2, 10).unwrap();
        let progress = partition.follower_progress();
        assert!(progress[&2].last_caught_up_ms > progress[&3].last_caught_up_ms);
        let lag = 30_000;
        let now = now_ms();
        assert!(partition.wanted_isr(now, lag).is_none(), "within the lag");
        let (_, isr) = partition
            .wanted_isr(progress[&3].last_caught_up_ms + lag + 1, lag)
            .unwrap();
        assert_eq!(
            isr,
            vec![1, 2],
            "follower 3 did not catch up within the lag"
        );
        // The controller's answer comes back as new metadata.
        partition.set_leadership(leading(4, 1, &[1, 2]));
        assert!(partition.wanted_isr(now_ms(), 30_000).is_none());
        assert!(
            partition.record_follower_fetch(3, 10).unwrap(),
            "caught up: a candidate to join"
        );
        let (_, isr) = partition.wanted_isr(now_ms(), 30_000).unwrap();
        assert_eq!(isr, vec![1, 2, 3]);
        // With the ISR below min.insync.replicas, acks=all is refused before writing.
        partition.set_leadership(leading(4, 2, &[1]));
        assert!(matches!(
            partition.append(&batch(0, 1, 1, 10), -1),
            Err(Error::NotEnoughReplicas {
                isr: 1,
                required: 2
            })
        ));
    }

    #[tokio::test]
    async fn a_follower_with_a_divergent_tail_is_told_where_to_truncate() {
        let dir = tempfile::tempdir().unwrap();
        let partition = replicated(dir.path());
        partition.append(&batch(0, 5, 1, 10), 1).unwrap();
        let replicas = ReplicaManager::new();
        let partition = replicas.add(Arc::into_inner(partition).unwrap());
        let limits = FetchLimits {
            min_bytes: 0,
            max_bytes: 1 << 20,
            max_wait: Duration::ZERO,
        };
        let fetch = |offset, epoch| FetchRequestPartition {
            tp: partition.topic_partition().clone(),
            current_leader_epoch: 4,
            replica_id: 2,
            last_fetched_epoch: epoch,
            fetch_offset: offset,
            partition_max_bytes: 1 << 20,
            read_committed: false,
        };
        // Epoch 3 ended here where epoch 4 began (offset 0): the follower's epoch-3 tail
        // past it must go.
        let answer = replicas.fetch(&[fetch(7, 3)], limits).await;
        assert_eq!(answer[0].diverging_epoch, Some((3, 0)));
        // In step with the leader's epoch 4: records up to the log end, past the HW.
        let answer = replicas.fetch(&[fetch(0, -1)], limits).await;
        assert!(answer[0].diverging_epoch.is_none());
        let records = answer[0].result.as_ref().unwrap().as_ref().unwrap();
        assert!(!records.is_empty());
        assert_eq!(answer[0].offsets.unwrap().high_watermark, 0);
        let answer = replicas.fetch(&[fetch(9, 4)], limits).await;
        assert_eq!(
            answer[0].diverging_epoch,
            Some((4, 5)),
            "ahead of the leader's end"
        );
    }
}
