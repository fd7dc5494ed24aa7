//! One fixed-width entry file, mapped on use (Kafka's `LazyIndex`) through the process's
//! bounded set of index maps, and the set itself. The mmap call is one of the
//! crate's two `unsafe` blocks (the other is `sync_file_range` in `segment/file_io.rs`).
//!
//! A mapping costs one of the process's `vm.max_map_count` maps (65,530 by default), and
//! past that limit every mmap fails: the thread stacks and the allocator's arenas with it.
//! Kafka maps an index on first use and keeps it mapped, so a broker with many segments asks
//! for the limit to be raised. Here at most `log.index.mapped.files.max` index files are
//! mapped at once (half the limit by default); beyond it the least recently used are unmapped
//! (CLOCK, `clock.rs`) and mapped again on their next lookup. A lookup on a hot partition's
//! index finds it mapped and takes no lock but its own. Loading a log maps nothing: the last
//! entry of each file, all a start needs, is read with one `pread` and kept in memory.

#![allow(unsafe_code)]

use crate::storage::clock::{ClockBits, ClockSet, ClockStats, Member};
use memmap2::{MmapMut, MmapOptions};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The bounded set of mapped index files.
pub type IndexMaps = ClockSet<MapSlot>;

/// What the set has done, for the metrics.
pub type IndexMapStats = ClockStats;

/// The process's set (one per process, as the map limit it stands for).
pub fn global() -> &'static IndexMaps {
    static GLOBAL: OnceLock<IndexMaps> = OnceLock::new();
    GLOBAL.get_or_init(|| IndexMaps::new(default_capacity()))
}

/// Sets how many index files may be mapped at once (`log.index.mapped.files.max`; `None`:
/// half of `vm.max_map_count`).
pub fn configure(capacity: Option<usize>) {
    global().set_capacity(capacity.unwrap_or_else(default_capacity));
}

/// Half of `vm.max_map_count`: the other half is for the thread stacks, the allocator's
/// arenas and the libraries.
fn default_capacity() -> usize {
    let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(65_530);
    limit / 2
}

/// An index file's mapping, while it has one, as a member of the set.
#[derive(Debug)]
pub struct MapSlot {
    set: &'static IndexMaps,
    map: Mutex<Option<MmapMut>>,
    clock: ClockBits,
}

impl Member for MapSlot {
    fn clock(&self) -> &ClockBits {
        &self.clock
    }

    /// Unmaps unless the owner is using the mapping right now. The pages written through it
    /// stay in the page cache; a flush of the file writes them.
    fn release_if_idle(&self) -> Option<bool> {
        let mut map = self.map.try_lock().ok()?;
        Some(map.take().is_some())
    }
}

impl MapSlot {
    fn lock(&self) -> MutexGuard<'_, Option<MmapMut>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for MapSlot {
    fn drop(&mut self) {
        let mapped = self.map.get_mut().map(|m| m.is_some()).unwrap_or(false);
        if mapped {
            self.set.released();
        }
    }
}

/// The largest entry (a time index entry).
const MAX_ENTRY: usize = 12;

/// An index file grows by this much at a time, each chunk allocated by the file system
/// (`fallocate`) before it is mapped: a mapped page is never written that the disk has no
/// room for (on a full disk that is SIGBUS), and a partition's index costs disk as it fills,
/// not `segment.index.bytes` up front.
const GROWTH_BYTES: usize = 64 * 1024;

/// Kafka's warm section of an index: the entries in its last 8 KiB.
pub(super) const WARM_SECTION_BYTES: usize = 8192;

/// A fixed-width entry file. No descriptor is kept: it is opened to be mapped, read or
/// resized, and closed again (a mapping stays valid once its file is closed).
#[derive(Debug)]
pub(super) struct IndexFile {
    path: PathBuf,
    slot: Arc<MapSlot>,
    entry_size: usize,
    entries: usize,
    /// Entries the file has room for (its length / entry size), all of it mapped when mapped.
    file_entries: usize,
    /// Entries it may grow to: `segment.index.bytes` for an active segment's index.
    max_entries: usize,
    /// A copy of the last entry (valid while `entries > 0`).
    last: [u8; MAX_ENTRY],
    /// Entries written since the last flush: a flush of an unmapped file must sync it.
    unsynced: AtomicBool,
}

impl IndexFile {
    /// Opens or creates the file (nothing is mapped). With `writable`, appends may grow it to
    /// `max_bytes`; existing entries are the whole ones in the file (callers decide whether to
    /// trust them).
    pub(super) fn open(
        path: &Path,
        entry_size: usize,
        max_bytes: u64,
        writable: bool,
    ) -> io::Result<Self> {
        Self::open_in(global(), path, entry_size, max_bytes, writable)
    }

