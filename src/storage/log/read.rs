//! Reading a partition log: whole batches from an offset up to a byte budget and an offset
//! limit (the log end for followers, the high watermark, or the last stable offset: Kafka's
//! `FetchIsolation`), a follower's divergence check, and the lookups by timestamp ListOffsets
//! needs.

use super::Log;
use crate::record::{self, BatchView};
use crate::storage::StorageError;
use crate::storage::segment::{BatchLocation, FileSlice, Segment, SegmentRead};
use crate::storage::txn_index::AbortedTxn;

/// The offsets a fetch answer reports beside the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsets {
    pub log_start_offset: i64,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
}

/// How far a fetch may read (Kafka's `FetchIsolation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchIsolation {
    /// A follower: up to the log end.
    LogEnd,
    /// A read_uncommitted consumer: what is committed, below the high watermark.
    HighWatermark,
    /// A read_committed consumer: below the first open transaction (the last stable offset).
    TxnCommitted,
}

/// What a fetch read from the log.
#[derive(Debug)]
pub struct FetchedRecords {
    /// Where the batches are; the caller copies or sends them after the log's lock is gone.
    pub records: FileSlice,
    /// For read_committed: the transactions aborted within the records returned.
    pub aborted: Vec<AbortedTxn>,
}

impl Log {
    pub fn offsets(&self) -> LogOffsets {
        LogOffsets {
            log_start_offset: self.log_start_offset(),
            high_watermark: self.high_watermark(),
            last_stable_offset: self.last_stable_offset(),
        }
    }

    /// Kafka's divergence check for a follower fetching at `fetch_offset` whose last batch
    /// was of `last_fetched_epoch`: when that epoch ends earlier here (or is unknown), its log
    /// has a tail this leader never had, to be truncated at the (epoch, end offset) returned.
    pub fn diverging_epoch(
        &self,
        last_fetched_epoch: i32,
        fetch_offset: i64,
    ) -> Option<(i32, i64)> {
        if last_fetched_epoch < 0 {
            return None;
        }
        let (epoch, end) = self.end_offset_for_epoch(last_fetched_epoch);
        (epoch < last_fetched_epoch || end < fetch_offset).then_some((epoch, end))
    }

    /// A fetch's read: whole batches from `offset`, up to `max_bytes` (the first batch whole
    /// when `min_one_batch`), below the limit `isolation` sets; for read_committed, the
    /// transactions aborted among them.
    pub fn read_for_fetch(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: FetchIsolation,
        min_one_batch: bool,
    ) -> Result<Option<FetchedRecords>, StorageError> {
        let limit = match isolation {
            FetchIsolation::LogEnd => self.log_end_offset(),
            FetchIsolation::HighWatermark => self.high_watermark(),
            FetchIsolation::TxnCommitted => self.last_stable_offset(),
        };
        let Some(SegmentRead {
            records,
            next_offset,
        }) = self.read(offset, max_bytes, limit, min_one_batch)?
        else {
            return Ok(None);
        };
        let aborted = if isolation == FetchIsolation::TxnCommitted {
            self.aborted_transactions(offset, next_offset)
        } else {
            Vec::new()
        };
        Ok(Some(FetchedRecords { records, aborted }))
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
}
