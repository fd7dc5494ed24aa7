//! Idempotent-producer state of one partition (Kafka's `ProducerStateManager`): per producer id
//! its epoch and the sequence ranges of its last five batches, so a retried batch is answered
//! with its original offsets instead of being written twice, and gaps or stale epochs are
//! refused. Transactions too: the first offset of each producer's open transaction (the
//! earliest of them bounds the last stable offset), ended by a marker (`record::control`),
//! which also records the epoch of the coordinator that wrote it.
//!
//! Snapshots make restarts cheap: at each segment roll and at a clean close the state is
//! written to `{offset:020}.snapshot` (offset = the new segment's base, or the log end) in the
//! partition directory, as Kafka does; loading takes the newest snapshot at or below the log
//! end and replays the batches after it (after an unclean stop: at most the active segment).
//! One snapshot is kept per segment, and those below the log start go with retention.
//! The file is Kafka's (`ProducerStateManager`, version 1), so Kafka's tools read it and a
//! partition directory moves between Kafka and Sluice. Big-endian:
//!
//! ```text
//! version: i16 (1) | crc: u32 (CRC32C of what follows) | count: i32 | count x entry
//! entry = producer_id: i64 | epoch: i16 | last_sequence: i32 | last_offset: i64 |
//!         offset_delta: i32 | timestamp: i64 | coordinator_epoch: i32 |
//!         current_txn_first_offset: i64 (-1: none)
//! ```
//!
//! As in Kafka, only each producer's last batch is in the file (a retry of an older one
//! after a restart is answered from the batches replayed after the snapshot, or not at all).
//! Snapshots Sluice wrote before in its own layout (version 1 without a CRC, version 2) are
//! still read.

