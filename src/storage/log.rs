//! One partition's log: an ordered set of segments, the log start offset, the recovery point
//! and the flush policy (Kafka's `UnifiedLog` + `LocalLog` + `LogLoader`). Synchronous and
//! single-writer: the caller serialises access. An I/O error marks the log failed, after which
//! every operation returns [`StorageError::Offline`]: a log whose on-disk state is unknown is
//! never written again. Running out of a resource (no space, no descriptor: see
//! [`StorageError::is_transient`]) only refuses the operation, which undoes its partial work
//! (a partial write is cut off, a failed roll keeps the old segment); while the log
//! directory's disk is full, appends are refused before they write ([`super::space`]).

use super::StorageError;
use super::cleaner::{self, CleanStats};
use super::epoch::LeaderEpochCache;
pub use super::flush::FlushJob;
use super::producer_state::{self, Admission, CompletedTxn, ProducerState};
use super::segment::{self, BatchLocation, Segment, SegmentRead};
use super::txn_index::{AbortedTxn, TxnIndex};
use crate::config::LogConfig;
use crate::record::{self, BatchView};
use crate::types::TopicPartition;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
}

const TEMP_SUFFIXES: &[&str] = &[".tmp", ".cleaned", ".swap", ".deleted"];

impl Log {
    /// Creates a new empty log directory.
    pub fn create(
        dir: &Path,
        tp: TopicPartition,
        config: LogConfig,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        std::fs::create_dir_all(dir)?;
        let segment = Segment::create(
            dir,
            0,
            config.segment_index_bytes,
            config.index_interval_bytes,
            now_ms,
        )?;
        let mut segments = BTreeMap::new();
        segments.insert(0, segment);
        let leader_epochs = LeaderEpochCache::create_empty(dir)?;
        Ok(Self {
            tp,
            dir: dir.to_path_buf(),
            config,
            segments,
            log_start_offset: 0,
            recovery_point: 0,
            unflushed_messages: 0,
            last_flush_ms: now_ms,
            flushes: 0,
            failed: false,
            cleaned_up_to: 0,
            producers: ProducerState::default(),
            aborted_txns: TxnIndex::load(dir)?,
            leader_epochs,
            high_watermark: 0,
            replicated: false,
            space: None,
        })
    }

    /// Loads an existing log. After a clean shutdown segments are opened as they are; after an
    /// unclean one, every segment from the one holding the recovery point on is re-validated,
    /// the first invalid byte truncates the log and later segments are deleted.
    pub fn load(
        dir: &Path,
        tp: TopicPartition,
        config: LogConfig,
        recovery_point: i64,
        log_start_offset: i64,
        clean_shutdown: bool,
        now_ms: i64,
    ) -> Result<(Self, LoadReport), StorageError> {
        let mut bases = Vec::new();
        let mut snapshots = Vec::new();
        for name in super::list_dir(dir)? {
            if TEMP_SUFFIXES.iter().any(|s| name.ends_with(s)) {
                std::fs::remove_file(dir.join(&name))?;
                continue;
            }
            if let Some(stem) = name.strip_suffix(".log")
                && let Ok(base) = stem.parse::<i64>()
            {
                bases.push(base);
            } else if let Some(offset) = producer_state::snapshot_offset(&name) {
                snapshots.push(offset);
            }
        }
        bases.sort_unstable();
        let mut report = LoadReport::default();
        if bases.is_empty() {
            let mut log = Self::create(dir, tp, config, now_ms)?;
            if log_start_offset > 0 {
                log.reset_to(log_start_offset, now_ms)?;
            }
            return Ok((log, report));
        }
        let mut segments = BTreeMap::new();
        let last_base = bases[bases.len() - 1];
        let first_to_recover = if clean_shutdown {
            i64::MAX
        } else {
            // The segment that holds the recovery point and everything after it.
            bases
                .iter()
                .rev()
                .find(|b| **b <= recovery_point)
                .copied()
                .unwrap_or(bases[0])
        };
        let mut truncated_at: Option<i64> = None;
        for base in &bases {
            if truncated_at.is_some() {
                // Past a corruption point: these segments cannot follow valid data.
                let doomed = Segment::open(
                    dir,
                    *base,
                    false,
                    config.segment_index_bytes,
                    config.index_interval_bytes,
                    now_ms,
                )?;
                doomed.delete()?;
                continue;
            }
            let active = *base == last_base;
            let mut segment = Segment::open(
                dir,
                *base,
                active,
                config.segment_index_bytes,
                config.index_interval_bytes,
                now_ms,
            )?;
            let tail_untrusted = active && clean_shutdown && !segment.tail_is_valid()?;
            if *base >= first_to_recover
                || tail_untrusted
                || !segment.indexes_consistent(!clean_shutdown)
            {
                let dropped = segment.recover(config.max_message_bytes)?;
                report.recovered_segments += 1;
                if dropped > 0 {
                    report.truncated_bytes += dropped;
                    truncated_at = Some(segment.next_offset());
                    if !active {
                        segment.reopen_for_append(config.segment_index_bytes)?;
                    }
                }
            }
            segments.insert(*base, segment);
        }
        report.segments = segments.len();
        let first_base = *segments.keys().next().unwrap_or(&0);
        let mut log = Self {
            tp,
            dir: dir.to_path_buf(),
            config,
            segments,
            log_start_offset: log_start_offset.max(first_base),
            recovery_point: 0,
            unflushed_messages: 0,
            last_flush_ms: now_ms,
            flushes: 0,
            failed: false,
            cleaned_up_to: 0,
            producers: ProducerState::default(),
            aborted_txns: TxnIndex::load(dir)?,
            leader_epochs: LeaderEpochCache::load(dir)?,
            high_watermark: 0,
            replicated: false,
            space: None,
        };
        let end = log.log_end_offset();
        log.recovery_point = if clean_shutdown {
            end
        } else {
            recovery_point.min(end)
        };
        if log.log_start_offset > end {
            // Records were deleted past everything that survived: start empty at that offset.
            let start = log.log_start_offset;
            log.reset_to(start, now_ms)?;
        }
        log.load_producer_state(Some(&snapshots))?;
        log.load_leader_epochs()?;
        Ok((log, report))
    }

    /// Aligns the leader-epoch cache with the log that survived loading. A log written
    /// before the cache existed (or whose file was lost) gets it rebuilt from batch headers.
    fn load_leader_epochs(&mut self) -> Result<(), StorageError> {
        let end = self.log_end_offset();
        self.leader_epochs.truncate_from_end(end)?;
        if !self.leader_epochs.file_exists() && end > self.log_start_offset {
            let mut found = Vec::new();
            for segment in self.segments.values() {
                segment.for_each_batch_from(self.log_start_offset, |batch| {
                    let epoch = batch.partition_leader_epoch();
                    if found.last().is_none_or(|(last, _)| *last < epoch) {
                        found.push((epoch, batch.base_offset()));
                    }
                })?;
            }
            for (epoch, start) in found {
                self.leader_epochs.assign(epoch, start)?;
            }
            // Also when no batch carried an epoch, so the next start does not scan again.
            self.leader_epochs.persist()?;
        }
        self.leader_epochs
            .truncate_from_start(self.log_start_offset)?;
        Ok(())
    }

