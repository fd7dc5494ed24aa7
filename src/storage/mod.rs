//! Kafka's storage layer: partition logs made of segments with sparse mmapped indexes,
//! checkpoints, recovery and retention. Synchronous, no networking, no wire types.
//!
//! | file | owns |
//! |---|---|
//! | `manager/` | the log directories (JBOD): locks, load at startup, placement, create/delete/move logs, checkpoints, clean-shutdown markers, the retention/flush/checkpoint timers |
//! | `log/` | one partition: segments, offsets, load and recovery, append, roll, read, retention, compaction, flush |
//! | `segment/` | one `.log` file with its indexes: append (`pwritev`, `preallocate`, write-back; `unsafe`: `sync_file_range`), read, recover, truncate |
//! | `open_files.rs` | the bounded set of open segment files (reopened on use) |
//! | `index/` | `.index` / `.timeindex` mapped on use through a bounded set of maps (`unsafe`: the mmap call) |
//! | `clock.rs` | a bounded set with CLOCK eviction, of open files and of index maps |
//! | `checkpoint.rs` | atomic text checkpoint files |
//! | `cleaner.rs` | log compaction: latest record per key |
//! | `producer_state.rs` | idempotent producers: sequences, duplicates, snapshots |
//! | `txn_index.rs` | the aborted-transaction index (`.txnindex`) read_committed fetches use |
//! | `epoch.rs` | the leader-epoch cache and its `leader-epoch-checkpoint` |
//! | `flush.rs` | a flush job: fsyncs prepared under the log's lock, run without it |
//! | `space.rs` | a full disk: appends refused until space is freed, the metadata log's reserve |

pub mod checkpoint;
pub mod cleaner;
pub mod clock;
pub mod epoch;
pub mod flush;
pub mod index;
pub mod log;
pub mod manager;
pub mod open_files;
pub mod producer_state;
pub mod segment;
pub mod space;
pub mod txn_index;

use crate::record::RecordError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use thiserror::Error;

/// The names in a log directory, read without updating its access time (see `open_file`).
pub(crate) fn list_dir(dir: &Path) -> std::io::Result<Vec<String>> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(dir, flags | OFlags::NOATIME, Mode::empty()) {
        Err(rustix::io::Errno::PERM) => rustix::fs::open(dir, flags, Mode::empty())?,
        other => other?,
    };
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::new(fd)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy();
        if name != "." && name != ".." {
            names.push(name.into_owned());
        }
    }
    Ok(names)
}

/// A failing disk for tests of a failed log directory: with
/// `FAILPOINTS=disk-fails=return(TEXT)` every write to a segment whose path contains TEXT (a
/// directory, a partition's name) fails with EIO.
/// Compiled to nothing outside test builds.
pub(crate) fn failing_disk_point(path: &Path) -> Result<(), StorageError> {
    fail::fail_point!("disk-fails", |dir: Option<String>| {
        if dir.is_some_and(|dir| path.to_string_lossy().contains(&dir)) {
            Err(StorageError::Io(std::io::Error::from_raw_os_error(
                rustix::io::Errno::IO.raw_os_error(),
            )))
        } else {
            Ok(())
        }
    });
    let _ = path;
    Ok(())
}

/// A slow disk for the partition-tolerance harness: with `FAILPOINTS=segment-write=sleep(N)`
/// every write to a segment waits N ms first. Compiled to nothing outside test builds.
pub(crate) fn slow_disk_point() {
    fail::fail_point!("segment-write");
}

/// Opens a log file without access-time updates where the file's owner allows it
/// (`O_NOATIME`). Under `relatime`, the first read of a file written since its last read
/// dirties its inode, a journal write per file; a restart right after heavy writes reads
/// thousands of such files while the journal is still busy, and each of those updates
/// waits for it. Nothing here uses access times.
pub(crate) fn open_file(options: &OpenOptions, path: &Path) -> std::io::Result<File> {
    let mut without_atime = options.clone();
    without_atime.custom_flags(rustix::fs::OFlags::NOATIME.bits() as i32);
    match without_atime.open(path) {
        // Not the owner (and no CAP_FOWNER): open as usual.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PERM.raw_os_error()) => {
            options.open(path)
        }
        other => other,
    }
}

#[derive(Debug, Error)]
pub enum StorageError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("offset {offset} is out of range [{start}, {end}]")]
    OffsetOutOfRange { offset: i64, start: i64, end: i64 },
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("corrupt log data: {0}")]
    Corrupt(String),
    #[error("log is offline after an earlier I/O error")]
    Offline,
    #[error("log directory {0} is in use by another process")]
    Locked(String),
    #[error(transparent)]
    Producer(#[from] producer_state::ProducerError),
    /// Replicated batches that do not continue the log (Kafka's `UnexpectedAppendOffset`).
    #[error("replicated batch at offset {got} does not continue the log at {expected}")]
    UnexpectedAppendOffset { expected: i64, got: i64 },
}

impl StorageError {
    /// An exhausted resource rather than a failing disk: no descriptor left (EMFILE, ENFILE),
    /// no memory (ENOMEM), no space or quota (ENOSPC, EDQUOT). The operation is refused and
    /// may be tried again; the log stays online, since nothing it holds is in doubt.
    pub fn is_transient(&self) -> bool {
        use rustix::io::Errno;
        let StorageError::Io(e) = self else {
            return false;
        };
        e.raw_os_error().is_some_and(|code| {
            [
                Errno::MFILE,
                Errno::NFILE,
                Errno::NOMEM,
                Errno::NOSPC,
                Errno::DQUOT,
            ]
            .iter()
            .any(|errno| errno.raw_os_error() == code)
        })
    }
}
