//! Free space of a log directory, and what keeps a full disk recoverable.
//!
//! - [`SpaceGate`]: once an append found the disk full (ENOSPC, EDQUOT), appends to the
//!   directory's logs are refused at once, without touching the disk, until the file system
//!   has [`SpaceGate::resume_free_bytes`] free again (looked up at most every 100 ms). The space
//!   that deleting a topic or retention frees is then not eaten by producers retrying in a
//!   loop before the metadata log could record anything.
//! - [`SpaceReserve`]: a file the metadata log keeps allocated beside it and gives up when it
//!   cannot write, so a DeleteTopics (the way out of a full disk) can still be committed; it
//!   is allocated again once there is room.
//!
//! - [`DirFailures`]: which directories an I/O error took offline, and the node's answer
//!   when that leaves it nothing to run on (Kafka's broker halts).
//!
//! Reads never need space and are never refused.

use super::StorageError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

const CHECK_EVERY_MS: i64 = 100;

/// The reserve's size: 1% of the file system, from 1 MiB to 16 MiB.
fn reserve_bytes(total: u64) -> u64 {
    (total / 100).clamp(1 << 20, 16 << 20)
}

/// ENOSPC or EDQUOT.
pub fn is_out_of_space(e: &StorageError) -> bool {
    use rustix::io::Errno;
    matches!(e, StorageError::Io(io) if io.raw_os_error().is_some_and(|code| {
        code == Errno::NOSPC.raw_os_error() || code == Errno::DQUOT.raw_os_error()
    }))
}

fn no_space() -> StorageError {
    StorageError::Io(std::io::Error::from_raw_os_error(
        rustix::io::Errno::NOSPC.raw_os_error(),
    ))
}

/// Free and total bytes of the file system holding `dir`.
fn space(dir: &Path) -> Option<(u64, u64)> {
    let stats = fs4::statvfs(dir).ok()?;
    Some((stats.available_space(), stats.total_space()))
}

/// A log directory's gate: appends wait while its disk is full; and once an I/O error took
/// one of its logs offline, the whole directory is offline (Kafka's `LogDirFailureChannel`):
/// its state on disk is unknown, so none of its logs is read or written again in this run,
/// and the broker reports it to the controller.
#[derive(Debug)]
pub struct SpaceGate {
    dir: PathBuf,
    full: AtomicBool,
    last_check_ms: AtomicI64,
    failed: AtomicBool,
    failures: Option<Arc<DirFailures>>,
}

impl SpaceGate {
    pub fn new(dir: &Path) -> Arc<Self> {
        Self::watched(dir, None)
    }

    /// A gate whose failure is also told to `failures`.
    pub fn watched(dir: &Path, failures: Option<Arc<DirFailures>>) -> Arc<Self> {
        Arc::new(Self {
            dir: dir.to_path_buf(),
            full: AtomicBool::new(false),
            last_check_ms: AtomicI64::new(0),
            failed: AtomicBool::new(false),
            failures,
        })
    }

    /// Takes the directory offline (an I/O error in one of its logs); said once.
    pub fn fail(&self) {
        if !self.failed.swap(true, Ordering::SeqCst) {
            tracing::error!(dir = %self.dir.display(), "log directory offline after an I/O error: none of its logs is served until a restart");
            if let Some(failures) = &self.failures {
                failures.failed(&self.dir);
            }
        }
    }

    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Free space needed before appends resume: twice the metadata reserve.
    pub fn resume_free_bytes(total: u64) -> u64 {
        2 * reserve_bytes(total)
    }

    /// Whether an append may write now.
    pub fn admit(&self, now_ms: i64) -> Result<(), StorageError> {
        if !self.full.load(Ordering::Relaxed) {
            return Ok(());
        }
        let last = self.last_check_ms.load(Ordering::Relaxed);
        if now_ms - last < CHECK_EVERY_MS {
            return Err(no_space());
        }
        self.last_check_ms.store(now_ms, Ordering::Relaxed);
        match space(&self.dir) {
            Some((free, total)) if free >= Self::resume_free_bytes(total) => {
                self.full.store(false, Ordering::Relaxed);
                tracing::info!(dir = %self.dir.display(), free, "disk space is back; appends resume");
                Ok(())
            }
            _ => Err(no_space()),
        }
    }

