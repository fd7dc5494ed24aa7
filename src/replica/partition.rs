//! One partition this broker hosts (Kafka's `cluster/Partition.scala`): its leadership as the
//! metadata says, and while leading, each follower's progress (from their fetches), the high
//! watermark at the smallest log end in the ISR (`maybeIncrementLeaderHW`), which followers
//! should leave or join the ISR (`maybeShrinkIsr` / `maybeExpandIsr`), acks=all appends held
//! until the ISR has them, and the fetches waiting for its data.
//!
//! Departure: for the `min.insync.replicas` check of an acks=all append, the leader counts
//! only ISR members caught up within `replica.lag.time.max.ms`, not the ISR as last
//! committed: with combined nodes, losing two of three also loses the controller quorum, and
//! the ISR could then never shrink in the metadata (Kafka would time the writes out).
//!
//! The fields the produce and fetch paths work on (`produce.rs`, `fetch.rs`) are visible to
//! the rest of the replica layer; nothing outside it sees them.

use crate::error::Error;
use crate::stats::topics::TopicStats;
use crate::storage::log::LogOffsets;
use crate::storage::manager::{SharedLog, lock};
use crate::types::{TopicPartition, now_ms};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

/// One producer's state on a partition (DescribeProducers, and the HTTP API as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
    pub(super) tp: TopicPartition,
    topic_id: Uuid,
    /// This broker.
    pub(super) node_id: i32,
    pub(super) log: SharedLog,
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
    pub(super) flush_turn: tokio::sync::Mutex<()>,
    /// KIP-890 verification guards: per producer id, the guard shared by its batches being
    /// verified to begin a transaction here. A marker ending that transaction, or the append
    /// of one of them, clears it, so a batch verified before its transaction was ended cannot
    /// start one after it.
    pub(super) verifications: Mutex<HashMap<i64, super::produce::Verification>>,
    pub(super) next_guard: std::sync::atomic::AtomicU64,
    /// Its topic's `BrokerTopicMetrics` counters (set when the replica manager hosts it).
    pub(super) stats: TopicStats,
    /// An ISR this leader asked the controller for and has not yet seen committed or refused
    /// (Kafka's pending ISR state). Until then the high watermark waits for its members too
    /// (Kafka's maximal ISR): the controller may have committed it already, and may make one
    /// of its new members the next leader (a reassignment completing), which must then hold
    /// everything acknowledged here.
    pending_isr: Mutex<Option<PendingIsr>>,
}

