//! Reading for consumers and followers (Kafka's `ReplicaManager.fetchMessages` with
//! `DelayedFetch`): every requested partition read once within the request's byte limits,
//! the first batch of the first non-empty partition always whole; a follower's fetch
//! records its progress; if less than `min_bytes` is ready the fetch waits until an append
//! (or a leadership change) wakes it or `max_wait_ms` passes. No timer polls for data: a
//! waiting fetch registers one `Notify` with every partition it reads.
//!
//! Fetching from followers (KIP-392): a consumer that may (Fetch v11+) reads from any replica,
//! up to that replica's high watermark; a leader with a rack-aware replica selector answers a
//! consumer from another rack's in-sync replica with that replica's id instead of data
//! (`preferred_read_replica`), as Kafka's `findPreferredReadReplica` does.

use super::{Partition, ReplicaManager};
use crate::error::{Error, code};
use crate::stats::topics::{TopicCounter, TopicStats};
use crate::storage::log::{FetchIsolation, FetchedRecords, LogOffsets};
use crate::storage::manager::lock;
use crate::storage::segment::FileSlice;
use crate::storage::txn_index::AbortedTxn;
use crate::types::TopicPartition;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::Notify;

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
    /// A consumer that may read from a follower (Fetch v11+, which carries its rack).
    pub from_any_replica: bool,
    /// The consumer's `client.rack` (empty when it has none).
    pub client_rack: Arc<str>,
}

/// The answer for one partition.
#[derive(Debug)]
pub struct FetchedPartition {
    /// Where the batches are; the caller copies or sends them after the log's lock is gone.
    pub result: Result<Option<FileSlice>, Error>,
    pub offsets: Option<LogOffsets>,
    /// For a follower whose log diverged: the epoch and offset to truncate to.
    pub diverging_epoch: Option<(i32, i64)>,
    /// For read_committed: the transactions aborted within the records returned.
    pub aborted: Vec<AbortedTxn>,
    /// The replica the consumer should fetch from instead of this leader (KIP-392).
    pub preferred_read_replica: Option<i32>,
    /// The partition's topic counters, for the bytes sent once the fetch answers.
    stats: Option<TopicStats>,
}

