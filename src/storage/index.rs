//! Sparse offset and time indexes of a segment, memory-mapped with memmap2 (Kafka's
//! `OffsetIndex`/`TimeIndex`). This module holds the crate's only `unsafe`: the mmap calls.
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

#![allow(unsafe_code)]

use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A fixed-width entry file behind an mmap. No descriptor is kept: the mapping stays valid
/// once the file is closed (Kafka holds one descriptor per segment, its `.log`, too); the
/// file is opened again only to change its length.
#[derive(Debug)]
struct IndexFile {
    path: PathBuf,
    /// `None` when the mapped length is zero (mmap of an empty file is an error).
    mmap: Option<MmapMut>,
    entry_size: usize,
    entries: usize,
    /// Entries the file currently has room for (its length / entry size).
    mapped_entries: usize,
    /// Entries it may grow to: `segment.index.bytes` for an active segment's index.
    max_entries: usize,
}

/// An active index grows by this much at a time, each chunk allocated by the file system
/// (`fallocate`) before it is mapped: a mapped page is never written that the disk has no
/// room for (on a full disk that is SIGBUS), and a partition's index costs disk as it fills,
/// not `segment.index.bytes` up front.
const GROWTH_BYTES: usize = 64 * 1024;

impl IndexFile {
    /// Opens or creates the file. With `writable`, appends may grow it to `max_bytes`;
    /// existing entries are `existing_entries` (callers decide whether to trust them).
    fn open(path: &Path, entry_size: usize, max_bytes: u64, writable: bool) -> io::Result<Self> {
        let file = Self::open_file(path)?;
        let current_len = file.metadata()?.len();
        let entries = (current_len / entry_size as u64) as usize;
        if current_len != (entries * entry_size) as u64 {
            file.set_len((entries * entry_size) as u64)?;
        }
        let mut index = Self {
            path: path.to_path_buf(),
            mmap: None,
            entry_size,
            entries,
            mapped_entries: entries,
            max_entries: entries,
        };
        if writable {
            index.allow_growth_to(max_bytes);
        }
        index.remap(&file)?;
        Ok(index)
    }

    fn open_file(path: &Path) -> io::Result<File> {
        super::open_file(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
            path,
        )
    }

    /// Lets appends grow the file up to `max_bytes` (at least one entry). The file is grown
    /// on the first append that needs the room, not now: loading a log touches no index file,
    /// so restarting a broker with many partitions does not extend and remap every active
    /// index (Kafka maps its indexes lazily for the same reason).
    fn allow_growth_to(&mut self, max_bytes: u64) {
        self.max_entries = ((max_bytes / self.entry_size as u64) as usize)
            .max(self.entries)
            .max(1);
    }

    /// Room for the next chunk of entries, allocated on disk before it is mapped. On failure
    /// (a full disk, no descriptor) nothing changed and the index holds what it held.
    fn grow(&mut self) -> io::Result<()> {
        let chunk = (GROWTH_BYTES / self.entry_size).max(1);
        let target = (self.mapped_entries + chunk).min(self.max_entries);
        let file = Self::open_file(&self.path)?;
        rustix::fs::fallocate(
            &file,
            rustix::fs::FallocateFlags::empty(),
            0,
            (target * self.entry_size) as u64,
        )?;
        self.mapped_entries = target;
        self.remap(&file)
    }

    /// Maps `file`, whose length is `mapped_entries` entries.
    fn remap(&mut self, file: &File) -> io::Result<()> {
        self.mmap = None;
        if self.mapped_entries > 0 {
            // SAFETY: the file is private to this broker's log directory and only this struct
            // changes its length, always after dropping the previous mapping; every mapped
            // page is allocated (`grow` allocates before it maps).
            self.mmap = Some(unsafe { MmapMut::map_mut(file)? });
        }
        Ok(())
    }

    fn entry(&self, n: usize) -> &[u8] {
        let start = n * self.entry_size;
        match &self.mmap {
            Some(map) => &map[start..start + self.entry_size],
            None => &[],
        }
    }

