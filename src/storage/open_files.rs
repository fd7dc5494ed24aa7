//! A bounded set of open segment files (RocksDB's table cache, its `max_open_files`): a
//! segment's `.log` is opened when it is read or written and closed again, oldest use first,
//! once more than `log.segment.open.files.max` are open. The partition count is then bounded
//! by disk and memory, not by the process's open-file limit, and a start or a recovery over
//! more segments than descriptors cannot fail for want of one.
//!
//! Eviction is CLOCK (second chance): a use sets the file's reference bit without taking any
//! shared lock, and only opening a file that is not open walks the ring, closing the first
//! file whose bit is clear and clearing the bits it passes. A hot partition's active segment
//! is used all the time and stays open; its produce and fetch take no lock but its own.
//!
//! One set per process, as the open-file limit it stands for: every log of the broker shares
//! it ([`configure`] sets its size at start; tests and tools get the default, half the
//! descriptor limit). A `FileSlice` a fetch is still sending keeps its file open (an `Arc`),
//! beyond the bound for as long as the send lasts.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The process's set.
pub fn global() -> &'static OpenFiles {
    static GLOBAL: OnceLock<OpenFiles> = OnceLock::new();
    GLOBAL.get_or_init(|| OpenFiles::new(default_capacity()))
}

/// Sets how many segment files may be open at once (`log.segment.open.files.max`; `None`:
/// half the open-file limit).
pub fn configure(capacity: Option<usize>) {
    global().set_capacity(capacity.unwrap_or_else(default_capacity));
}

/// Half the soft open-file limit: the other half is for connections, index files being
/// mapped, checkpoints and the metadata log.
fn default_capacity() -> usize {
    use rustix::process::{Resource, getrlimit};
    let limit = getrlimit(Resource::Nofile).current.unwrap_or(1024);
    usize::try_from(limit / 2).unwrap_or(usize::MAX)
}

/// What the set has done, for the metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenFileStats {
    pub capacity: usize,
    pub open: usize,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

/// A counter bumped on every use of an open file from any thread: one cache line per shard,
/// each thread on its own shard, so the hot path does not bounce a shared line between cores.
#[derive(Debug, Default)]
struct UseCounter {
    shards: [PaddedCount; 8],
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCount(AtomicU64);

impl UseCounter {
    fn bump(&self) {
        thread_local! {
            static SHARD: usize = {
                static NEXT: AtomicUsize = AtomicUsize::new(0);
                NEXT.fetch_add(1, Ordering::Relaxed)
            };
        }
        let shard = SHARD.with(|s| *s) % self.shards.len();
        self.shards[shard].0.fetch_add(1, Ordering::Relaxed);
    }

