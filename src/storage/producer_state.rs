//! Idempotent-producer state of one partition (Kafka's `ProducerStateManager`): per producer id
//! its epoch and the sequence ranges of its last five batches, so a retried batch is answered
//! with its original offsets instead of being written twice, and gaps or stale epochs are
//! refused.
//!
//! Snapshots make restarts cheap: at a clean close the state is written to
//! `{offset:020}.snapshot` (offset = log end) in the partition directory; loading takes the
//! newest snapshot at or below the log end and replays the batches after it (after an unclean
//! stop: from the previous clean close, or the log start). Snapshot layout, big-endian:
//!
//! ```text
//! version: i16 (1) | count: i32 | count x entry
//! entry = producer_id: i64 | epoch: i16 | last_timestamp: i64 | batches: i32 | batches x
//!         (first_seq: i32 | last_seq: i32 | base_offset: i64 | last_offset: i64)
//! ```

use super::StorageError;
use crate::record::BatchView;
use bytes::{Buf, BufMut, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Batches remembered per producer for duplicate detection (Kafka's value).
const BATCHES_KEPT: usize = 5;
const SNAPSHOT_VERSION: i16 = 1;

#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum ProducerError {
    #[error("out of order sequence number: expected {expected}, got {got}")]
    OutOfOrderSequence { expected: i32, got: i32 },
    #[error("producer epoch {got} is older than the current {current}")]
    InvalidProducerEpoch { got: i16, current: i16 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub first_seq: i32,
    pub last_seq: i32,
    pub base_offset: i64,
    pub last_offset: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerEntry {
    pub epoch: i16,
    pub last_timestamp: i64,
    pub batches: VecDeque<BatchMetadata>,
}

/// What to do with an incoming batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Append it (not idempotent, or next in sequence).
    Append,
    /// Already in the log at these offsets: answer without appending.
    Duplicate { base_offset: i64, last_offset: i64 },
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProducerState {
    producers: HashMap<i64, ProducerEntry>,
}

fn in_sequence(last: i32, next: i32) -> bool {
    next == last.wrapping_add(1) || (last == i32::MAX && next == 0)
}

impl ProducerState {
    pub fn len(&self) -> usize {
        self.producers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }

    pub fn entry(&self, producer_id: i64) -> Option<&ProducerEntry> {
        self.producers.get(&producer_id)
    }

    /// Checks an incoming batch against the producer's state (nothing changes yet).
    pub fn admit(&self, batch: &BatchView<'_>) -> Result<Admission, ProducerError> {
        let producer_id = batch.producer_id();
        if producer_id < 0 {
            return Ok(Admission::Append);
        }
        let (epoch, first_seq) = (batch.producer_epoch(), batch.base_sequence());
        let last_seq = first_seq.wrapping_add(batch.last_offset_delta());
        let Some(entry) = self.producers.get(&producer_id) else {
            // A new producer id (or one whose state expired) starts where it says: Kafka
            // accepts it rather than failing producers after state loss.
            return Ok(Admission::Append);
        };
        if epoch < entry.epoch {
            return Err(ProducerError::InvalidProducerEpoch {
                got: epoch,
                current: entry.epoch,
            });
        }
        if epoch > entry.epoch {
            return if first_seq == 0 {
                Ok(Admission::Append)
            } else {
                Err(ProducerError::OutOfOrderSequence {
                    expected: 0,
                    got: first_seq,
                })
            };
        }
        if let Some(dup) = entry
            .batches
            .iter()
            .find(|b| b.first_seq == first_seq && b.last_seq == last_seq)
        {
            return Ok(Admission::Duplicate {
                base_offset: dup.base_offset,
                last_offset: dup.last_offset,
            });
        }
        match entry.batches.back() {
            Some(last) if !in_sequence(last.last_seq, first_seq) => {
                Err(ProducerError::OutOfOrderSequence {
                    expected: last.last_seq.wrapping_add(1),
                    got: first_seq,
                })
            }
            _ => Ok(Admission::Append),
        }
    }

    /// Records an appended (or replayed) batch.
    /// Records a batch written at `base_offset` (its own base offset field may predate the
    /// offset assignment).
    pub fn update(&mut self, batch: &BatchView<'_>, base_offset: i64) {
        let producer_id = batch.producer_id();
        if producer_id < 0 {
            return;
        }
        let entry = self.producers.entry(producer_id).or_default();
        if batch.producer_epoch() != entry.epoch {
            entry.epoch = batch.producer_epoch();
            entry.batches.clear();
        }
        let first_seq = batch.base_sequence();
        entry.batches.push_back(BatchMetadata {
            first_seq,
            last_seq: first_seq.wrapping_add(batch.last_offset_delta()),
            base_offset,
            last_offset: base_offset + batch.last_offset_delta() as i64,
        });
        while entry.batches.len() > BATCHES_KEPT {
            entry.batches.pop_front();
        }
        entry.last_timestamp = entry.last_timestamp.max(batch.max_timestamp());
    }

    /// Forgets producers silent for longer than `producer.id.expiration.ms`.
    pub fn expire(&mut self, now_ms: i64, expiration_ms: i64) {
        self.producers
            .retain(|_, e| now_ms - e.last_timestamp <= expiration_ms);
    }

    /// Drops what refers to offsets at or after `offset` (log truncation).
    pub fn truncate_to(&mut self, offset: i64) {
        for entry in self.producers.values_mut() {
            entry.batches.retain(|b| b.last_offset < offset);
        }
        self.producers.retain(|_, e| !e.batches.is_empty());
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut buf = BytesMut::new();
        buf.put_i16(SNAPSHOT_VERSION);
        buf.put_i32(self.producers.len() as i32);
        for (id, e) in &self.producers {
            buf.put_i64(*id);
            buf.put_i16(e.epoch);
            buf.put_i64(e.last_timestamp);
            buf.put_i32(e.batches.len() as i32);
            for b in &e.batches {
                buf.put_i32(b.first_seq);
                buf.put_i32(b.last_seq);
                buf.put_i64(b.base_offset);
                buf.put_i64(b.last_offset);
            }
        }
        buf.to_vec()
    }

    pub fn decode(mut buf: &[u8]) -> Option<Self> {
        if buf.remaining() < 6 || buf.get_i16() != SNAPSHOT_VERSION {
            return None;
        }
        let count = buf.get_i32();
        let mut producers = HashMap::new();
        for _ in 0..count.max(0) {
            if buf.remaining() < 22 {
                return None;
            }
            let (id, epoch, last_timestamp, batches) =
                (buf.get_i64(), buf.get_i16(), buf.get_i64(), buf.get_i32());
            if batches < 0 || batches as usize * 24 > buf.remaining() {
                return None;
            }
            let batches = (0..batches)
                .map(|_| BatchMetadata {
                    first_seq: buf.get_i32(),
                    last_seq: buf.get_i32(),
                    base_offset: buf.get_i64(),
                    last_offset: buf.get_i64(),
                })
                .collect();
            producers.insert(
                id,
                ProducerEntry {
                    epoch,
                    last_timestamp,
                    batches,
                },
            );
        }
        Some(Self { producers })
    }
}

fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    super::open_file(std::fs::OpenOptions::new().read(true), path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub fn snapshot_path(dir: &Path, offset: i64) -> PathBuf {
    dir.join(format!("{offset:020}.snapshot"))
}

/// The offset a producer snapshot file is named by, if `file_name` is one.
pub fn snapshot_offset(file_name: &str) -> Option<i64> {
    file_name.strip_suffix(".snapshot")?.parse().ok()
}

/// The newest snapshot at or below `end`, with its offset; snapshots above it are deleted.
pub fn latest_snapshot(dir: &Path, end: i64) -> Result<Option<(i64, ProducerState)>, StorageError> {
    let mut offsets = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        if let Some(offset) = snapshot_offset(&entry?.file_name().to_string_lossy()) {
            offsets.push(offset);
        }
    }
    latest_snapshot_of(dir, &offsets, end)
}

/// `latest_snapshot` given the snapshot offsets in `dir`, for a caller that listed it already.
pub fn latest_snapshot_of(
    dir: &Path,
    offsets: &[i64],
    end: i64,
) -> Result<Option<(i64, ProducerState)>, StorageError> {
    let mut best: Option<i64> = None;
    for &offset in offsets {
        if offset > end {
            match std::fs::remove_file(snapshot_path(dir, offset)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        } else if best.is_none_or(|b| offset > b) {
            best = Some(offset);
        }
    }
    let Some(offset) = best else { return Ok(None) };
    match read_file(&snapshot_path(dir, offset))
        .ok()
        .and_then(|bytes| ProducerState::decode(&bytes))
    {
        Some(state) => Ok(Some((offset, state))),
        None => {
            tracing::warn!(dir = %dir.display(), offset, "unreadable producer snapshot; rebuilding from the log");
            Ok(None)
        }
    }
}

/// Writes a snapshot at `offset`, removing older ones.
pub fn write_snapshot(dir: &Path, offset: i64, state: &ProducerState) -> Result<(), StorageError> {
    super::checkpoint::write_atomically(&snapshot_path(dir, offset), &state.encode())?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let older = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".snapshot"))
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|o| o < offset);
        if older {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_support::batch;

    fn idempotent(base_offset: i64, count: i32, pid: i64, epoch: i16, seq: i32) -> BytesMut {
        let mut b = batch(base_offset, count, 1_000, 10);
        crate::record::test_support::set_producer_fields(&mut b, pid, epoch, seq);
        b
    }

    #[test]
    fn sequences_duplicates_and_epochs() {
        let mut state = ProducerState::default();
        let b0 = idempotent(0, 3, 7, 0, 0);
        let v0 = BatchView::new(&b0).unwrap();
        assert_eq!(state.admit(&v0), Ok(Admission::Append));
        state.update(&v0, v0.base_offset());
        assert_eq!(
            state.admit(&v0),
            Ok(Admission::Duplicate {
                base_offset: 0,
                last_offset: 2
            }),
            "a retry is a duplicate"
        );
        let gap = idempotent(3, 1, 7, 0, 5);
        assert_eq!(
            state.admit(&BatchView::new(&gap).unwrap()),
            Err(ProducerError::OutOfOrderSequence {
                expected: 3,
                got: 5
            })
        );
        let next = idempotent(3, 2, 7, 0, 3);
        assert_eq!(
            state.admit(&BatchView::new(&next).unwrap()),
            Ok(Admission::Append)
        );
        let next = BatchView::new(&next).unwrap();
        state.update(&next, next.base_offset());
        let bumped = idempotent(5, 1, 7, 1, 0);
        let bumped = BatchView::new(&bumped).unwrap();
        state.update(&bumped, bumped.base_offset());
        let zombie = idempotent(6, 1, 7, 0, 5);
        assert_eq!(
            state.admit(&BatchView::new(&zombie).unwrap()),
            Err(ProducerError::InvalidProducerEpoch { got: 0, current: 1 })
        );
        let new_epoch_bad_seq = idempotent(6, 1, 7, 2, 4);
        assert!(
            state
                .admit(&BatchView::new(&new_epoch_bad_seq).unwrap())
                .is_err()
        );
        assert!(in_sequence(i32::MAX, 0), "sequences wrap at i32::MAX");
    }

    #[test]
    fn snapshots_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = ProducerState::default();
        for i in 0..7 {
            let b = idempotent(i * 2, 2, 9, 3, (i * 2) as i32);
            let view = BatchView::new(&b).unwrap();
            state.update(&view, view.base_offset());
        }
        assert_eq!(
            state.entry(9).unwrap().batches.len(),
            5,
            "only the last five batches are kept"
        );
        write_snapshot(dir.path(), 14, &state).unwrap();
        write_snapshot(dir.path(), 20, &state).unwrap();
        assert!(
            !snapshot_path(dir.path(), 14).exists(),
            "older snapshots go"
        );
        assert_eq!(
            latest_snapshot(dir.path(), 25).unwrap(),
            Some((20, state.clone()))
        );
        assert_eq!(
            latest_snapshot(dir.path(), 19).unwrap(),
            None,
            "a snapshot past the log end is dropped"
        );
    }
}