/// See [`Partition`]'s `pending_isr`.
#[derive(Debug, Clone)]
struct PendingIsr {
    /// The partition epoch the change was asked from.
    partition_epoch: i32,
    /// Every member of every ISR asked for from that epoch.
    members: Vec<i32>,
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
            stats: TopicStats::detached(),
            pending_isr: Mutex::new(None),
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
    pub(super) fn live_isr_size(&self, leadership: &Leadership) -> i32 {
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
        {
            // A new partition epoch: the change asked for was committed or superseded.
            let mut pending = self.pending_isr.lock().unwrap_or_else(|p| p.into_inner());
            if pending
                .as_ref()
                .is_some_and(|p| p.partition_epoch != leadership.partition_epoch)
            {
                *pending = None;
            }
        }
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
    pub(super) fn maybe_increment_high_watermark(&self) {
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
            let mut members = leadership.isr.clone();
            if let Some(pending) = self
                .pending_isr
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .filter(|p| p.partition_epoch == leadership.partition_epoch)
            {
                members.extend(
                    pending
                        .members
                        .iter()
                        .filter(|m| !leadership.isr.contains(m)),
                );
            }
            for member in members.iter().filter(|r| **r != self.node_id) {
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

    /// The ISR task asks the controller for `isr` from `partition_epoch`: its members count
    /// for the high watermark until the answer is known (see `pending_isr`).
    pub fn propose_isr(&self, partition_epoch: i32, isr: &[i32]) {
        let mut pending = self.pending_isr.lock().unwrap_or_else(|p| p.into_inner());
        match pending.as_mut() {
            Some(p) if p.partition_epoch == partition_epoch => {
                for member in isr {
                    if !p.members.contains(member) {
                        p.members.push(*member);
                    }
                }
            }
            _ => {
                *pending = Some(PendingIsr {
                    partition_epoch,
                    members: isr.to_vec(),
                })
            }
        }
    }

    /// The controller refused the ISR asked for from `partition_epoch`: nothing of it was
    /// committed, the high watermark follows the ISR alone again.
    pub fn isr_refused(&self, partition_epoch: i32) {
        let mut pending = self.pending_isr.lock().unwrap_or_else(|p| p.into_inner());
        if pending
            .as_ref()
            .is_some_and(|p| p.partition_epoch == partition_epoch)
        {
            *pending = None;
        }
        drop(pending);
        self.maybe_increment_high_watermark();
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
        {
            // Led here with no other replica: nothing can join or leave. Checked without a
            // copy, since the ISR task asks every partition every few seconds.
            let current = self.leadership.read().unwrap_or_else(|p| p.into_inner());
            let alone = [self.node_id];
            match current.as_ref() {
                None => return None,
                Some(l) if l.leader != self.node_id => return None,
                Some(l) if l.replicas == alone && l.isr == alone => return None,
                Some(_) => {}
            }
        }
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

    /// As leader: whether what `follower` fetches is throttled (its replica is listed in
    /// `leader.replication.throttled.replicas` for this broker and it is out of the ISR).
    pub fn leader_throttles(&self, follower: i32) -> bool {
        let out_of_sync = self
            .leadership()
            .is_some_and(|l| l.leader == self.node_id && !l.isr.contains(&follower));
        out_of_sync
            && lock(&self.log)
                .config()
                .leader_throttled
                .includes(self.tp.partition, self.node_id)
    }

    /// As follower: whether this replica's fetching is throttled (listed in
    /// `follower.replication.throttled.replicas` for this broker, and out of the ISR).
    pub fn follower_throttled(&self) -> bool {
        let out_of_sync = self
            .leadership()
            .is_some_and(|l| l.leader != self.node_id && !l.isr.contains(&self.node_id));
        out_of_sync
            && lock(&self.log)
                .config()
                .follower_throttled
                .includes(self.tp.partition, self.node_id)
    }

    /// [`Partition::check_leader_epoch`] for a read any replica may serve (a consumer's
    /// fetch, KIP-392): this broker must hold a replica, led by anyone.
    pub fn check_replica_epoch(&self, requested: i32) -> Result<i32, Error> {
        let leadership = self.leadership().ok_or(Error::NotLeaderOrFollower)?;
        if leadership.leader != self.node_id && !leadership.replicas.contains(&self.node_id) {
            return Err(Error::NotLeaderOrFollower);
        }
        let current = leadership.leader_epoch;
        match requested {
            -1 => Ok(current),
            r if r < current => Err(Error::FencedLeaderEpoch { got: r, current }),
            r if r > current => Err(Error::UnknownLeaderEpoch(r)),
            _ => Ok(current),
        }
    }

    /// As leader, the in-sync replica a consumer in `client_rack` should read from at
    /// `fetch_offset`, when it is not this leader (Kafka's `RackAwareReplicaSelector`): the
    /// replicas in its rack holding the offset; the leader if it is one of them, else the one
    /// with the longest log, then the one caught up most recently, then the highest id.
    pub fn preferred_read_replica(
        &self,
        client_rack: &str,
        fetch_offset: i64,
        racks: &HashMap<i32, String>,
        now_ms: i64,
    ) -> Option<i32> {
        let leadership = self.leadership()?;
        if leadership.leader != self.node_id {
            return None;
        }
        let in_rack = |id: i32| racks.get(&id).is_some_and(|r| r == client_rack);
        if in_rack(self.node_id) {
            return None;
        }
        let followers = self.followers.lock().unwrap_or_else(|p| p.into_inner());
        leadership
            .isr
            .iter()
            .filter(|id| **id != self.node_id && in_rack(**id))
            .filter_map(|id| followers.get(id).map(|f| (*id, f)))
            .filter(|(_, f)| f.log_end_offset >= fetch_offset)
            .max_by_key(|(id, f)| (f.log_end_offset, -(now_ms - f.last_caught_up_ms), *id))
            .map(|(id, _)| id)
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

    pub(super) fn wake_waiters(&self) {
        let waiters = std::mem::take(&mut *self.waiters.lock().unwrap_or_else(|p| p.into_inner()));
        for waiter in waiters.iter().filter_map(Weak::upgrade) {
            waiter.notify_one();
        }
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

    /// Offsets a fetch response reports alongside the data.
    pub fn offsets(&self) -> LogOffsets {
        lock(&self.log).offsets()
    }
}