    /// Producer state from the newest snapshot at or below the log end, plus the batch headers
    /// after it (after a clean shutdown the snapshot is at the log end: nothing to replay).
    /// The aborted-transaction index is rebuilt from the same point. `snapshots` are the
    /// snapshot offsets in the directory when the caller listed it already.
    fn load_producer_state(&mut self, snapshots: Option<&[i64]>) -> Result<(), StorageError> {
        let end = self.log_end_offset();
        let latest = match snapshots {
            Some(offsets) => producer_state::latest_snapshot_of(&self.dir, offsets, end)?,
            None => producer_state::latest_snapshot(&self.dir, end)?,
        };
        let (from, state) = latest.unwrap_or((self.log_start_offset, ProducerState::default()));
        self.producers = state;
        self.aborted_txns.truncate_from(from)?;
        if from < end {
            let mut completed = Vec::new();
            for segment in self.segments.values().filter(|s| s.next_offset() > from) {
                segment.for_each_batch_from(from, |batch| {
                    completed.extend(self.producers.update(batch, batch.base_offset()));
                })?;
            }
            for txn in completed {
                self.record_completed(txn)?;
            }
        }
        self.producers.on_high_watermark(self.high_watermark());
        Ok(())
    }

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

    /// Appends a transaction marker for `producer_id` as leader (the transaction
    /// coordinator's WriteTxnMarkers): refused if from an older producer epoch or an older
    /// coordinator.
    pub fn append_marker(
        &mut self,
        producer_id: i64,
        producer_epoch: i16,
        marker: record::control::Marker,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<AppendInfo, StorageError> {
        self.check_online()?;
        self.producers
            .admit_marker(producer_id, producer_epoch, marker.coordinator_epoch)?;
        let batch = record::control::build_marker(producer_id, producer_epoch, marker, now_ms);
        let result = self.append_inner(&batch, leader_epoch, now_ms, None);
        self.guard(result)
    }

    /// Forgets producers silent for `producer.id.expiration.ms`.
    pub fn expire_producers(&mut self, now_ms: i64, expiration_ms: i64) {
        self.producers.expire(now_ms, expiration_ms);
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
    pub fn is_failed(&self) -> bool {
        self.failed
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
        if self.failed {
            Err(StorageError::Offline)
        } else {
            Ok(())
        }
    }

    /// Takes the log offline as an I/O error would (tests of what clients are then told).
    #[cfg(test)]
    pub(crate) fn fail_for_test(&mut self) {
        self.failed = true;
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
            }
            _ => {}
        }
        result
    }

