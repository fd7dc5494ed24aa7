//! One log segment: the `.log` file of record batches starting at `base_offset`, with its
//! sparse offset and time indexes (Kafka's `LogSegment`).
//!
//! Files, named by the base offset padded to 20 digits: `{base}.log`, `{base}.index`,
//! `{base}.timeindex`. The `.log` file is a plain concatenation of v2 batches exactly as
//! appended. Every `index.interval.bytes` of appended data the batch's base offset and file
//! position go into the offset index, and the largest timestamp so far with its offset into
//! the time index. Positions are `u32` because `segment.bytes` is an `int`.
//!
//! With `preallocate` (Kafka's topic config) an active segment's blocks are reserved up to
//! `segment.bytes` when it is created, past its end (`fallocate` keeping the size, where Kafka
//! sets the length and trims at roll): the file's length stays the end of its data, so readers,
//! recovery and size accounting see nothing different, and sealing the segment gives back
//! what it did not use.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the segment: create, open, append, read, recover, truncate, seal |
//! | `file_io.rs` | the system calls under it: batch headers read through a window, a batch written in one `pwritev`, write-back started as appends accumulate |

use super::StorageError;
use super::index::{OffsetIndex, TimeIndex};
use super::open_files::SegmentFile;
use crate::record::{self, BatchView, HEADER_LEN, LOG_OVERHEAD};
use bytes::{Bytes, BytesMut};
pub use file_io::{DEFAULT_WRITEBACK_BYTES, configure_writeback};
use file_io::{HeaderWindow, write_pair_at};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a batch sits in the segment file, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLocation {
    pub position: u32,
    pub size: u32,
    pub base_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
}

/// Whole batches of a segment found for a fetch: where they are, not a copy of them.
#[derive(Debug, Clone)]
pub struct SegmentRead {
    pub records: FileSlice,
    /// Offset just after the last batch returned.
    pub next_offset: i64,
}

/// A byte range of a segment's `.log` file (Kafka's `FileRecords.slice`). It holds the file
/// open, so a segment deleted or replaced by compaction meanwhile can still be read, and the
/// network layer can send it straight from the page cache (`sendfile`) without copying it
/// into the process.
#[derive(Debug, Clone)]
pub struct FileSlice {
    file: Arc<File>,
    position: u64,
    len: usize,
}

impl FileSlice {
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file, shared (for reads on another thread).
    pub fn shared_file(&self) -> Arc<File> {
        self.file.clone()
    }

    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    pub fn for_test(file: Arc<File>, position: u64, len: usize) -> Self {
        Self {
            file,
            position,
            len,
        }
    }

    /// Copies the range into memory, for callers that parse it or cannot send from a file.
    pub fn read(&self) -> Result<Bytes, StorageError> {
        let mut buf = BytesMut::zeroed(self.len);
        self.file.read_exact_at(&mut buf, self.position)?;
        Ok(buf.freeze())
    }
}

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    /// Opened on use through the process's bounded set (`open_files`); the open file is
    /// shared with the `FileSlice`s handed to fetches still being sent.
    log: Arc<SegmentFile>,
    size: u32,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    bytes_since_last_index_entry: u64,
    index_interval_bytes: u64,
    /// Largest batch max timestamp in the segment and the base offset of that batch.
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    /// Offset after the last batch; `base_offset` when empty.
    next_offset: i64,
    /// Max timestamp of the first batch (Kafka's rolling-based timestamp for `segment.ms`).
    first_batch_timestamp: Option<i64>,
    /// The segment was loaded from its indexes, so its first batch is not read yet: it is
    /// read when `segment.ms` first needs it (Kafka loads its rolling timestamp lazily too),
    /// which keeps a restart from reading the oldest, likely evicted, page of every log.
    first_batch_unread: bool,
    /// Wall-clock time this segment object was created or loaded, for `segment.ms` when the
    /// segment holds no timestamps.
    created_ms: i64,
    /// Blocks past the end of the file are reserved (`preallocate`, or left so by a crash):
    /// sealing gives them back.
    preallocated: bool,
    /// Where the write-back started by appends reaches (see `file_io`).
    written_back: u32,
}