use super::StorageError;
use crate::record::BatchView;
use crate::record::control::{self, MarkerKind};
use bytes::{Buf, BufMut, BytesMut};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Batches remembered per producer for duplicate detection (Kafka's value).
const BATCHES_KEPT: usize = 5;
/// Kafka's producer snapshot version.
const SNAPSHOT_VERSION: i16 = 1;
/// Sluice's own layout before it wrote Kafka's.
const LEGACY_SNAPSHOT_VERSION: i16 = 2;
const SNAPSHOT_ENTRIES_AT: usize = 6;
const SNAPSHOT_ENTRY_LEN: usize = 46;

#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum ProducerError {
    #[error("out of order sequence number: expected {expected}, got {got}")]
    OutOfOrderSequence { expected: i32, got: i32 },
    #[error("producer epoch {got} is older than the current {current}")]
    InvalidProducerEpoch { got: i16, current: i16 },
    #[error("transaction coordinator epoch {got} is older than the current {current}")]
    CoordinatorFenced { got: i32, current: i32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub first_seq: i32,
    pub last_seq: i32,
    pub base_offset: i64,
    pub last_offset: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerEntry {
    pub epoch: i16,
    pub last_timestamp: i64,
    pub batches: VecDeque<BatchMetadata>,
    /// The epoch of the transaction coordinator that wrote this producer's last marker.
    pub coordinator_epoch: i32,
    /// The first offset of this producer's open transaction here.
    pub txn_first_offset: Option<i64>,
}

impl Default for ProducerEntry {
    fn default() -> Self {
        Self {
            epoch: 0,
            last_timestamp: -1,
            batches: VecDeque::new(),
            coordinator_epoch: -1,
            txn_first_offset: None,
        }
    }
}

impl ProducerEntry {
    /// The sequence of the last record written, -1 before any.
    pub fn last_sequence(&self) -> i32 {
        self.batches.back().map_or(-1, |b| b.last_seq)
    }
}

/// A transaction a marker ended on this partition: its data from `first_offset`, its marker
/// at `last_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub aborted: bool,
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
    /// Open transactions by first offset (producer id).
    ongoing: BTreeMap<i64, i64>,
    /// Ended transactions whose marker the high watermark has not passed yet, by first
    /// offset: still unstable (Kafka's `unreplicatedTxns`).
    unreplicated: BTreeMap<i64, CompletedTxn>,
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

    /// Every producer known here, by id (DescribeProducers).
    pub fn producers(&self) -> impl Iterator<Item = (i64, &ProducerEntry)> {
        self.producers.iter().map(|(id, entry)| (*id, entry))
    }

    /// Checks an incoming batch against the producer's state (nothing changes yet).
    pub fn admit(&self, batch: &BatchView<'_>) -> Result<Admission, ProducerError> {
        let producer_id = batch.producer_id();
        // Markers are checked by `admit_marker`; they carry no sequence.
        if producer_id < 0 || batch.is_control() {
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
        // What the group coordinator writes in a producer's transaction has no sequence:
        // only its epoch is checked.
        if first_seq < 0 {
            return Ok(Admission::Append);
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

    /// Checks a transaction marker for `producer_id` before it is written: not from an older
    /// producer epoch, nor from an older coordinator. A marker of transaction version 2 must
    /// be newer than the epoch the producer wrote with (the coordinator bumped it to end the
    /// transaction), so it cannot end a later transaction of the same epoch; the same epoch
    /// again, with no transaction open, is a retry of a marker already written (Kafka's
    /// `ProducerAppendInfo.checkProducerEpoch`).
    pub fn admit_marker(
        &self,
        producer_id: i64,
        epoch: i16,
        coordinator_epoch: i32,
        transaction_version: i16,
    ) -> Result<(), ProducerError> {
        let Some(entry) = self.producers.get(&producer_id) else {
            return Ok(());
        };
        let stale = if transaction_version >= 2 {
            epoch < entry.epoch || (epoch == entry.epoch && entry.txn_first_offset.is_some())
        } else {
            epoch < entry.epoch
        };
        if stale {
            return Err(ProducerError::InvalidProducerEpoch {
                got: epoch,
                current: entry.epoch,
            });
        }
        if coordinator_epoch < entry.coordinator_epoch {
            return Err(ProducerError::CoordinatorFenced {
                got: coordinator_epoch,
                current: entry.coordinator_epoch,
            });
        }
        Ok(())
    }

    /// Records a batch written (or replayed) at `base_offset` (its own base offset field may
    /// predate the offset assignment). A marker returns the transaction it ended.
    pub fn update(&mut self, batch: &BatchView<'_>, base_offset: i64) -> Option<CompletedTxn> {
        let producer_id = batch.producer_id();
        if producer_id < 0 {
            return None;
        }
        let entry = self.producers.entry(producer_id).or_default();
        if batch.producer_epoch() != entry.epoch {
            entry.epoch = batch.producer_epoch();
            entry.batches.clear();
        }
        entry.last_timestamp = entry.last_timestamp.max(batch.max_timestamp());
        if batch.is_control() {
            // Unreadable or of another control type: nothing for transactions (as in Kafka).
            let marker = control::read_marker(batch).ok().flatten()?;
            entry.coordinator_epoch = marker.coordinator_epoch;
            // A marker with no transaction open here still ends one, at itself (Kafka).
            let first_offset = entry.txn_first_offset.take().unwrap_or(base_offset);
            self.ongoing.remove(&first_offset);
            let completed = CompletedTxn {
                producer_id,
                first_offset,
                last_offset: base_offset,
                aborted: marker.kind == MarkerKind::Abort,
            };
            self.unreplicated.insert(first_offset, completed);
            return Some(completed);
        }
        if batch.is_transactional() && entry.txn_first_offset.is_none() {
            entry.txn_first_offset = Some(base_offset);
            self.ongoing.insert(base_offset, producer_id);
        }
        let first_seq = batch.base_sequence();
        if first_seq < 0 {
            return None;
        }
        entry.batches.push_back(BatchMetadata {
            first_seq,
            last_seq: first_seq.wrapping_add(batch.last_offset_delta()),
            base_offset,
            last_offset: base_offset + batch.last_offset_delta() as i64,
        });
        while entry.batches.len() > BATCHES_KEPT {
            entry.batches.pop_front();
        }
        None
    }

    /// The high watermark moved to `high_watermark`: transactions whose marker it passed are
    /// stable.
    pub fn on_high_watermark(&mut self, high_watermark: i64) {
        self.unreplicated
            .retain(|_, txn| txn.last_offset >= high_watermark);
    }

    /// The first offset a read_committed consumer may not read yet because of a transaction
    /// (open, or ended by a marker not yet below the high watermark).
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let ongoing = self.ongoing.keys().next().copied();
        let unreplicated = self.unreplicated.keys().next().copied();
        match (ongoing, unreplicated) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The first unstable offset if the transaction starting at `first_offset` were not
    /// counted (an aborted transaction's index entry records it).
    pub fn first_unstable_offset_besides(&self, first_offset: i64) -> Option<i64> {
        let ongoing = self.ongoing.keys().find(|o| **o != first_offset).copied();
        let unreplicated = self
            .unreplicated
            .keys()
            .find(|o| **o != first_offset)
            .copied();
        match (ongoing, unreplicated) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Forgets producers silent for longer than `producer.id.expiration.ms`, except those
    /// with a transaction open (Kafka keeps them until it ends).
    pub fn expire(&mut self, now_ms: i64, expiration_ms: i64) {
        self.producers.retain(|_, e| {
            now_ms - e.last_timestamp <= expiration_ms || e.txn_first_offset.is_some()
        });
    }

    /// The snapshot file's bytes, in Kafka's layout.
    pub fn encode(&self) -> Vec<u8> {
        let mut ids: Vec<&i64> = self.producers.keys().collect();
        ids.sort_unstable();
        let mut buf =
            BytesMut::with_capacity(SNAPSHOT_ENTRIES_AT + 4 + ids.len() * SNAPSHOT_ENTRY_LEN);
        buf.put_i16(SNAPSHOT_VERSION);
        buf.put_u32(0);
        buf.put_i32(ids.len() as i32);
        for id in ids {
            let e = &self.producers[id];
            let (last_seq, last_offset, offset_delta) = e.batches.back().map_or((-1, -1, 0), |b| {
                (
                    b.last_seq,
                    b.last_offset,
                    (b.last_offset - b.base_offset) as i32,
                )
            });
            buf.put_i64(*id);
            buf.put_i16(e.epoch);
            buf.put_i32(last_seq);
            buf.put_i64(last_offset);
            buf.put_i32(offset_delta);
            buf.put_i64(e.last_timestamp);
            buf.put_i32(e.coordinator_epoch);
            buf.put_i64(e.txn_first_offset.unwrap_or(-1));
        }
        let crc = crc32c::crc32c(&buf[SNAPSHOT_ENTRIES_AT..]);
        buf[2..SNAPSHOT_ENTRIES_AT].copy_from_slice(&crc.to_be_bytes());
        buf.to_vec()
    }

    /// Reads a snapshot file: Kafka's layout, or Sluice's older one. `None` when it is
    /// neither (the state is then rebuilt from the log).
    pub fn decode(buf: &[u8]) -> Option<Self> {
        if buf.len() >= SNAPSHOT_ENTRIES_AT + 4
            && i16::from_be_bytes([buf[0], buf[1]]) == SNAPSHOT_VERSION
            && u32::from_be_bytes([buf[2], buf[3], buf[4], buf[5]])
                == crc32c::crc32c(&buf[SNAPSHOT_ENTRIES_AT..])
        {
            return Self::decode_kafka(&buf[SNAPSHOT_ENTRIES_AT..]);
        }
        Self::decode_legacy(buf)
    }

    fn decode_kafka(mut buf: &[u8]) -> Option<Self> {
        let count = buf.get_i32();
        if count < 0 || count as usize * SNAPSHOT_ENTRY_LEN != buf.remaining() {
            return None;
        }
        let mut state = Self::default();
        for _ in 0..count {
            let id = buf.get_i64();
            let epoch = buf.get_i16();
            let last_seq = buf.get_i32();
            let last_offset = buf.get_i64();
            let offset_delta = buf.get_i32();
            let last_timestamp = buf.get_i64();
            let coordinator_epoch = buf.get_i32();
            let txn_first_offset = Some(buf.get_i64()).filter(|first| *first >= 0);
            let mut batches = VecDeque::new();
            if last_offset >= 0 && offset_delta >= 0 {
                batches.push_back(BatchMetadata {
                    first_seq: decrement_sequence(last_seq, offset_delta),
                    last_seq,
                    base_offset: last_offset - i64::from(offset_delta),
                    last_offset,
                });
            }
            if let Some(first) = txn_first_offset {
                state.ongoing.insert(first, id);
            }
            state.producers.insert(
                id,
                ProducerEntry {
                    epoch,
                    last_timestamp,
                    batches,
                    coordinator_epoch,
                    txn_first_offset,
                },
            );
        }
        Some(state)
    }

    /// Sluice's layout before Kafka's: version 1 or 2, no CRC, up to five batches each.
    fn decode_legacy(mut buf: &[u8]) -> Option<Self> {
        if buf.remaining() < 6 {
            return None;
        }
        let version = buf.get_i16();
        if !(1..=LEGACY_SNAPSHOT_VERSION).contains(&version) {
            return None;
        }
        let count = buf.get_i32();
        let mut producers = HashMap::new();
        let mut ongoing = BTreeMap::new();
        for _ in 0..count.max(0) {
            if buf.remaining() < if version >= 2 { 34 } else { 22 } {
                return None;
            }
            let (id, epoch, last_timestamp) = (buf.get_i64(), buf.get_i16(), buf.get_i64());
            let (coordinator_epoch, txn_first_offset) = if version >= 2 {
                let coordinator_epoch = buf.get_i32();
                let first = buf.get_i64();
                (coordinator_epoch, (first >= 0).then_some(first))
            } else {
                (-1, None)
            };
            if let Some(first) = txn_first_offset {
                ongoing.insert(first, id);
            }
            let batches = buf.get_i32();
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
                    coordinator_epoch,
                    txn_first_offset,
                },
            );
        }
        Some(Self {
            producers,
            ongoing,
            unreplicated: BTreeMap::new(),
        })
    }
}

/// `sequence - decrement`, wrapping below 0 to the top of the sequence range (Kafka's
/// `DefaultRecordBatch.decrementSequence`).
fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX - (decrement - sequence) + 1
    } else {
        sequence - decrement
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

/// Writes a snapshot at `offset`, removing the older ones above `segment_base` (one
/// snapshot per segment is kept: a later truncation into the segment needs the one at its
/// start).
pub fn write_snapshot(
    dir: &Path,
    offset: i64,
    segment_base: i64,
    state: &ProducerState,
) -> Result<(), StorageError> {
    super::checkpoint::write_atomically(&snapshot_path(dir, offset), &state.encode())?;
    delete_snapshots_where(dir, |o| o > segment_base && o < offset)
}

/// Removes the snapshots below `log_start_offset` (retention passed them).
pub fn delete_snapshots_before(dir: &Path, log_start_offset: i64) -> Result<(), StorageError> {
    delete_snapshots_where(dir, |o| o < log_start_offset)
}

fn delete_snapshots_where(dir: &Path, doomed: impl Fn(i64) -> bool) -> Result<(), StorageError> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if snapshot_offset(&entry.file_name().to_string_lossy()).is_some_and(&doomed) {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
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
    fn transaction_version_2_markers_must_be_newer_than_the_data() {
        use crate::record::control::{Marker, MarkerKind, build_marker};
        let mut state = ProducerState::default();
        let data = crate::record::test_support::transactional(2, 7, 0);
        let data = BatchView::new(&data).unwrap();
        state.update(&data, 0);
        // Version 0/1: a marker of the data's epoch ends the transaction.
        assert_eq!(state.admit_marker(7, 0, 0, 1), Ok(()));
        // Version 2: the coordinator bumped the epoch to end it; the same epoch is a late
        // marker that could end a later transaction of that epoch.
        assert_eq!(
            state.admit_marker(7, 0, 0, 2),
            Err(ProducerError::InvalidProducerEpoch { got: 0, current: 0 })
        );
        assert_eq!(state.admit_marker(7, 1, 0, 2), Ok(()));
        let commit = Marker {
            kind: MarkerKind::Commit,
            coordinator_epoch: 0,
        };
        let marker = build_marker(7, 1, commit, 1_000);
        let marker = BatchView::new(&marker).unwrap();
        assert!(state.update(&marker, 2).is_some());
        // The marker moved the producer to its new epoch: a retry of it is let through, a
        // late write of the ended transaction is not.
        assert_eq!(
            state.admit_marker(7, 1, 0, 2),
            Ok(()),
            "an idempotent retry"
        );
        let late = idempotent(3, 1, 7, 0, 2);
        assert_eq!(
            state.admit(&BatchView::new(&late).unwrap()),
            Err(ProducerError::InvalidProducerEpoch { got: 0, current: 1 })
        );
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
        write_snapshot(dir.path(), 10, 10, &state).unwrap();
        write_snapshot(dir.path(), 14, 10, &state).unwrap();
        write_snapshot(dir.path(), 20, 10, &state).unwrap();
        // As in Kafka's file, only the last batch of each producer is kept.
        let entry = state.producers.get_mut(&9).unwrap();
        entry.batches.drain(..entry.batches.len() - 1);
        assert!(
            !snapshot_path(dir.path(), 14).exists(),
            "older ones within the segment go"
        );
        assert!(
            snapshot_path(dir.path(), 10).exists(),
            "the segment's first stays"
        );
        assert_eq!(
            latest_snapshot(dir.path(), 25).unwrap(),
            Some((20, state.clone()))
        );
        assert_eq!(
            latest_snapshot(dir.path(), 19).unwrap(),
            Some((10, state.clone())),
            "a snapshot past the log end is dropped"
        );
        assert!(!snapshot_path(dir.path(), 20).exists());
        delete_snapshots_before(dir.path(), 11).unwrap();
        assert_eq!(latest_snapshot(dir.path(), 19).unwrap(), None);
    }

    /// The file is Kafka's `ProducerStateManager` snapshot, byte for byte.
    #[test]
    fn snapshots_are_kafkas_layout() {
        let mut state = ProducerState::default();
        let b = idempotent(100, 3, 42, 7, 10);
        state.update(&BatchView::new(&b).unwrap(), 100);
        let bytes = state.encode();
        let mut expected = vec![0u8, 1, 0, 0, 0, 0, 0, 0, 0, 1];
        expected.extend_from_slice(&42i64.to_be_bytes());
        expected.extend_from_slice(&7i16.to_be_bytes());
        expected.extend_from_slice(&12i32.to_be_bytes()); // last sequence
        expected.extend_from_slice(&102i64.to_be_bytes()); // last offset
        expected.extend_from_slice(&2i32.to_be_bytes()); // offset delta
        expected.extend_from_slice(&state.entry(42).unwrap().last_timestamp.to_be_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes()); // coordinator epoch
        expected.extend_from_slice(&(-1i64).to_be_bytes()); // no open transaction
        let crc = crc32c::crc32c(&expected[6..]);
        expected[2..6].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(bytes, expected);
        let decoded = ProducerState::decode(&bytes).unwrap();
        assert_eq!(decoded, state);
        let mut corrupt = bytes.clone();
        corrupt[20] ^= 1;
        assert_eq!(
            ProducerState::decode(&corrupt),
            None,
            "a bad CRC is refused"
        );
        assert_eq!(decrement_sequence(1, 3), i32::MAX - 1);
    }

    /// Snapshots in Sluice's own earlier layout (version 2: five batches, no CRC) still load.
    #[test]
    fn sluice_s_earlier_snapshots_are_read() {
        let mut legacy = Vec::new();
        legacy.extend_from_slice(&2i16.to_be_bytes());
        legacy.extend_from_slice(&1i32.to_be_bytes());
        legacy.extend_from_slice(&5i64.to_be_bytes()); // producer id
        legacy.extend_from_slice(&1i16.to_be_bytes()); // epoch
        legacy.extend_from_slice(&1_000i64.to_be_bytes()); // last timestamp
        legacy.extend_from_slice(&3i32.to_be_bytes()); // coordinator epoch
        legacy.extend_from_slice(&40i64.to_be_bytes()); // open transaction from 40
        legacy.extend_from_slice(&2i32.to_be_bytes());
        for (first, last, base) in [(0i32, 1i32, 38i64), (2, 4, 40)] {
            legacy.extend_from_slice(&first.to_be_bytes());
            legacy.extend_from_slice(&last.to_be_bytes());
            legacy.extend_from_slice(&base.to_be_bytes());
            legacy.extend_from_slice(&(base + (last - first) as i64).to_be_bytes());
        }
        let state = ProducerState::decode(&legacy).unwrap();
        let entry = state.entry(5).unwrap();
        assert_eq!((entry.epoch, entry.coordinator_epoch), (1, 3));
        assert_eq!(entry.txn_first_offset, Some(40));
        assert_eq!(entry.batches.len(), 2);
        assert_eq!(state.first_unstable_offset(), Some(40));
    }
}
