//! A bounded set of open segment files (RocksDB's table cache, its `max_open_files`): a
//! segment's `.log` is opened when it is read or written and closed again, oldest use first,
//! once more than `log.segment.open.files.max` are open. The partition count is then bounded
//! by disk and memory, not by the process's open-file limit, and a start or a recovery over
//! more segments than descriptors cannot fail for want of one.
//!
//! Eviction is CLOCK (second chance, `clock.rs`): a use sets the file's reference bit
//! without taking any shared lock, and only opening a file that is not open walks the ring.
//! A hot partition's active segment is used all the time and stays open; its produce and
//! fetch take no lock but its own.
//!
//! One set per process, as the open-file limit it stands for: every log of the broker shares
//! it ([`configure`] sets its size at start; tests and tools get the default, half the
//! descriptor limit). A `FileSlice` a fetch is still sending keeps its file open (an `Arc`),
//! beyond the bound for as long as the send lasts.

use super::clock::{ClockBits, ClockSet, ClockStats, Member};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The bounded set of open segment files.
pub type OpenFiles = ClockSet<SegmentFile>;

/// What the set has done, for the metrics.
pub type OpenFileStats = ClockStats;

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
/// opened, checkpoints and the metadata log.
fn default_capacity() -> usize {
    use rustix::process::{Resource, getrlimit};
    let limit = getrlimit(Resource::Nofile).current.unwrap_or(1024);
    usize::try_from(limit / 2).unwrap_or(usize::MAX)
}

/// A segment's `.log` file, open while it is used (see the module doc).
#[derive(Debug)]
pub struct SegmentFile {
    set: &'static OpenFiles,
    path: PathBuf,
    file: Mutex<Option<Arc<File>>>,
    clock: ClockBits,
}

impl Member for SegmentFile {
    fn clock(&self) -> &ClockBits {
        &self.clock
    }

    /// Closes the file unless a thread is using it right now.
    fn release_if_idle(&self) -> Option<bool> {
        let mut slot = self.file.try_lock().ok()?;
        Some(slot.take().is_some())
    }
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
            clock: ClockBits::default(),
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
        if let Some(file) = &*self.slot() {
            set.hit(self);
            return Ok(file.clone());
        }
        set.miss(self);
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
        let (kept, opened) = {
            let mut slot = self.slot();
            match &*slot {
                Some(existing) => (existing.clone(), false),
                None => {
                    *slot = Some(file.clone());
                    (file, true)
                }
            }
        };
        if opened {
            self.set.acquired(self);
        }
        kept
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<File>>> {
        self.file.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SegmentFile {
    fn drop(&mut self) {
        let open = self.file.get_mut().map(|f| f.is_some()).unwrap_or(false);
        if open {
            self.set.released();
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
