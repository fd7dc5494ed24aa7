//! The leader-epoch cache of one log: for each leader epoch the first offset written in it,
//! kept in the partition's `leader-epoch-checkpoint` (Kafka's `LeaderEpochFileCache` and its
//! file format). It answers OffsetForLeaderEpoch, by which a follower finds where its log
//! diverges from the leader's after a leader change.
//!
//! ```text
//! 0          <- version
//! 2          <- entry count
//! 0 0        <- epoch start offset
//! 3 1200
//! ```
//!
//! The file is rewritten (atomically) only when an epoch starts or the log is truncated: once
//! per leader change, never per append.

use super::StorageError;
use super::checkpoint::write_atomically;
use std::path::{Path, PathBuf};

pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";

/// Kafka's `UNDEFINED_EPOCH` and `UNDEFINED_EPOCH_OFFSET`.
pub const UNDEFINED_EPOCH: i32 = -1;
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

#[derive(Debug)]
pub struct LeaderEpochCache {
    path: PathBuf,
    /// Ascending in both epoch and start offset.
    entries: Vec<EpochEntry>,
}

impl LeaderEpochCache {
    /// Reads the partition's checkpoint; a missing file is an empty cache.
    pub fn load(dir: &Path) -> Result<Self, StorageError> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    entries: Vec::new(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let malformed = || StorageError::Corrupt(format!("malformed {}", path.display()));
        let mut lines = text.lines().map(str::trim);
        if lines.next() != Some("0") {
            return Err(malformed());
        }
        let count: usize = lines
            .next()
            .and_then(|l| l.parse().ok())
            .ok_or_else(malformed)?;
        let mut entries = Vec::with_capacity(count.min(1024));
        for line in lines.take(count) {
            let mut fields = line.split_whitespace();
            let (Some(epoch), Some(start), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(malformed());
            };
            let entry = EpochEntry {
                epoch: epoch.parse().map_err(|_| malformed())?,
                start_offset: start.parse().map_err(|_| malformed())?,
            };
            if entries.last().is_some_and(|last: &EpochEntry| {
                last.epoch >= entry.epoch || last.start_offset > entry.start_offset
            }) {
                return Err(malformed());
            }
            entries.push(entry);
        }
        if entries.len() != count {
            return Err(malformed());
        }
        Ok(Self { path, entries })
    }

