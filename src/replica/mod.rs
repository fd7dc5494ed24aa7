//! Partitions this broker hosts and the two hot paths over them: append (with acks) and fetch
//! (with the `min_bytes`/`max_wait_ms` long-poll). Kafka's `ReplicaManager` + `Partition` +
//! the delayed-fetch purgatory, for a node that is the only replica of every partition.
//!
//! Long-poll: a waiting fetch registers one `Notify` with every partition it reads; each
//! append wakes the registered waiters, which re-read and either answer or wait again until
//! their deadline. No timer polls for data.

pub mod fetch_session;

use crate::error::Error;
use crate::record;
use crate::storage::log::AppendInfo;
use crate::storage::manager::{SharedLog, lock};
use crate::storage::segment::{FileSlice, SegmentRead};
use crate::types::{TopicPartition, now_ms};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

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

#[derive(Debug)]
pub struct Partition {
    tp: TopicPartition,
    topic_id: Uuid,
    /// This broker.
    node_id: i32,
    log: SharedLog,
    /// `None` until the metadata says who leads.
    leadership: RwLock<Option<Leadership>>,
    /// Fetches waiting for data here. Weak: a finished fetch leaves only a dead pointer,
    /// pruned on the next registration or append.
    waiters: Mutex<Vec<Weak<Notify>>>,
    /// One fsync at a time per log; appenders queued here share the next one (group commit).
    /// A tokio mutex because it is held across the awaited fsync.
    flush_turn: tokio::sync::Mutex<()>,
}

impl Partition {
    pub fn new(tp: TopicPartition, topic_id: Uuid, node_id: i32, log: SharedLog) -> Self {
        Self {
            tp,
            topic_id,
            node_id,
            log,
            leadership: RwLock::new(None),
            waiters: Mutex::new(Vec::new()),
            flush_turn: tokio::sync::Mutex::new(()),
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
        *self.leadership.write().unwrap_or_else(|p| p.into_inner()) = Some(leadership);
        // Waiting fetches re-check: they may have to answer NOT_LEADER_OR_FOLLOWER now.
        self.wake_waiters();
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

    fn register(&self, waiter: &Arc<Notify>) {
        let mut waiters = self.waiters.lock().unwrap_or_else(|p| p.into_inner());
        waiters.retain(|w| w.strong_count() > 0);
        waiters.push(Arc::downgrade(waiter));
    }

    fn wake_waiters(&self) {
        let waiters = std::mem::take(&mut *self.waiters.lock().unwrap_or_else(|p| p.into_inner()));
        for waiter in waiters.iter().filter_map(Weak::upgrade) {
            waiter.notify_one();
        }
    }

    /// Validates and appends the records of one produce partition.
    pub fn append(&self, records: &[u8], acks: i16) -> Result<AppendInfo, Error> {
        let (leader_epoch, isr_size) = {
            let leadership = self.leadership.read().unwrap_or_else(|p| p.into_inner());
            match leadership.as_ref() {
                Some(l) if l.leader == self.node_id => (l.leader_epoch, l.isr.len() as i32),
                _ => return Err(Error::NotLeaderOrFollower),
            }
        };
        let info = {
            let mut log = lock(&self.log);
            let config = log.config();
            record::validate_produced(records, config.max_message_bytes)?;
            if acks == -1 && config.min_insync_replicas > isr_size {
                return Err(Error::NotEnoughReplicas {
                    isr: isr_size,
                    required: config.min_insync_replicas,
                });
            }
            log.append_as_leader(records, leader_epoch, now_ms())?
        };
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
            last_stable_offset: log.high_watermark(),
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
    pub fetch_offset: i64,
    pub partition_max_bytes: usize,
}

/// The answer for one partition.
#[derive(Debug)]
pub struct FetchedPartition {
    /// Where the batches are; the caller copies or sends them after the log's lock is gone.
    pub result: Result<Option<FileSlice>, Error>,
    pub offsets: Option<PartitionOffsets>,
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
                    out.push(FetchedPartition {
                        result: Err(e),
                        offsets: None,
                    });
                    continue;
                }
            };
            if let Some(waiter) = waiter {
                partition.register(waiter);
            }
            if let Err(e) = partition.check_leader_epoch(request.current_leader_epoch) {
                any_error = true;
                out.push(FetchedPartition {
                    result: Err(e),
                    offsets: None,
                });
                continue;
            }
            let log = lock(&partition.log);
            let offsets = PartitionOffsets {
                log_start_offset: log.log_start_offset(),
                high_watermark: log.high_watermark(),
                last_stable_offset: log.high_watermark(),
            };
            let remaining = limits.max_bytes.saturating_sub(total);
            let budget = request.partition_max_bytes.min(remaining);
            // Kafka returns the first batch of the first non-empty partition even when it
            // exceeds the limits, so a consumer can always make progress.
            let min_one = total == 0;
            let result = if budget == 0 && !min_one {
                Ok(None)
            } else {
                log.read(
                    request.fetch_offset,
                    budget,
                    offsets.high_watermark,
                    min_one,
                )
                .map(|read| read.map(|SegmentRead { records, .. }| records))
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
}