    /// Notes the outcome of a write: out of space closes the gate.
    pub fn note(&self, error: &StorageError, now_ms: i64) {
        if is_out_of_space(error) && !self.full.swap(true, Ordering::Relaxed) {
            self.last_check_ms.store(now_ms, Ordering::Relaxed);
            tracing::warn!(dir = %self.dir.display(), "the disk is full: appends are refused until space is freed (delete topics or records, or lower retention)");
        }
    }
}

/// What the node does when a failed directory leaves it unable to run: told Kafka's reason.
pub type FatalDirFailure = Box<dyn Fn(&str) + Send + Sync>;

/// The log directories that went offline in this run. When every one has failed, or the
/// first one, which holds the metadata log, the node cannot go on: Kafka's broker halts
/// ("Shutdown broker because all log dirs in ... have failed", "... because the metadata log
/// dir ... has failed", KIP-858), and so does this one once the server installs
/// [`DirFailures::on_fatal`]. A directory failing among others that still run is only
/// reported to the controller.
pub struct DirFailures {
    dirs: Vec<PathBuf>,
    failed: std::sync::Mutex<Vec<PathBuf>>,
    fatal: std::sync::OnceLock<FatalDirFailure>,
}

impl std::fmt::Debug for DirFailures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirFailures")
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

impl DirFailures {
    /// `dirs` in `log.dirs` order: the first holds the metadata log.
    pub fn new(dirs: &[PathBuf]) -> Arc<Self> {
        Arc::new(Self {
            dirs: dirs.to_vec(),
            failed: std::sync::Mutex::new(Vec::new()),
            fatal: std::sync::OnceLock::new(),
        })
    }

    /// Installs what happens when the node cannot go on (once).
    pub fn on_fatal(&self, fatal: FatalDirFailure) {
        let _ = self.fatal.set(fatal);
    }

    /// The metadata log, in the first directory, could not be written (an I/O error).
    pub fn metadata_log_failed(&self) {
        if let Some(first) = self.dirs.first() {
            let first = first.clone();
            self.failed(&first);
        }
    }

    fn failed(&self, dir: &Path) {
        let reason = {
            let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            if !failed.iter().any(|d| d == dir) {
                failed.push(dir.to_path_buf());
            }
            Self::fatal_reason(&self.dirs, &failed, dir)
        };
        if let (Some(reason), Some(fatal)) = (reason, self.fatal.get()) {
            fatal(&reason);
        }
    }

    /// Kafka's reason to halt after `dir` failed, if it has one (LogManager's check first,
    /// then ReplicaManager's).
    fn fatal_reason(dirs: &[PathBuf], failed: &[PathBuf], dir: &Path) -> Option<String> {
        if dirs.iter().all(|d| failed.contains(d)) {
            let all: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Some(format!(
                "Shutdown broker because all log dirs in {} have failed",
                all.join(", ")
            ));
        }
        (dirs.first().map(PathBuf::as_path) == Some(dir)).then(|| {
            format!(
                "Shutdown broker because the metadata log dir {} has failed",
                dir.display()
            )
        })
    }
}

/// Space the metadata log keeps in reserve.
#[derive(Debug)]
pub struct SpaceReserve {
    path: PathBuf,
    held: bool,
    last_check_ms: i64,
}

impl SpaceReserve {
    pub const FILE_NAME: &'static str = "space.reserve";

    /// Holds the reserve in `dir` (allocating it if there is room; a full disk at startup
    /// leaves it to [`SpaceReserve::restore`]).
    pub fn new(dir: &Path) -> Self {
        let mut reserve = Self {
            path: dir.join(Self::FILE_NAME),
            held: false,
            last_check_ms: i64::MIN,
        };
        reserve.held = reserve.allocate();
        reserve
    }