/// The largest batch recovery always accepts (it bounds what a garbage length can make it read).
pub const RECOVERABLE_BATCH_BYTES: usize = 64 * 1024 * 1024;

pub fn file_name(base_offset: i64, extension: &str) -> String {
    format!("{base_offset:020}.{extension}")
}

impl Segment {
    /// Creates an empty active segment.
    pub fn create(
        dir: &Path,
        base_offset: i64,
        index_max_bytes: u64,
        index_interval_bytes: u64,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        let log_path = dir.join(file_name(base_offset, "log"));
        let log = SegmentFile::open(&log_path, true)?;
        Self::assemble(
            dir,
            base_offset,
            log_path,
            log,
            0,
            true,
            index_max_bytes,
            index_interval_bytes,
            now_ms,
        )
    }

    /// Opens an existing segment, taking its indexes as they are and reading only the batches
    /// after the last index entry to learn the next offset. Whether the indexes can be trusted
    /// is the caller's call: if not, it must run [`Segment::recover`].
    pub fn open(
        dir: &Path,
        base_offset: i64,
        active: bool,
        index_max_bytes: u64,
        index_interval_bytes: u64,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        let log_path = dir.join(file_name(base_offset, "log"));
        let log = SegmentFile::open(&log_path, false)?;
        let metadata = log.get()?.metadata()?;
        let len = metadata.len();
        let size = u32::try_from(len).map_err(|_| {
            StorageError::Corrupt(format!("{} is larger than 4 GiB", log_path.display()))
        })?;
        let mut segment = Self::assemble(
            dir,
            base_offset,
            log_path,
            log,
            size,
            active,
            index_max_bytes,
            index_interval_bytes,
            now_ms,
        )?;
        // More blocks than the data needs (a file system block past it): a preallocated
        // segment the broker did not seal, before a crash.
        segment.preallocated = metadata.blocks() * 512 > len.div_ceil(4096) * 4096 + 4096;
        segment.load_summary()?;
        Ok(segment)
    }

    /// Reserves the file's blocks up to `bytes` past its end (`preallocate`). Where the file
    /// system cannot (not supported, or no space for it) appends go on without; a disk too
    /// full for the data itself fails the append that needs the space, as without.
    pub fn preallocate(&mut self, bytes: u64) {
        let reserved = self.log.get().and_then(|file| {
            rustix::fs::fallocate(
                &*file,
                rustix::fs::FallocateFlags::KEEP_SIZE,
                0,
                bytes.max(1),
            )
            .map_err(io::Error::from)
        });
        match reserved {
            Ok(()) => self.preallocated = true,
            Err(e) => {
                tracing::debug!(segment = %self.log_path.display(), error = %e, "segment not preallocated")
            }
        }
    }

