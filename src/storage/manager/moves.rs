//! Moving a partition's log to another log directory (AlterReplicaLogDirs; Kafka's future
//! replica and `ReplicaAlterLogDirsThread`).
//!
//! 1. A *future* log is created in the target directory (`{topic}-{partition}.{id}-future`).
//! 2. A task copies the current log's batches into it, up to 1 MiB a step, as a follower copies
//!    its leader's. The current log keeps serving meanwhile; it is not compacted (Kafka's
//!    `abortAndPauseCleaning`). If it is truncated (it follows a new leader) or retention passes
//!    the copy, the copy starts over at its log start.
//! 3. Caught up, the copy's last batches are taken under the current log's lock, and the two
//!    are swapped: the current log's directory is marked superseded, the future directory is
//!    renamed `{topic}-{partition}`, loaded, and takes the current log's place (the same
//!    shared handle, so every holder sees it), and the old directory is deleted.
//!
//! A stop cuts a move short safely at any point: a future log found at startup is loaded
//! (every segment checked, as after an unclean stop) and its copy goes on where it was once
//! the broker runs, as Kafka resumes it; one that does not load, or has gone past its source
//! (the source lost a tail the copy kept), is deleted and the move starts over. A superseded
//! source is deleted once its copy is in place.

use super::{LogManager, LogUsage, SharedLog, lock, remove_log_dir};
use crate::record::BatchIter;
use crate::storage::StorageError;
use crate::storage::log::Log;
use crate::types::{TopicPartition, now_ms};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

const FUTURE_SUFFIX: &str = "-future";
/// Written into a log's directory just before its copy takes its place.
const SUPERSEDED_FILE: &str = ".superseded-by-move";
/// How much one copy step reads.
const COPY_CHUNK: usize = 1 << 20;

/// A log being moved into `dir`.
#[derive(Debug)]
pub(super) struct FutureLog {
    pub(super) dir: usize,
    log: SharedLog,
    /// The current log's rewrite count when the copy (re)started.
    source_rewrites: u64,
}

/// A move a stop cut short, for the broker to run again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterruptedMove {
    /// Its copy was loaded and goes on: [`LogManager::start_moving`] runs it.
    Resumed(TopicPartition),
    /// Its copy could not be kept: [`LogManager::move_replica`] to this directory again.
    Restart(TopicPartition, usize),
}

/// What AlterReplicaLogDirs did for one replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveStatus {
    /// The log is in that directory already (a move elsewhere was cancelled).
    AlreadyThere,
    /// A copy began; [`LogManager::start_moving`] runs it.
    Started,
    /// A copy to that directory was under way already.
    InProgress,
    /// No log here yet: it will be created in that directory.
    NotHosted,
}

/// The partition whose future log a directory named `name` is (`{topic}-{partition}.{id}-future`).
/// What a step of a move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveStep {
    /// Copied this many bytes (none when the copy had to wait or start over); more to do.
    Copied(u64),
    /// The move is over: finished, or cancelled.
    Over,
}

/// Told the bytes a step of a move copied; answers how long to wait before the next.
pub type MovePace = Arc<dyn Fn(u64) -> std::time::Duration + Send + Sync>;

pub(super) fn future_of(name: &str) -> Option<TopicPartition> {
    let (log_name, _id) = name.strip_suffix(FUTURE_SUFFIX)?.rsplit_once('.')?;
    TopicPartition::from_dir_name(log_name)
}