    /// [`IndexFile::open`] through another set (tests).
    pub(super) fn open_in(
        set: &'static IndexMaps,
        path: &Path,
        entry_size: usize,
        max_bytes: u64,
        writable: bool,
    ) -> io::Result<Self> {
        let entry_size = entry_size.min(MAX_ENTRY);
        let file = Self::open_file(path)?;
        let current_len = file.metadata()?.len();
        let entries = usize::try_from(current_len / entry_size as u64).unwrap_or(usize::MAX);
        let whole_len = (entries * entry_size) as u64;
        if current_len != whole_len {
            file.set_len(whole_len)?;
        }
        let mut last = [0u8; MAX_ENTRY];
        if entries > 0 {
            file.read_exact_at(&mut last[..entry_size], whole_len - entry_size as u64)?;
        }
        let mut index = Self {
            path: path.to_path_buf(),
            slot: Arc::new(MapSlot {
                set,
                map: Mutex::new(None),
                clock: ClockBits::default(),
            }),
            entry_size,
            entries,
            file_entries: entries,
            max_entries: entries,
            last,
            unsynced: AtomicBool::new(false),
        };
        if writable {
            index.allow_growth_to(max_bytes);
        }
        Ok(index)
    }

    fn open_file(path: &Path) -> io::Result<File> {
        crate::storage::open_file(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
            path,
        )
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn entries(&self) -> usize {
        self.entries
    }

    pub(super) fn max_entries(&self) -> usize {
        self.max_entries
    }

    pub(super) fn is_full(&self) -> bool {
        self.entries >= self.max_entries
    }

    /// The last entry, from memory.
    pub(super) fn last(&self) -> Option<&[u8]> {
        (self.entries > 0).then(|| &self.last[..self.entry_size])
    }

    /// Lets appends grow the file up to `max_bytes` (at least one entry). The file is grown
    /// on the first append that needs the room, not now: loading a log touches no index file,
    /// so restarting a broker with many partitions does not extend every active index.
    pub(super) fn allow_growth_to(&mut self, max_bytes: u64) {
        self.max_entries = usize::try_from(max_bytes / self.entry_size as u64)
            .unwrap_or(usize::MAX)
            .max(self.entries)
            .max(1);
    }

    /// Calls `read` with the entries, mapping the file first if it is not mapped.
    pub(super) fn with_entries<R>(&self, read: impl FnOnce(Entries<'_>) -> R) -> io::Result<R> {
        if self.entries == 0 {
            return Ok(read(Entries {
                bytes: &[],
                size: self.entry_size,
            }));
        }
        self.with_map(|map| {
            read(Entries {
                bytes: &map[..self.entries * self.entry_size],
                size: self.entry_size,
            })
        })
    }

    /// Calls `use_map` with the file's mapping (all `file_entries` of it), mapping it first
    /// when it is not mapped. The slot stays locked meanwhile, so the set cannot unmap it.
    fn with_map<R>(&self, use_map: impl FnOnce(&mut MmapMut) -> R) -> io::Result<R> {
        let set = self.slot.set;
        let mut slot = self.slot.lock();
        if let Some(map) = slot.as_mut() {
            set.hit(&self.slot);
            return Ok(use_map(map));
        }
        set.miss(&self.slot);
        let map = match self.map_file() {
            Err(e) if is_out_of_maps(&e) && set.make_room(&self.slot) => self.map_file()?,
            other => other?,
        };
        let map = slot.insert(map);
        // Admitting it may unmap others (never this one: its slot is locked and it is the
        // member being admitted).
        set.acquired(&self.slot);
        Ok(use_map(map))
    }

    fn map_file(&self) -> io::Result<MmapMut> {
        let file = Self::open_file(&self.path)?;
        // SAFETY: the file is private to this broker's log directory and only this struct
        // changes its length, always after dropping the mapping; the mapped length is the
        // file's (`file_entries`), and every mapped page is allocated (`grow` allocates
        // before the file is mapped again).
        unsafe {
            MmapOptions::new()
                .len(self.file_entries * self.entry_size)
                .map_mut(&file)
        }
    }

    /// Drops the mapping (before the file's length changes).
    fn unmap(&self) {
        if self.slot.lock().take().is_some() {
            self.slot.set.released();
        }
    }

    /// Room for the next chunk of entries, allocated on disk before it is mapped. On failure
    /// (a full disk, no descriptor) nothing changed and the index holds what it held.
    fn grow(&mut self) -> io::Result<()> {
        let chunk = (GROWTH_BYTES / self.entry_size).max(1);
        let target = (self.file_entries + chunk).min(self.max_entries);
        let file = Self::open_file(&self.path)?;
        rustix::fs::fallocate(
            &file,
            rustix::fs::FallocateFlags::empty(),
            0,
            (target * self.entry_size) as u64,
        )?;
        self.unmap();
        self.file_entries = target;
        Ok(())
    }

    /// Appends an entry; false when the index is full. An I/O error growing or mapping the
    /// file is returned as such.
    pub(super) fn push(&mut self, bytes: &[u8]) -> io::Result<bool> {
        if self.entries >= self.max_entries || bytes.len() != self.entry_size {
            return Ok(false);
        }
        if self.entries >= self.file_entries {
            self.grow()?;
        }
        let start = self.entries * self.entry_size;
        let end = start + self.entry_size;
        self.with_map(|map| map[start..end].copy_from_slice(bytes))?;
        self.unsynced.store(true, Ordering::Relaxed);
        self.entries += 1;
        self.last[..self.entry_size].copy_from_slice(bytes);
        Ok(true)
    }

    /// Keeps the entries whose relative offset (from `offset_of`) is below `relative_offset`.
    pub(super) fn keep_below(
        &mut self,
        relative_offset: i64,
        offset_of: impl Fn(&[u8]) -> i64,
    ) -> io::Result<()> {
        let keep = self.with_entries(|entries| {
            entries
                .floor(relative_offset - 1, offset_of)
                .map_or(0, |n| n + 1)
        })?;
        self.truncate_entries(keep)
    }

    /// Keeps the first `keep` entries.
    pub(super) fn truncate_entries(&mut self, keep: usize) -> io::Result<()> {
        if keep >= self.entries {
            return Ok(());
        }
        if keep > 0 {
            let last = self.with_entries(|entries| {
                let mut last = [0u8; MAX_ENTRY];
                last[..entries.size].copy_from_slice(entries.get(keep - 1));
                last
            })?;
            self.last = last;
        }
        self.entries = keep;
        Ok(())
    }

    /// Makes the entries durable: an msync of the mapping, or an fdatasync of the file when
    /// the set unmapped it since they were written.
    pub(super) fn flush(&self) -> io::Result<()> {
        if !self.unsynced.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let synced = match self.slot.lock().as_ref() {
            Some(map) => map.flush(),
            None => Self::open_file(&self.path).and_then(|file| file.sync_data()),
        };
        if synced.is_err() {
            self.unsynced.store(true, Ordering::Relaxed);
        }
        synced
    }

    /// Shrinks the file to its entries (the segment is being sealed or closed) and unmaps it
    /// until its next lookup.
    pub(super) fn trim(&mut self) -> io::Result<()> {
        self.flush()?;
        self.max_entries = self.entries;
        if self.file_entries == self.entries {
            return Ok(());
        }
        let file = Self::open_file(&self.path)?;
        self.unmap();
        file.set_len((self.entries * self.entry_size) as u64)?;
        self.file_entries = self.entries;
        Ok(())
    }
}

/// Out of maps (`vm.max_map_count`) or address space.
fn is_out_of_maps(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::NOMEM.raw_os_error())
}

/// The entries of a mapped index.
pub(super) struct Entries<'a> {
    bytes: &'a [u8],
    size: usize,
}

