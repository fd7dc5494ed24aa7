//! The system calls under a segment: batch headers read through a window of the file, a
//! batch written in one `pwritev`, and write-back started as appends accumulate.
//!
//! Write-back (RocksDB's `bytes_per_sync`): every `log.segment.writeback.bytes` appended to a
//! segment, the kernel is asked to start writing them to disk (`sync_file_range` with
//! `SYNC_FILE_RANGE_WRITE`: it queues the pages and returns, waiting for nothing). Left to
//! itself the kernel starts only once a tenth of memory is dirty, so a burst of produce is
//! all still in memory when the next flush (or the page cache's own limit) comes and pays for
//! the whole of it at once; started as it goes, the disk writes while the producers produce.
//! Durability is unchanged: acknowledgements never wait on it, and a flush still fsyncs.

use super::{BatchLocation, Segment};
use crate::record::{self, HEADER_LEN, LOG_OVERHEAD};
use crate::storage::StorageError;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};

/// `log.segment.writeback.bytes` for the process (0: left to the kernel).
static WRITEBACK_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_WRITEBACK_BYTES);

pub const DEFAULT_WRITEBACK_BYTES: u64 = 1024 * 1024;

/// Sets how many appended bytes start a write-back (0: never).
pub fn configure_writeback(bytes: u64) {
    WRITEBACK_BYTES.store(bytes, Ordering::Relaxed);
}

pub(super) fn writeback_bytes() -> u64 {
    WRITEBACK_BYTES.load(Ordering::Relaxed)
}

/// Asks the kernel to start writing `len` bytes of `file` at `offset` to disk, waiting for
/// nothing. Advisory: an error (an I/O error shows again at the next fsync) is only logged.
pub(super) fn start_writeback(file: &File, offset: u64, len: u64) {
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    #[allow(unsafe_code)]
    // SAFETY: sync_file_range takes a descriptor (borrowed from `file`, open for the whole
    // call) and three integers; it touches no memory of ours.
    let result = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
    if result != 0 {
        tracing::debug!(error = %io::Error::last_os_error(), "write-back not started");
    }
}

/// Batch headers read through a window of the file: walking consecutive small batches costs
/// one read per window instead of one per header.
pub(super) struct HeaderWindow {
    start: u32,
    bytes: Vec<u8>,
    capacity: usize,
}

/// About `index.interval.bytes` of batches plus a header: a walk from an index entry to the
/// batch it looks for usually fits in one window.
const HEADER_WINDOW_BYTES: usize = 8 * 1024;

impl HeaderWindow {
    pub(super) fn new() -> Self {
        Self::with_capacity(HEADER_WINDOW_BYTES)
    }

    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self {
            start: 0,
            bytes: Vec::new(),
            capacity: capacity.max(HEADER_LEN),
        }
    }

    /// The batch at `position` as its header describes it; `None` at the end of the written
    /// data or when the remaining bytes cannot hold a batch.
    pub(super) fn location(
        &mut self,
        segment: &Segment,
        position: u32,
    ) -> Result<Option<BatchLocation>, StorageError> {
        let size = segment.size as u64;
        if position as u64 + HEADER_LEN as u64 > size {
            return Ok(None);
        }
        let inside = position >= self.start
            && (position - self.start) as usize + HEADER_LEN <= self.bytes.len();
        if !inside {
            let len = (size - position as u64).min(self.capacity as u64) as usize;
            self.bytes.resize(len, 0);
            segment
                .log
                .get()?
                .read_exact_at(&mut self.bytes, position as u64)?;
            self.start = position;
        }
        let at = (position - self.start) as usize;
        let header = &self.bytes[at..at + HEADER_LEN];
        let Some((base_offset, batch_size, batch_length)) = record::peek_offset_and_size(header)
        else {
            return Ok(None);
        };
        if batch_length < (HEADER_LEN - LOG_OVERHEAD) as i32
            || position as u64 + batch_size as u64 > size
        {
            return Ok(None);
        }
        let last_offset_delta = record::read_i32(header, 23);
        let max_timestamp = record::read_i64(header, 35);
        Ok(Some(BatchLocation {
            position,
            size: batch_size as u32,
            base_offset,
            last_offset: base_offset + last_offset_delta as i64,
            max_timestamp,
        }))
    }
}

/// Writes `header` and then `records` at `at`: one `pwritev`, and plain writes for whatever
/// a short write left.
pub(super) fn write_pair_at(file: &File, header: &[u8], records: &[u8], at: u64) -> io::Result<()> {
    let mut written = 0;
    while written < header.len() {
        let slices = [
            io::IoSlice::new(&header[written..]),
            io::IoSlice::new(records),
        ];
        match rustix::io::pwritev(file, &slices, at + written as u64) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let records_written = written - header.len();
    if records_written < records.len() {
        file.write_all_at(&records[records_written..], at + written as u64)?;
    }
    Ok(())
}