    fn total(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }
}

#[derive(Debug)]
pub struct OpenFiles {
    capacity: AtomicUsize,
    open: AtomicUsize,
    hits: UseCounter,
    misses: AtomicU64,
    evictions: AtomicU64,
    ring: Mutex<Ring>,
}

/// The files the set holds open, in CLOCK order.
#[derive(Debug, Default)]
struct Ring {
    entries: Vec<Weak<SegmentFile>>,
    hand: usize,
}

impl OpenFiles {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: AtomicUsize::new(capacity.max(1)),
            open: AtomicUsize::new(0),
            hits: UseCounter::default(),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            ring: Mutex::new(Ring::default()),
        }
    }

    pub fn set_capacity(&self, capacity: usize) {
        self.capacity.store(capacity.max(1), Ordering::Relaxed);
    }

    pub fn stats(&self) -> OpenFileStats {
        OpenFileStats {
            capacity: self.capacity.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            hits: self.hits.total(),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    /// Puts a file just opened in the ring, then closes others until the set is within its
    /// bound.
    fn admit(&self, file: &Arc<SegmentFile>) {
        let mut ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        if !file.in_ring.swap(true, Ordering::Relaxed) {
            ring.entries.push(Arc::downgrade(file));
        }
        let capacity = self.capacity.load(Ordering::Relaxed);
        // Two sweeps clear every reference bit; files busy in another thread are passed over.
        let mut budget = ring.entries.len() * 2 + 1;
        while self.open.load(Ordering::Relaxed) > capacity && budget > 0 && !ring.entries.is_empty()
        {
            budget -= 1;
            let at = ring.hand % ring.entries.len();
            let Some(candidate) = ring.entries[at].upgrade() else {
                // Its segment is gone (and its file with it).
                ring.entries.swap_remove(at);
                continue;
            };
            if Arc::ptr_eq(&candidate, file) || candidate.referenced.swap(false, Ordering::Relaxed)
            {
                ring.hand = at + 1;
                continue;
            }
            match candidate.close_if_idle() {
                Some(true) => {
                    self.evictions.fetch_add(1, Ordering::Relaxed);
                    candidate.in_ring.store(false, Ordering::Relaxed);
                    ring.entries.swap_remove(at);
                }
                Some(false) => {
                    candidate.in_ring.store(false, Ordering::Relaxed);
                    ring.entries.swap_remove(at);
                }
                // In use by another thread right now: it stays.
                None => ring.hand = at + 1,
            }
        }
    }

    /// Closes files until at least one more can be opened (the process ran out of
    /// descriptors): true if one was closed.
    fn make_room(&self, file: &Arc<SegmentFile>) -> bool {
        let open = self.open.load(Ordering::Relaxed);
        let previous = self.capacity.load(Ordering::Relaxed);
        self.capacity
            .store(open.saturating_sub(1).max(1), Ordering::Relaxed);
        self.admit(file);
        self.capacity.store(previous, Ordering::Relaxed);
        self.open.load(Ordering::Relaxed) < open
    }
}

/// A segment's `.log` file, open while it is used (see the module doc).
#[derive(Debug)]
pub struct SegmentFile {
    set: &'static OpenFiles,
    path: PathBuf,
    file: Mutex<Option<Arc<File>>>,
    referenced: AtomicBool,
    /// Whether the set's ring holds it (while its file is open).
    in_ring: AtomicBool,
}

impl SegmentFile {
    /// A file to open read-write through the process's set: created empty now with
    /// `create`, else it must exist.
    pub fn open(path: &Path, create: bool) -> io::Result<Arc<Self>> {
        Self::open_in(global(), path, create)
    }

    /// [`SegmentFile::open`] through another set (tests).
    pub fn open_in(set: &'static OpenFiles, path: &Path, create: bool) -> io::Result<Arc<Self>> {
        let handle = Arc::new(Self {
            set,
            path: path.to_path_buf(),
            file: Mutex::new(None),
            referenced: AtomicBool::new(true),
            in_ring: AtomicBool::new(false),
        });
        let file = Arc::new(super::open_file(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(create)
                .truncate(create),
            path,
        )?);
        handle.install(file);
        Ok(handle)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, opened again if the set closed it.
    pub fn get(self: &Arc<Self>) -> io::Result<Arc<File>> {
        let set = self.set;
        self.referenced.store(true, Ordering::Relaxed);
        if let Some(file) = &*self.slot() {
            set.hits.bump();
            return Ok(file.clone());
        }
        set.misses.fetch_add(1, Ordering::Relaxed);
        let options = OpenOptions::new().read(true).write(true).clone();
        let file = match super::open_file(&options, &self.path) {
            Err(e) if is_out_of_descriptors(&e) && set.make_room(self) => {
                super::open_file(&options, &self.path)?
            }
            other => other?,
        };
        Ok(self.install(Arc::new(file)))
    }

    /// Keeps `file` as this segment's open file (unless another thread opened it meanwhile)
    /// and has the set close others beyond its bound.
    fn install(self: &Arc<Self>, file: Arc<File>) -> Arc<File> {
        let set = self.set;
        let kept = {
            let mut slot = self.slot();
            match &*slot {
                Some(existing) => existing.clone(),
                None => {
                    set.open.fetch_add(1, Ordering::Relaxed);
                    *slot = Some(file.clone());
                    file
                }
            }
        };
        set.admit(self);
        kept
    }

    /// Closes the file unless a thread is using it right now: `None` then, else whether
    /// it was open.
    fn close_if_idle(&self) -> Option<bool> {
        let Ok(mut slot) = self.file.try_lock() else {
            return None;
        };
        let was_open = slot.take().is_some();
        if was_open {
            self.release();
        }
        Some(was_open)
    }

    /// One file of the set was closed.
    fn release(&self) {
        let _ = self
            .set
            .open
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<File>>> {
        self.file.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SegmentFile {
    fn drop(&mut self) {
        let open = self.file.get_mut().map(|f| f.is_some()).unwrap_or(false);
        if open {
            self.release();
        }
    }
}

/// EMFILE or ENFILE.
fn is_out_of_descriptors(e: &io::Error) -> bool {
    let emfile = rustix::io::Errno::MFILE.raw_os_error();
    let enfile = rustix::io::Errno::NFILE.raw_os_error();
    e.raw_os_error()
        .is_some_and(|code| code == emfile || code == enfile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn leaked(capacity: usize) -> &'static OpenFiles {
        Box::leak(Box::new(OpenFiles::new(capacity)))
    }

    #[test]
    fn at_most_capacity_files_stay_open_and_a_closed_one_reopens_with_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let set = leaked(3);
        let files: Vec<Arc<SegmentFile>> = (0..10)
            .map(|i| {
                let file =
                    SegmentFile::open_in(set, &dir.path().join(format!("{i}.log")), true).unwrap();
                file.get().unwrap().write_all_at(&[i as u8; 4], 0).unwrap();
                file
            })
            .collect();
        assert!(set.stats().open <= 3, "{:?}", set.stats());
        for (i, file) in files.iter().enumerate() {
            let mut buf = [0u8; 4];
            file.get().unwrap().read_exact_at(&mut buf, 0).unwrap();
            assert_eq!(buf, [i as u8; 4]);
            assert!(set.stats().open <= 3, "{:?}", set.stats());
        }
        let stats = set.stats();
        assert!(stats.evictions >= 7 && stats.misses >= 7, "{stats:?}");
        drop(files);
        assert_eq!(set.stats().open, 0);
    }

    #[test]
    fn a_file_in_use_every_round_stays_open() {
        let dir = tempfile::tempdir().unwrap();
        let set = leaked(4);
        let hot = SegmentFile::open_in(set, &dir.path().join("hot.log"), true).unwrap();
        let cold: Vec<Arc<SegmentFile>> = (0..20)
            .map(|i| SegmentFile::open_in(set, &dir.path().join(format!("{i}.log")), true).unwrap())
            .collect();
        hot.get().unwrap();
        let misses = set.stats().misses;
        for file in &cold {
            hot.get().unwrap();
            file.get().unwrap();
        }
        // Each cold file is opened again (a miss); the hot one never is.
        assert_eq!(set.stats().misses - misses, cold.len() as u64);
        assert!(set.stats().open <= 4);
    }

    #[test]
    fn a_file_handed_out_stays_usable_after_it_is_closed_in_the_set() {
        let dir = tempfile::tempdir().unwrap();
        let set = leaked(1);
        let first = SegmentFile::open_in(set, &dir.path().join("a.log"), true).unwrap();
        let held = first.get().unwrap();
        let _second = SegmentFile::open_in(set, &dir.path().join("b.log"), true).unwrap();
        held.write_all_at(b"still", 0).unwrap();
        let mut buf = [0u8; 5];
        first.get().unwrap().read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"still");
    }
}