    /// Appends an entry; false when the index is full. An I/O error growing the file is
    /// returned as such.
    fn push(&mut self, bytes: &[u8]) -> io::Result<bool> {
        if self.entries >= self.max_entries {
            return Ok(false);
        }
        if self.entries >= self.mapped_entries {
            self.grow()?;
        }
        let start = self.entries * self.entry_size;
        if let Some(map) = &mut self.mmap {
            map[start..start + self.entry_size].copy_from_slice(bytes);
            self.entries += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn is_full(&self) -> bool {
        self.entries >= self.max_entries
    }

    fn flush(&self) -> io::Result<()> {
        match &self.mmap {
            Some(map) => map.flush(),
            None => Ok(()),
        }
    }

    /// Shrinks the file to its entries (the segment is being sealed or closed).
    fn trim(&mut self) -> io::Result<()> {
        self.flush()?;
        self.max_entries = self.entries;
        if self.mapped_entries == self.entries {
            return Ok(());
        }
        let file = Self::open_file(&self.path)?;
        self.mmap = None;
        let shrunk = file.set_len((self.entries * self.entry_size) as u64);
        if shrunk.is_ok() {
            self.mapped_entries = self.entries;
        }
        // Mapped again at whatever length the file has.
        self.remap(&file)?;
        shrunk
    }

    /// Lets a sealed index grow back to `max_bytes` (its segment became active again after a
    /// truncation).
    fn reopen_for_append(&mut self, max_bytes: u64) -> io::Result<()> {
        self.allow_growth_to(max_bytes);
        Ok(())
    }

    /// The last entry whose key (from `key_of`) is <= `target`. Kafka's warm-section search:
    /// consumers and appends almost always look near the end, so the last 8 KiB of entries
    /// (pages that stay in memory) are searched first, and the cold start of the file is only
    /// touched for targets below them.
    fn floor<F: Fn(&[u8]) -> i64>(&self, target: i64, key_of: F) -> Option<usize> {
        if self.entries == 0 {
            return None;
        }
        let warm_entries = WARM_SECTION_BYTES / self.entry_size;
        let first_warm = self.entries.saturating_sub(1 + warm_entries);
        if key_of(self.entry(first_warm)) <= target {
            return self.floor_in(first_warm, self.entries, target, &key_of);
        }
        self.floor_in(0, first_warm, target, &key_of)
    }

    /// Binary search within entries `[lo, hi)`; `None` when none of them is <= `target`.
    fn floor_in<F: Fn(&[u8]) -> i64>(
        &self,
        mut lo: usize,
        mut hi: usize,
        target: i64,
        key_of: &F,
    ) -> Option<usize> {
        let first = lo;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key_of(self.entry(mid)) <= target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo > first).then(|| lo - 1)
    }
}

/// Kafka's warm section of an index: the entries in its last 8 KiB.
const WARM_SECTION_BYTES: usize = 8192;

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
        &self.file.path
    }
    pub fn entries(&self) -> usize {
        self.file.entries
    }
    pub fn is_full(&self) -> bool {
        self.file.is_full()
    }
    pub fn last_offset(&self) -> i64 {
        match self.file.entries {
            0 => self.base_offset,
            n => self.base_offset + u32_at(self.file.entry(n - 1), 0) as i64,
        }
    }

    /// Adds an entry; ignored unless `offset` is beyond the last entry. Returns false when full.
    pub fn append(&mut self, offset: i64, position: u32) -> io::Result<bool> {
        if self.file.entries > 0 && offset <= self.last_offset() {
            return Ok(true);
        }
        let mut entry = [0u8; OFFSET_ENTRY];
        entry[..4].copy_from_slice(&((offset - self.base_offset) as u32).to_be_bytes());
        entry[4..].copy_from_slice(&position.to_be_bytes());
        self.file.push(&entry)
    }

    /// The last indexed (offset, position) at or before `target`, or the segment start.
    pub fn lookup(&self, target: i64) -> (i64, u32) {
        let relative = target - self.base_offset;
        match self.file.floor(relative, |e| u32_at(e, 0) as i64) {
            Some(n) => {
                let e = self.file.entry(n);
                (self.base_offset + u32_at(e, 0) as i64, u32_at(e, 4))
            }
            None => (self.base_offset, 0),
        }
    }

    /// The last entry whose position is <= `position` (positions increase with offsets).
    pub fn floor_by_position(&self, position: u32) -> Option<(i64, u32)> {
        let n = self.file.floor(position as i64, |e| u32_at(e, 4) as i64)?;
        let e = self.file.entry(n);
        Some((self.base_offset + u32_at(e, 0) as i64, u32_at(e, 4)))
    }

    /// Drops entries for offsets >= `offset`.
    pub fn truncate_to(&mut self, offset: i64) {
        let relative = offset - self.base_offset;
        self.file.entries = match self.file.floor(relative - 1, |e| u32_at(e, 0) as i64) {
            Some(n) => n + 1,
            None => 0,
        };
    }

    /// Drops all entries (before a rebuild).
    pub fn clear(&mut self) {
        self.file.entries = 0;
    }

    /// The last entry points inside the segment (an O(1) check, Kafka's `sanityCheck`).
    pub fn last_entry_sane(&self, segment_size: u64) -> bool {
        match self.file.entries {
            0 => true,
            n => (u32_at(self.file.entry(n - 1), 4) as u64) < segment_size.max(1),
        }
    }

    /// Entries must strictly increase in offset and position; anything else means the file
    /// cannot be trusted and must be rebuilt.
    pub fn is_consistent(&self, segment_size: u64) -> bool {
        let mut previous: Option<(u32, u32)> = None;
        for n in 0..self.file.entries {
            let e = self.file.entry(n);
            let (rel, pos) = (u32_at(e, 0), u32_at(e, 4));
            if pos as u64 >= segment_size.max(1)
                || previous.is_some_and(|(r, p)| rel <= r || pos <= p)
            {
                return false;
            }
            previous = Some((rel, pos));
        }
        true
    }

    pub fn flush(&self) -> io::Result<()> {
        self.file.flush()
    }
    pub fn trim(&mut self) -> io::Result<()> {
        self.file.trim()
    }
    pub fn reopen_for_append(&mut self, max_bytes: u64) -> io::Result<()> {
        self.file.reopen_for_append(max_bytes)
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
        &self.file.path
    }
    pub fn entries(&self) -> usize {
        self.file.entries
    }
    /// Full one entry early: sealing the segment appends a final entry (its max timestamp).
    pub fn is_full(&self) -> bool {
        self.file.entries + 1 >= self.file.max_entries
    }

    /// The newest entry (timestamp, offset), if any.
    pub fn last_entry(&self) -> Option<(i64, i64)> {
        let n = self.file.entries.checked_sub(1)?;
        let e = self.file.entry(n);
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
    pub fn lookup(&self, timestamp: i64) -> i64 {
        match self
            .file
            .floor(timestamp.saturating_sub(1), |e| i64_at(e, 0))
        {
            Some(n) => self.base_offset + u32_at(self.file.entry(n), 8) as i64,
            None => self.base_offset,
        }
    }

    pub fn truncate_to(&mut self, offset: i64) {
        let keep = (0..self.file.entries)
            .take_while(|&n| self.base_offset + (u32_at(self.file.entry(n), 8) as i64) < offset)
            .count();
        self.file.entries = keep;
    }

    pub fn clear(&mut self) {
        self.file.entries = 0;
    }

    pub fn is_consistent(&self) -> bool {
        let mut previous: Option<(i64, u32)> = None;
        for n in 0..self.file.entries {
            let e = self.file.entry(n);
            let (ts, rel) = (i64_at(e, 0), u32_at(e, 8));
            if previous.is_some_and(|(t, r)| ts <= t || rel <= r) {
                return false;
            }
            previous = Some((ts, rel));
        }
        true
    }

    pub fn flush(&self) -> io::Result<()> {
        self.file.flush()
    }
    pub fn trim(&mut self) -> io::Result<()> {
        self.file.trim()
    }
    pub fn reopen_for_append(&mut self, max_bytes: u64) -> io::Result<()> {
        self.file.reopen_for_append(max_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_index_lookup_finds_floor_entry() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = OffsetIndex::open(&dir.path().join("a.index"), 100, 80, true).unwrap();
        assert_eq!(index.lookup(150), (100, 0));
        for i in 0..5 {
            assert!(index.append(100 + i * 10, (i * 1000) as u32).unwrap());
        }
        assert_eq!(index.lookup(99), (100, 0));
        assert_eq!(index.lookup(100), (100, 0));
        assert_eq!(index.lookup(125), (120, 2000));
        assert_eq!(index.lookup(140), (140, 4000));
        assert_eq!(index.lookup(10_000), (140, 4000));
        index.truncate_to(121);
        assert_eq!(index.entries(), 3);
        index.truncate_to(120);
        assert_eq!(index.entries(), 2);
        assert!(index.is_consistent(10_000));
    }

    #[test]
    fn lookups_across_the_warm_and_cold_sections_agree_with_a_full_scan() {
        let dir = tempfile::tempdir().unwrap();
        let entries = 3 * WARM_SECTION_BYTES / 8;
        let mut index =
            OffsetIndex::open(&dir.path().join("w.index"), 0, (entries * 8) as u64, true).unwrap();
        for i in 0..entries as i64 {
            assert!(index.append(1 + i * 3, (i * 100) as u32).unwrap());
        }
        for target in -1..(entries as i64 * 3 + 5) {
            let expected = (0..entries as i64)
                .map(|i| (1 + i * 3, (i * 100) as u32))
                .take_while(|&(offset, _)| offset <= target)
                .last()
                .unwrap_or((0, 0));
            assert_eq!(index.lookup(target), expected, "target {target}");
        }
    }

    #[test]
    fn offset_index_fills_and_trims() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.index");
        let mut index = OffsetIndex::open(&path, 0, 20, true).unwrap();
        assert!(index.append(1, 10).unwrap());
        assert!(index.append(2, 20).unwrap());
        assert!(index.is_full());
        assert!(!index.append(3, 30).unwrap());
        index.trim().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);
        drop(index);
        let reopened = OffsetIndex::open(&path, 0, 20, false).unwrap();
        assert_eq!(reopened.entries(), 2);
        assert_eq!(reopened.lookup(5), (2, 20));
    }

    #[test]
    fn a_writable_index_grows_on_its_first_append_not_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.index");
        let mut index = OffsetIndex::open(&path, 0, 80, true).unwrap();
        index.append(1, 10).unwrap();
        index.trim().unwrap();
        drop(index);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);

        // Reopened as the active segment's index (a restart): the file is left as it is.
        let mut index = OffsetIndex::open(&path, 0, 80, true).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);
        assert!(
            !index.is_full(),
            "room to grow counts, not the current length"
        );
        assert_eq!(index.lookup(5), (1, 10));
        assert!(index.append(2, 20).unwrap());
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            80,
            "grown to the maximum"
        );
        for i in 3..=10 {
            assert!(index.append(i, i as u32 * 10).unwrap());
        }
        assert!(index.is_full());
        assert_eq!(index.lookup(7), (7, 70));
    }

    #[test]
    fn time_index_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = TimeIndex::open(&dir.path().join("a.timeindex"), 0, 120, true).unwrap();
        assert_eq!(index.lookup(5), 0);
        index.maybe_append(1000, 10).unwrap();
        index.maybe_append(900, 20).unwrap(); // not increasing: ignored
        index.maybe_append(2000, 30).unwrap();
        assert_eq!(index.entries(), 2);
        assert_eq!(index.lookup(999), 0);
        assert_eq!(index.lookup(1000), 0);
        assert_eq!(index.lookup(1500), 10);
        assert_eq!(index.lookup(5000), 30);
        index.truncate_to(30);
        assert_eq!(index.last_entry(), Some((1000, 10)));
    }

    #[test]
    fn inconsistent_index_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.index");
        std::fs::write(&path, [0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 1]).unwrap();
        let index = OffsetIndex::open(&path, 0, 64, false).unwrap();
        assert!(!index.is_consistent(100));
    }
}