impl FetchedPartition {
    /// An answer that is only an error.
    pub fn failed(error: Error) -> Self {
        Self {
            result: Err(error),
            offsets: None,
            diverging_epoch: None,
            aborted: Vec::new(),
            preferred_read_replica: None,
            stats: None,
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

impl Partition {
    /// One partition's part of a fetch, within `budget` bytes (`min_one`: the first batch
    /// whole even beyond it): a follower whose log diverged is told where to truncate
    /// instead.
    fn read(
        &self,
        request: &FetchRequestPartition,
        budget: usize,
        min_one: bool,
    ) -> FetchedPartition {
        let follower = request.replica_id >= 0;
        let log = lock(&self.log);
        let offsets = Some(log.offsets());
        if follower
            && let Some(diverging) =
                log.diverging_epoch(request.last_fetched_epoch, request.fetch_offset)
        {
            return FetchedPartition {
                result: Ok(None),
                offsets,
                diverging_epoch: Some(diverging),
                aborted: Vec::new(),
                preferred_read_replica: None,
                stats: None,
            };
        }
        if budget == 0 && !min_one {
            return FetchedPartition {
                result: Ok(None),
                offsets,
                diverging_epoch: None,
                aborted: Vec::new(),
                preferred_read_replica: None,
                stats: None,
            };
        }
        // Followers read up to the log end; consumers only what is committed, and
        // read_committed ones only below the first open transaction.
        let isolation = if follower {
            FetchIsolation::LogEnd
        } else if request.read_committed {
            FetchIsolation::TxnCommitted
        } else {
            FetchIsolation::HighWatermark
        };
        match log.read_for_fetch(request.fetch_offset, budget, isolation, min_one) {
            Ok(Some(FetchedRecords { records, aborted })) => FetchedPartition {
                result: Ok(Some(records)),
                offsets,
                diverging_epoch: None,
                aborted,
                preferred_read_replica: None,
                stats: None,
            },
            Ok(None) => FetchedPartition {
                result: Ok(None),
                offsets,
                diverging_epoch: None,
                aborted: Vec::new(),
                preferred_read_replica: None,
                stats: None,
            },
            Err(e) => {
                let error: Error = e.into();
                // A storage failure is one Kafka expects (the log dir went offline); an
                // out-of-range offset is the client's.
                if !matches!(
                    error.code(),
                    code::KAFKA_STORAGE_ERROR | code::OFFSET_OUT_OF_RANGE
                ) {
                    self.stats.inc(TopicCounter::FailedFetchRequests);
                }
                FetchedPartition {
                    result: Err(error),
                    offsets,
                    diverging_epoch: None,
                    aborted: Vec::new(),
                    preferred_read_replica: None,
                    stats: None,
                }
            }
        }
    }
}

impl ReplicaManager {
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

            let checked = if request.from_any_replica {
                partition.check_replica_epoch(request.current_leader_epoch)
            } else {
                partition.check_leader_epoch(request.current_leader_epoch)
            };
            if let Err(e) = checked {
                any_error = true;
                out.push(FetchedPartition::failed(e));
                continue;
            }
            if let Some(racks) = self.replica_racks()
                && !request.client_rack.is_empty()
                && let Some(replica) = partition.preferred_read_replica(
                    &request.client_rack,
                    request.fetch_offset,
                    &racks,
                    crate::types::now_ms(),
                )
            {
                // Answered at once with where to read, as Kafka does: no data from here.
                any_error = true;
                out.push(FetchedPartition {
                    result: Ok(None),
                    offsets: Some(partition.offsets()),
                    diverging_epoch: None,
                    aborted: Vec::new(),
                    preferred_read_replica: Some(replica),
                    stats: None,
                });
                continue;
            }
            let follower = request.replica_id >= 0;
            let mut throttled = false;
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
            if follower
                && self.leader_throttle.is_set()
                && partition.leader_throttles(request.replica_id)
            {
                // Over the leader's replication throttle: no data for this replica now.
                if self.leader_throttle.is_exceeded(crate::types::now_ms()) {
                    out.push(FetchedPartition {
                        result: Ok(None),
                        offsets: Some(partition.offsets()),
                        diverging_epoch: None,
                        aborted: Vec::new(),
                        preferred_read_replica: None,
                        stats: None,
                    });
                    continue;
                }
                throttled = true;
            }
            let remaining = limits.max_bytes.saturating_sub(total);
            // Kafka returns the first batch of the first non-empty partition even when it
            // exceeds the limits, so a consumer can always make progress.
            let mut fetched = partition.read(
                request,
                request.partition_max_bytes.min(remaining),
                total == 0,
            );
            fetched.stats = Some(partition.stats.clone());
            if fetched.diverging_epoch.is_some() {
                any_error = true;
            }
            let result = &fetched.result;
            match result {
                Ok(Some(records)) => {
                    total += records.len();
                    if throttled {
                        self.leader_throttle
                            .record(records.len() as u64, crate::types::now_ms());
                    }
                }
                Ok(None) => {}
                Err(_) => any_error = true,
            }
            out.push(fetched);
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
        let mut waited = false;
        loop {
            let waiter = Arc::new(Notify::new());
            let (results, total, any_error) = self.read_once(requests, limits, Some(&waiter));
            let done = total >= limits.min_bytes
                || any_error
                || requests.is_empty()
                || tokio::time::Instant::now() >= deadline
                || self.closing.load(Ordering::SeqCst);
            // Kafka's `readFromLog` counts each partition it reads: once when the fetch
            // arrives, and once more when a fetch that waited for data completes.
            if !waited || done {
                count_reads(&results);
            }
            if done {
                return count_bytes_out(requests, results);
            }
            waited = true;
            tracing::debug!(
                partitions = requests.len(),
                bytes = total,
                "fetch parked until data arrives or max_wait_ms passes"
            );
            if crate::stats::requests::remote(tokio::time::timeout_at(deadline, waiter.notified()))
                .await
                .is_err()
            {
                let results = self.read_once(requests, limits, None).0;
                count_reads(&results);
                return count_bytes_out(requests, results);
            }
        }
    }
}

fn count_reads(results: &[FetchedPartition]) {
    for stats in results.iter().filter_map(|fetched| fetched.stats.as_ref()) {
        stats.inc(TopicCounter::TotalFetchRequests);
    }
}

/// The bytes a fetch answers with: `BytesOut` of their topic for a consumer, all topics'
/// `ReplicationBytesOut` for a follower, as Kafka's fetch response counts them.
fn count_bytes_out(
    requests: &[FetchRequestPartition],
    results: Vec<FetchedPartition>,
) -> Vec<FetchedPartition> {
    for (request, fetched) in requests.iter().zip(&results) {
        if let (Some(stats), Ok(Some(records))) = (&fetched.stats, &fetched.result) {
            let counter = if request.replica_id >= 0 {
                TopicCounter::ReplicationBytesOut
            } else {
                TopicCounter::BytesOut
            };
            stats.add(counter, records.len() as u64);
        }
    }
    results
}
