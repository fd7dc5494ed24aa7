//! Creating and loading a partition log (Kafka's `LogLoader`): a new empty log, or the
//! segments found on disk, opened as they are after a clean shutdown and recovered from the
//! recovery point after an unclean one (the first invalid byte truncates the log, later
//! segments go); the leader-epoch cache and the producer state aligned with what survived;
//! and a reset to an empty log at an offset.

use super::{LoadReport, Log, new_segment};
use crate::config::LogConfig;
use crate::storage::StorageError;
use crate::storage::epoch::LeaderEpochCache;
use crate::storage::producer_state::{self, ProducerState};
use crate::storage::segment::Segment;
use crate::storage::txn_index::TxnIndex;
use crate::types::TopicPartition;
use std::collections::BTreeMap;
use std::path::Path;

/// Files an interrupted operation leaves behind; loading removes them.
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
        let segment = new_segment(dir, &config, 0, now_ms)?;
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
            offset_changes: None,
            rewrites: 0,
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
        for name in crate::storage::list_dir(dir)? {
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
                || !segment.indexes_consistent(!clean_shutdown)?
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
            offset_changes: None,
            rewrites: 0,
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
    pub(super) fn load_producer_state(
        &mut self,
        snapshots: Option<&[i64]>,
    ) -> Result<(), StorageError> {
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

    /// Replaces all data with an empty segment at `offset`.
    pub(super) fn reset_to(&mut self, offset: i64, now_ms: i64) -> Result<(), StorageError> {
        for (_, segment) in std::mem::take(&mut self.segments) {
            segment.delete()?;
        }
        let segment = new_segment(&self.dir, &self.config, offset, now_ms)?;
        self.segments.insert(offset, segment);
        self.log_start_offset = offset;
        self.recovery_point = offset;
        self.high_watermark = offset;
        self.producers = ProducerState::default();
        producer_state::delete_snapshots_before(&self.dir, i64::MAX)?;
        self.aborted_txns.truncate_from(i64::MIN)?;
        self.leader_epochs.clear()?;
        self.offsets_changed();
        Ok(())
    }
}
