//! Reading a partition log: whole batches from an offset up to a byte budget and an offset
//! limit (the high watermark, or the last stable offset), and the lookups by timestamp
//! ListOffsets needs.

use super::Log;
use crate::record::{self, BatchView};
use crate::storage::StorageError;
use crate::storage::segment::{BatchLocation, Segment, SegmentRead};

impl Log {
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
