//! Sparse offset and time indexes of a segment (Kafka's `OffsetIndex`/`TimeIndex`), each a
//! fixed-width file mapped on use.
//!
//! ```text
//! .index      entry = relativeOffset: u32 BE | position: u32 BE                 (8 bytes)
//! .timeindex  entry = timestamp: i64 BE      | relativeOffset: u32 BE            (12 bytes)
//! ```
//!
//! The active segment's index files grow to `segment.index.bytes` (rounded down to whole
//! entries) on the first append that needs room, not when opened, and are trimmed to their
//! entries when the segment is sealed or closed, so after a clean shutdown the entry count is
//! the file length divided by the entry size. After an
//! unclean one the indexes of unflushed segments are rebuilt from the log, never trusted.
//! Entries are strictly increasing in both fields, which keeps lookups a binary search.
//!
//! | file | owns |
//! |---|---|
//! | `file.rs` | one entry file mapped on use, the bounded set of index maps (`unsafe`: the mmap call) |

mod file;

pub use file::{IndexMapStats, IndexMaps, MapSlot, configure, global};

use file::IndexFile;
use std::io;
use std::path::Path;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(raw)
}

/// Maps offsets to byte positions in the segment's `.log` file.
#[derive(Debug)]
pub struct OffsetIndex {
    file: IndexFile,
    base_offset: i64,
}

const OFFSET_ENTRY: usize = 8;
const TIME_ENTRY: usize = 12;

impl OffsetIndex {
    pub fn open(path: &Path, base_offset: i64, max_bytes: u64, writable: bool) -> io::Result<Self> {
        Ok(Self {
            file: IndexFile::open(path, OFFSET_ENTRY, max_bytes, writable)?,
            base_offset,
        })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
    pub fn entries(&self) -> usize {
        self.file.entries()
    }
    pub fn is_full(&self) -> bool {
        self.file.is_full()
    }

    /// The newest (offset, position), from memory: no mapping needed.
    pub fn last_entry(&self) -> Option<(i64, u32)> {
        let e = self.file.last()?;
        Some((self.base_offset + u32_at(e, 0) as i64, u32_at(e, 4)))
    }

    /// Adds an entry; ignored unless `offset` is beyond the last entry. Returns false when full.
    pub fn append(&mut self, offset: i64, position: u32) -> io::Result<bool> {
        if self.last_entry().is_some_and(|(last, _)| offset <= last) {
            return Ok(true);
        }
        let mut entry = [0u8; OFFSET_ENTRY];
        entry[..4].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        entry[4..].copy_from_slice(&position.to_be_bytes());
        self.file.push(&entry)
    }

    /// The last indexed (offset, position) at or before `target`, or the segment start.
    pub fn lookup(&self, target: i64) -> io::Result<(i64, u32)> {
        let relative = target - self.base_offset;
        if let Some((last, position)) = self.last_entry()
            && last <= target
        {
            return Ok((last, position));
        }
        self.file.with_entries(
            |entries| match entries.floor(relative, |e| u32_at(e, 0) as i64) {
                Some(n) => {
                    let e = entries.get(n);
                    (self.base_offset + u32_at(e, 0) as i64, u32_at(e, 4))
                }
                None => (self.base_offset, 0),
            },
        )
    }

    /// The last entry whose position is <= `position` (positions increase with offsets).
    pub fn floor_by_position(&self, position: u32) -> io::Result<Option<(i64, u32)>> {
        if let Some((last, indexed)) = self.last_entry()
            && indexed <= position
        {
            return Ok(Some((last, indexed)));
        }
        self.file.with_entries(|entries| {
            let n = entries.floor(position as i64, |e| u32_at(e, 4) as i64)?;
            let e = entries.get(n);
            Some((self.base_offset + u32_at(e, 0) as i64, u32_at(e, 4)))
        })
    }

    /// Drops entries for offsets >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> io::Result<()> {
        self.file
            .keep_below(offset - self.base_offset, |e| u32_at(e, 0) as i64)
    }

    /// Drops all entries (before a rebuild).
    pub fn clear(&mut self) -> io::Result<()> {
        self.file.truncate_entries(0)
    }