    /// Appends one validated batch as leader: assigns offsets from the log end offset, stamps
    /// the leader epoch and, for LogAppendTime topics, the broker time. Only the batch header
    /// is rewritten (in a copy); the records go to the segment as they arrived.
    pub fn append_as_leader(
        &mut self,
        batch: &[u8],
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<AppendInfo, StorageError> {
        self.append_validated(batch, leader_epoch, now_ms, None)
    }

    /// [`Log::append_as_leader`] for a batch whose records were walked: with CreateTime its
    /// header gets `max_timestamp`, the largest record timestamp, as Kafka's validator sets it.
    pub fn append_validated(
        &mut self,
        batch: &[u8],
        leader_epoch: i32,
        now_ms: i64,
        max_timestamp: Option<i64>,
    ) -> Result<AppendInfo, StorageError> {
        self.check_online()?;
        self.check_space(now_ms)?;
        let result = self.append_inner(batch, leader_epoch, now_ms, max_timestamp);
        self.guard(result)
    }

    fn append_inner(
        &mut self,
        batch: &[u8],
        leader_epoch: i32,
        now_ms: i64,
        validated_max_timestamp: Option<i64>,
    ) -> Result<AppendInfo, StorageError> {
        let base_offset = self.log_end_offset();
        let (delta, count, max_timestamp) = {
            let view = BatchView::new(batch)?;
            // A retried idempotent batch already in the log is answered with its offsets.
            if let Admission::Duplicate {
                base_offset,
                last_offset,
            } = self.producers.admit(&view)?
            {
                return Ok(AppendInfo {
                    base_offset,
                    last_offset,
                    log_append_time: -1,
                    log_start_offset: self.log_start_offset,
                    flush_due: false,
                });
            }
            (
                view.last_offset_delta() as i64,
                view.records_count() as i64,
                view.max_timestamp(),
            )
        };
        let stamp = match (self.config.log_append_time, validated_max_timestamp) {
            (true, _) => record::MaxTimestamp::LogAppendTime(now_ms),
            (false, Some(t)) if t != max_timestamp => record::MaxTimestamp::Create(t),
            (false, _) => record::MaxTimestamp::AsProduced,
        };
        let incoming_timestamp = stamp.value().unwrap_or(max_timestamp);
        self.maybe_roll(batch.len(), base_offset + delta, incoming_timestamp, now_ms)?;
        let log_append_time = self.config.log_append_time.then_some(now_ms);
        let header = record::stamped_header(batch, base_offset, leader_epoch, stamp)?;
        // Before the write: a crash between the two leaves an entry past the log end, which
        // loading drops; the other order could lose an epoch the log holds.
        self.leader_epochs.assign(leader_epoch, base_offset)?;
        let active = self
            .segments
            .values_mut()
            .next_back()
            .ok_or(StorageError::Offline)?;
        active.append_stamped(&header, &batch[record::HEADER_LEN..])?;
        if let Some(txn) = self.producers.update(&BatchView::new(batch)?, base_offset) {
            self.record_completed(txn)?;
        }
        self.unflushed_messages += count;
        self.commit_if_unreplicated();
        Ok(AppendInfo {
            base_offset,
            last_offset: base_offset + delta,
            log_append_time: log_append_time.unwrap_or(-1),
            log_start_offset: self.log_start_offset,
            flush_due: self.unflushed_messages >= self.config.flush_messages,
        })
    }

    /// Appends batches fetched from the leader exactly as they are (the leader assigned
    /// offsets, epochs and timestamps). They must continue the log and pass validation;
    /// when any fails nothing is appended. A partial batch at the end (a fetch cut at its
    /// byte limit) is ignored. Returns the last offset appended, `None` for no batch.
    pub fn append_as_follower(
        &mut self,
        records: &[u8],
        now_ms: i64,
    ) -> Result<Option<i64>, StorageError> {
        self.check_online()?;
        self.check_space(now_ms)?;
        let mut expected = self.log_end_offset();
        let mut batches = Vec::new();
        for batch in record::BatchIter::new(records) {
            let batch = batch?;
            batch.validate()?;
            if batch.base_offset() != expected {
                return Err(StorageError::UnexpectedAppendOffset {
                    expected,
                    got: batch.base_offset(),
                });
            }
            expected = batch.last_offset() + 1;
            batches.push(batch);
        }
        let result = self.append_replicated(&batches, now_ms);
        self.guard(result)?;
        Ok(batches.last().map(|b| b.last_offset()))
    }

    fn append_replicated(
        &mut self,
        batches: &[BatchView<'_>],
        now_ms: i64,
    ) -> Result<(), StorageError> {
        for batch in batches {
            self.maybe_roll(
                batch.size(),
                batch.last_offset(),
                batch.max_timestamp(),
                now_ms,
            )?;
            self.leader_epochs
                .assign(batch.partition_leader_epoch(), batch.base_offset())?;
            let active = self
                .segments
                .values_mut()
                .next_back()
                .ok_or(StorageError::Offline)?;
            active.append(batch.bytes())?;
            if let Some(txn) = self.producers.update(batch, batch.base_offset()) {
                self.record_completed(txn)?;
            }
            self.unflushed_messages += batch.records_count() as i64;
        }
        self.commit_if_unreplicated();
        Ok(())
    }

    /// Removes every record at or after `offset`, whole batches: a batch holding `offset`
    /// goes too, so the log may end below it (Kafka's `truncateTo`). Followers do this when
    /// their log diverges from the new leader's. Returns the new log end offset.
    pub fn truncate_to(&mut self, offset: i64) -> Result<i64, StorageError> {
        self.check_online()?;
        if offset >= self.log_end_offset() {
            return Ok(self.log_end_offset());
        }
        let result = self.truncate_inner(offset);
        self.guard(result)
    }

    fn truncate_inner(&mut self, offset: i64) -> Result<i64, StorageError> {
        if offset <= self.log_start_offset {
            let start = offset.max(0);
            let now = crate::types::now_ms();
            self.reset_to(start, now)?;
            return Ok(start);
        }
        let doomed: Vec<i64> = self.segments.range(offset..).map(|(b, _)| *b).collect();
        // The segment holding `offset` is truncated; the ones starting after it go.
        // `offset` is above the log start, so the segment holding it starts below it.
        for base in doomed.iter().rev() {
            if let Some(segment) = self.segments.remove(base) {
                segment.delete()?;
            }
        }
        let end = match self.segments.values_mut().next_back() {
            Some(active) => {
                active.truncate_to(offset)?;
                active.reopen_for_append(self.config.segment_index_bytes)?;
                active.next_offset()
            }
            None => offset,
        };
        self.leader_epochs.truncate_from_end(end)?;
        // As Kafka does: the producer state (and the aborted transactions) as of the newest
        // snapshot at or below the new end, replayed to it.
        self.aborted_txns.truncate_from(end)?;
        self.load_producer_state(None)?;
        self.recovery_point = self.recovery_point.min(end);
        self.high_watermark = self.high_watermark.min(end);
        self.cleaned_up_to = self.cleaned_up_to.min(end);
        tracing::info!(partition = %self.tp, offset, log_end_offset = end, "truncated log");
        Ok(end)
    }

    /// Deletes everything and restarts the log, empty, at `offset` (a follower given a
    /// snapshot past its log, Kafka's `truncateFullyAndStartAt`).
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), StorageError> {
        self.check_online()?;
        let result = self.reset_to(offset, crate::types::now_ms());
        self.guard(result)
    }

    /// Kafka's `shouldRoll`: size, age (less jitter), full indexes, or relative offsets that
    /// would no longer fit in the index's 32 bits.
    fn maybe_roll(
        &mut self,
        batch_size: usize,
        last_offset: i64,
        incoming_timestamp: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let max_age = self
            .config
            .segment_ms
            .saturating_sub(self.config.segment_jitter_ms);
        let Some(active) = self.segments.values_mut().next_back() else {
            return Ok(());
        };
        if active.is_empty() {
            return Ok(());
        }
        let full = active.size() as u64 + batch_size as u64 > self.config.segment_bytes;
        let aged = active.time_waited_for_roll(now_ms, incoming_timestamp)? > max_age;
        let overflow = last_offset - active.base_offset() > u32::MAX as i64 - 1;
        if full || aged || active.indexes_full() || overflow {
            self.roll(now_ms)?;
        }
        Ok(())
    }

    /// Seals the active segment and starts a new one at the log end offset.
    pub fn roll(&mut self, now_ms: i64) -> Result<(), StorageError> {
        self.check_online()?;
        let result = self.roll_inner(now_ms);
        self.guard(result)
    }

    fn roll_inner(&mut self, now_ms: i64) -> Result<(), StorageError> {
        let next = self.log_end_offset();
        if self.segments.contains_key(&next) {
            return Ok(()); // the active segment is empty already
        }
        if let Some(active) = self.segments.values_mut().next_back() {
            active.seal()?;
        }
        let created = Segment::create(
            &self.dir,
            next,
            self.config.segment_index_bytes,
            self.config.index_interval_bytes,
            now_ms,
        );
        let segment = match created {
            Ok(segment) => segment,
            Err(e) => {
                // No new segment (no descriptor or space for it): the sealed one takes the
                // next append again, and files half-created are removed.
                if let Some(active) = self.segments.values_mut().next_back() {
                    active.reopen_for_append(self.config.segment_index_bytes)?;
                }
                for ext in ["log", "index", "timeindex"] {
                    let _ = std::fs::remove_file(self.dir.join(segment::file_name(next, ext)));
                }
                return Err(e);
            }
        };
        self.segments.insert(next, segment);
        // Kafka's snapshot at roll: an unclean restart replays at most the active segment.
        producer_state::write_snapshot(&self.dir, next, next, &self.producers)?;
        tracing::debug!(partition = %self.tp, base_offset = next, "rolled segment");
        Ok(())
    }

    /// Reads from `offset` up to `max_bytes` of whole batches below `max_offset` (the high
    /// watermark for consumers). An offset outside [log start, log end] is out of range.
    pub fn read(
        &self,
        offset: i64,
        max_bytes: usize,
        max_offset: i64,
        min_one_batch: bool,
    ) -> Result<Option<SegmentRead>, StorageError> {
        self.check_online()?;
        let end = self.log_end_offset();
        if offset < self.log_start_offset || offset > end {
            return Err(StorageError::OffsetOutOfRange {
                offset,
                start: self.log_start_offset,
                end,
            });
        }
        let first = self
            .segments
            .range(..=offset)
            .next_back()
            .map(|(b, _)| *b)
            .unwrap_or(self.log_start_offset);
        for (_, segment) in self.segments.range(first..) {
            if let Some(read) = segment.read(offset, max_bytes, max_offset, min_one_batch)? {
                return Ok(Some(read));
            }
        }
        Ok(None)
    }

    /// The first offset whose record timestamp is >= `timestamp`, with that timestamp.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<(i64, i64)>, StorageError> {
        self.check_online()?;
        for segment in self.segments.values() {
            if segment.max_timestamp() < timestamp {
                continue;
            }
            let Some(mut location) = segment.find_batch_by_timestamp(timestamp)? else {
                continue;
            };
            loop {
                if let Some(found) = self.first_record_at_or_after(segment, &location, timestamp)? {
                    return Ok(Some(found));
                }
                match segment.read_location(location.position + location.size)? {
                    Some(next) => location = next,
                    None => break,
                }
            }
        }
        Ok(None)
    }

