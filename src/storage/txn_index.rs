//! The aborted-transaction index of one partition (Kafka's `TransactionIndex`): one entry per
//! transaction a marker aborted here, so a read_committed fetch can tell the consumer which
//! producers' records to drop in the range it returns. Entries are Kafka's, 34 bytes,
//! big-endian:
//!
//! ```text
//! version: i16 (0) | producer_id: i64 | first_offset: i64 | last_offset: i64 |
//! last_stable_offset: i64
//! ```
//!
//! Departure from Kafka, which keeps a `.txnindex` beside every segment: one file per
//! partition, `aborted.txnindex`. Aborted transactions are few and their entries tiny, and a
//! single file does not have to follow segments through rolls, retention and compaction
//! (which here rewrites segments in place of others). It is not fsynced on each entry: what a
//! crash loses is rebuilt when the producer state is replayed from its snapshot, which first
//! drops the entries of markers at or after the replay point.

use super::StorageError;
use super::checkpoint::write_atomically;
use bytes::{Buf, BufMut, BytesMut};
use std::io::Write;
use std::path::{Path, PathBuf};

const FILE_NAME: &str = "aborted.txnindex";
const ENTRY_BYTES: usize = 34;
const VERSION: i16 = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// The offset of the abort marker.
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

#[derive(Debug)]
pub struct TxnIndex {
    path: PathBuf,
    /// In marker order (`last_offset` ascending).
    entries: Vec<AbortedTxn>,
}

impl TxnIndex {
    /// The partition's index, read if present (a torn last entry is ignored).
    pub fn load(dir: &Path) -> Result<Self, StorageError> {
        let path = dir.join(FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut entries = Vec::with_capacity(bytes.len() / ENTRY_BYTES);
        for mut chunk in bytes.chunks_exact(ENTRY_BYTES) {
            if chunk.get_i16() != VERSION {
                return Err(StorageError::Corrupt(format!(
                    "{}: unknown entry version",
                    path.display()
                )));
            }
            entries.push(AbortedTxn {
                producer_id: chunk.get_i64(),
                first_offset: chunk.get_i64(),
                last_offset: chunk.get_i64(),
                last_stable_offset: chunk.get_i64(),
            });
        }
        Ok(Self { path, entries })
    }

    pub fn entries(&self) -> &[AbortedTxn] {
        &self.entries
    }

    pub fn append(&mut self, txn: AbortedTxn) -> Result<(), StorageError> {
        let mut file = super::open_file(
            std::fs::OpenOptions::new().create(true).append(true),
            &self.path,
        )?;
        file.write_all(&encode(&[txn]))?;
        self.entries.push(txn);
        Ok(())
    }

    /// Drops the transactions whose marker is at or after `offset` (log truncation, replay).
    pub fn truncate_from(&mut self, offset: i64) -> Result<(), StorageError> {
        let keep = self.entries.partition_point(|t| t.last_offset < offset);
        if keep < self.entries.len() {
            self.entries.truncate(keep);
            self.rewrite()?;
        }
        Ok(())
    }

    /// Drops the transactions wholly before `log_start_offset` (retention moved past them).
    pub fn drop_before(&mut self, log_start_offset: i64) -> Result<(), StorageError> {
        let gone = self
            .entries
            .partition_point(|t| t.last_offset < log_start_offset);
        if gone > 0 {
            self.entries.drain(..gone);
            self.rewrite()?;
        }
        Ok(())
    }

    /// Aborted transactions with records in `[start, end)` (Kafka's
    /// `collectAbortedTransactions`): the marker at or after `start`, the first record before
    /// `end`.
    pub fn overlapping(&self, start: i64, end: i64) -> Vec<AbortedTxn> {
        let from = self.entries.partition_point(|t| t.last_offset < start);
        self.entries[from..]
            .iter()
            .filter(|t| t.first_offset < end)
            .copied()
            .collect()
    }

    fn rewrite(&self) -> Result<(), StorageError> {
        if self.entries.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
                _ => Ok(()),
            };
        }
        write_atomically(&self.path, &encode(&self.entries))?;
        Ok(())
    }
}

fn encode(entries: &[AbortedTxn]) -> Vec<u8> {
    let mut buf = BytesMut::with_capacity(entries.len() * ENTRY_BYTES);
    for t in entries {
        buf.put_i16(VERSION);
        buf.put_i64(t.producer_id);
        buf.put_i64(t.first_offset);
        buf.put_i64(t.last_offset);
        buf.put_i64(t.last_stable_offset);
    }
    buf.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(producer_id: i64, first_offset: i64, last_offset: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id,
            first_offset,
            last_offset,
            last_stable_offset: first_offset,
        }
    }

    #[test]
    fn entries_persist_truncate_and_overlap_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = TxnIndex::load(dir.path()).unwrap();
        assert!(index.entries().is_empty());
        index.append(txn(1, 0, 10)).unwrap();
        index.append(txn(2, 5, 20)).unwrap();
        index.append(txn(3, 21, 30)).unwrap();
        let reloaded = TxnIndex::load(dir.path()).unwrap();
        assert_eq!(reloaded.entries(), index.entries());

        let ids = |v: Vec<AbortedTxn>| v.iter().map(|t| t.producer_id).collect::<Vec<_>>();
        assert_eq!(ids(index.overlapping(0, 5)), vec![1]);
        assert_eq!(ids(index.overlapping(11, 22)), vec![2, 3]);
        assert_eq!(ids(index.overlapping(31, 40)), Vec::<i64>::new());

        index.truncate_from(20).unwrap();
        assert_eq!(ids(index.overlapping(0, 100)), vec![1]);
        index.drop_before(11).unwrap();
        assert!(index.entries().is_empty());
        assert!(!dir.path().join(FILE_NAME).exists());
        assert!(TxnIndex::load(dir.path()).unwrap().entries().is_empty());

        // A torn last entry (crash mid-write) is ignored.
        index.append(txn(4, 1, 2)).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE_NAME))
            .unwrap();
        file.write_all(&[0, 0, 1]).unwrap();
        assert_eq!(TxnIndex::load(dir.path()).unwrap().entries().len(), 1);
    }
}