    /// The last entry points inside the segment (an O(1) check, Kafka's `sanityCheck`).
    pub fn last_entry_sane(&self, segment_size: u64) -> bool {
        self.last_entry()
            .is_none_or(|(_, position)| (position as u64) < segment_size.max(1))
    }

    /// Entries must strictly increase in offset and position; anything else means the file
    /// cannot be trusted and must be rebuilt.
    pub fn is_consistent(&self, segment_size: u64) -> io::Result<bool> {
        self.file.with_entries(|entries| {
            entries.strictly_increasing(|e| (u32_at(e, 0) as i64, u32_at(e, 4) as i64))
                && self.last_entry_sane(segment_size)
        })
    }

    pub fn flush(&self) -> io::Result<()> {
        self.file.flush()
    }
    pub fn trim(&mut self) -> io::Result<()> {
        self.file.trim()
    }
    /// Lets a sealed index grow back to `max_bytes` (its segment became active again after
    /// a truncation).
    pub fn reopen_for_append(&mut self, max_bytes: u64) {
        self.file.allow_growth_to(max_bytes)
    }
}

/// Maps timestamps to the first offset whose batch may hold a record at or after it.
#[derive(Debug)]
pub struct TimeIndex {
    file: IndexFile,
    base_offset: i64,
}

impl TimeIndex {
    pub fn open(path: &Path, base_offset: i64, max_bytes: u64, writable: bool) -> io::Result<Self> {
        Ok(Self {
            file: IndexFile::open(path, TIME_ENTRY, max_bytes, writable)?,
            base_offset,
        })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
    pub fn entries(&self) -> usize {
        self.file.entries()
    }
    /// Full one entry early: sealing the segment appends a final entry (its max timestamp).
    pub fn is_full(&self) -> bool {
        self.file.entries() + 1 >= self.file.max_entries()
    }

    /// The newest entry (timestamp, offset), from memory: no mapping needed.
    pub fn last_entry(&self) -> Option<(i64, i64)> {
        let e = self.file.last()?;
        Some((i64_at(e, 0), self.base_offset + u32_at(e, 8) as i64))
    }

    /// Adds (timestamp, offset) when both move forward. Returns false when full.
    pub fn maybe_append(&mut self, timestamp: i64, offset: i64) -> io::Result<bool> {
        if let Some((last_ts, last_offset)) = self.last_entry()
            && (timestamp <= last_ts || offset <= last_offset)
        {
            return Ok(true);
        }
        let mut entry = [0u8; TIME_ENTRY];
        entry[..8].copy_from_slice(&timestamp.to_be_bytes());
        entry[8..].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        self.file.push(&entry)
    }

    /// The offset to start scanning from for `timestamp`: the entry with the largest timestamp
    /// below `timestamp` (a later batch may still have an earlier record), else the segment base.
    pub fn lookup(&self, timestamp: i64) -> io::Result<i64> {
        if let Some((last_ts, last_offset)) = self.last_entry()
            && last_ts < timestamp
        {
            return Ok(last_offset);
        }
        self.file.with_entries(|entries| {
            match entries.floor(timestamp.saturating_sub(1), |e| i64_at(e, 0)) {
                Some(n) => self.base_offset + u32_at(entries.get(n), 8) as i64,
                None => self.base_offset,
            }
        })
    }

    /// Drops entries for offsets >= `offset` (offsets increase with the entries).
    pub fn truncate_to(&mut self, offset: i64) -> io::Result<()> {
        self.file
            .keep_below(offset - self.base_offset, |e| u32_at(e, 8) as i64)
    }

    pub fn clear(&mut self) -> io::Result<()> {
        self.file.truncate_entries(0)
    }

    pub fn is_consistent(&self) -> io::Result<bool> {
        self.file.with_entries(|entries| {
            entries.strictly_increasing(|e| (i64_at(e, 0), u32_at(e, 8) as i64))
        })
    }

    pub fn flush(&self) -> io::Result<()> {
        self.file.flush()
    }
    pub fn trim(&mut self) -> io::Result<()> {
        self.file.trim()
    }
    pub fn reopen_for_append(&mut self, max_bytes: u64) {
        self.file.allow_growth_to(max_bytes)
    }
}

#[cfg(test)]
mod tests;