    fn first_record_at_or_after(
        &self,
        segment: &Segment,
        location: &BatchLocation,
        timestamp: i64,
    ) -> Result<Option<(i64, i64)>, StorageError> {
        if location.max_timestamp < timestamp || location.last_offset < self.log_start_offset {
            return Ok(None);
        }
        let bytes = segment.read_batch(location)?;
        let view = BatchView::new(&bytes)?;
        record::walk::first_at_or_after(&view, timestamp, self.log_start_offset)
            .map_err(|e| StorageError::Record(e.into()))
    }

    /// The offset and timestamp of the record with the largest timestamp (ListOffsets -3).
    pub fn max_timestamp_record(&self) -> Result<Option<(i64, i64)>, StorageError> {
        self.check_online()?;
        let Some(segment) = self
            .segments
            .values()
            .filter(|s| s.max_timestamp() >= 0)
            .max_by_key(|s| s.max_timestamp())
        else {
            return Ok(None);
        };
        let Some(location) = segment.batch_of_max_timestamp()? else {
            return Ok(None);
        };
        let bytes = segment.read_batch(&location)?;
        let view = BatchView::new(&bytes)?;
        record::walk::max_timestamp_record(&view).map_err(|e| StorageError::Record(e.into()))
    }

    /// Moves the log start offset forward (DeleteRecords); whole segments below it are
    /// deleted. `offset` must be within [log start, high watermark].
    pub fn delete_records_before(&mut self, offset: i64) -> Result<i64, StorageError> {
        self.check_online()?;
        let hw = self.high_watermark();
        if offset > hw || offset < 0 {
            return Err(StorageError::OffsetOutOfRange {
                offset,
                start: self.log_start_offset,
                end: hw,
            });
        }
        if offset > self.log_start_offset {
            self.log_start_offset = offset;
            let result = self
                .delete_segments_below_start()
                .and_then(|_| self.leader_epochs.truncate_from_start(offset))
                .and_then(|_| self.aborted_txns.drop_before(offset))
                .and_then(|_| producer_state::delete_snapshots_before(&self.dir, offset));
            self.guard(result)?;
        }
        Ok(self.log_start_offset)
    }

    /// Deletes whole segments entirely below the log start offset; the active one stays.
    fn delete_segments_below_start(&mut self) -> Result<usize, StorageError> {
        let bases: Vec<i64> = self.segments.keys().copied().collect();
        let mut deleted = 0;
        for pair in bases.windows(2) {
            if pair[1] <= self.log_start_offset {
                if let Some(segment) = self.segments.remove(&pair[0]) {
                    segment.delete()?;
                    deleted += 1;
                }
            } else {
                break;
            }
        }
        Ok(deleted)
    }

    /// Retention by time, then by size; then by log start offset. Deletes whole segments,
    /// oldest first, never the active one unless it is rolled first (as Kafka does when the
    /// active segment itself has expired). Returns the number of segments deleted.
    pub fn apply_retention(&mut self, now_ms: i64) -> Result<usize, StorageError> {
        self.check_online()?;
        let result = self.apply_retention_inner(now_ms);
        self.guard(result)
    }

    fn apply_retention_inner(&mut self, now_ms: i64) -> Result<usize, StorageError> {
        if !self.config.cleanup_delete {
            return self.delete_segments_below_start();
        }
        let mut doomed: Vec<i64> = Vec::new();
        // Only committed data may go: a segment holding records above the high watermark
        // stays (Kafka's upper bound for deletable segments).
        let high_watermark = self.high_watermark();
        if self.config.retention_ms >= 0 {
            for segment in self.segments.values() {
                if segment.is_empty()
                    || segment.next_offset() > high_watermark
                    || now_ms - segment.largest_timestamp() <= self.config.retention_ms
                {
                    break;
                }
                doomed.push(segment.base_offset());
            }
        }
        if self.config.retention_bytes >= 0 {
            let mut excess = self.size_bytes() as i64 - self.config.retention_bytes;
            for segment in self.segments.values() {
                if excess < segment.size() as i64
                    || segment.is_empty()
                    || segment.next_offset() > high_watermark
                {
                    break;
                }
                excess -= segment.size() as i64;
                if !doomed.contains(&segment.base_offset()) {
                    doomed.push(segment.base_offset());
                }
            }
        }
        let active_base = self.active().map(Segment::base_offset);
        if doomed.iter().any(|b| Some(*b) == active_base) {
            self.roll_inner(now_ms)?;
        }
        let mut deleted = 0;
        for base in doomed {
            if let Some(segment) = self.segments.remove(&base) {
                tracing::info!(partition = %self.tp, base_offset = base, "deleting segment by retention");
                segment.delete()?;
                deleted += 1;
            }
        }
        if let Some(first) = self.segments.keys().next() {
            self.log_start_offset = self.log_start_offset.max(*first);
        }
        deleted += self.delete_segments_below_start()?;
        self.leader_epochs
            .truncate_from_start(self.log_start_offset)?;
        self.aborted_txns.drop_before(self.log_start_offset)?;
        producer_state::delete_snapshots_before(&self.dir, self.log_start_offset)?;
        Ok(deleted)
    }

    /// Compacts the sealed segments (`cleanup.policy` with `compact`) when new sealed data
    /// appeared since the last pass. See `cleaner.rs`.
    pub fn compact(&mut self, now_ms: i64) -> Result<CleanStats, StorageError> {
        self.check_online()?;
        // Sealed segments wholly below the last stable offset: a transaction still open (or
        // not yet committed) may yet abort, so its records cannot decide what a key's latest
        // value is (Kafka's first uncleanable offset).
        let last_stable_offset = self.last_stable_offset();
        let active_base = self.active().map(Segment::base_offset).unwrap_or(0);
        let upto = self
            .segments
            .range(..active_base)
            .find(|(_, s)| s.next_offset() > last_stable_offset)
            .map_or(active_base, |(base, _)| *base);
        if !self.config.cleanup_compact || upto <= self.cleaned_up_to {
            return Ok(CleanStats::default());
        }
        let result = self.compact_inner(upto, now_ms);
        self.guard(result)
    }

    fn compact_inner(&mut self, upto: i64, now_ms: i64) -> Result<CleanStats, StorageError> {
        let sealed: Vec<i64> = self.segments.range(..upto).map(|(b, _)| *b).collect();
        let aborted = self.aborted_txns.entries().to_vec();
        // Two passes, one segment in memory at a time: the key map, then the rewrite.
        let mut latest = std::collections::HashMap::new();
        for base in &sealed {
            if let Some(segment) = self.segments.get(base) {
                latest.extend(cleaner::latest_offsets(&[segment.read_all()?], &aborted)?);
            }
        }
        let mut stats = CleanStats::default();
        let config = self.config.clone();
        for base in &sealed {
            let Some(segment) = self.segments.get_mut(base) else {
                continue;
            };
            let data = segment.read_all()?;
            if let Some((cleaned, removed)) = cleaner::clean_segment(
                &data,
                &latest,
                &aborted,
                now_ms,
                config.delete_retention_ms,
                config.min_compaction_lag_ms,
            )? {
                segment.replace_data(
                    &cleaned,
                    config.segment_index_bytes,
                    config.max_message_bytes,
                    now_ms,
                )?;
                stats.segments_rewritten += 1;
                stats.records_removed += removed;
            }
        }
        self.cleaned_up_to = upto;
        if stats.records_removed > 0 {
            tracing::info!(partition = %self.tp, segments = stats.segments_rewritten, records_removed = stats.records_removed, "compacted");
        }
        Ok(stats)
    }