    fn allocate(&self) -> bool {
        let Some((_, total)) = space(self.path.parent().unwrap_or(Path::new("."))) else {
            return false;
        };
        let allocated = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.path)
            .and_then(|file| {
                rustix::fs::fallocate(
                    &file,
                    rustix::fs::FallocateFlags::empty(),
                    0,
                    reserve_bytes(total),
                )?;
                file.sync_all()
            });
        match allocated {
            Ok(()) => true,
            Err(_) => {
                let _ = std::fs::remove_file(&self.path);
                false
            }
        }
    }

    /// Gives the reserve back to the file system; true if it was held.
    pub fn release(&mut self) -> bool {
        if !self.held {
            return false;
        }
        self.held = false;
        match std::fs::remove_file(&self.path) {
            Ok(()) => {
                tracing::warn!(path = %self.path.display(), "the disk is full: the metadata log's space reserve is released");
                true
            }
            Err(_) => false,
        }
    }

    /// Allocates the reserve again once the file system has room for it and for appends to
    /// resume (looked at once a second at most).
    pub fn restore(&mut self, now_ms: i64) {
        if self.held || now_ms.saturating_sub(self.last_check_ms) < 1_000 {
            return;
        }
        self.last_check_ms = now_ms;
        let Some((free, total)) = space(self.path.parent().unwrap_or(Path::new("."))) else {
            return;
        };
        if free >= SpaceGate::resume_free_bytes(total) + reserve_bytes(total) {
            self.held = self.allocate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_stops_once_its_metadata_dir_or_every_dir_has_failed() {
        let dirs = [PathBuf::from("/d/a"), PathBuf::from("/d/b")];
        let reason = |failed: &[&str], dir: &str| {
            let failed: Vec<PathBuf> = failed.iter().map(PathBuf::from).collect();
            DirFailures::fatal_reason(&dirs, &failed, Path::new(dir))
        };
        assert_eq!(reason(&["/d/b"], "/d/b"), None);
        assert_eq!(
            reason(&["/d/a"], "/d/a").as_deref(),
            Some("Shutdown broker because the metadata log dir /d/a has failed")
        );
        assert_eq!(
            reason(&["/d/b", "/d/a"], "/d/a").as_deref(),
            Some("Shutdown broker because all log dirs in /d/a, /d/b have failed")
        );

        // Through the gates: the second directory alone is reported, not fatal.
        let failures = DirFailures::new(&dirs);
        let told = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = told.clone();
        failures.on_fatal(Box::new(move |r| sink.lock().unwrap().push(r.to_string())));
        let gates = dirs
            .iter()
            .map(|d| SpaceGate::watched(d, Some(failures.clone())))
            .collect::<Vec<_>>();
        gates[1].fail();
        gates[1].fail();
        assert!(told.lock().unwrap().is_empty());
        gates[0].fail();
        assert_eq!(
            *told.lock().unwrap(),
            ["Shutdown broker because all log dirs in /d/a, /d/b have failed"]
        );
    }

    #[test]
    fn the_gate_closes_on_enospc_and_opens_when_space_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let gate = SpaceGate::new(dir.path());
        assert!(gate.admit(0).is_ok());
        gate.note(&StorageError::Io(std::io::Error::other("eio")), 0);
        assert!(gate.admit(0).is_ok(), "only running out of space closes it");
        gate.note(&no_space(), 1_000);
        assert!(
            gate.admit(1_050).is_err(),
            "refused without looking before 100 ms"
        );
        // The temp dir's file system has room: the next look opens the gate.
        assert!(gate.admit(1_200).is_ok());
    }

    #[test]
    fn the_reserve_is_released_and_restored() {
        let dir = tempfile::tempdir().unwrap();
        let mut reserve = SpaceReserve::new(dir.path());
        let path = dir.path().join(SpaceReserve::FILE_NAME);
        assert!(path.metadata().unwrap().len() >= 1 << 20);
        assert!(reserve.release());
        assert!(!path.exists());
        assert!(!reserve.release());
        reserve.restore(10_000);
        assert!(path.exists());
    }
}