/// Whether the log at `dir` is the source of a move that finished (its copy is in place).
pub(super) fn superseded(dir: &Path) -> bool {
    dir.join(SUPERSEDED_FILE).exists()
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

impl LogManager {
    /// AlterReplicaLogDirs for one replica: moves the log of `tp` to directory `index`.
    pub fn move_replica(
        &self,
        tp: &TopicPartition,
        index: usize,
    ) -> Result<MoveStatus, StorageError> {
        let target = self
            .dirs
            .get(index)
            .filter(|d| !d.space.is_failed())
            .ok_or(StorageError::Offline)?;
        let Some(source) = self.get(tp) else {
            self.preferred
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(tp.clone(), index);
            return Ok(MoveStatus::NotHosted);
        };
        let (current, config, rewrites) = {
            let source = lock(&source);
            if source.is_failed() {
                return Err(StorageError::Offline);
            }
            (
                self.index_of(source.dir()),
                source.config().clone(),
                source.rewrites(),
            )
        };
        let under_way = self
            .futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tp)
            .map(|f| f.dir);
        if under_way == Some(index) {
            return Ok(MoveStatus::InProgress);
        }
        // Another destination, or back home: the copy under way is dropped (Kafka's
        // `futureReplicaDirChanged`).
        self.cancel_move(tp)?;
        if current == Some(index) {
            return Ok(MoveStatus::AlreadyThere);
        }
        let path = target.path.join(format!(
            "{}.{}{}",
            tp.dir_name(),
            uuid::Uuid::new_v4().simple(),
            FUTURE_SUFFIX
        ));
        let mut future = Log::create(&path, tp.clone(), config, now_ms())?;
        future.set_space_gate(target.space.clone());
        let mut futures = self.futures.lock().unwrap_or_else(|p| p.into_inner());
        futures.insert(
            tp.clone(),
            FutureLog {
                dir: index,
                log: Arc::new(Mutex::new(future)),
                // Differs from any count the source can have: the first step starts the copy
                // at the source's log start.
                source_rewrites: rewrites.wrapping_sub(1),
            },
        );
        tracing::info!(partition = %tp, dir = %target.path.display(), "moving the log to another directory");
        Ok(MoveStatus::Started)
    }

    /// The moves a stop cut short (found at startup), to run again. Taken once.
    pub fn take_interrupted_moves(&self) -> Vec<InterruptedMove> {
        std::mem::take(&mut *self.interrupted.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// At startup, once the logs are loaded: each copy a stop cut short (partition, target
    /// directory, its directory) is loaded to go on, or removed (its source is gone, or it
    /// cannot be kept, and then the move starts over).
    pub(super) fn resume_moves(&self, cut_short: Vec<(TopicPartition, usize, PathBuf)>, now: i64) {
        let mut interrupted = Vec::new();
        for (tp, index, path) in cut_short {
            let source = self.get(&tp);
            let resumed = match &source {
                Some(source) => self.load_future(&tp, index, &path, source, now),
                None => Ok(false),
            };
            match resumed {
                Ok(true) => {
                    tracing::info!(partition = %tp, dir = %path.display(), "resuming the move of a log to another directory");
                    interrupted.push(InterruptedMove::Resumed(tp));
                    continue;
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(partition = %tp, dir = %path.display(), error = %e, "the copy of a move cut short does not load; the move starts over");
                }
            }
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::warn!(dir = %path.display(), error = %e, "removing the copy of a move cut short failed");
            }
            if source.is_some() {
                interrupted.push(InterruptedMove::Restart(tp, index));
            }
        }
        *self.interrupted.lock().unwrap_or_else(|p| p.into_inner()) = interrupted;
    }

    /// Loads the copy at `path` of `source` and registers it as the move of `tp` under way;
    /// false when it cannot go on (its source is in that directory, or it has gone past it).
    fn load_future(
        &self,
        tp: &TopicPartition,
        index: usize,
        path: &Path,
        source: &SharedLog,
        now: i64,
    ) -> Result<bool, StorageError> {
        let (current, config, end, rewrites) = {
            let source = lock(source);
            (
                self.index_of(source.dir()),
                source.config().clone(),
                source.log_end_offset(),
                source.rewrites(),
            )
        };
        let Some(target) = self.dirs.get(index).filter(|_| current != Some(index)) else {
            return Ok(false);
        };
        // The copy's flushes are not checkpointed: every segment is checked.
        let (mut future, _) = Log::load(path, tp.clone(), config, 0, 0, false, now)?;
        if future.log_end_offset() > end {
            return Ok(false);
        }
        future.set_space_gate(target.space.clone());
        self.futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                tp.clone(),
                FutureLog {
                    dir: index,
                    log: Arc::new(Mutex::new(future)),
                    source_rewrites: rewrites,
                },
            );
        Ok(true)
    }

    /// Drops the copy of `tp` being made, if any, and its directory.
    pub fn cancel_move(&self, tp: &TopicPartition) -> Result<(), StorageError> {
        let removed = self
            .futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        if let Some(future) = removed {
            let dir = lock(&future.log).dir().to_path_buf();
            drop(future);
            if dir.exists() {
                remove_log_dir(&dir)?;
            }
        }
        Ok(())
    }

    /// Whether a copy of `tp` is being made.
    pub fn is_moving(&self, tp: &TopicPartition) -> bool {
        self.futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(tp)
    }

    /// The logs being moved in, by target directory, for DescribeLogDirs.
    pub(super) fn describe_futures(&self) -> Vec<(usize, LogUsage)> {
        let futures: Vec<(TopicPartition, usize, SharedLog)> = self
            .futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(tp, f)| (tp.clone(), f.dir, f.log.clone()))
            .collect();
        futures
            .into_iter()
            .filter_map(|(tp, dir, future)| {
                let source_end = lock(&self.get(&tp)?).log_end_offset();
                let future = lock(&future);
                Some((
                    dir,
                    LogUsage {
                        topic_partition: tp,
                        size_bytes: future.size_bytes(),
                        offset_lag: (source_end - future.log_end_offset()).max(0),
                        is_future: true,
                    },
                ))
            })
            .collect()
    }

    /// Runs the move of `tp` that [`LogManager::move_replica`] started, step by step on the
    /// blocking pool, until it is done, cancelled, fails (logged; the current log stays) or
    /// `shutdown`. `pace` is told the bytes each step copied and answers how long to wait
    /// before the next (`replica.alter.log.dirs.io.max.bytes.per.second`, kept by the
    /// broker). Must be called within a tokio runtime.
    pub fn start_moving(
        self: &Arc<Self>,
        tp: TopicPartition,
        shutdown: CancellationToken,
        pace: MovePace,
    ) {
        let logs = self.clone();
        tokio::spawn(async move {
            let mut wait = std::time::Duration::ZERO;
            loop {
                if !wait.is_zero() {
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = shutdown.cancelled() => return,
                    }
                }
                if shutdown.is_cancelled() {
                    return;
                }
                let (logs, tp) = (logs.clone(), tp.clone());
                let step = tokio::task::spawn_blocking(move || {
                    let outcome = logs.copy_step(&tp);
                    if let Err(e) = &outcome {
                        tracing::error!(partition = %tp, error = %e, "moving the log to another directory failed; it stays where it was");
                        if let Err(e) = logs.cancel_move(&tp) {
                            tracing::warn!(partition = %tp, error = %e, "removing the unfinished copy failed");
                        }
                    }
                    outcome
                })
                .await;
                match step {
                    Ok(Ok(MoveStep::Copied(bytes))) => {
                        wait = pace(bytes);
                        tokio::task::yield_now().await;
                    }
                    Ok(Ok(MoveStep::Over)) | Ok(Err(_)) => return,
                    Err(_) => {
                        tracing::error!("a log move panicked");
                        return;
                    }
                }
            }
        });
    }

    /// One step of a move: copies up to [`COPY_CHUNK`] bytes, or finishes the move.
    pub fn copy_step(&self, tp: &TopicPartition) -> Result<MoveStep, StorageError> {
        let Some((future, target)) = self
            .futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tp)
            .map(|f| (f.log.clone(), f.dir))
        else {
            return Ok(MoveStep::Over);
        };
        let Some(source) = self.get(tp) else {
            self.cancel_move(tp)?;
            return Ok(MoveStep::Over);
        };
        let (start, end, rewrites) = {
            let source = lock(&source);
            if source.is_failed() {
                return Err(StorageError::Offline);
            }
            (
                source.log_start_offset(),
                source.log_end_offset(),
                source.rewrites(),
            )
        };
        let restart = {
            let mut futures = self.futures.lock().unwrap_or_else(|p| p.into_inner());
            let Some(entry) = futures.get_mut(tp) else {
                return Ok(MoveStep::Over);
            };
            let restart = entry.source_rewrites != rewrites;
            entry.source_rewrites = rewrites;
            restart
        };
        let mut copy = lock(&future);
        let copied_to = copy.log_end_offset();
        if restart || copied_to < start || copied_to > end {
            // The copy starts at the batch holding the log start, which may begin below it.
            let first = first_batch_base(&source, start)?.unwrap_or(start);
            copy.truncate_fully_and_start_at(first)?;
        }
        let from = copy.log_end_offset();
        if from >= end {
            drop(copy);
            return self.finish_move(tp, &source, &future, target, rewrites);
        }
        let read = lock(&source).read(from, COPY_CHUNK, end, true)?;
        let Some(read) = read else {
            return Ok(MoveStep::Copied(0));
        };
        let bytes = read.records.read()?;
        copy.append_as_follower(&bytes, now_ms())?;
        Ok(MoveStep::Copied(bytes.len() as u64))
    }

    /// Copies what the current log gained since, under its lock, and swaps the copy in.
    fn finish_move(
        &self,
        tp: &TopicPartition,
        source: &SharedLog,
        future: &SharedLog,
        target: usize,
        rewrites: u64,
    ) -> Result<MoveStep, StorageError> {
        let mut current = lock(source);
        if current.rewrites() != rewrites {
            return Ok(MoveStep::Copied(0));
        }
        let mut copy = lock(future);
        while copy.log_end_offset() < current.log_end_offset() {
            let end = current.log_end_offset();
            let Some(read) = current.read(copy.log_end_offset(), COPY_CHUNK, end, true)? else {
                break;
            };
            copy.append_as_follower(&read.records.read()?, now_ms())?;
        }
        if copy.log_end_offset() != current.log_end_offset() {
            return Ok(MoveStep::Copied(0));
        }
        let now = now_ms();
        copy.close(now)?;
        let copy_dir = copy.dir().to_path_buf();
        drop(copy);
        self.futures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tp);
        let final_dir = self.dirs[target].path.join(tp.dir_name());
        let marker = current.dir().join(SUPERSEDED_FILE);
        let swapped = (|| -> Result<Log, StorageError> {
            std::fs::File::create(&marker)?.sync_all()?;
            sync_dir(current.dir())?;
            std::fs::rename(&copy_dir, &final_dir)?;
            sync_dir(&self.dirs[target].path)?;
            let (mut moved, _) = Log::load(
                &final_dir,
                tp.clone(),
                current.config().clone(),
                current.log_end_offset(),
                current.log_start_offset(),
                true,
                now,
            )?;
            moved.set_space_gate(self.dirs[target].space.clone());
            moved.watch_offsets(self.offset_changes.clone());
            moved.set_replicated(current.is_replicated());
            moved.set_high_watermark(current.high_watermark());
            Ok(moved)
        })();
        let moved = match swapped {
            Ok(moved) => moved,
            Err(e) => {
                // The current log stays the replica's: its mark and the copy go.
                let _ = std::fs::remove_file(&marker);
                for dir in [&copy_dir, &final_dir] {
                    if dir.exists() {
                        let _ = std::fs::remove_dir_all(dir);
                    }
                }
                return Err(e);
            }
        };
        let old = std::mem::replace(&mut *current, moved);
        drop(current);
        let old_dir = old.dir().to_path_buf();
        drop(old);
        if let Some(source) = self.index_of(&old_dir) {
            self.dirs[source].count(-1);
        }
        self.dirs[target].count(1);
        self.placed();
        remove_log_dir(&old_dir)?;
        tracing::info!(partition = %tp, dir = %self.dirs[target].path.display(), "moved the log to another directory");
        Ok(MoveStep::Over)
    }
}

/// The base offset of the batch holding `offset` in `log`.
fn first_batch_base(log: &SharedLog, offset: i64) -> Result<Option<i64>, StorageError> {
    let read = {
        let log = lock(log);
        let end = log.log_end_offset();
        log.read(offset, 1, end, true)?
    };
    let Some(read) = read else {
        return Ok(None);
    };
    let bytes = read.records.read()?;
    Ok(BatchIter::new(&bytes)
        .next()
        .and_then(|b| b.ok())
        .map(|b| b.base_offset()))
}