    /// Fsyncs everything appended so far and advances the recovery point, holding the log
    /// (used at close and by tests; the produce path uses prepare/complete instead).
    pub fn flush(&mut self, now_ms: i64) -> Result<(), StorageError> {
        let Some(job) = self.prepare_flush(now_ms)? else {
            return Ok(());
        };
        let synced = job.sync();
        self.complete_flush(&job, synced)
    }

    /// Takes a flush job covering everything appended so far, or `None` when it is all durable
    /// already. Resets the `flush.messages` / `flush.ms` counters: the job covers those
    /// messages.
    pub fn prepare_flush(&mut self, now_ms: i64) -> Result<Option<FlushJob>, StorageError> {
        self.check_online()?;
        let end_offset = self.log_end_offset();
        if end_offset <= self.recovery_point {
            return Ok(None);
        }
        let from = self
            .segments
            .range(..=self.recovery_point)
            .next_back()
            .map(|(b, _)| *b)
            .unwrap_or(0);
        let files: Result<Vec<_>, StorageError> = self
            .segments
            .range(from..)
            .map(|(_, segment)| segment.prepare_sync())
            .collect();
        let files = self.guard(files)?;
        self.unflushed_messages = 0;
        self.last_flush_ms = now_ms;
        Ok(Some(FlushJob::new(files, end_offset)))
    }

    /// Records the outcome of a job's fsync: success advances the recovery point; failure
    /// takes the log offline, since what reached the disk is unknown (unless it was only
    /// out of a resource: the next flush tries again).
    pub fn complete_flush(
        &mut self,
        job: &FlushJob,
        synced: std::io::Result<()>,
    ) -> Result<(), StorageError> {
        self.guard(synced.map_err(StorageError::from))?;
        self.recovery_point = self.recovery_point.max(job.end_offset());
        self.flushes += 1;
        Ok(())
    }

    /// Fsyncs completed since this log was opened (for tests and metrics).
    pub fn flush_count(&self) -> u64 {
        self.flushes
    }

    /// A flush job if `flush.ms` has passed since the last flush with data waiting.
    pub fn prepare_flush_if_due(&mut self, now_ms: i64) -> Result<Option<FlushJob>, StorageError> {
        if self.failed
            || self.log_end_offset() <= self.recovery_point
            || now_ms - self.last_flush_ms < self.config.flush_ms
        {
            return Ok(None);
        }
        self.prepare_flush(now_ms)
    }

    /// Flushes and trims the active segment's indexes so the next start can trust them.
    pub fn close(&mut self, now_ms: i64) -> Result<(), StorageError> {
        self.flush(now_ms)?;
        if let Some(active) = self.segments.values_mut().next_back() {
            let result = active.seal();
            self.guard(result)?;
        }
        // So the next start need not replay anything to know its producers.
        let active_base = self.active().map_or(0, Segment::base_offset);
        let result = producer_state::write_snapshot(
            &self.dir,
            self.log_end_offset(),
            active_base,
            &self.producers,
        );
        self.guard(result)
    }

    /// Replaces all data with an empty segment at `offset`.
    fn reset_to(&mut self, offset: i64, now_ms: i64) -> Result<(), StorageError> {
        for (_, segment) in std::mem::take(&mut self.segments) {
            segment.delete()?;
        }
        let segment = Segment::create(
            &self.dir,
            offset,
            self.config.segment_index_bytes,
            self.config.index_interval_bytes,
            now_ms,
        )?;
        self.segments.insert(offset, segment);
        self.log_start_offset = offset;
        self.recovery_point = offset;
        self.high_watermark = offset;
        self.producers = ProducerState::default();
        producer_state::delete_snapshots_before(&self.dir, i64::MAX)?;
        self.aborted_txns.truncate_from(i64::MIN)?;
        self.leader_epochs.clear()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BrokerConfig;
    use crate::record::test_support::batch;

    fn config(pairs: &[(&str, &str)]) -> LogConfig {
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        let overrides = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LogConfig::resolve(&broker.topic_defaults, &overrides)
    }

    fn append(log: &mut Log, count: i32, ts: i64) -> AppendInfo {
        log.append_as_leader(&batch(0, count, ts, 100), 0, ts)
            .unwrap()
    }

    #[test]
    fn small_and_large_batches_are_stored_as_stamped_with_valid_crcs() {
        let dir = tempfile::tempdir().unwrap();
        for append_time in ["CreateTime", "LogAppendTime"] {
            let mut log = Log::create(
                &dir.path().join(append_time),
                TopicPartition::new("t", 0),
                config(&[("message.timestamp.type", append_time)]),
                0,
            )
            .unwrap();
            // 3 records take one joined write; 500 records of 100 bytes take two.
            let small = batch(0, 3, 5, 100);
            let large = batch(0, 500, 5, 100);
            assert!(large.len() - crate::record::HEADER_LEN > 16 * 1024);
            log.append_as_leader(&small, 4, 77).unwrap();
            log.append_as_leader(&large, 4, 77).unwrap();
            let read = log
                .read(0, usize::MAX, log.log_end_offset(), true)
                .unwrap()
                .unwrap();
            let bytes = read.records.read().unwrap();
            let stored: Vec<_> = crate::record::BatchIter::new(&bytes)
                .map(|b| b.unwrap())
                .collect();
            assert_eq!(stored.len(), 2);
            for (view, (original, base)) in stored.iter().zip([(&small, 0), (&large, 3)]) {
                view.validate().unwrap();
                assert_eq!(view.base_offset(), base);
                let mut expected = original.clone();
                let log_append_time = (append_time == "LogAppendTime").then_some(77);
                crate::record::assign_offsets(&mut expected, base, 4, log_append_time);
                assert_eq!(view.bytes(), &expected[..], "{append_time}");
            }
        }
    }

    #[test]
    fn offsets_are_assigned_and_reads_span_segments() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(
            dir.path(),
            TopicPartition::new("t", 0),
            config(&[("segment.bytes", "1000")]),
            0,
        )
        .unwrap();
        for i in 0..20 {
            let info = append(&mut log, 3, 1000 + i);
            assert_eq!(info.base_offset, i * 3);
        }
        assert!(log.segment_count() > 3, "rolled by size");
        assert_eq!(log.log_end_offset(), 60);
        let mut offset = 0;
        while offset < 60 {
            let read = log.read(offset, 10, 60, true).unwrap().unwrap();
            let bytes = read.records.read().unwrap();
            let view = BatchView::new(&bytes).unwrap();
            assert!(view.base_offset() <= offset && offset <= view.last_offset());
            offset = read.next_offset;
        }
        assert!(log.read(60, 1000, 60, true).unwrap().is_none());
        assert!(matches!(
            log.read(61, 1000, 60, true),
            Err(StorageError::OffsetOutOfRange { .. })
        ));
    }