    /// The cache of a new log: no epochs, and no file until the first epoch starts (a
    /// leftover from an earlier log in the same directory is removed).
    pub fn create_empty(dir: &Path) -> Result<Self, StorageError> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        Ok(Self {
            path,
            entries: Vec::new(),
        })
    }

    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// Records that `epoch` starts at `start_offset` (the first batch appended with it).
    /// Nothing changes for an epoch that is not newer than the latest. Entries the new one
    /// contradicts (a start offset at or after it) are dropped first, as Kafka does.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<(), StorageError> {
        if epoch < 0 || self.latest_epoch().is_some_and(|latest| latest >= epoch) {
            return Ok(());
        }
        self.entries.retain(|e| e.start_offset < start_offset);
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        self.write()
    }

    /// Kafka's `endOffsetFor`: the largest epoch at or below `requested` and the offset where
    /// the epoch after it starts (`log_end_offset` for the latest epoch). Undefined (-1, -1)
    /// when the requested epoch is newer than all this log knows.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> (i32, i64) {
        if requested == UNDEFINED_EPOCH {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        match self.latest_epoch() {
            None => return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
            Some(latest) if latest == requested => return (latest, log_end_offset),
            _ => {}
        }
        let Some(higher) = self.entries.iter().find(|e| e.epoch > requested) else {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        };
        match self.entries.iter().rev().find(|e| e.epoch <= requested) {
            Some(floor) => (floor.epoch, higher.start_offset),
            // Older than anything kept: the requested epoch ends where the first known starts.
            None => (requested, higher.start_offset),
        }
    }

    /// Forgets epochs starting at or after `end_offset` (log truncation).
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Result<(), StorageError> {
        if !self.entries.iter().any(|e| e.start_offset >= end_offset) {
            return Ok(());
        }
        self.entries.retain(|e| e.start_offset < end_offset);
        self.write()
    }

    /// Forgets epochs wholly before `start_offset` (the log start moved); the epoch holding
    /// it now starts there.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Result<(), StorageError> {
        let covering = self
            .entries
            .iter()
            .rposition(|e| e.start_offset <= start_offset);
        let Some(covering) = covering else {
            return Ok(());
        };
        if covering == 0 && self.entries[0].start_offset == start_offset {
            return Ok(());
        }
        self.entries.drain(..covering);
        self.entries[0].start_offset = start_offset;
        self.write()
    }

    /// Drops every entry (the log was emptied and restarts elsewhere).
    pub fn clear(&mut self) -> Result<(), StorageError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        self.entries.clear();
        self.write()
    }

    /// Whether the checkpoint file is on disk (a log from before it existed has none).
    pub fn file_exists(&self) -> bool {
        self.path.exists()
    }

    /// Writes the checkpoint as it stands.
    pub fn persist(&self) -> Result<(), StorageError> {
        self.write()
    }

    fn write(&self) -> Result<(), StorageError> {
        let mut text = format!("0\n{}\n", self.entries.len());
        for e in &self.entries {
            text.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
        }
        write_atomically(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path, entries: &[(i32, i64)]) -> LeaderEpochCache {
        let mut cache = LeaderEpochCache::load(dir).unwrap();
        for (epoch, start) in entries {
            cache.assign(*epoch, *start).unwrap();
        }
        cache
    }

    #[test]
    fn end_offsets_follow_kafka() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path(), &[(1, 0), (3, 100), (5, 250)]);
        assert_eq!(cache.end_offset_for(5, 300), (5, 300));
        assert_eq!(cache.end_offset_for(3, 300), (3, 250));
        // Epoch 4 was never used here: it ends where 5 starts, answered as epoch 3.
        assert_eq!(cache.end_offset_for(4, 300), (3, 250));
        assert_eq!(cache.end_offset_for(0, 300), (0, 0));
        assert_eq!(cache.end_offset_for(6, 300), (-1, -1));
        assert_eq!(cache.end_offset_for(-1, 300), (-1, -1));
        let empty = LeaderEpochCache::load(tempfile::tempdir().unwrap().path()).unwrap();
        assert_eq!(empty.end_offset_for(0, 10), (-1, -1));
    }

    #[test]
    fn assign_ignores_old_epochs_and_drops_contradicted_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = cache(dir.path(), &[(1, 0), (3, 100)]);
        cache.assign(2, 150).unwrap();
        assert_eq!(cache.latest_epoch(), Some(3));
        cache.assign(4, 80).unwrap();
        assert_eq!(
            cache.entries(),
            &[
                EpochEntry {
                    epoch: 1,
                    start_offset: 0
                },
                EpochEntry {
                    epoch: 4,
                    start_offset: 80
                }
            ]
        );
    }

    #[test]
    fn truncation_from_both_ends_survives_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = cache(dir.path(), &[(1, 0), (3, 100), (5, 250)]);
        cache.truncate_from_end(250).unwrap();
        assert_eq!(cache.latest_epoch(), Some(3));
        cache.truncate_from_start(120).unwrap();
        let reloaded = LeaderEpochCache::load(dir.path()).unwrap();
        assert_eq!(
            reloaded.entries(),
            &[EpochEntry {
                epoch: 3,
                start_offset: 120
            }]
        );
        assert_eq!(reloaded.end_offset_for(3, 200), (3, 200));
    }

    #[test]
    fn a_malformed_file_is_an_error_not_an_empty_cache() {
        let dir = tempfile::tempdir().unwrap();
        for text in ["0\n2\n1 0\n", "1\n0\n", "0\n2\n3 10\n2 20\n", "0\n1\nx 0\n"] {
            std::fs::write(dir.path().join(LEADER_EPOCH_CHECKPOINT), text).unwrap();
            assert!(
                matches!(
                    LeaderEpochCache::load(dir.path()),
                    Err(StorageError::Corrupt(_))
                ),
                "{text:?}"
            );
        }
    }
}