    /// Opens the indexes (writable, i.e. preallocated, for the active segment) around `log`.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        dir: &Path,
        base_offset: i64,
        log_path: PathBuf,
        log: Arc<SegmentFile>,
        size: u32,
        active: bool,
        index_max_bytes: u64,
        index_interval_bytes: u64,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        let offset_index = OffsetIndex::open(
            &dir.join(file_name(base_offset, "index")),
            base_offset,
            index_max_bytes,
            active,
        )?;
        let time_index = TimeIndex::open(
            &dir.join(file_name(base_offset, "timeindex")),
            base_offset,
            index_max_bytes,
            active,
        )?;
        Ok(Self {
            base_offset,
            log_path,
            log,
            size,
            offset_index,
            time_index,
            bytes_since_last_index_entry: 0,
            index_interval_bytes,
            max_timestamp: -1,
            offset_of_max_timestamp: base_offset,
            next_offset: base_offset,
            first_batch_timestamp: None,
            first_batch_unread: false,
            created_ms: now_ms,
            preallocated: false,
            written_back: size,
        })
    }

    /// Learns next offset, max timestamp and first timestamp from the indexes plus the batches
    /// after the last index entry (at most `index.interval.bytes` of headers).
    fn load_summary(&mut self) -> Result<(), StorageError> {
        if let Some((ts, offset)) = self.time_index.last_entry() {
            self.max_timestamp = ts;
            self.offset_of_max_timestamp = offset;
        }
        let start = self
            .offset_index
            .last_entry()
            .map_or(0, |(_, position)| position);
        self.first_batch_unread = start > 0;
        let mut position = start;
        let mut window = HeaderWindow::new();
        while let Some(batch) = window.location(self, position)? {
            self.observe(&batch);
            position = batch.position + batch.size;
        }
        self.bytes_since_last_index_entry = (position - start) as u64;
        Ok(())
    }

    fn observe(&mut self, batch: &BatchLocation) {
        if batch.max_timestamp > self.max_timestamp {
            self.max_timestamp = batch.max_timestamp;
            self.offset_of_max_timestamp = batch.base_offset;
        }
        self.next_offset = batch.last_offset + 1;
        if self.first_batch_timestamp.is_none() && !self.first_batch_unread {
            self.first_batch_timestamp = Some(batch.max_timestamp);
        }
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    pub fn size(&self) -> u32 {
        self.size
    }
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
    pub fn indexes_full(&self) -> bool {
        self.offset_index.is_full() || self.time_index.is_full()
    }
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// How long this segment has been filling, for `segment.ms` (Kafka's `timeWaitedForRoll`):
    /// the incoming batch's timestamp minus the first batch's when the segment has
    /// timestamps, else wall-clock time since the segment was created or loaded.
    pub fn time_waited_for_roll(
        &mut self,
        now_ms: i64,
        incoming_max_timestamp: i64,
    ) -> Result<i64, StorageError> {
        if self.first_batch_unread {
            self.first_batch_timestamp = self.read_location(0)?.map(|b| b.max_timestamp);
            self.first_batch_unread = false;
        }
        Ok(match self.first_batch_timestamp.filter(|ts| *ts >= 0) {
            Some(first) => incoming_max_timestamp - first,
            None => now_ms - self.created_ms,
        })
    }

    /// The newest timestamp retention judges this segment by (Kafka's `largestTimestamp`):
    /// its max timestamp, or its creation time when it holds no timestamps.
    pub fn largest_timestamp(&self) -> i64 {
        if self.max_timestamp >= 0 {
            self.max_timestamp
        } else {
            self.created_ms
        }
    }

    /// Appends one batch whose offsets are already assigned. The caller has checked it fits.
    pub fn append(&mut self, batch: &[u8]) -> Result<(), StorageError> {
        let view = BatchView::new(batch)?;
        let location = BatchLocation {
            position: self.size,
            size: batch.len() as u32,
            base_offset: view.base_offset(),
            last_offset: view.last_offset(),
            max_timestamp: view.max_timestamp(),
        };
        super::slow_disk_point();
        super::failing_disk_point(&self.log_path)?;
        let written = self.log.get()?.write_all_at(batch, self.size as u64);
        self.undo_partial_write(written)?;
        self.size += batch.len() as u32;
        self.start_writeback_when_due();
        self.index_batch(&location)
    }

    /// Starts writing the appended bytes to disk once `log.segment.writeback.bytes` of them
    /// accumulated (see `file_io`).
    fn start_writeback_when_due(&mut self) {
        let chunk = file_io::writeback_bytes();
        // Truncated below it since.
        self.written_back = self.written_back.min(self.size);
        let pending = u64::from(self.size - self.written_back);
        if chunk == 0 || pending < chunk {
            return;
        }
        if let Ok(file) = self.log.get() {
            file_io::start_writeback(&file, u64::from(self.written_back), pending);
        }
        self.written_back = self.size;
    }

    /// After a failed write (a full disk), cuts off whatever part of it reached the file, so
    /// the segment ends where its last whole batch does and a later append goes there.
    fn undo_partial_write(&self, written: io::Result<()>) -> Result<(), StorageError> {
        if let Err(e) = written {
            self.log.get()?.set_len(self.size as u64)?;
            return Err(e.into());
        }
        Ok(())
    }

    /// Appends a batch given as its (rewritten) header and the records after it, as they
    /// arrived: the records are not copied, and both go in one `pwritev`. A crash within it (or
    /// between it and the rest of a short write) leaves a torn tail, which recovery truncates
    /// like any other.
    pub fn append_stamped(
        &mut self,
        header: &[u8; HEADER_LEN],
        records: &[u8],
    ) -> Result<(), StorageError> {
        let (base_offset, last_offset, max_timestamp) =
            record::header_offsets_and_max_timestamp(header);
        let size = HEADER_LEN + records.len();
        let location = BatchLocation {
            position: self.size,
            size: size as u32,
            base_offset,
            last_offset,
            max_timestamp,
        };
        let at = self.size as u64;
        super::slow_disk_point();
        super::failing_disk_point(&self.log_path)?;
        let written = write_pair_at(&*self.log.get()?, header, records, at);
        self.undo_partial_write(written)?;
        self.size += size as u32;
        self.start_writeback_when_due();
        self.index_batch(&location)
    }

    /// Notes a batch now in the file, adding index entries when due. A full index is not an
    /// error here (the log rolls on `indexes_full`); failing to grow one is.
    fn index_batch(&mut self, batch: &BatchLocation) -> Result<(), StorageError> {
        self.observe(batch);
        if self.bytes_since_last_index_entry > self.index_interval_bytes {
            // The batch is written: an index that cannot grow now (a full disk) only misses
            // an entry, which lookups cover by reading a little further; failing the append
            // would make its retry a duplicate.
            let indexed = self
                .offset_index
                .append(batch.base_offset, batch.position)
                .and_then(|_| {
                    self.time_index
                        .maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
                });
            match indexed {
                Ok(_) => self.bytes_since_last_index_entry = 0,
                Err(e) => {
                    tracing::warn!(segment = %self.log_path.display(), error = %e, "index entry skipped");
                    return Ok(());
                }
            }
        }
        self.bytes_since_last_index_entry += batch.size as u64;
        Ok(())
    }

    /// Reads the header of the batch at `position`; `None` at the end of the written data or
    /// when the remaining bytes cannot hold a batch.
    pub fn read_location(&self, position: u32) -> Result<Option<BatchLocation>, StorageError> {
        HeaderWindow::with_capacity(HEADER_LEN).location(self, position)
    }

    /// The first batch whose last offset is >= `offset`.
    pub fn find_batch(&self, offset: i64) -> Result<Option<BatchLocation>, StorageError> {
        self.find_batch_with(&mut HeaderWindow::new(), offset)
    }

    fn find_batch_with(
        &self,
        window: &mut HeaderWindow,
        offset: i64,
    ) -> Result<Option<BatchLocation>, StorageError> {
        let (_, mut position) = self.offset_index.lookup(offset)?;
        while let Some(batch) = window.location(self, position)? {
            if batch.last_offset >= offset {
                return Ok(Some(batch));
            }
            position = batch.position + batch.size;
        }
        Ok(None)
    }

    /// Whole batches starting with the one holding `offset`, up to `max_bytes` (the first
    /// batch is returned even when larger when `min_one_batch`), and never past `max_offset`
    /// (exclusive: the high watermark). The range comes from the indexes and a few batch
    /// headers near its two ends; the records themselves are not read here.
    pub fn read(
        &self,
        offset: i64,
        max_bytes: usize,
        max_offset: i64,
        min_one_batch: bool,
    ) -> Result<Option<SegmentRead>, StorageError> {
        let mut window = HeaderWindow::new();
        let Some(first) = self.find_batch_with(&mut window, offset)? else {
            return Ok(None);
        };
        if first.last_offset >= max_offset {
            return Ok(None);
        }
        let start = first.position;
        // Where readable data ends: the segment end, or the first batch reaching max_offset.
        let (readable_end, offset_after_readable) = if max_offset >= self.next_offset {
            (self.size, self.next_offset)
        } else {
            match self.find_batch_with(&mut window, max_offset)? {
                Some(stop) => (stop.position, stop.base_offset),
                None => (self.size, self.next_offset),
            }
        };
        let budget_end = (start as u64 + max_bytes as u64).min(u32::MAX as u64) as u32;
        let (mut end, mut next_offset) = if readable_end <= budget_end {
            (readable_end, offset_after_readable)
        } else {
            self.last_boundary_within(&mut window, start, budget_end)?
        };
        if end == start && min_one_batch {
            end = first.position + first.size;
            next_offset = first.last_offset + 1;
        }
        if end == start {
            return Ok(None);
        }
        Ok(Some(SegmentRead {
            records: FileSlice {
                file: self.log.get()?,
                position: start as u64,
                len: (end - start) as usize,
            },
            next_offset,
        }))
    }

    /// The end of the last whole batch that ends by `limit`, walking from `start` (a batch
    /// boundary), with the offset after it; `(start, -1)` when not even the first fits. The
    /// walk begins at the last index entry at or below `limit`, so only about
    /// `index.interval.bytes` of headers are read however large the range.
    fn last_boundary_within(
        &self,
        window: &mut HeaderWindow,
        start: u32,
        limit: u32,
    ) -> Result<(u32, i64), StorageError> {
        // An indexed position is where a batch starts, so the batch before it ends there.
        let (mut end, mut next_offset) = match self.offset_index.floor_by_position(limit)? {
            Some((offset, indexed)) if indexed > start => (indexed, offset),
            _ => (start, -1),
        };
        let mut position = end;
        while let Some(batch) = window.location(self, position)? {
            let batch_end = batch.position + batch.size;
            if batch_end > limit {
                break;
            }
            end = batch_end;
            next_offset = batch.last_offset + 1;
            position = batch_end;
        }
        Ok((end, next_offset))
    }

    /// Reads the whole batch at `location`.
    pub fn read_batch(&self, location: &BatchLocation) -> Result<BytesMut, StorageError> {
        let mut buf = BytesMut::zeroed(location.size as usize);
        self.log
            .get()?
            .read_exact_at(&mut buf, location.position as u64)?;
        Ok(buf)
    }

    /// The first batch that may hold a record with timestamp >= `timestamp`.
    pub fn find_batch_by_timestamp(
        &self,
        timestamp: i64,
    ) -> Result<Option<BatchLocation>, StorageError> {
        let start_offset = self.time_index.lookup(timestamp)?;
        let (_, mut position) = self.offset_index.lookup(start_offset)?;
        let mut window = HeaderWindow::new();
        while let Some(batch) = window.location(self, position)? {
            if batch.max_timestamp >= timestamp {
                return Ok(Some(batch));
            }
            position = batch.position + batch.size;
        }
        Ok(None)
    }

    /// The batch holding this segment's max timestamp.
    pub fn batch_of_max_timestamp(&self) -> Result<Option<BatchLocation>, StorageError> {
        self.find_batch(self.offset_of_max_timestamp)
    }

    /// Re-reads every batch: validates framing, CRC, size and offset order, rebuilds both
    /// indexes, and truncates the file at the first invalid byte. Returns the bytes dropped.
    /// Batches up to `max_message_bytes` or [`RECOVERABLE_BATCH_BYTES`], whichever is
    /// larger, are recovered: a topic whose `max.message.bytes` was lowered keeps the larger
    /// batches it took before, and the metadata log keeps entries of large topics (7,500
    /// partitions make a 2.2 MB entry: it was truncated away at each start, losing the topic).
    pub fn recover(&mut self, max_message_bytes: usize) -> Result<u64, StorageError> {
        self.offset_index.clear()?;
        self.time_index.clear()?;
        self.bytes_since_last_index_entry = 0;
        self.max_timestamp = -1;
        self.offset_of_max_timestamp = self.base_offset;
        self.next_offset = self.base_offset;
        self.first_batch_timestamp = None;
        self.first_batch_unread = false;
        let file_len = self.log.get()?.metadata()?.len();
        self.size = u32::try_from(file_len).unwrap_or(u32::MAX);
        let mut position: u32 = 0;
        let mut expected_offset = self.base_offset;
        while let Some(location) = self.read_location(position)? {
            if location.base_offset < expected_offset
                || location.last_offset < location.base_offset
                || location.size as usize
                    > max_message_bytes.max(RECOVERABLE_BATCH_BYTES) + LOG_OVERHEAD
            {
                break;
            }
            let bytes = self.read_batch(&location)?;
            let valid = BatchView::new(&bytes)
                .map(|v| v.crc_matches() && v.magic() == record::MAGIC_V2)
                .unwrap_or(false);
            if !valid {
                break;
            }
            self.index_batch(&location)?;
            expected_offset = location.last_offset + 1;
            position += location.size;
        }
        let dropped = file_len - position as u64;
        if dropped > 0 {
            self.log.get()?.set_len(position as u64)?;
        }
        self.size = position;
        Ok(dropped)
    }

    /// Removes every batch whose last offset is at or after `offset`: a batch holding it
    /// goes whole, as in Kafka's `LogSegment.truncateTo`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<(), StorageError> {
        let (position, end) = match self.find_batch(offset)? {
            Some(batch) => (batch.position, batch.base_offset),
            None => (self.size, self.next_offset),
        };
        self.log.get()?.set_len(position as u64)?;
        self.size = position;
        self.offset_index.truncate_to(end)?;
        self.time_index.truncate_to(end)?;
        // Re-derive the summary from what is left.
        self.max_timestamp = -1;
        self.next_offset = self.base_offset;
        self.first_batch_timestamp = None;
        self.load_summary()?;
        Ok(())
    }

    /// Writes the final time index entry and shrinks the indexes: the segment is no longer
    /// active (Kafka's `onBecomeInactiveSegment`).
    pub fn seal(&mut self) -> Result<(), StorageError> {
        if self.max_timestamp >= 0 {
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp)?;
        }
        self.offset_index.trim()?;
        self.time_index.trim()?;
        if self.preallocated {
            // Setting the length it has frees the blocks reserved past it.
            self.log.get()?.set_len(self.size as u64)?;
            self.preallocated = false;
        }
        Ok(())
    }

    /// Makes a sealed segment appendable again (after truncation made it the last one).
    pub fn reopen_for_append(&mut self, index_max_bytes: u64) -> Result<(), StorageError> {
        self.offset_index.reopen_for_append(index_max_bytes);
        self.time_index.reopen_for_append(index_max_bytes);
        Ok(())
    }

    /// Whether the batches after the last offset-index entry are whole, CRC-valid v2
    /// batches with consecutive offsets that end exactly at the end of the file. After a
    /// clean shutdown this is all loading checks of the active segment (a few batches, not a
    /// scan): bytes appended behind the broker's back must not be trusted, or acknowledged
    /// writes would land after them.
    pub fn tail_is_valid(&self) -> Result<bool, StorageError> {
        let mut position = self
            .offset_index
            .last_entry()
            .map_or(0, |(_, position)| position);
        let mut window = HeaderWindow::new();
        let mut expected: Option<i64> = None;
        while let Some(location) = window.location(self, position)? {
            let bytes = self.read_batch(&location)?;
            let valid = record::BatchView::new(&bytes).is_ok_and(|b| b.validate().is_ok());
            if !valid || expected.is_some_and(|e| e != location.base_offset) {
                return Ok(false);
            }
            expected = Some(location.last_offset + 1);
            position = location.position + location.size;
        }
        Ok(position == self.size)
    }

    /// Whether the stored indexes look sane; if not the segment must be recovered. After a
    /// clean shutdown only their last entries are checked, as Kafka's `sanityCheck` does:
    /// a full scan reads every index page of every log, from disk when evicted, and a
    /// cleanly closed index was written and synced whole. `thorough` scans every entry.
    pub fn indexes_consistent(&self, thorough: bool) -> Result<bool, StorageError> {
        Ok(if thorough {
            self.offset_index.is_consistent(self.size as u64)? && self.time_index.is_consistent()?
        } else {
            self.offset_index.last_entry_sane(self.size as u64)
        })
    }

    /// Makes the indexes durable (msync of their mappings, an fdatasync of those unmapped
    /// since they were written) and
    /// returns the `.log` file to fsync without holding the log (the open one, shared; a
    /// file the bounded set closed is opened again, and on the file's inode the fsync still
    /// covers every write made through the descriptor closed before).
    pub fn prepare_sync(&self) -> Result<Arc<File>, StorageError> {
        self.offset_index.flush()?;
        self.time_index.flush()?;
        Ok(self.log.get()?)
    }

    pub fn flush(&self) -> Result<(), StorageError> {
        self.log.get()?.sync_data()?;
        self.offset_index.flush()?;
        self.time_index.flush()?;
        Ok(())
    }

    /// Replaces this sealed segment's data with `cleaned` (same base offset; batches as the
    /// cleaner rewrote them), crash-safely: the new file is written and fsynced as `.cleaned`,
    /// the indexes are removed, then it is renamed over the `.log` (atomic), and the indexes
    /// are rebuilt. A crash leaves either the old data or the new, and missing indexes are
    /// rebuilt at the next start (a leftover `.cleaned` file is deleted then).
    pub fn replace_data(
        &mut self,
        cleaned: &[u8],
        index_max_bytes: u64,
        max_message_bytes: usize,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let dir = self
            .log_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let temp = dir.join(file_name(self.base_offset, "log.cleaned"));
        {
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&temp)?;
            std::io::Write::write_all(&mut file, cleaned)?;
            file.sync_all()?;
        }
        let index_paths = [
            self.offset_index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
        ];
        for path in &index_paths {
            std::fs::remove_file(path)?;
        }
        std::fs::rename(&temp, &self.log_path)?;
        File::open(&dir)?.sync_all()?;
        let mut reopened = Segment::open(
            &dir,
            self.base_offset,
            true,
            index_max_bytes,
            self.index_interval_bytes,
            now_ms,
        )?;
        reopened.recover(max_message_bytes)?;
        reopened.seal()?;
        *self = reopened;
        Ok(())
    }

    /// Calls `visit` with each batch from the one holding `offset` on, one at a time
    /// (startup replays).
    pub fn for_each_batch_from(
        &self,
        offset: i64,
        mut visit: impl FnMut(&BatchView<'_>),
    ) -> Result<(), StorageError> {
        let mut current = self.find_batch(offset)?;
        while let Some(location) = current {
            let bytes = self.read_batch(&location)?;
            visit(&BatchView::new(&bytes)?);
            current = self.read_location(location.position + location.size)?;
        }
        Ok(())
    }

    /// Every complete batch of the segment, in order.
    pub fn read_all(&self) -> Result<Bytes, StorageError> {
        let mut buf = BytesMut::zeroed(self.size as usize);
        self.log.get()?.read_exact_at(&mut buf, 0)?;
        Ok(buf.freeze())
    }

    /// Deletes the segment's files.
    pub fn delete(self) -> Result<(), StorageError> {
        let paths = [
            self.log_path.clone(),
            self.offset_index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
        ];
        drop(self);
        for path in paths {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

mod file_io;

#[cfg(test)]
mod tests;