impl Entries<'_> {
    pub(super) fn len(&self) -> usize {
        self.bytes.len() / self.size
    }

    pub(super) fn get(&self, n: usize) -> &[u8] {
        &self.bytes[n * self.size..(n + 1) * self.size]
    }

    /// Whether both keys (from `keys_of`) strictly increase from each entry to the next.
    pub(super) fn strictly_increasing(&self, keys_of: impl Fn(&[u8]) -> (i64, i64)) -> bool {
        (1..self.len()).all(|n| {
            let (a, b) = keys_of(self.get(n - 1));
            let (c, d) = keys_of(self.get(n));
            c > a && d > b
        })
    }

    /// The last entry whose key (from `key_of`) is <= `target`. Kafka's warm-section search:
    /// consumers and appends almost always look near the end, so the last 8 KiB of entries
    /// (pages that stay in memory) are searched first, and the cold start of the file is only
    /// touched for targets below them.
    pub(super) fn floor<F: Fn(&[u8]) -> i64>(&self, target: i64, key_of: F) -> Option<usize> {
        let len = self.len();
        if len == 0 {
            return None;
        }
        let warm_entries = WARM_SECTION_BYTES / self.size;
        let first_warm = len.saturating_sub(1 + warm_entries);
        if key_of(self.get(first_warm)) <= target {
            return self.floor_in(first_warm, len, target, &key_of);
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
            if key_of(self.get(mid)) <= target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo > first).then(|| lo - 1)
    }
}
