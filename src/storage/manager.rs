//! The log directory (Kafka's `LogManager`): takes an exclusive lock on it, loads every
//! partition log at startup (recovering after an unclean stop), creates and deletes logs, writes
//! the recovery-point, log-start-offset and high-watermark checkpoints, and the clean-shutdown
//! marker; and, as Kafka's `LogManager.startup` schedules them, runs the background work over
//! its logs ([`LogManager::start_housekeeping`]): retention and compaction, `flush.ms` flushes,
//! checkpoints.
//!
//! ```text
//! {log.dirs}/
//!   .lock                              flock held while the broker runs
//!   .kafka_cleanshutdown               present only after a clean shutdown; removed at startup
//!   recovery-point-offset-checkpoint   text checkpoint (see checkpoint.rs)
//!   log-start-offset-checkpoint
//!   replication-offset-checkpoint      high watermarks (what replication has committed)
//!   {topic}-{partition}/               one directory per partition log
//!   __cluster_metadata-0/              the controller quorum's log (not managed here)
//!   {topic}-{partition}.{id}-delete/   a deleted log waiting for removal
//! ```

use super::StorageError;
use super::checkpoint;
use super::log::{LoadReport, Log};
use crate::config::LogConfig;
use crate::types::TopicPartition;
use std::collections::{BTreeMap, HashMap};
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

#[derive(Debug)]
pub struct LogManager {
    dir: PathBuf,
    logs: RwLock<HashMap<TopicPartition, SharedLog>>,
    /// Held for the life of the manager; the flock is released when it is dropped.
    _lock: File,
    clean_startup: bool,
    /// `num.recovery.threads.per.data.dir`: loads logs at startup, closes them at shutdown.
    threads: usize,
    /// Shared by every log here: appends stop while the disk is full.
    space: Arc<super::space::SpaceGate>,
}

/// A partition directory found at startup, with what its load needs.
struct LogToLoad {
    path: PathBuf,
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

/// What DescribeLogDirs reports of the log directory.
#[derive(Debug, Clone)]
pub struct LogDirUsage {
    /// The directory as an absolute path (Kafka reports `getAbsolutePath`).
    pub path: PathBuf,
    pub total_bytes: u64,
    pub usable_bytes: u64,
    pub logs: Vec<LogUsage>,
}

#[derive(Debug, Clone)]
pub struct LogUsage {
    pub topic_partition: TopicPartition,
    pub size_bytes: u64,
    /// How far the log end is behind the high watermark (Kafka's `getLogEndOffsetLag`); -1
    /// for a log taken offline by an I/O error.
    pub offset_lag: i64,
}

/// Locks a log, recovering the guard if a panicking thread poisoned it: the log's own state is
/// kept consistent by its methods, which never leave it half-updated across a panic point.
pub fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What [`replay_records`] visits: a record (with the producer that wrote it, for records
/// written in a transaction), or a transaction marker.
#[derive(Debug, Clone, Copy)]
pub enum Replayed<'a> {
    Record {
        producer_id: i64,
        transactional: bool,
        key: Option<&'a [u8]>,
        value: Option<&'a [u8]>,
    },
    Marker {
        producer_id: i64,
        commit: bool,
    },
}

/// Visits every record and transaction marker of `log`, from its start to its current end (a
/// coordinator rebuilding its state from an internal topic). The log is locked only for each
/// read, so writers are never waited on while a coordinator loads. Returns how many records
/// were visited.
pub fn replay_records(
    log: &SharedLog,
    mut visit: impl FnMut(Replayed<'_>),
) -> Result<usize, StorageError> {
    use crate::record::control::{MarkerKind, read_marker};
    use crate::record::{BatchIter, codec, records};
    let (start, end) = {
        let log = lock(log);
        (log.log_start_offset(), log.log_end_offset())
    };
    let mut visited = 0;
    let mut offset = start;
    while offset < end {
        let Some(read) = lock(log).read(offset, 1 << 20, end, true)? else {
            break;
        };
        let bytes = read.records.read()?;
        for batch in BatchIter::new(&bytes) {
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    // Framing the log's recovery let through: the rest of this read is
                    // unreadable, the next read starts after it.
                    tracing::warn!(%offset, error = %e, "skipping an unreadable batch while replaying an internal topic");
                    break;
                }
            };
            if batch.is_control() {
                if let Ok(Some(marker)) = read_marker(&batch) {
                    visit(Replayed::Marker {
                        producer_id: batch.producer_id(),
                        commit: marker.kind == MarkerKind::Commit,
                    });
                }
                continue;
            }
            // One bad batch (written before clients were kept out of internal topics) is
            // logged and skipped: every other record still loads.
            let skip = |e: crate::record::RecordError| {
                tracing::warn!(offset = batch.base_offset(), error = %e, "skipping an unreadable batch while replaying an internal topic");
            };
            let payload = match batch
                .compression()
                .and_then(|codec| codec::decompress(codec, batch.records_payload()))
            {
                Ok(payload) => payload,
                Err(e) => {
                    skip(e);
                    continue;
                }
            };
            let parsed = match records::parse_records(&payload, batch.records_count()) {
                Ok(parsed) => parsed,
                Err(e) => {
                    skip(e);
                    continue;
                }
            };
            for record in parsed {
                visit(Replayed::Record {
                    producer_id: batch.producer_id(),
                    transactional: batch.is_transactional(),
                    key: record.key,
                    value: record.value,
                });
                visited += 1;
            }
        }
        offset = read.next_offset;
    }
    Ok(visited)
}

