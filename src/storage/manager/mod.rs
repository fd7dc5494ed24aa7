//! The log directories (Kafka's `LogManager`, with several `log.dirs` as KIP-858's JBOD): takes
//! an exclusive lock on each, loads every partition log in them at startup (recovering after an
//! unclean stop), places new logs (the directory holding fewest, or the one AlterReplicaLogDirs
//! asked for), creates and deletes logs, moves a log to another directory ([`moves`]), writes
//! each directory's recovery-point, log-start-offset and high-watermark checkpoints and its
//! clean-shutdown marker; and, as Kafka's `LogManager.startup` schedules them, runs the
//! background work over its logs ([`LogManager::start_housekeeping`]): retention and
//! compaction, `flush.ms` flushes, checkpoints.
//!
//! ```text
//! {each of log.dirs}/
//!   .lock                              flock held while the broker runs
//!   .kafka_cleanshutdown               present only after a clean shutdown; removed at startup
//!   recovery-point-offset-checkpoint   text checkpoint of this directory's logs (checkpoint.rs)
//!   log-start-offset-checkpoint
//!   replication-offset-checkpoint      high watermarks (what replication has committed)
//!   {topic}-{partition}/               one directory per partition log
//!   {topic}-{partition}.{id}-future/   a log being moved here (AlterReplicaLogDirs)
//!   {topic}-{partition}.{id}-delete/   a deleted log waiting for removal
//!   __cluster_metadata-0/              the controller quorum's log (first directory only; not
//!                                      managed here)
//! ```
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the directories, loading, placement, checkpoints, housekeeping, shutdown |
//! | `moves.rs` | moving a log between directories: the future log, its copy, the swap |
//! | `replay.rs` | reading an internal topic back from its start for a coordinator |

mod moves;
mod replay;

pub use moves::{InterruptedMove, MovePace, MoveStatus, MoveStep};
pub use replay::{Replayed, replay_records};

use super::StorageError;
use super::checkpoint;
use super::log::{LoadReport, Log, OffsetChanges};
use crate::config::LogConfig;
use crate::types::TopicPartition;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";
const LOCK_FILE: &str = ".lock";
const RECOVERY_POINT_FILE: &str = "recovery-point-offset-checkpoint";
const LOG_START_FILE: &str = "log-start-offset-checkpoint";
const HIGH_WATERMARK_FILE: &str = "replication-offset-checkpoint";
const DELETE_SUFFIX: &str = "-delete";
/// The controller quorum's log, owned by the controller, not by this manager.
pub const CLUSTER_METADATA_DIR: &str = "__cluster_metadata-0";

/// A partition log shared between request handlers and background tasks. `std::sync::Mutex`:
/// nothing awaits while holding it; the operations under it are synchronous file I/O.
pub type SharedLog = Arc<Mutex<Log>>;

/// One of `log.dirs`.
#[derive(Debug)]
struct LogDir {
    path: PathBuf,
    /// Held for the life of the manager; the flock is released when it is dropped.
    _lock: File,
    clean_startup: bool,
    /// Shared by every log here: appends stop while this disk is full.
    space: Arc<super::space::SpaceGate>,
    /// How many logs are here (placement picks the directory holding fewest): kept as logs
    /// are created, deleted and moved, so placing one does not walk every log.
    hosted: std::sync::atomic::AtomicUsize,
}

impl LogDir {
    fn hosted(&self) -> usize {
        self.hosted.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn count(&self, delta: isize) {
        let _ = self.hosted.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| Some(n.saturating_add_signed(delta)),
        );
    }
}

#[derive(Debug)]
pub struct LogManager {
    dirs: Vec<LogDir>,
    logs: RwLock<HashMap<TopicPartition, SharedLog>>,
    /// Logs being moved to another directory, by partition (see [`moves`]).
    futures: Mutex<HashMap<TopicPartition, moves::FutureLog>>,
    /// Where a log not created yet is to go (AlterReplicaLogDirs before the replica exists,
    /// as Kafka's `preferredLogDirs`), by directory index.
    preferred: Mutex<HashMap<TopicPartition, usize>>,
    /// Moves a stop cut short, found at startup, for the broker to run again.
    interrupted: Mutex<Vec<moves::InterruptedMove>>,
    /// Logs created, deleted or moved so far (see [`Self::placement_changes`]).
    placement_changes: std::sync::atomic::AtomicU64,
    /// Whether any log was given a `flush.ms` (every log has Kafka's default, never, until
    /// then): the once-a-second flush pass walks the logs only after that.
    timed_flushes: std::sync::atomic::AtomicBool,
    /// `num.recovery.threads.per.data.dir`: loads logs at startup, closes them at shutdown.
    threads: usize,
    /// The directories an I/O error took offline, and what the node does when it cannot go on.
    failures: Arc<super::space::DirFailures>,
    /// Changes to what the offset checkpoints hold, counted by the logs themselves.
    offset_changes: OffsetChanges,
    /// What the checkpoints last said (see [`Self::checkpoint`]).
    checkpointed: Mutex<Checkpointed>,
}

