//! One partition's log (Kafka's `UnifiedLog` over `LocalLog`): an ordered set of segments,
//! the log start offset, the high watermark and last stable offset, the leader-epoch cache, the
//! producer state, the recovery point and the flush policy. Synchronous and single-writer: the
//! caller serialises access. An I/O error marks the log failed, after which every operation
//! returns [`StorageError::Offline`]: a log whose on-disk state is unknown is never written
//! again. Running out of a resource (no space, no descriptor: see
//! [`StorageError::is_transient`]) only refuses the operation, which undoes its partial work
//! (a partial write is cut off, a failed roll keeps the old segment); while the log
//! directory's disk is full, appends are refused before they write ([`super::space`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the struct, its offsets (log start and end, HW, LSO), epochs, the failure guard |
//! | `load.rs` | create, load and recover from disk, reset to an empty log (`LogLoader`) |
//! | `append.rs` | leader, follower and marker appends, roll, truncation, flush |
//! | `read.rs` | reads up to an offset limit, lookups by timestamp |
//! | `housekeeping.rs` | DeleteRecords, retention, compaction, producer expiry |

mod append;
mod housekeeping;
mod load;
mod read;
#[cfg(test)]
mod tests;

pub use read::{FetchIsolation, FetchedRecords, LogOffsets};

use super::StorageError;
use super::epoch::LeaderEpochCache;
pub use super::flush::FlushJob;
use super::producer_state::{CompletedTxn, ProducerState};
use super::segment::Segment;
use super::txn_index::{AbortedTxn, TxnIndex};
use crate::config::LogConfig;
use crate::types::TopicPartition;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A count of changes to what the offset checkpoints hold (a log's start offset, recovery
/// point and high watermark, whether it is online), shared by the logs of one log manager:
/// while it stands still, the checkpoints need not be rewritten nor the logs visited.
pub type OffsetChanges = std::sync::Arc<std::sync::atomic::AtomicU64>;

/// The outcome of an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    pub base_offset: i64,
    pub last_offset: i64,
    /// The broker time stamped on the batch for LogAppendTime topics, else -1.
    pub log_append_time: i64,
    pub log_start_offset: i64,
    /// `flush.messages` is reached: the caller must flush up to `last_offset + 1` (see
    /// [`Log::prepare_flush`]) before acknowledging.
    pub flush_due: bool,
}

/// What loading found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadReport {
    pub segments: usize,
    pub recovered_segments: usize,
    pub truncated_bytes: u64,
}

#[derive(Debug)]
pub struct Log {
    tp: TopicPartition,
    dir: PathBuf,
    config: LogConfig,
    segments: BTreeMap<i64, Segment>,
    log_start_offset: i64,
    /// Everything below this offset is known to be on disk (fsynced).
    recovery_point: i64,
    unflushed_messages: i64,
    last_flush_ms: i64,
    flushes: u64,
    failed: bool,
    /// The log directory's space gate (set by the log manager): appends are refused while
    /// the disk is full.
    space: Option<std::sync::Arc<super::space::SpaceGate>>,
    /// The log manager's count of changes to what its offset checkpoints hold (see
    /// [`Log::watch_offsets`]).
    offset_changes: Option<OffsetChanges>,
    /// Compaction has processed the sealed segments below this offset.
    cleaned_up_to: i64,
    /// Idempotent and transactional producers writing to this partition.
    producers: ProducerState,
    /// Transactions aborted here (read_committed fetches).
    aborted_txns: TxnIndex,
    /// The first offset of each leader epoch (OffsetForLeaderEpoch, follower truncation).
    leader_epochs: LeaderEpochCache,
    /// The high watermark while the log is replicated (see [`Log::set_replicated`]).
    high_watermark: i64,
    /// Whether other replicas must have a record before it counts as committed; until then
    /// everything written is committed and the high watermark is the log end offset.
    replicated: bool,
    /// How many times the log's end was cut back or its data replaced (truncation as a
    /// follower): a copy of the log being made elsewhere (a move between log directories)
    /// starts over when this changes.
    rewrites: u64,
}

impl Log {
    /// Indexes a transaction a marker just ended, if it aborted.
    fn record_completed(&mut self, txn: CompletedTxn) -> Result<(), StorageError> {
        if txn.aborted {
            let last_stable_offset = self
                .producers
                .first_unstable_offset_besides(txn.first_offset)
                .unwrap_or(txn.last_offset + 1);
            self.aborted_txns.append(AbortedTxn {
                producer_id: txn.producer_id,
                first_offset: txn.first_offset,
                last_offset: txn.last_offset,
                last_stable_offset,
            })?;
        }
        Ok(())
    }

    /// The last stable offset: below it no transaction is open (or ended by a marker not yet
    /// committed), so read_committed consumers read up to it (Kafka's LSO).
    pub fn last_stable_offset(&self) -> i64 {
        let high_watermark = self.high_watermark();
        match self.producers.first_unstable_offset() {
            Some(first) => first.min(high_watermark),
            None => high_watermark,
        }
    }

    /// The producers writing to this partition (DescribeProducers).
    pub fn producer_state(&self) -> &ProducerState {
        &self.producers
    }

