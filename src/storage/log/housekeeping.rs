//! What keeps a partition log bounded (Kafka's `UnifiedLog.deleteOldSegments` and the
//! cleaner's pass over one log): the log start moved by DeleteRecords, retention by time and
//! size, compaction of the sealed segments below the last stable offset, and the expiry of
//! silent producers. The timers that run these live in `manager.rs`.

use super::Log;
use crate::storage::StorageError;
use crate::storage::cleaner::{self, CleanStats};
use crate::storage::producer_state;
use crate::storage::segment::Segment;

impl Log {
    /// Forgets producers silent for `producer.id.expiration.ms`.
    pub fn expire_producers(&mut self, now_ms: i64, expiration_ms: i64) {
        self.producers.expire(now_ms, expiration_ms);
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
            self.offsets_changed();
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
        if let Some(first) = self.segments.keys().next()
            && *first > self.log_start_offset
        {
            self.log_start_offset = *first;
            self.offsets_changed();
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
}