/// What the offset checkpoints last said: each directory's print, and the change counts they
/// were written at (None until every directory's were written).
#[derive(Debug, Default)]
struct Checkpointed {
    prints: Vec<Option<CheckpointPrint>>,
    /// (offset changes, placement changes) when the pass that wrote them started.
    at: Option<(u64, u64)>,
}

/// A directory's checkpoint contents in brief: how many logs and a sum of one hash per log
/// of its partition and three offsets (a sum, so the order logs are visited in does not
/// matter).
type CheckpointPrint = (usize, u64);

/// What one directory holds at startup.
struct Scanned {
    dir: LogDir,
    logs: Vec<LogToLoad>,
    /// Copies a stop cut short: (partition, this directory's index, the copy's directory).
    futures: Vec<(TopicPartition, usize, PathBuf)>,
}

/// A partition directory found at startup, with what its load needs.
struct LogToLoad {
    path: PathBuf,
    dir: usize,
    tp: TopicPartition,
    config: LogConfig,
    recovery_point: i64,
    log_start: i64,
    high_watermark: i64,
}

/// Runs `work` on every item, spread over `threads` threads, and returns the results (in no
/// particular order), or the first error once every thread is done. Loading and closing a
/// log is mostly waiting on the file system, so a few threads overlap that waiting even on
/// few cores.
fn on_threads<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    work: impl Fn(T) -> Result<R, StorageError> + Sync,
) -> Result<Vec<R>, StorageError> {
    let threads = threads.clamp(1, items.len().max(1));
    let mut shares: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        shares[i % threads].push(item);
    }
    let work = &work;
    let outcomes: Vec<Result<Vec<R>, StorageError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || share.into_iter().map(work).collect::<Result<Vec<R>, _>>())
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    Err(StorageError::Io(std::io::Error::other(
                        "a log loading or closing thread panicked",
                    )))
                })
            })
            .collect()
    });
    let mut results = Vec::new();
    for outcome in outcomes {
        results.extend(outcome?);
    }
    Ok(results)
}

/// When the log manager's background work runs (see [`LogManager::start_housekeeping`]).
#[derive(Debug, Clone)]
pub struct Housekeeping {
    /// Retention, compaction and producer-id expiry (`log.retention.check.interval.ms`).
    pub retention_check: Duration,
    /// `flush.ms` flushes (`log.flush.scheduler.interval.ms`).
    pub flush_check: Duration,
    /// The offset checkpoints (`log.flush.offset.checkpoint.interval.ms`).
    pub checkpoint: Duration,
    /// `producer.id.expiration.ms`, which may change while the job runs (a dynamic config).
    pub producer_id_expiration_ms: Arc<std::sync::atomic::AtomicI64>,
}

/// What DescribeLogDirs reports of a log directory.
#[derive(Debug, Clone)]
pub struct LogDirUsage {
    /// The directory as an absolute path (Kafka reports `getAbsolutePath`).
    pub path: PathBuf,
    pub total_bytes: u64,
    pub usable_bytes: u64,
    pub logs: Vec<LogUsage>,
    /// An I/O error took the directory offline (DescribeLogDirs: KAFKA_STORAGE_ERROR).
    pub offline: bool,
}

#[derive(Debug, Clone)]
pub struct LogUsage {
    pub topic_partition: TopicPartition,
    pub size_bytes: u64,
    /// How far the log end is behind the high watermark (Kafka's `getLogEndOffsetLag`); for
    /// a log being moved here, how far it is behind the log it copies; -1 for a log taken
    /// offline by an I/O error.
    pub offset_lag: i64,
    /// A log being moved into this directory (AlterReplicaLogDirs), not yet the replica's.
    pub is_future: bool,
}