impl LogManager {
    /// Locks `dir` and loads every partition log in it, on `threads` threads
    /// (`num.recovery.threads.per.data.dir`); `config_for` supplies each log's config by topic
    /// name (returning `None` for a topic that no longer exists, whose directory is then
    /// deleted as stray).
    pub fn open(
        dir: &Path,
        config_for: impl Fn(&str) -> Option<LogConfig>,
        now_ms: i64,
        threads: usize,
    ) -> Result<(Self, Vec<(TopicPartition, LoadReport)>), StorageError> {
        std::fs::create_dir_all(dir)?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))?;
        if lock.try_lock().is_err() {
            return Err(StorageError::Locked(dir.display().to_string()));
        }
        let marker = dir.join(CLEAN_SHUTDOWN_FILE);
        let clean = marker.exists();
        let recovery_points = checkpoint::read_offsets(&dir.join(RECOVERY_POINT_FILE))?;
        let log_starts = checkpoint::read_offsets(&dir.join(LOG_START_FILE))?;
        let high_watermarks = checkpoint::read_offsets(&dir.join(HIGH_WATERMARK_FILE))?;
        let mut to_load = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
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
            let Some(config) = config_for(&tp.topic) else {
                tracing::warn!(dir = %entry.path().display(), "removing stray log of an unknown topic");
                std::fs::remove_dir_all(entry.path())?;
                continue;
            };
            to_load.push(LogToLoad {
                path: entry.path(),
                recovery_point: recovery_points.get(&tp).copied().unwrap_or(0),
                log_start: log_starts.get(&tp).copied().unwrap_or(0),
                high_watermark: high_watermarks.get(&tp).copied().unwrap_or(0),
                tp,
                config,
            });
        }
        let space = super::space::SpaceGate::new(dir);
        let mut logs = HashMap::new();
        let mut reports = Vec::new();
        for (log, report) in on_threads(to_load, threads, |next| {
            let (mut log, report) = Log::load(
                &next.path,
                next.tp,
                next.config,
                next.recovery_point,
                next.log_start,
                clean,
                now_ms,
            )?;
            log.set_high_watermark(next.high_watermark);
            log.set_space_gate(space.clone());
            Ok((log, report))
        })? {
            let tp = log.topic_partition().clone();
            if report.truncated_bytes > 0 {
                tracing::warn!(partition = %tp, bytes = report.truncated_bytes, "truncated invalid data at the end of the log");
            }
            reports.push((tp.clone(), report));
            logs.insert(tp, Arc::new(Mutex::new(log)));
        }
        // From here on a crash is an unclean shutdown.
        if clean {
            std::fs::remove_file(&marker)?;
            File::open(dir)?.sync_all()?;
        }
        let manager = Self {
            dir: dir.to_path_buf(),
            logs: RwLock::new(logs),
            _lock: lock,
            clean_startup: clean,
            threads: threads.max(1),
            space,
        };
        Ok((manager, reports))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the previous run ended with a clean shutdown.
    pub fn clean_startup(&self) -> bool {
        self.clean_startup
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

    /// Creates (or returns the existing) log of `tp`.
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
        let mut log = Log::create(&self.dir.join(tp.dir_name()), tp.clone(), config, now_ms)?;
        log.set_space_gate(self.space.clone());
        let shared = Arc::new(Mutex::new(log));
        logs.insert(tp.clone(), shared.clone());
        Ok(shared)
    }

    /// Removes the log of `tp`: renamed to `*-delete` at once (so a crash cannot resurrect
    /// it), then its files are removed.
    pub fn delete(&self, tp: &TopicPartition) -> Result<(), StorageError> {
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
        let doomed = self.dir.join(format!(
            "{}.{}{}",
            tp.dir_name(),
            uuid::Uuid::new_v4().simple(),
            DELETE_SUFFIX
        ));
        std::fs::rename(&dir, &doomed)?;
        std::fs::remove_dir_all(&doomed)?;
        Ok(())
    }

    /// The directory's absolute path, its file system's size and free space, and each log's
    /// size.
    pub fn describe(&self) -> Result<LogDirUsage, StorageError> {
        let path = self.absolute_dir()?;
        let stats = fs4::statvfs(&path)?;
        let mut logs: Vec<LogUsage> = self
            .all()
            .iter()
            .map(|log| {
                let log = lock(log);
                LogUsage {
                    topic_partition: log.topic_partition().clone(),
                    size_bytes: log.size_bytes(),
                    offset_lag: if log.is_failed() {
                        -1
                    } else {
                        (log.high_watermark() - log.log_end_offset()).max(0)
                    },
                }
            })
            .collect();
        logs.sort_by(|a, b| a.topic_partition.cmp(&b.topic_partition));
        Ok(LogDirUsage {
            path,
            total_bytes: stats.total_space(),
            usable_bytes: stats.available_space(),
            logs,
        })
    }

    /// The log directory as an absolute, symlink-free path.
    pub fn absolute_dir(&self) -> Result<PathBuf, StorageError> {
        Ok(self.dir.canonicalize()?)
    }

    /// Writes both offset checkpoints.
    pub fn checkpoint(&self) -> Result<(), StorageError> {
        let mut recovery = BTreeMap::new();
        let mut starts = BTreeMap::new();
        let mut high_watermarks = BTreeMap::new();
        for log in self.all() {
            let log = lock(&log);
            if log.is_failed() {
                continue;
            }
            recovery.insert(log.topic_partition().clone(), log.recovery_point());
            starts.insert(log.topic_partition().clone(), log.log_start_offset());
            high_watermarks.insert(log.topic_partition().clone(), log.high_watermark());
        }
        checkpoint::write_offsets(&self.dir.join(RECOVERY_POINT_FILE), &recovery)?;
        checkpoint::write_offsets(&self.dir.join(LOG_START_FILE), &starts)?;
        checkpoint::write_offsets(&self.dir.join(HIGH_WATERMARK_FILE), &high_watermarks)?;
        Ok(())
    }

    /// Retention, then compaction, over every log (Kafka's cleaner order).
    pub fn apply_retention(&self, now_ms: i64) -> usize {
        let mut deleted = 0;
        for log in self.all() {
            let mut log = lock(&log);
            match log.apply_retention(now_ms) {
                Ok(n) => deleted += n,
                Err(e) => tracing::error!(error = %e, "retention failed"),
            }
            if let Err(e) = log.compact(now_ms) {
                tracing::error!(partition = %log.topic_partition(), error = %e, "compaction failed");
            }
        }
        deleted
    }

    /// Time-based flush pass (`flush.ms`): each log's fsync runs without holding the log.
    pub fn flush_due(&self, now_ms: i64) {
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

    /// Flushes and closes every log, checkpoints, and writes the clean-shutdown marker (only
    /// when every log closed cleanly).
    pub fn shutdown(&self, now_ms: i64) -> Result<(), StorageError> {
        let closed = on_threads(self.all(), self.threads, |log| {
            let mut log = lock(&log);
            match log.close(now_ms) {
                Ok(()) => Ok(true),
                Err(e) => {
                    tracing::error!(partition = %log.topic_partition(), error = %e, "close failed");
                    Ok(false)
                }
            }
        })?;
        let all_clean = closed.iter().all(|clean| *clean);
        self.checkpoint()?;
        if all_clean {
            checkpoint::write_atomically(&self.dir.join(CLEAN_SHUTDOWN_FILE), b"")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BrokerConfig;
    use crate::record::test_support::{batch, checked};

    fn cfg() -> LogConfig {
        let broker = BrokerConfig::with_overrides(&[]).unwrap();
        LogConfig::resolve(&broker.topic_defaults, &BTreeMap::new())
    }

    /// Defect 4 of the hardening issue: a CRC-valid batch whose records do not parse (a
    /// client wrote it to `__consumer_offsets` before that was refused) is skipped by the
    /// coordinators' replay; the records before and after it still load.
    #[test]
    fn replay_skips_a_batch_whose_records_do_not_parse() {
        let dir = tempfile::tempdir().unwrap();
        let (manager, _) = LogManager::open(dir.path(), |_| Some(cfg()), 0, 1).unwrap();
        let log = manager
            .get_or_create(&TopicPartition::new("__consumer_offsets", 0), cfg(), 0)
            .unwrap();
        let mut garbage = batch(0, 1, 1, 10);
        // The record length varint overflows; the header and CRC stay valid.
        garbage[61..66].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        let crc = crc32c::crc32c(&garbage[21..]);
        garbage[17..21].copy_from_slice(&crc.to_be_bytes());
        for records in [batch(0, 2, 1, 10), garbage, batch(0, 3, 1, 10)] {
            lock(&log)
                .append_as_leader(&checked(records.clone()), 0, 1)
                .unwrap();
        }
        let mut values = 0;
        let visited = replay_records(&log, |_| values += 1).unwrap();
        assert_eq!((visited, values), (5, 5));
    }

    #[test]
    fn lock_marker_and_stray_logs() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("orders", 0);
        {
            let (manager, _) = LogManager::open(dir.path(), |_| Some(cfg()), 0, 2).unwrap();
            assert!(!manager.clean_startup());
            assert!(matches!(
                LogManager::open(dir.path(), |_| Some(cfg()), 0, 2),
                Err(StorageError::Locked(_))
            ));
            let log = manager.get_or_create(&tp, cfg(), 0).unwrap();
            lock(&log)
                .append_as_leader(&checked(batch(0, 5, 1, 10)), 0, 1)
                .unwrap();
            manager
                .get_or_create(&TopicPartition::new("gone", 0), cfg(), 0)
                .unwrap();
            manager.shutdown(0).unwrap();
        }
        let (manager, reports) =
            LogManager::open(dir.path(), |t| (t == "orders").then(cfg), 0, 2).unwrap();
        assert!(manager.clean_startup());
        assert!(!dir.path().join(CLEAN_SHUTDOWN_FILE).exists());
        assert_eq!(reports.len(), 1);
        assert_eq!(lock(&manager.get(&tp).unwrap()).log_end_offset(), 5);
        assert!(!dir.path().join("gone-0").exists());
        manager.delete(&tp).unwrap();
        assert!(!dir.path().join("orders-0").exists());
    }
}