    #[test]
    fn timestamps_and_delete_records() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(
            dir.path(),
            TopicPartition::new("t", 0),
            config(&[("segment.bytes", "2000")]),
            0,
        )
        .unwrap();
        for i in 0..10 {
            append(&mut log, 4, 10_000 + i * 100); // record j of batch i at 10_000 + i*100 + j
        }
        assert_eq!(
            log.offset_for_timestamp(10_502).unwrap(),
            Some((22, 10_502))
        );
        assert_eq!(
            log.offset_for_timestamp(10_450).unwrap(),
            Some((20, 10_500))
        );
        assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((0, 10_000)));
        assert_eq!(log.offset_for_timestamp(99_999).unwrap(), None);
        assert_eq!(log.max_timestamp_record().unwrap(), Some((39, 10_903)));
        let segments_before = log.segment_count();
        assert_eq!(log.delete_records_before(30).unwrap(), 30);
        assert!(log.segment_count() < segments_before);
        assert!(matches!(
            log.read(29, 1000, 40, true),
            Err(StorageError::OffsetOutOfRange { .. })
        ));
        assert_eq!(log.offset_for_timestamp(0).unwrap(), Some((30, 10_702)));
        assert!(log.delete_records_before(41).is_err());
    }

    #[test]
    fn retention_by_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(
            dir.path(),
            TopicPartition::new("t", 0),
            config(&[("segment.bytes", "500"), ("retention.bytes", "1500")]),
            0,
        )
        .unwrap();
        for i in 0..30 {
            append(&mut log, 1, 1_000 + i);
        }
        log.apply_retention(2_000).unwrap();
        // Kafka deletes while the rest still exceeds the limit by a whole segment or more.
        assert!(log.size_bytes() < 1500 + 500, "size {}", log.size_bytes());
        assert!(log.log_start_offset() > 0);
        assert_eq!(log.log_end_offset(), 30);

        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(
            dir.path(),
            TopicPartition::new("t", 0),
            config(&[("segment.bytes", "500"), ("retention.ms", "1000")]),
            0,
        )
        .unwrap();
        for i in 0..10 {
            append(&mut log, 1, 1_000 + i);
        }
        log.apply_retention(5_000).unwrap();
        assert_eq!(
            log.log_start_offset(),
            10,
            "everything expired, active rolled"
        );
        assert_eq!(log.log_end_offset(), 10);
        assert_eq!(append(&mut log, 1, 6_000).base_offset, 10);
    }

    #[test]
    fn clean_and_unclean_reload() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let cfg = config(&[("segment.bytes", "1000")]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        for i in 0..20 {
            append(&mut log, 2, i);
        }
        log.close(0).unwrap();
        drop(log);
        let (log, report) = Log::load(dir.path(), tp.clone(), cfg.clone(), 40, 0, true, 0).unwrap();
        assert_eq!(report.recovered_segments, 0);
        assert_eq!(log.log_end_offset(), 40);
        drop(log);
        // Unclean: torn tail in the active segment.
        let last = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .max()
            .unwrap();
        let mut bytes = std::fs::read(&last).unwrap();
        bytes.extend_from_slice(&[0xAB; 37]);
        std::fs::write(&last, bytes).unwrap();
        let (mut log, report) = Log::load(dir.path(), tp, cfg, 0, 0, false, 0).unwrap();
        assert_eq!(report.truncated_bytes, 37);
        assert_eq!(log.log_end_offset(), 40);
        assert_eq!(append(&mut log, 1, 99).base_offset, 40);
    }

    #[test]
    fn transactions_bound_the_last_stable_offset_and_aborts_are_indexed_across_reloads() {
        use crate::record::control::{Marker, MarkerKind};
        use crate::record::test_support::transactional;
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let cfg = config(&[("segment.bytes", "400")]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        let marker = |kind| Marker {
            kind,
            coordinator_epoch: 3,
        };
        log.append_as_leader(&transactional(2, 1, 0), 0, 1_000)
            .unwrap(); // 0-1, producer 1
        append(&mut log, 1, 5); // 2, not transactional
        log.append_as_leader(&transactional(2, 2, 0), 0, 1_000)
            .unwrap(); // 3-4, producer 2
        log.append_as_leader(&transactional(1, 1, 2), 0, 1_000)
            .unwrap(); // 5, producer 1 again
        assert_eq!(log.high_watermark(), 6);
        assert_eq!(
            log.last_stable_offset(),
            0,
            "producer 1's transaction is open"
        );

        log.append_marker(1, 0, marker(MarkerKind::Commit), 0, 1_000)
            .unwrap(); // 6
        assert_eq!(
            log.last_stable_offset(),
            3,
            "now producer 2's is the first open one"
        );
        log.append_marker(2, 0, marker(MarkerKind::Abort), 0, 1_000)
            .unwrap(); // 7
        assert_eq!(log.last_stable_offset(), 8);
        let aborted = log.aborted_transactions(0, 8);
        assert_eq!(aborted.len(), 1);
        assert_eq!(
            (
                aborted[0].producer_id,
                aborted[0].first_offset,
                aborted[0].last_offset
            ),
            (2, 3, 7)
        );
        assert!(log.aborted_transactions(8, 20).is_empty());
        let stale_coordinator = Marker {
            kind: MarkerKind::Abort,
            coordinator_epoch: 2,
        };
        assert!(matches!(
            log.append_marker(2, 0, stale_coordinator, 0, 1_000),
            Err(StorageError::Producer(
                crate::storage::producer_state::ProducerError::CoordinatorFenced {
                    got: 2,
                    current: 3
                }
            ))
        ));

        // A replicated log: a marker is stable only once the high watermark passes it.
        log.set_replicated(true);
        log.set_high_watermark(8);
        log.append_as_leader(&transactional(1, 3, 0), 0, 1_000)
            .unwrap(); // 8
        log.append_marker(3, 0, marker(MarkerKind::Abort), 0, 1_000)
            .unwrap(); // 9
        assert_eq!(log.last_stable_offset(), 8);
        log.set_high_watermark(10);
        assert_eq!(log.last_stable_offset(), 10);
        assert_eq!(log.aborted_transactions(0, 10).len(), 2);

        // An unclean reload replays the producers and rebuilds the index (no duplicates).
        drop(log);
        let (mut log, _) = Log::load(dir.path(), tp.clone(), cfg.clone(), 0, 0, false, 0).unwrap();
        assert_eq!(log.aborted_transactions(0, 10).len(), 2);
        log.append_as_leader(&transactional(1, 4, 0), 0, 1_000)
            .unwrap(); // 10, open
        assert_eq!(log.last_stable_offset(), 10);
        // Truncating away producer 3's abort marker reopens its transaction.
        log.truncate_to(9).unwrap();
        assert_eq!(log.last_stable_offset(), 8);
        assert_eq!(log.aborted_transactions(0, 10).len(), 1);
    }

    #[test]
    fn producer_state_is_snapshotted_at_each_roll_and_survives_an_unclean_stop() {
        use crate::record::test_support::set_producer_fields;
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("p", 0);
        let cfg = config(&[("segment.bytes", "300")]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        let idempotent = |seq: i32| {
            let mut b = batch(0, 2, 1_000, 20);
            set_producer_fields(&mut b, 42, 0, seq);
            b
        };
        for i in 0..12 {
            log.append_as_leader(&idempotent(i * 2), 0, 1_000).unwrap();
        }
        let snapshots = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".snapshot")
            })
            .count();
        assert!(log.segment_count() > 2);
        assert_eq!(snapshots, log.segment_count() - 1, "one per roll");
        // No close: the next start replays only the active segment after its snapshot, and
        // still knows the producer's last batch.
        drop(log);
        let (mut log, _) = Log::load(dir.path(), tp, cfg, 0, 0, false, 0).unwrap();
        let end = log.log_end_offset();
        let retry = log.append_as_leader(&idempotent(22), 0, 1_000).unwrap();
        assert_eq!(
            retry.base_offset,
            end - 2,
            "the retried last batch is a duplicate"
        );
        assert_eq!(log.log_end_offset(), end);
    }

    #[test]
    fn compaction_ignores_aborted_records_and_stops_at_the_last_stable_offset() {
        use crate::record::control::{Marker, MarkerKind};
        use crate::record::test_support::make_transactional;
        use crate::record::{NewRecord, build_batch};
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(&[
            ("cleanup.policy", "compact"),
            ("segment.bytes", "250"),
            ("min.compaction.lag.ms", "0"),
        ]);
        let mut log = Log::create(dir.path(), TopicPartition::new("c", 0), cfg, 0).unwrap();
        let keyed = |key: &str, value: &str| {
            build_batch(&[NewRecord {
                key: Some(key.as_bytes()),
                value: Some(value.as_bytes()),
                timestamp: 1_000,
            }])
        };
        let abort = Marker {
            kind: MarkerKind::Abort,
            coordinator_epoch: 0,
        };
        log.append_as_leader(&keyed("k1", "committed"), 0, 1_000)
            .unwrap();
        let mut aborted = keyed("k1", "aborted");
        make_transactional(&mut aborted, 5, 0);
        log.append_as_leader(&aborted, 0, 1_000).unwrap();
        log.append_marker(5, 0, abort, 0, 1_000).unwrap();
        for i in 0..6 {
            log.append_as_leader(&keyed("k3", &format!("early-{i}")), 0, 1_000)
                .unwrap();
        }
        let mut open = keyed("k2", "open");
        make_transactional(&mut open, 6, 0);
        let open_at = log.append_as_leader(&open, 0, 1_000).unwrap().base_offset;
        for i in 0..6 {
            log.append_as_leader(&keyed("k3", &format!("late-{i}")), 0, 1_000)
                .unwrap();
        }
        assert_eq!(log.last_stable_offset(), open_at);
        let values = |log: &Log| -> Vec<String> {
            let mut out = Vec::new();
            for segment in log.segments.values() {
                for batch in crate::record::BatchIter::new(&segment.read_all().unwrap()) {
                    let batch = batch.unwrap();
                    if batch.is_control() {
                        continue;
                    }
                    for r in crate::record::records::parse_records(
                        batch.records_payload(),
                        batch.records_count(),
                    )
                    .unwrap()
                    {
                        out.push(String::from_utf8_lossy(r.value.unwrap()).into_owned());
                    }
                }
            }
            out
        };

        log.compact(2_000).unwrap();
        let after = values(&log);
        assert!(after.contains(&"committed".to_string()), "{after:?}");
        assert!(!after.contains(&"aborted".to_string()), "{after:?}");
        // Nothing at or after the open transaction was cleaned: every late value is there.
        for i in 0..6 {
            assert!(after.contains(&format!("late-{i}")), "{after:?}");
        }

        // Once the transaction ends, the rest can be cleaned.
        let commit = Marker {
            kind: MarkerKind::Commit,
            coordinator_epoch: 0,
        };
        log.append_marker(6, 0, commit, 0, 1_000).unwrap();
        for i in 0..6 {
            log.append_as_leader(&keyed("k4", &format!("fill-{i}")), 0, 1_000)
                .unwrap();
        }
        log.compact(3_000).unwrap();
        let after = values(&log);
        assert!(
            after.contains(&"open".to_string()),
            "committed now: {after:?}"
        );
        assert!(
            after.iter().filter(|v| v.starts_with("late-")).count() < 6,
            "{after:?}"
        );
    }

    #[test]
    fn compaction_keeps_latest_per_key_across_segments_and_survives_reload() {
        use crate::record::{NewRecord, build_batch};
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("c", 0);
        let cfg = config(&[
            ("cleanup.policy", "compact"),
            ("segment.bytes", "300"),
            ("min.compaction.lag.ms", "0"),
        ]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        for round in 0..10 {
            for key in ["k1", "k2", "k3"] {
                let value = format!("{key}-v{round}");
                let batch = build_batch(&[NewRecord {
                    key: Some(key.as_bytes()),
                    value: Some(value.as_bytes()),
                    timestamp: 1_000,
                }]);
                log.append_as_leader(&batch, 0, 1_000).unwrap();
            }
        }
        assert!(log.segment_count() > 3);
        let end = log.log_end_offset();
        let stats = log.compact(2_000).unwrap();
        assert!(stats.records_removed > 0, "{stats:?}");
        assert_eq!(
            log.compact(2_000).unwrap(),
            CleanStats::default(),
            "nothing new sealed: no pass"
        );
        let read_all = |log: &Log| {
            let mut out = Vec::new();
            let mut offset = log.log_start_offset();
            while let Some(read) = log.read(offset, 1 << 20, end, true).unwrap() {
                for batch in crate::record::BatchIter::new(&read.records.read().unwrap()) {
                    let batch = batch.unwrap();
                    assert!(batch.crc_matches());
                    for r in crate::record::records::parse_records(
                        batch.records_payload(),
                        batch.records_count(),
                    )
                    .unwrap()
                    {
                        out.push((
                            batch.base_offset() + r.offset_delta as i64,
                            String::from_utf8_lossy(r.value.unwrap()).into_owned(),
                        ));
                    }
                }
                offset = read.next_offset;
                if offset >= end {
                    break;
                }
            }
            out
        };
        let records = read_all(&log);
        assert_eq!(log.log_end_offset(), end, "offsets never move");
        assert!(records.windows(2).all(|w| w[0].0 < w[1].0));
        // The active segment is never cleaned; every key's last value is still there.
        for key in ["k1", "k2", "k3"] {
            assert!(records.iter().any(|(_, v)| *v == format!("{key}-v9")));
        }
        assert!(
            records.len() < 30,
            "older values are gone: {} left",
            records.len()
        );
        drop(log);
        let (reloaded, report) = Log::load(dir.path(), tp, cfg, 0, 0, false, 3_000).unwrap();
        assert_eq!(report.truncated_bytes, 0, "compacted segments are valid");
        assert_eq!(read_all(&reloaded), records);
    }

    /// The raw batches of `log` from `offset` to its end, as a leader's fetch would send them.
    fn raw_from(log: &Log, offset: i64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut next = offset;
        while next < log.log_end_offset() {
            let read = log
                .read(next, 1 << 20, i64::MAX, true)
                .unwrap()
                .expect("data below the log end");
            out.extend_from_slice(&read.records.read().unwrap());
            next = read.next_offset;
        }
        out
    }

    #[test]
    fn a_follower_copies_the_leaders_batches_byte_for_byte_across_segments() {
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let tp = TopicPartition::new("r", 0);
        let cfg = config(&[("segment.bytes", "700")]);
        let mut leader = Log::create(dirs[0].path(), tp.clone(), cfg.clone(), 0).unwrap();
        let mut follower = Log::create(dirs[1].path(), tp.clone(), cfg.clone(), 0).unwrap();
        for (i, epoch) in [0, 0, 0, 2, 2, 5, 5, 5].iter().enumerate() {
            leader
                .append_as_leader(&batch(0, 3, i as i64, 60), *epoch, i as i64)
                .unwrap();
        }
        // In two fetches, the second ending in a partial batch that is left for later.
        let all = raw_from(&leader, 0);
        let cut = raw_from(&leader, 9).len();
        let first = &all[..all.len() - cut];
        assert_eq!(follower.append_as_follower(first, 0).unwrap(), Some(8));
        let rest = &all[all.len() - cut..];
        assert_eq!(
            follower
                .append_as_follower(&rest[..rest.len() - 10], 0)
                .unwrap(),
            Some(20)
        );
        assert_eq!(follower.append_as_follower(&[], 0).unwrap(), None);
        let last_batch = raw_from(&leader, 21);
        assert_eq!(
            follower.append_as_follower(&last_batch, 0).unwrap(),
            Some(23)
        );
        assert!(follower.segment_count() > 1, "rolled like the leader");
        assert_eq!(raw_from(&follower, 0), all);
        assert_eq!(follower.latest_epoch(), Some(5));
        assert_eq!(follower.end_offset_for_epoch(2), (2, 15));
        assert_eq!(follower.end_offset_for_epoch(5), (5, 24));

        // Not continuing the log, or corrupt: rejected, nothing written.
        assert!(matches!(
            follower.append_as_follower(&raw_from(&leader, 3), 0),
            Err(StorageError::UnexpectedAppendOffset {
                expected: 24,
                got: 3
            })
        ));
        let mut next = batch(24, 2, 0, 10).to_vec();
        let crc_covered = next.len() - 1;
        next[crc_covered] ^= 1;
        assert!(follower.append_as_follower(&next, 0).is_err());
        assert_eq!(follower.log_end_offset(), 24);
        assert!(!follower.is_failed());
    }

    #[test]
    fn truncation_removes_whole_batches_and_the_epochs_after_them_and_survives_reload() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let cfg = config(&[("segment.bytes", "500")]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        for (i, epoch) in [1, 1, 1, 1, 3, 3, 3, 4].iter().enumerate() {
            log.append_as_leader(&batch(0, 2, i as i64, 80), *epoch, i as i64)
                .unwrap();
        }
        let segments_before = log.segment_count();
        assert!(segments_before > 2);
        // Offset 11 is inside the batch 10..=11: that batch goes too.
        assert_eq!(log.truncate_to(11).unwrap(), 10);
        assert_eq!(log.log_end_offset(), 10);
        assert!(log.segment_count() < segments_before);
        assert_eq!(log.latest_epoch(), Some(3));
        assert_eq!(log.end_offset_for_epoch(1), (1, 8));
        assert_eq!(log.end_offset_for_epoch(4), (-1, -1));
        // Truncating past the end changes nothing.
        assert_eq!(log.truncate_to(50).unwrap(), 10);
        // The log goes on from there, in a new epoch.
        assert_eq!(
            log.append_as_leader(&batch(0, 1, 9, 10), 6, 9)
                .unwrap()
                .base_offset,
            10
        );
        log.close(9).unwrap();
        drop(log);
        let (log, _) = Log::load(dir.path(), tp.clone(), cfg.clone(), 0, 0, true, 10).unwrap();
        assert_eq!(log.log_end_offset(), 11);
        assert_eq!(log.end_offset_for_epoch(3), (3, 10));
        assert_eq!(log.end_offset_for_epoch(6), (6, 11));
        let offsets: Vec<i64> = {
            let raw = raw_from(&log, 0);
            record::BatchIter::new(&raw)
                .map(|b| b.unwrap().base_offset())
                .collect()
        };
        assert_eq!(offsets, vec![0, 2, 4, 6, 8, 10]);
    }

    #[test]
    fn truncating_to_the_log_start_empties_the_log_there() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let mut log = Log::create(dir.path(), tp, config(&[]), 0).unwrap();
        for i in 0..4 {
            append(&mut log, 5, i);
        }
        log.delete_records_before(5).unwrap();
        assert_eq!(log.truncate_to(3).unwrap(), 3);
        assert_eq!(log.log_start_offset(), 3);
        assert_eq!(log.log_end_offset(), 3);
        assert_eq!(log.latest_epoch(), None);
        assert_eq!(append(&mut log, 1, 9).base_offset, 3);
    }

    #[test]
    fn a_replicated_log_exposes_only_its_high_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let cfg = config(&[("segment.bytes", "300"), ("retention.bytes", "0")]);
        let mut log = Log::create(dir.path(), tp, cfg, 0).unwrap();
        log.set_replicated(true);
        for i in 0..6 {
            append(&mut log, 2, i);
        }
        assert_eq!(log.high_watermark(), 0);
        // Retention may not delete what is not committed.
        log.apply_retention(10).unwrap();
        assert_eq!(log.log_start_offset(), 0);
        log.set_high_watermark(6);
        assert_eq!(log.high_watermark(), 6);
        log.set_high_watermark(100);
        assert_eq!(log.high_watermark(), 12, "clamped to the log end");
        log.set_high_watermark(6);
        log.apply_retention(10).unwrap();
        assert!(log.log_start_offset() > 0 && log.log_start_offset() <= 6);
        log.set_replicated(false);
        assert_eq!(log.high_watermark(), 12);
    }

    #[test]
    fn a_log_without_an_epoch_file_rebuilds_it_from_batch_headers_once() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let cfg = config(&[("segment.bytes", "400")]);
        let mut log = Log::create(dir.path(), tp.clone(), cfg.clone(), 0).unwrap();
        for (i, epoch) in [0, 0, 2, 2, 7].iter().enumerate() {
            log.append_as_leader(&batch(0, 3, i as i64, 50), *epoch, i as i64)
                .unwrap();
        }
        log.close(5).unwrap();
        drop(log);
        let file = dir
            .path()
            .join(super::super::epoch::LEADER_EPOCH_CHECKPOINT);
        std::fs::remove_file(&file).unwrap();
        let (log, _) = Log::load(dir.path(), tp, cfg, 0, 0, true, 5).unwrap();
        assert_eq!(log.end_offset_for_epoch(0), (0, 6));
        assert_eq!(log.end_offset_for_epoch(2), (2, 12));
        assert_eq!(log.end_offset_for_epoch(7), (7, 15));
        assert!(file.exists());
    }
}