/// Locks a log, recovering the guard if a panicking thread poisoned it: the log's own state is
/// kept consistent by its methods, which never leave it half-updated across a panic point.
pub fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl LogManager {
    /// Locks each of `dirs` and loads every partition log in them, on `threads` threads
    /// (`num.recovery.threads.per.data.dir`); `config_for` supplies each log's config by topic
    /// name (returning `None` for a topic that no longer exists, whose directory is then
    /// deleted as stray). A partition found in two directories (not a move that a crash cut
    /// short, see [`moves`]) is refused, as Kafka refuses to start on it.
    pub fn open(
        dirs: &[PathBuf],
        config_for: impl Fn(&str) -> Option<LogConfig>,
        now_ms: i64,
        threads: usize,
    ) -> Result<(Self, Vec<(TopicPartition, LoadReport)>), StorageError> {
        let failures = super::space::DirFailures::new(dirs);
        Self::open_watched(dirs, failures, config_for, now_ms, threads)
    }

    /// [`LogManager::open`], telling `failures` of directories that go offline (the node
    /// shares it with its metadata log).
    pub fn open_watched(
        dirs: &[PathBuf],
        failures: Arc<super::space::DirFailures>,
        config_for: impl Fn(&str) -> Option<LogConfig>,
        now_ms: i64,
        threads: usize,
    ) -> Result<(Self, Vec<(TopicPartition, LoadReport)>), StorageError> {
        let mut opened = Vec::new();
        let mut to_load = Vec::new();
        let mut seen: HashMap<TopicPartition, PathBuf> = HashMap::new();
        let mut cut_short = Vec::new();
        for (index, dir) in dirs.iter().enumerate() {
            let Scanned {
                dir: log_dir,
                logs: found,
                futures,
            } = Self::scan(index, dir, &config_for, &failures)?;
            cut_short.extend(futures);
            for next in found {
                if let Some(other) = seen.insert(next.tp.clone(), next.path.clone()) {
                    return Err(StorageError::Corrupt(format!(
                        "duplicate log directories for {}: {} and {}",
                        next.tp,
                        other.display(),
                        next.path.display()
                    )));
                }
                to_load.push(next);
            }
            opened.push(log_dir);
        }
        let timed_flushes = to_load.iter().any(|next| next.config.flush_ms < i64::MAX);
        let mut logs = HashMap::new();
        let mut reports = Vec::new();
        let opened_ref = &opened;
        let offset_changes = OffsetChanges::default();
        for (log, report) in on_threads(to_load, threads, |next| {
            let dir = &opened_ref[next.dir];
            let (mut log, report) = Log::load(
                &next.path,
                next.tp,
                next.config,
                next.recovery_point,
                next.log_start,
                dir.clean_startup,
                now_ms,
            )?;
            log.set_high_watermark(next.high_watermark);
            log.set_space_gate(dir.space.clone());
            log.watch_offsets(offset_changes.clone());
            Ok((log, report))
        })? {
            let tp = log.topic_partition().clone();
            if report.truncated_bytes > 0 {
                tracing::warn!(partition = %tp, bytes = report.truncated_bytes, "truncated invalid data at the end of the log");
            }
            reports.push((tp.clone(), report));
            if let Some(dir) = opened
                .iter()
                .find(|d| Some(d.path.as_path()) == log.dir().parent())
            {
                dir.count(1);
            }
            logs.insert(tp, Arc::new(Mutex::new(log)));
        }
        // From here on a crash is an unclean shutdown.
        for dir in &opened {
            let marker = dir.path.join(CLEAN_SHUTDOWN_FILE);
            if marker.exists() {
                std::fs::remove_file(&marker)?;
                File::open(&dir.path)?.sync_all()?;
            }
        }
        let manager = Self {
            dirs: opened,
            logs: RwLock::new(logs),
            futures: Mutex::default(),
            preferred: Mutex::default(),
            interrupted: Mutex::default(),
            placement_changes: Default::default(),
            timed_flushes: timed_flushes.into(),
            threads: threads.max(1),
            failures,
            offset_changes,
            checkpointed: Mutex::default(),
        };
        manager.resume_moves(cut_short, now_ms);
        Ok((manager, reports))
    }

    /// Locks one directory and lists the logs to load in it (removing deleted and stray
    /// ones, and the leftovers of moves, see [`moves::settle_at_startup`]).
    fn scan(
        index: usize,
        dir: &Path,
        config_for: &impl Fn(&str) -> Option<LogConfig>,
        failures: &Arc<super::space::DirFailures>,
    ) -> Result<Scanned, StorageError> {
        std::fs::create_dir_all(dir)?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))?;
        if lock.try_lock().is_err() {
            return Err(StorageError::Locked(dir.display().to_string()));
        }
        let clean = dir.join(CLEAN_SHUTDOWN_FILE).exists();
        let recovery_points = checkpoint::read_offsets(&dir.join(RECOVERY_POINT_FILE))?;
        let log_starts = checkpoint::read_offsets(&dir.join(LOG_START_FILE))?;
        let high_watermarks = checkpoint::read_offsets(&dir.join(HIGH_WATERMARK_FILE))?;
        let mut found = Vec::new();
        let mut futures = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(tp) = moves::future_of(&name) {
                // A copy the stop cut short: it goes on once its source is loaded (see
                // [`LogManager::take_interrupted_moves`]).
                futures.push((tp, index, entry.path()));
                continue;
            }
            if name.ends_with(DELETE_SUFFIX) {
                std::fs::remove_dir_all(entry.path())?;
                continue;
            }
            if name == CLUSTER_METADATA_DIR {
                continue;
            }
            let Some(tp) = TopicPartition::from_dir_name(&name) else {
                continue;
            };
            if moves::superseded(&entry.path()) {
                // The source of a finished move whose removal the stop cut short.
                tracing::info!(dir = %entry.path().display(), "removing the source of a finished move");
                std::fs::remove_dir_all(entry.path())?;
                continue;
            }
            let Some(config) = config_for(&tp.topic) else {
                tracing::warn!(dir = %entry.path().display(), "removing stray log of an unknown topic");
                std::fs::remove_dir_all(entry.path())?;
                continue;
            };
            found.push(LogToLoad {
                path: entry.path(),
                dir: index,
                recovery_point: recovery_points.get(&tp).copied().unwrap_or(0),
                log_start: log_starts.get(&tp).copied().unwrap_or(0),
                high_watermark: high_watermarks.get(&tp).copied().unwrap_or(0),
                tp,
                config,
            });
        }
        let log_dir = LogDir {
            path: dir.to_path_buf(),
            _lock: lock,
            clean_startup: clean,
            space: super::space::SpaceGate::watched(dir, Some(failures.clone())),
            hosted: std::sync::atomic::AtomicUsize::new(0),
        };
        Ok(Scanned {
            dir: log_dir,
            logs: found,
            futures,
        })
    }

    /// The log directories, as configured.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.path.clone()).collect()
    }

    /// What the node does when a failed directory leaves it unable to run (see
    /// [`super::space::DirFailures`]); installed once, by the server.
    pub fn on_fatal_dir_failure(&self, fatal: super::space::FatalDirFailure) {
        self.failures.on_fatal(fatal);
    }

    /// The indexes of the directories an I/O error took offline.
    pub fn offline_dirs(&self) -> Vec<usize> {
        (0..self.dirs.len())
            .filter(|i| self.dirs[*i].space.is_failed())
            .collect()
    }

    /// Whether the previous run ended with a clean shutdown (in every directory).
    pub fn clean_startup(&self) -> bool {
        self.dirs.iter().all(|d| d.clean_startup)
    }

    /// The index of the configured directory `path` names (compared as absolute,
    /// symlink-free paths).
    pub fn dir_index(&self, path: &str) -> Option<usize> {
        let wanted = Path::new(path).canonicalize().ok()?;
        self.dirs
            .iter()
            .position(|d| d.path.canonicalize().ok().as_deref() == Some(wanted.as_path()))
    }

    /// The index of the directory holding a log at `log_dir` (the log's own directory).
    fn index_of(&self, log_dir: &Path) -> Option<usize> {
        let parent = log_dir.parent()?;
        self.dirs.iter().position(|d| d.path == parent)
    }

    /// Counts a change of where logs are: one created, deleted or moved.
    fn placed(&self) {
        self.placement_changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many times a log was created, deleted or moved: while it stays the same,
    /// [`Self::placements`] does too.
    pub fn placement_changes(&self) -> u64 {
        self.placement_changes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Each log and the index of the directory holding it.
    pub fn placements(&self) -> Vec<(TopicPartition, usize)> {
        self.all()
            .iter()
            .filter_map(|log| {
                let log = lock(log);
                Some((log.topic_partition().clone(), self.index_of(log.dir())?))
            })
            .collect()
    }

    /// The directory holding the log of `tp`, if there is one.
    pub fn dir_of(&self, tp: &TopicPartition) -> Option<PathBuf> {
        let log = self.get(tp)?;
        let dir = lock(&log).dir().parent()?.to_path_buf();
        Some(dir)
    }

    pub fn get(&self, tp: &TopicPartition) -> Option<SharedLog> {
        self.logs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tp)
            .cloned()
    }

    pub fn all(&self) -> Vec<SharedLog> {
        self.logs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Creates (or returns the existing) log of `tp`: in the directory AlterReplicaLogDirs
    /// named for it, else in the one holding fewest logs (counting logs being moved in), the
    /// first of those on a tie (Kafka's `nextLogDirs`).
    pub fn get_or_create(
        &self,
        tp: &TopicPartition,
        config: LogConfig,
        now_ms: i64,
    ) -> Result<SharedLog, StorageError> {
        let mut logs = self.logs.write().unwrap_or_else(|p| p.into_inner());
        if let Some(log) = logs.get(tp) {
            return Ok(log.clone());
        }
        let preferred = self
            .preferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        let online = |i: &usize| !self.dirs[*i].space.is_failed();
        let index = match preferred.filter(online) {
            Some(index) => index,
            None => {
                let mut counts: Vec<usize> = self.dirs.iter().map(LogDir::hosted).collect();
                for future in self
                    .futures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .values()
                {
                    counts[future.dir] += 1;
                }
                (0..self.dirs.len())
                    .filter(online)
                    .min_by_key(|i| counts[*i])
                    .ok_or(StorageError::Offline)?
            }
        };
        let dir = self.dirs.get(index).ok_or(StorageError::Offline)?;
        self.note_flush_ms(config.flush_ms);
        let mut log = Log::create(&dir.path.join(tp.dir_name()), tp.clone(), config, now_ms)?;
        log.set_space_gate(dir.space.clone());
        log.watch_offsets(self.offset_changes.clone());
        let shared = Arc::new(Mutex::new(log));
        logs.insert(tp.clone(), shared.clone());
        dir.count(1);
        self.placed();
        Ok(shared)
    }

    /// Removes the log of `tp` (and a copy of it being made): renamed to `*-delete` at once
    /// (so a crash cannot resurrect it), then its files are removed.
    pub fn delete(&self, tp: &TopicPartition) -> Result<(), StorageError> {
        self.cancel_move(tp)?;
        self.preferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        let removed = self
            .logs
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        let Some(log) = removed else {
            return Ok(());
        };
        let dir = lock(&log).dir().to_path_buf();
        drop(log);
        self.placed();
        if let Some(index) = self.index_of(&dir) {
            self.dirs[index].count(-1);
        }
        remove_log_dir(&dir)
    }

    /// Each directory's absolute path, its file system's size and free space, and the size
    /// of each log in it (logs being moved in included, as futures).
    pub fn describe(&self) -> Result<Vec<LogDirUsage>, StorageError> {
        let mut usages = Vec::new();
        for dir in &self.dirs {
            let offline = dir.space.is_failed();
            let path = dir.path.canonicalize().unwrap_or_else(|_| dir.path.clone());
            let stats = if offline {
                None
            } else {
                Some(fs4::statvfs(&path)?)
            };
            usages.push(LogDirUsage {
                path,
                total_bytes: stats.as_ref().map_or(0, |s| s.total_space()),
                usable_bytes: stats.as_ref().map_or(0, |s| s.available_space()),
                logs: Vec::new(),
                offline,
            });
        }
        for log in self.all() {
            let log = lock(&log);
            let Some(index) = self.index_of(log.dir()) else {
                continue;
            };
            if usages[index].offline {
                continue;
            }
            usages[index].logs.push(LogUsage {
                topic_partition: log.topic_partition().clone(),
                size_bytes: log.size_bytes(),
                offset_lag: if log.is_failed() {
                    -1
                } else {
                    (log.high_watermark() - log.log_end_offset()).max(0)
                },
                is_future: false,
            });
        }
        for (index, usage) in self.describe_futures() {
            usages[index].logs.push(usage);
        }
        for usage in &mut usages {
            usage.logs.sort_by(|a, b| {
                (&a.topic_partition, a.is_future).cmp(&(&b.topic_partition, b.is_future))
            });
        }
        Ok(usages)
    }

    /// Writes every directory's offset checkpoints, each of its own logs; a directory whose
    /// logs and offsets are what it last wrote is left alone. An idle broker so writes
    /// nothing, where each minute it used to copy out and write three lines per partition
    /// (at 50,000 partitions, 150,000 lines for nothing).
    pub fn checkpoint(&self) -> Result<(), StorageError> {
        use std::hash::{Hash, Hasher};
        let mut checkpointed = self.checkpointed.lock().unwrap_or_else(|p| p.into_inner());
        // Counted before the pass: a change made during it is seen by the next one. While
        // nothing changed, the logs are not visited: at 50,000 partitions that visit (every
        // log's memory touched) was most of an idle broker's CPU.
        let changes = (
            self.offset_changes
                .load(std::sync::atomic::Ordering::Relaxed),
            self.placement_changes(),
        );
        if checkpointed.at == Some(changes) {
            return Ok(());
        }
        // One pass over the logs (they are cold in memory; a second pass cost as much again):
        // each log's directory, partition and offsets, and each directory's print.
        let mut prints: Vec<CheckpointPrint> = vec![(0, 0); self.dirs.len()];
        let mut per_dir: Vec<Vec<(TopicPartition, [i64; 3])>> = vec![Vec::new(); self.dirs.len()];
        for log in self.all() {
            let log = lock(&log);
            if log.is_failed() {
                continue;
            }
            let Some(index) = self.index_of(log.dir()) else {
                continue;
            };
            let tp = log.topic_partition();
            let offsets = [
                log.recovery_point(),
                log.log_start_offset(),
                log.high_watermark(),
            ];
            let mut hasher = std::hash::DefaultHasher::new();
            (tp, offsets).hash(&mut hasher);
            let print = &mut prints[index];
            *print = (print.0 + 1, print.1.wrapping_add(hasher.finish()));
            per_dir[index].push((tp.clone(), offsets));
        }
        checkpointed.prints.resize(self.dirs.len(), None);
        let mut outcome = Ok(());
        for (index, (dir, logs)) in self.dirs.iter().zip(per_dir).enumerate() {
            if checkpointed.prints[index] == Some(prints[index]) {
                continue;
            }
            let file = |name: &str, which: usize| {
                let offsets = logs.iter().map(|(tp, offsets)| (tp, offsets[which]));
                checkpoint::write_offsets(&dir.path.join(name), offsets)
            };
            let written = file(RECOVERY_POINT_FILE, 0)
                .and_then(|()| file(LOG_START_FILE, 1))
                .and_then(|()| file(HIGH_WATERMARK_FILE, 2));
            match written {
                Ok(()) => checkpointed.prints[index] = Some(prints[index]),
                Err(e) => {
                    tracing::error!(dir = %dir.path.display(), error = %e, "writing checkpoints failed");
                    checkpointed.prints[index] = None;
                    outcome = Err(e);
                }
            }
        }
        checkpointed.at = outcome.is_ok().then_some(changes);
        outcome
    }

    /// Retention, then compaction, over every log (Kafka's cleaner order). A log being moved
    /// to another directory is not compacted meanwhile (Kafka's `abortAndPauseCleaning`).
    pub fn apply_retention(&self, now_ms: i64) -> usize {
        let moving: HashSet<TopicPartition> = self
            .futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect();
        let mut deleted = 0;
        for log in self.all() {
            let mut log = lock(&log);
            match log.apply_retention(now_ms) {
                Ok(n) => deleted += n,
                Err(e) => tracing::error!(error = %e, "retention failed"),
            }
            if moving.contains(log.topic_partition()) {
                continue;
            }
            if let Err(e) = log.compact(now_ms) {
                tracing::error!(partition = %log.topic_partition(), error = %e, "compaction failed");
            }
        }
        deleted
    }

    /// Gives `log` its settings (a topic's configs changed).
    pub fn set_config(&self, log: &SharedLog, config: LogConfig) {
        self.note_flush_ms(config.flush_ms);
        lock(log).set_config(config);
    }

    fn note_flush_ms(&self, flush_ms: i64) {
        if flush_ms < i64::MAX {
            self.timed_flushes
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Time-based flush pass (`flush.ms`): each log's fsync runs without holding the log.
    pub fn flush_due(&self, now_ms: i64) {
        if !self
            .timed_flushes
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        for log in self.all() {
            let job = lock(&log).prepare_flush_if_due(now_ms);
            let outcome = match job {
                Ok(Some(job)) => {
                    let synced = job.sync();
                    lock(&log).complete_flush(&job, synced)
                }
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            };
            if let Err(e) = outcome {
                tracing::error!(error = %e, "flush failed");
            }
        }
    }

    /// Runs the background work over the logs until `shutdown`, each job on the blocking pool
    /// (it is file I/O): retention, compaction and producer-id expiry every
    /// `log.retention.check.interval.ms`, `flush.ms` flushes every
    /// `log.flush.scheduler.interval.ms`, the offset checkpoints every
    /// `log.flush.offset.checkpoint.interval.ms`.
    pub fn start_housekeeping(
        self: &Arc<Self>,
        schedule: Housekeeping,
        tracker: &TaskTracker,
        shutdown: CancellationToken,
    ) {
        type Job = Box<dyn Fn(&LogManager) + Send + Sync>;
        let expiration = schedule.producer_id_expiration_ms.clone();
        let jobs: [(Duration, Job); 3] = [
            (
                schedule.retention_check,
                Box::new(move |logs| {
                    let now = crate::types::now_ms();
                    let expiration_ms = expiration.load(std::sync::atomic::Ordering::Relaxed);
                    for log in logs.all() {
                        lock(&log).expire_producers(now, expiration_ms);
                    }
                    logs.apply_retention(now);
                }),
            ),
            (
                schedule.flush_check,
                Box::new(|logs| logs.flush_due(crate::types::now_ms())),
            ),
            (
                schedule.checkpoint,
                Box::new(|logs| {
                    if let Err(e) = logs.checkpoint() {
                        tracing::error!(error = %e, "writing checkpoints failed");
                    }
                }),
            ),
        ];
        for (period, job) in jobs {
            let (logs, job) = (self.clone(), Arc::new(job));
            let shutdown = shutdown.clone();
            tracker.spawn(async move {
                let mut interval = tokio::time::interval(period);
                interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                interval.tick().await;
                loop {
                    tokio::select! {
                        _ = interval.tick() => {}
                        _ = shutdown.cancelled() => return,
                    }
                    let (logs, job) = (logs.clone(), job.clone());
                    if tokio::task::spawn_blocking(move || job(&logs))
                        .await
                        .is_err()
                    {
                        tracing::error!("background storage task panicked");
                    }
                }
            });
        }
    }

    /// Stops every move, flushes and closes every log, checkpoints, and writes each
    /// directory's clean-shutdown marker (only when every log in it closed cleanly).
    pub fn shutdown(&self, now_ms: i64) -> Result<(), StorageError> {
        self.futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let closed = on_threads(self.all(), self.threads, |log| {
            let mut log = lock(&log);
            let index = self.index_of(log.dir());
            match log.close(now_ms) {
                Ok(()) => Ok((index, true)),
                Err(e) => {
                    tracing::error!(partition = %log.topic_partition(), error = %e, "close failed");
                    Ok((index, false))
                }
            }
        })?;
        self.checkpoint()?;
        for (index, dir) in self.dirs.iter().enumerate() {
            let all_clean = closed
                .iter()
                .filter(|(i, _)| *i == Some(index))
                .all(|(_, clean)| *clean);
            if all_clean {
                checkpoint::write_atomically(&dir.path.join(CLEAN_SHUTDOWN_FILE), b"")?;
            }
        }
        Ok(())
    }
}

/// Renames a log's directory to `*-delete` (so a crash cannot resurrect it), then removes it.
fn remove_log_dir(dir: &Path) -> Result<(), StorageError> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(());
    };
    let doomed = parent.join(format!(
        "{}.{}{}",
        name.to_string_lossy(),
        uuid::Uuid::new_v4().simple(),
        DELETE_SUFFIX
    ));
    std::fs::rename(dir, &doomed)?;
    std::fs::remove_dir_all(&doomed)?;
    Ok(())
}

#[cfg(test)]
mod tests;