    /// Transactions aborted with records in `[start, end)`.
    pub fn aborted_transactions(&self, start: i64, end: i64) -> Vec<AbortedTxn> {
        self.aborted_txns.overlapping(start, end)
    }

    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn config(&self) -> &LogConfig {
        &self.config
    }
    pub fn set_config(&mut self, config: LogConfig) {
        self.config = config;
    }
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }
    pub fn recovery_point(&self) -> i64 {
        self.recovery_point
    }
    /// See [`Log`]'s `rewrites`.
    pub fn rewrites(&self) -> u64 {
        self.rewrites
    }

    /// Offline: an I/O error here, or in another log of its directory.
    pub fn is_failed(&self) -> bool {
        self.failed || self.space.as_ref().is_some_and(|gate| gate.is_failed())
    }
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }
    pub fn segment_bases(&self) -> Vec<i64> {
        self.segments.keys().copied().collect()
    }

    pub fn log_end_offset(&self) -> i64 {
        self.active()
            .map(Segment::next_offset)
            .unwrap_or(self.log_start_offset)
    }

    /// The offset below which records are committed: what consumers may read. A log that is
    /// not replicated commits everything it writes.
    pub fn high_watermark(&self) -> i64 {
        if self.replicated {
            self.high_watermark.min(self.log_end_offset())
        } else {
            self.log_end_offset()
        }
    }

    /// Keeps the stored high watermark at the log end while writes commit at once, so it is
    /// current when replication takes over and when it is checkpointed.
    fn commit_if_unreplicated(&mut self) {
        if !self.replicated {
            self.high_watermark = self.log_end_offset();
            self.producers.on_high_watermark(self.high_watermark);
            self.offsets_changed();
        }
    }

    /// Switches between a log whose writes are committed at once (its partition has one
    /// replica) and one whose high watermark the replication layer sets. Switching to
    /// replicated keeps the current high watermark as the starting point.
    pub fn set_replicated(&mut self, replicated: bool) {
        self.replicated = replicated;
        self.set_high_watermark(self.high_watermark);
    }

    pub fn is_replicated(&self) -> bool {
        self.replicated
    }

    /// Sets the high watermark of a replicated log (clamped to [log start, log end]). It
    /// may move backwards only when a new leader starts below it; the caller decides.
    pub fn set_high_watermark(&mut self, offset: i64) {
        self.high_watermark = offset.clamp(self.log_start_offset, self.log_end_offset());
        self.producers.on_high_watermark(self.high_watermark());
        self.offsets_changed();
    }

    /// The latest leader epoch of a batch in this log.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.leader_epochs.latest_epoch()
    }

    /// OffsetForLeaderEpoch: the largest epoch at or below `epoch` this log knows, and the
    /// offset where it ends (see [`LeaderEpochCache::end_offset_for`]).
    pub fn end_offset_for_epoch(&self, epoch: i32) -> (i32, i64) {
        self.leader_epochs
            .end_offset_for(epoch, self.log_end_offset())
    }

    pub fn size_bytes(&self) -> u64 {
        self.segments.values().map(|s| s.size() as u64).sum()
    }

    fn active(&self) -> Option<&Segment> {
        self.segments.values().next_back()
    }

    fn check_online(&self) -> Result<(), StorageError> {
        if self.is_failed() {
            Err(StorageError::Offline)
        } else {
            Ok(())
        }
    }

    /// Takes the log offline as an I/O error would (tests of what clients are then told).
    #[cfg(test)]
    pub(crate) fn fail_for_test(&mut self) {
        self.failed = true;
        self.offsets_changed();
    }

    /// Counts this log's checkpointed offset changes in `changes` (the log manager's).
    pub fn watch_offsets(&mut self, changes: OffsetChanges) {
        self.offset_changes = Some(changes);
    }

    /// The start offset, recovery point or high watermark may have moved, or the log failed:
    /// the next offset checkpoint visits the logs again.
    fn offsets_changed(&self) {
        if let Some(changes) = &self.offset_changes {
            changes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Joins the log directory's space gate.
    pub fn set_space_gate(&mut self, gate: std::sync::Arc<super::space::SpaceGate>) {
        self.space = Some(gate);
    }

    fn check_space(&self, now_ms: i64) -> Result<(), StorageError> {
        self.space
            .as_ref()
            .map_or(Ok(()), |gate| gate.admit(now_ms))
    }

    /// Marks the log failed on I/O errors, so nothing is written on top of an unknown state.
    /// An exhausted resource (no descriptor, no space) only refuses the operation: the
    /// operations undo what they had done when one fails that way.
    fn guard<T>(&mut self, result: Result<T, StorageError>) -> Result<T, StorageError> {
        if let (Err(e), Some(space)) = (&result, &self.space) {
            space.note(e, crate::types::now_ms());
        }
        match &result {
            Err(e @ StorageError::Io(_)) if e.is_transient() => {
                tracing::warn!(partition = %self.tp, error = %e, "write refused for now: out of a resource");
            }
            Err(StorageError::Io(e)) => {
                tracing::error!(partition = %self.tp, error = %e, "I/O error; log taken offline");
                self.failed = true;
                self.offsets_changed();
                if let Some(gate) = &self.space {
                    gate.fail();
                }
            }
            _ => {}
        }
        result
    }
}

/// A new, empty active segment at `base_offset`, preallocated when the topic says so.
fn new_segment(
    dir: &Path,
    config: &LogConfig,
    base_offset: i64,
    now_ms: i64,
) -> Result<Segment, StorageError> {
    let mut segment = Segment::create(
        dir,
        base_offset,
        config.segment_index_bytes,
        config.index_interval_bytes,
        now_ms,
    )?;
    if config.preallocate {
        segment.preallocate(config.segment_bytes);
    }
    Ok(segment)
}
